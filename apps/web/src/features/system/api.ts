import { systemChecksResponse, type SystemChecks } from '@herald/contracts';
import { useQuery } from '@tanstack/react-query';
import { apiRequest } from '../../lib/api-client';

// Settings → System: `herald doctor`'s checks, run by the server on request
// (read-only; the install's owner only).

export const systemChecksQueryKey = ['system', 'checks'] as const;

export function fetchSystemChecks(): Promise<SystemChecks> {
  return apiRequest('/system/checks', { schema: systemChecksResponse });
}

/** Network checks take seconds: run once when the panel opens, again on request, never in the background. */
export function useSystemChecksQuery() {
  return useQuery({ queryKey: systemChecksQueryKey, queryFn: fetchSystemChecks, staleTime: Infinity, refetchOnWindowFocus: false, retry: false });
}
