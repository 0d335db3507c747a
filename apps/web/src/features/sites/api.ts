import {
  envelope,
  identitySecretResponse,
  installCodeResponse,
  siteResponse,
  sitesResponse,
  type CreateSiteBody,
  type Site,
  type UpdateSiteBody,
} from '@herald/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { z } from 'zod';
import { apiRequest } from '../../lib/api-client';
import { invalidateSiteAnalytics } from '../../lib/site-queries';
import { useSitesStore } from '../../lib/sites-store';

// Spec §7 Sites. Fetchers and hooks side by side; mutations keep the site
// list cache and the sites store (spec §4 Sites) in step.

export const sitesQueryKey = ['sites'] as const;

export async function fetchSites(): Promise<Site[]> {
  return (await apiRequest('/sites', { schema: sitesResponse })).sites;
}

/**
 * Loads the site list while signed in and hands it to the sites store, which
 * keeps the chosen site or makes the first one current (spec §4 Sites).
 */
export function useSiteListSync(enabled: boolean) {
  const query = useQuery({ queryKey: sitesQueryKey, queryFn: fetchSites, enabled });
  const setSites = useSitesStore((s) => s.setSites);
  useEffect(() => {
    if (query.data) setSites(query.data);
  }, [query.data, setSites]);
  return query;
}

/** The site list's load state, for screens that show it (the shell's header). */
export function useSitesQueryState() {
  return useQuery({ queryKey: sitesQueryKey, queryFn: fetchSites, enabled: false });
}

export async function createSite(body: CreateSiteBody): Promise<Site> {
  return (await apiRequest('/sites', { method: 'POST', body, schema: siteResponse })).site;
}

export function useCreateSiteMutation() {
  const queryClient = useQueryClient();
  const addSite = useSitesStore((s) => s.addSite);
  return useMutation({
    mutationFn: createSite,
    onSuccess: (site) => {
      addSite(site);
      queryClient.setQueryData<Site[]>(sitesQueryKey, (sites) => (sites ? [...sites, site] : sites));
    },
  });
}

export async function updateSite(input: { id: string; changes: UpdateSiteBody }): Promise<Site> {
  return (await apiRequest(`/sites/${encodeURIComponent(input.id)}`, { method: 'PATCH', body: input.changes, schema: siteResponse })).site;
}

export function useUpdateSiteMutation() {
  const queryClient = useQueryClient();
  const storeUpdate = useSitesStore((s) => s.updateSite);
  return useMutation({
    mutationFn: updateSite,
    onSuccess: (site) => {
      storeUpdate(site.id, site);
      queryClient.setQueryData<Site[]>(sitesQueryKey, (sites) => sites?.map((s) => (s.id === site.id ? site : s)));
      // Value goals and the timezone change the dashboard's figures and days.
      void invalidateSiteAnalytics(queryClient, site.id);
    },
  });
}

const deletedResponse = envelope(z.object({ deleted: z.literal(true) }));

export async function deleteSite(id: string): Promise<void> {
  await apiRequest(`/sites/${encodeURIComponent(id)}`, { method: 'DELETE', schema: deletedResponse });
}

export function useDeleteSiteMutation() {
  const queryClient = useQueryClient();
  const removeSite = useSitesStore((s) => s.removeSite);
  return useMutation({
    mutationFn: deleteSite,
    onSuccess: (_result, id) => {
      removeSite(id);
      queryClient.setQueryData<Site[]>(sitesQueryKey, (sites) => sites?.filter((s) => s.id !== id));
      queryClient.removeQueries({ queryKey: ['sites', id] });
    },
  });
}

export const installCodeQueryKey = (siteId: string) => ['sites', siteId, 'install-code'] as const;

export function fetchInstallCode(siteId: string) {
  return apiRequest(`/sites/${encodeURIComponent(siteId)}/install-code`, { schema: installCodeResponse });
}

/** Fetched on demand ("Show Installation Code"), so `enabled` starts false. */
export function useInstallCodeQuery(siteId: string, enabled: boolean) {
  return useQuery({ queryKey: installCodeQueryKey(siteId), queryFn: () => fetchInstallCode(siteId), enabled });
}

// Settings → Automation: the identity secret a site's backend signs user ids
// with (docs/security.md, "Identity verification"). Fetched only when the
// owner asks to see it, never kept beyond this screen's cache.

export const identitySecretQueryKey = (siteId: string) => ['sites', siteId, 'identity-secret'] as const;

export async function fetchIdentitySecret(siteId: string): Promise<string> {
  return (await apiRequest(`/sites/${encodeURIComponent(siteId)}/identity-secret`, { schema: identitySecretResponse })).secret;
}

/** `enabled` starts false: the secret is fetched when the owner reveals it. */
export function useIdentitySecretQuery(siteId: string, enabled: boolean) {
  return useQuery({ queryKey: identitySecretQueryKey(siteId), queryFn: () => fetchIdentitySecret(siteId), enabled, staleTime: Infinity, gcTime: 0 });
}

export async function rotateIdentitySecret(siteId: string): Promise<string> {
  return (await apiRequest(`/sites/${encodeURIComponent(siteId)}/identity-secret/rotate`, { method: 'POST', schema: identitySecretResponse })).secret;
}

export function useRotateIdentitySecretMutation(siteId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => rotateIdentitySecret(siteId),
    onSuccess: (secret) => queryClient.setQueryData(identitySecretQueryKey(siteId), secret),
  });
}
