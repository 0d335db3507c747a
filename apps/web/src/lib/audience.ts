import { audienceResponse } from '@herald/contracts';
import { useQuery } from '@tanstack/react-query';
import { apiRequest } from './api-client';
import { siteSegmentsKey } from './site-queries';

// Reach before sending (issue 11): GET /sites/{siteId}/audience?segment_id=
// → data.count, the active subscribers a send would reach now. Under the
// segments key, so a segment's change counts again.

export const audienceKey = (siteId: string, segmentId: string | null) => [...siteSegmentsKey(siteId), 'audience', segmentId ?? 'all'] as const;

export async function fetchAudienceCount(siteId: string, segmentId: string | null): Promise<number> {
  const query = segmentId ? `?segment_id=${encodeURIComponent(segmentId)}` : '';
  return (await apiRequest(`/sites/${encodeURIComponent(siteId)}/audience${query}`, { schema: audienceResponse })).count;
}

/** The active subscribers a send to everyone (segmentId null) or to a segment would reach now; nothing is fetched without a site. */
export function useAudienceCount(siteId: string | undefined, segmentId: string | null) {
  return useQuery({ queryKey: audienceKey(siteId ?? '', segmentId), queryFn: () => fetchAudienceCount(siteId!, segmentId), enabled: Boolean(siteId) });
}

const countFormat = new Intl.NumberFormat('en-US');

/** "Will reach 1,234 subscribers" (issue 11). */
export function reachText(count: number): string {
  return `Will reach ${countFormat.format(count)} ${count === 1 ? 'subscriber' : 'subscribers'}`;
}
