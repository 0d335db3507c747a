import { subscriberImportResponse, subscriberImportsResponse, type SubscriberImport } from '@herald/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { apiDownload, apiRequest, saveFile } from '../../lib/api-client';
import { invalidateSiteAudience } from '../../lib/site-queries';

// Settings → Import (docs/product.md, "Importing subscribers"): a file of
// browser subscriptions from another push service, read by a background job
// on the server; the dashboard uploads it and follows the job's progress.

export const subscriberImportsQueryKey = (siteId: string) => ['sites', siteId, 'subscriber-imports'] as const;

const importsPath = (siteId: string) => `/sites/${encodeURIComponent(siteId)}/subscriber-imports`;

/** While an import is queued or running, its progress is read again this often. */
export const IMPORT_PROGRESS_POLL_MS = 1000;

export const isImportInProgress = (item: Pick<SubscriberImport, 'status'>) => item.status === 'queued' || item.status === 'running';

export function useSubscriberImportsQuery(siteId: string, enabled: boolean) {
  const queryClient = useQueryClient();
  const query = useQuery({
    queryKey: subscriberImportsQueryKey(siteId),
    queryFn: async () => (await apiRequest(importsPath(siteId), { schema: subscriberImportsResponse })).imports,
    enabled,
    refetchInterval: (query) => (query.state.data?.some(isImportInProgress) ? IMPORT_PROGRESS_POLL_MS : false),
  });
  // An import that finished since the last poll added subscribers: the list's total, the dashboard and the reach counts follow.
  const inProgress = useRef<ReadonlySet<string>>(new Set());
  useEffect(() => {
    if (!query.data) return;
    const nowInProgress = new Set(query.data.filter(isImportInProgress).map((item) => item.id));
    const finished = [...inProgress.current].some((id) => !nowInProgress.has(id));
    inProgress.current = nowInProgress;
    if (finished) void invalidateSiteAudience(queryClient, siteId);
  }, [query.data, queryClient, siteId]);
  return query;
}

export interface StartImportInput {
  file: File;
  /** The site's key the rows were subscribed with, for rows without `vapid_public_key`; empty: the primary key. */
  vapidKeyId: string;
  enrolInWelcomeCampaign: boolean;
}

export function useStartSubscriberImportMutation(siteId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({ file, vapidKeyId, enrolInWelcomeCampaign }: StartImportInput) => {
      const form = new FormData();
      // Fields before the file: the server reads the parts in order and streams the file last.
      if (vapidKeyId) form.append('vapid_key_id', vapidKeyId);
      form.append('enrol_in_welcome_campaign', enrolInWelcomeCampaign ? 'true' : 'false');
      form.append('file', file, file.name);
      return (await apiRequest(importsPath(siteId), { method: 'POST', body: form, schema: subscriberImportResponse })).import;
    },
    onSuccess: (started) => {
      queryClient.setQueryData<SubscriberImport[]>(subscriberImportsQueryKey(siteId), (imports) => [started, ...(imports ?? []).filter((item) => item.id !== started.id)]);
      void queryClient.invalidateQueries({ queryKey: subscriberImportsQueryKey(siteId) });
    },
  });
}

/** The rejected rows of a finished import, with the reason for each, as CSV. */
export async function downloadImportReport(item: Pick<SubscriberImport, 'id'>): Promise<void> {
  const { blob, fileName } = await apiDownload(`/subscriber-imports/${encodeURIComponent(item.id)}/report`);
  saveFile(blob, fileName ?? `herald-import-${item.id}-rejected.csv`);
}
