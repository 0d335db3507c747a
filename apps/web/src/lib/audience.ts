import { audienceResponse } from '@herald/contracts';
import { useQuery } from '@tanstack/react-query';
import { apiRequest } from './api-client';
import { siteSegmentsKey } from './site-queries';

// Reach before sending (issue 11): GET /sites/{siteId}/audience?segment_id=
// → data.count, the active subscribers a send would reach now (on a large
// site a segment's reach is estimated from a sample, and says so: docs/
// product.md, "Segments"). Under the segments key, so a segment's change
// counts again.

export const audienceKey = (siteId: string, segmentId: string | null) => [...siteSegmentsKey(siteId), 'audience', segmentId ?? 'all'] as const;

/** A reach: exact (sample_size null) or estimated from that many sampled active subscribers. */
export interface Reach {
  count: number;
  sample_size: number | null;
}

export async function fetchAudienceCount(siteId: string, segmentId: string | null): Promise<Reach> {
  const query = segmentId ? `?segment_id=${encodeURIComponent(segmentId)}` : '';
  const { count, sample_size } = await apiRequest(`/sites/${encodeURIComponent(siteId)}/audience${query}`, { schema: audienceResponse });
  return { count, sample_size };
}

/** The active subscribers a send to everyone (segmentId null) or to a segment would reach now; nothing is fetched without a site. */
export function useAudienceCount(siteId: string | undefined, segmentId: string | null) {
  return useQuery({ queryKey: audienceKey(siteId ?? '', segmentId), queryFn: () => fetchAudienceCount(siteId!, segmentId), enabled: Boolean(siteId) });
}

const countFormat = new Intl.NumberFormat('en-US');

/** "Will reach 1,234 subscribers" (issue 11), or "Will reach about 12,300 subscribers (estimated from a sample of 11,702)". */
export function reachText({ count, sample_size }: Reach): string {
  const noun = count === 1 ? 'subscriber' : 'subscribers';
  if (sample_size === null) return `Will reach ${countFormat.format(count)} ${noun}`;
  return `Will reach about ${countFormat.format(count)} ${noun} (estimated from a sample of ${countFormat.format(sample_size)})`;
}
