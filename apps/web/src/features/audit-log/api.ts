import { auditLogResponse, type AuditAction, type AuditLogPage } from '@herald/contracts';
import { useInfiniteQuery } from '@tanstack/react-query';
import { apiDownload, apiRequest, saveFile } from '../../lib/api-client';

// Settings → Audit log (docs/product.md, "Teams").

export interface AuditFilters {
  actor: string;
  action: AuditAction | '';
  /** yyyy-mm-dd, or empty. */
  from: string;
  to: string;
}

export const EMPTY_AUDIT_FILTERS: AuditFilters = { actor: '', action: '', from: '', to: '' };

function filterQuery(filters: AuditFilters): URLSearchParams {
  const query = new URLSearchParams();
  if (filters.actor.trim()) query.set('actor', filters.actor.trim());
  if (filters.action) query.set('action', filters.action);
  if (filters.from) query.set('from', filters.from);
  if (filters.to) query.set('to', filters.to);
  return query;
}

const auditPath = (siteId: string) => `/sites/${encodeURIComponent(siteId)}/audit-log`;

export function fetchAuditPage(siteId: string, filters: AuditFilters, cursor: string | null): Promise<AuditLogPage> {
  const query = filterQuery(filters);
  query.set('limit', '50');
  if (cursor) query.set('cursor', cursor);
  return apiRequest(`${auditPath(siteId)}?${query.toString()}`, { schema: auditLogResponse });
}

/** Newest first, 50 at a time; "Load more" follows the server's keyset cursor. */
export function useAuditLogQuery(siteId: string, filters: AuditFilters, enabled: boolean) {
  return useInfiniteQuery({
    enabled,
    queryKey: ['sites', siteId, 'audit-log', filters],
    queryFn: ({ pageParam }) => fetchAuditPage(siteId, filters, pageParam),
    initialPageParam: null as string | null,
    getNextPageParam: (page) => page.next_cursor,
  });
}

/** The filtered log as a CSV file, saved by the browser. */
export async function downloadAuditCsv(siteId: string, filters: AuditFilters): Promise<void> {
  const { blob, fileName } = await apiDownload(`${auditPath(siteId)}/export?${filterQuery(filters).toString()}`);
  saveFile(blob, fileName ?? 'audit-log.csv');
}
