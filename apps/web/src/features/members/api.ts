import {
  acceptInvitationAsNewResponse,
  acceptInvitationResponse,
  envelope,
  invitationPreviewResponse,
  inviteResponse,
  memberResponse,
  membersResponse,
  type MembersList,
  type SiteRole,
} from '@herald/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { z } from 'zod';
import { apiRequest } from '../../lib/api-client';
import { sitesQueryKey } from '../sites/api';

// Settings → Members, and the emailed invitation link (docs/product.md, "Teams").

const done = envelope(z.object({ done: z.literal(true) }));
const sitePath = (siteId: string) => `/sites/${encodeURIComponent(siteId)}`;
export const membersQueryKey = (siteId: string) => ['sites', siteId, 'members'] as const;

export async function fetchMembers(siteId: string): Promise<MembersList> {
  return apiRequest(`${sitePath(siteId)}/members`, { schema: membersResponse });
}

export function useMembersQuery(siteId: string) {
  return useQuery({ queryKey: membersQueryKey(siteId), queryFn: () => fetchMembers(siteId) });
}

/** Every change of members refreshes the list (and the sites: a transfer or leave changes the caller's own role). */
function useMembersMutation<Input>(siteId: string, mutationFn: (input: Input) => Promise<unknown>) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn,
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: membersQueryKey(siteId) });
    },
  });
}

export function useInviteMutation(siteId: string) {
  return useMembersMutation(siteId, (input: { email: string; role: SiteRole; alsoSiteIds: string[] }) =>
    apiRequest(`${sitePath(siteId)}/invitations`, {
      method: 'POST',
      body: { email: input.email, role: input.role, ...(input.alsoSiteIds.length ? { also_site_ids: input.alsoSiteIds } : {}) },
      schema: inviteResponse,
    }),
  );
}

export function useRevokeInvitationMutation(siteId: string) {
  return useMembersMutation(siteId, (id: string) => apiRequest(`${sitePath(siteId)}/invitations/${encodeURIComponent(id)}`, { method: 'DELETE', schema: done }));
}

export function useChangeRoleMutation(siteId: string) {
  return useMembersMutation(siteId, (input: { userId: string; role: SiteRole }) =>
    apiRequest(`${sitePath(siteId)}/members/${encodeURIComponent(input.userId)}`, { method: 'PATCH', body: { role: input.role }, schema: memberResponse }),
  );
}

export function useRemoveMemberMutation(siteId: string) {
  return useMembersMutation(siteId, (userId: string) => apiRequest(`${sitePath(siteId)}/members/${encodeURIComponent(userId)}`, { method: 'DELETE', schema: done }));
}

export function useTransferOwnershipMutation(siteId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (userId: string) => apiRequest(`${sitePath(siteId)}/transfer-ownership`, { method: 'POST', body: { user_id: userId }, schema: done }),
    onSuccess: async () => {
      await Promise.all([queryClient.invalidateQueries({ queryKey: membersQueryKey(siteId) }), queryClient.invalidateQueries({ queryKey: sitesQueryKey })]);
    },
  });
}

export function useLeaveSiteMutation() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (siteId: string) => apiRequest(`${sitePath(siteId)}/leave`, { method: 'POST', schema: done }),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: sitesQueryKey });
    },
  });
}

export function previewInvitation(token: string) {
  return apiRequest('/invitations/preview', { method: 'POST', body: { token }, schema: invitationPreviewResponse });
}

export function useInvitationPreviewQuery(token: string) {
  return useQuery({ queryKey: ['invitations', 'preview', token], queryFn: () => previewInvitation(token), enabled: token !== '', retry: false });
}

export function useAcceptInvitationMutation() {
  return useMutation({ mutationFn: (token: string) => apiRequest('/invitations/accept', { method: 'POST', body: { token }, schema: acceptInvitationResponse }) });
}

export function useAcceptInvitationAsNewMutation() {
  return useMutation({
    mutationFn: (input: { token: string; name: string; password: string }) =>
      apiRequest('/invitations/accept-new', { method: 'POST', body: input, schema: acceptInvitationAsNewResponse }),
  });
}
