import {
  campaignDeletedResponse,
  campaignListResponse,
  campaignResponse,
  type CampaignBody,
  type CampaignPatchBody,
  type WelcomeCampaign,
} from '@herald/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, apiRequest } from '../../lib/api-client';

// Spec §7 Welcome campaigns: fetchers and hooks side by side. Every change
// refreshes the site's list, because activating one campaign deactivates the
// others (spec §4).

export const campaignsQueryKey = (siteId: string) => ['sites', siteId, 'welcome-campaigns'] as const;
export const campaignQueryKey = (id: string) => ['welcome-campaigns', id] as const;

export async function fetchCampaigns(siteId: string): Promise<WelcomeCampaign[]> {
  return (await apiRequest(`/sites/${encodeURIComponent(siteId)}/welcome-campaigns`, { schema: campaignListResponse })).campaigns;
}

export function useCampaignsQuery(siteId: string) {
  return useQuery({ queryKey: campaignsQueryKey(siteId), queryFn: () => fetchCampaigns(siteId) });
}

export async function fetchCampaign(id: string): Promise<WelcomeCampaign> {
  return (await apiRequest(`/welcome-campaigns/${encodeURIComponent(id)}`, { schema: campaignResponse })).campaign;
}

export function useCampaignQuery(id: string) {
  return useQuery({
    queryKey: campaignQueryKey(id),
    queryFn: () => fetchCampaign(id),
    // A missing campaign stays missing: no retry on 404.
    retry: (failures, error) => !(error instanceof ApiError && error.status === 404) && failures < 1,
  });
}

function useRefreshCampaigns() {
  const queryClient = useQueryClient();
  return (campaign: Pick<WelcomeCampaign, 'id' | 'site_id'>) => {
    void queryClient.invalidateQueries({ queryKey: campaignsQueryKey(campaign.site_id) });
    void queryClient.invalidateQueries({ queryKey: ['welcome-campaigns'] });
  };
}

export async function createCampaign(input: { siteId: string; body: CampaignBody }): Promise<WelcomeCampaign> {
  return (await apiRequest(`/sites/${encodeURIComponent(input.siteId)}/welcome-campaigns`, { method: 'POST', body: input.body, schema: campaignResponse })).campaign;
}

export function useCreateCampaignMutation() {
  const refresh = useRefreshCampaigns();
  return useMutation({ mutationFn: createCampaign, onSuccess: refresh });
}

export async function updateCampaign(input: { id: string; changes: CampaignPatchBody }): Promise<WelcomeCampaign> {
  return (await apiRequest(`/welcome-campaigns/${encodeURIComponent(input.id)}`, { method: 'PATCH', body: input.changes, schema: campaignResponse })).campaign;
}

/** Editing, and the list's Activate/Deactivate toggle (spec §7: "toggling sends {is_active}"). */
export function useUpdateCampaignMutation() {
  const refresh = useRefreshCampaigns();
  return useMutation({ mutationFn: updateCampaign, onSuccess: refresh });
}

export async function deleteCampaign(campaign: Pick<WelcomeCampaign, 'id' | 'site_id'>): Promise<void> {
  await apiRequest(`/welcome-campaigns/${encodeURIComponent(campaign.id)}`, { method: 'DELETE', schema: campaignDeletedResponse });
}

export function useDeleteCampaignMutation() {
  const refresh = useRefreshCampaigns();
  return useMutation({ mutationFn: deleteCampaign, onSuccess: (_result, campaign) => refresh(campaign) });
}
