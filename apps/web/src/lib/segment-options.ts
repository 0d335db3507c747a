import { envelope, segment } from '@herald/contracts';
import { useQuery } from '@tanstack/react-query';
import { z } from 'zod';
import { apiRequest } from './api-client';
import { siteSegmentsKey } from './site-queries';

// The site's segments as the target selects of the notification, welcome
// campaign and RSS feed forms offer them (spec §7 GET /sites/{siteId}/segments
// → data.segments). One query key for all three, so they share one fetch and
// one cache entry.

/**
 * ['sites', siteId, 'segments']. The segments feature (features/segments/api.ts)
 * invalidates exactly this key after every create, edit, delete and estimate,
 * so each target select offers the new list the next time it is shown.
 */
export const segmentOptionsKey = siteSegmentsKey;

/** Only what a select shows; the segments page keeps the whole segments (with rules) under its own key. */
const segmentOption = segment.pick({ id: true, name: true, estimated_count: true, is_estimate: true });
const segmentOptionsResponse = envelope(z.object({ segments: z.array(segmentOption) }));
export type SegmentOption = z.infer<typeof segmentOption>;

export async function fetchSegmentOptions(siteId: string): Promise<SegmentOption[]> {
  return (await apiRequest(`/sites/${encodeURIComponent(siteId)}/segments`, { schema: segmentOptionsResponse })).segments;
}

/** The site's segments, newest first; nothing is fetched without a site. */
export function useSegmentOptions(siteId: string | undefined) {
  return useQuery({ queryKey: segmentOptionsKey(siteId ?? ''), queryFn: () => fetchSegmentOptions(siteId!), enabled: Boolean(siteId) });
}

/**
 * What a send's audience is called: "All Subscribers", its segment's name,
 * "Deleted segment" only when the site's segments were read and it is not
 * among them (a list that failed to load says so instead).
 */
export function audienceLabel(segmentId: string | null, segments: { data?: Array<{ id: string; name: string }>; isPending: boolean; isError: boolean }): string {
  if (!segmentId) return 'All Subscribers';
  const segment = segments.data?.find((option) => option.id === segmentId);
  if (segment) return segment.name;
  if (segments.isPending) return 'Loading...';
  return segments.isError ? 'Segment (could not load)' : 'Deleted segment';
}

const countFormat = new Intl.NumberFormat('en-US');

/**
 * "VIP buyers (1,200)": the spec §3 estimated_count (active subscribers
 * matching now), kept short so a narrow select does not cut it off; "≈ 12,300"
 * when it is estimated from a sample (docs/product.md, "Segments").
 */
export function segmentOptionLabel(option: SegmentOption): string {
  return `${option.name} (${option.is_estimate ? '≈ ' : ''}${countFormat.format(option.estimated_count)})`;
}
