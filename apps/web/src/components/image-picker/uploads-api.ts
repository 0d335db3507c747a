import { uploadDeletedResponse, uploadsListResponse, type UploadsList } from '@herald/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiRequest } from '../../lib/api-client';

// The caller's own uploads (GET /api/uploads, DELETE /api/uploads/{id}): the
// picker offers them again and lets the user free their storage quota.

export const uploadsQueryKey = ['uploads'] as const;

export async function fetchUploads(): Promise<UploadsList> {
  return apiRequest('/uploads', { schema: uploadsListResponse });
}

export async function deleteUpload(id: string): Promise<void> {
  await apiRequest(`/uploads/${encodeURIComponent(id)}`, { method: 'DELETE', schema: uploadDeletedResponse });
}

/** Loaded only while the picker shows them (its upload mode). */
export function useUploadsQuery(enabled: boolean) {
  return useQuery({ queryKey: uploadsQueryKey, queryFn: fetchUploads, enabled });
}

export function useRefreshUploads() {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: uploadsQueryKey });
}

export function useDeleteUploadMutation() {
  const refresh = useRefreshUploads();
  return useMutation({ mutationFn: deleteUpload, onSettled: () => refresh() });
}
