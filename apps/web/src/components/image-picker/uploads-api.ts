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

/** "245 KB", "1.2 MB", "200 MB" (binary units, as the server's quota). */
export function formatBytes(bytes: number): string {
  if (bytes === 0) return '0 KB';
  // A few bytes still read as 1 KB, never as "0 KB" of something.
  if (bytes < 1024 * 1024) return `${Math.max(1, Math.round(bytes / 1024))} KB`;
  const megabytes = bytes / (1024 * 1024);
  return `${Number.isInteger(megabytes) ? megabytes : megabytes.toFixed(1)} MB`;
}
