import {
  segmentDeletedResponse,
  segmentEstimateResponse,
  segmentListResponse,
  segmentResponse,
  type CreateSegmentBody,
  type Segment,
  type SegmentEstimate,
  type UpdateSegmentBody,
} from '@herald/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiRequest } from '../../lib/api-client';
import { siteSegmentsKey } from '../../lib/site-queries';

// Spec §7 Segments. Fetchers and hooks side by side; mutations keep the
// cached list in step with what the server answered.

/**
 * Other screens (the notification form's target select) cache their own view
 * of the same list under ['sites', siteId, 'segments']; this page keeps the
 * whole segments, with their rules, one level below, so neither reads the
 * other's shape. A change here refreshes theirs.
 */
export const segmentListKey = (siteId: string) => [...siteSegmentsKey(siteId), 'with-rules'] as const;

const byId = (id: string) => `/segments/${encodeURIComponent(id)}`;

/** Newest first. */
export async function fetchSegments(siteId: string): Promise<Segment[]> {
  return (await apiRequest(`/sites/${encodeURIComponent(siteId)}/segments`, { schema: segmentListResponse })).segments;
}

export function useSegmentsQuery(siteId: string) {
  return useQuery({ queryKey: segmentListKey(siteId), queryFn: () => fetchSegments(siteId) });
}

export async function createSegment(input: { siteId: string; body: CreateSegmentBody }): Promise<Segment> {
  return (await apiRequest(`/sites/${encodeURIComponent(input.siteId)}/segments`, { method: 'POST', body: input.body, schema: segmentResponse })).segment;
}

export async function updateSegment(input: { id: string; changes: UpdateSegmentBody }): Promise<Segment> {
  return (await apiRequest(byId(input.id), { method: 'PATCH', body: input.changes, schema: segmentResponse })).segment;
}

export async function deleteSegment(id: string): Promise<void> {
  await apiRequest(byId(id), { method: 'DELETE', schema: segmentDeletedResponse });
}

/** POST /segments/{id}/estimate (no body): the number of active subscribers matching now, and whether it is estimated from a sample. */
export async function estimateSegment(id: string): Promise<SegmentEstimate> {
  return apiRequest(`${byId(id)}/estimate`, { method: 'POST', schema: segmentEstimateResponse });
}

/**
 * Applies a change to the cached list and tells other screens' segment lists
 * (the notification, campaign and feed target selects) to refetch.
 */
function useSegmentListUpdater() {
  const queryClient = useQueryClient();
  return (siteId: string, change: (segments: Segment[]) => Segment[]) => {
    queryClient.setQueryData<Segment[]>(segmentListKey(siteId), (segments) => (segments ? change(segments) : segments));
    // This page's own list was just updated in place; everything else under the site's segments key refetches.
    const own = JSON.stringify(segmentListKey(siteId));
    void queryClient.invalidateQueries({ queryKey: siteSegmentsKey(siteId), predicate: (query) => JSON.stringify(query.queryKey) !== own });
  };
}

const replace = (segment: Segment) => (segments: Segment[]) => segments.map((s) => (s.id === segment.id ? segment : s));

export function useCreateSegmentMutation() {
  const update = useSegmentListUpdater();
  return useMutation({ mutationFn: createSegment, onSuccess: (segment) => update(segment.site_id, (segments) => [segment, ...segments]) });
}

export function useUpdateSegmentMutation() {
  const update = useSegmentListUpdater();
  return useMutation({ mutationFn: updateSegment, onSuccess: (segment) => update(segment.site_id, replace(segment)) });
}

export function useDeleteSegmentMutation() {
  const update = useSegmentListUpdater();
  return useMutation({
    mutationFn: (segment: Pick<Segment, 'id' | 'site_id'>) => deleteSegment(segment.id),
    onSuccess: (_result, segment) => update(segment.site_id, (segments) => segments.filter((s) => s.id !== segment.id)),
  });
}

export function useEstimateSegmentMutation() {
  const update = useSegmentListUpdater();
  return useMutation({
    mutationFn: async (segment: Segment) => ({ ...segment, ...(await estimateSegment(segment.id)) }),
    onSuccess: (segment) => update(segment.site_id, replace(segment)),
  });
}
