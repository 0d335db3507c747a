import { AUDIT_ACTION_LABELS, type AuditEntry, type AuditLogPage, type AuditLogQuery } from '@herald/contracts';
import type { AppContext } from '../../context';
import type { AuditLogRow } from '../../db/schema';
import type { DueWorkSource } from '../../jobs/scheduler';
import { badRequest } from '../../platform/errors';
import { iso } from '../../platform/responses';
import { requireSiteRole } from '../sites/service';
import { recordAudit } from './record';
import * as repo from './repository';
import { csvLine } from '../../platform/csv';

const DAY_MS = 86_400_000;
/** An export holds at most this many entries (newest first); narrower dates get the rest. */
const AUDIT_EXPORT_MAX_ROWS = 50_000;
const EXPORT_PAGE = 1_000;

function parseJson<T>(text: string, fallback: T): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

function toEntry(row: AuditLogRow): AuditEntry {
  return {
    id: row.id,
    at: iso(row.created_at),
    actor: { type: row.actor_type, id: row.actor_id, label: row.actor_label },
    action: row.action,
    subject: { type: row.subject_type, id: row.subject_id, label: row.subject_label },
    changed_fields: parseJson<string[]>(row.changed_fields, []),
    detail: parseJson<Record<string, unknown>>(row.detail, {}),
    address: row.address,
  };
}

/** The keyset cursor: the last entry of a page, opaque to clients. */
const encodeCursor = (row: AuditLogRow) => Buffer.from(`${row.created_at}:${row.id}`).toString('base64url');
function decodeCursor(cursor: string): { createdAt: number; id: string } {
  const match = /^(\d{1,16}):([0-9a-z]{1,64})$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!match) throw badRequest('cursor: not a cursor this server gave out');
  return { createdAt: Number(match[1]), id: match[2]! };
}

type Filters = Omit<AuditLogQuery, 'cursor' | 'limit'>;

function filterOf(siteId: string, query: Filters): repo.AuditFilter {
  // A bare date as `to` means the whole of that day (UTC).
  const to = query.to !== undefined ? Date.parse(query.to) + (/^\d{4}-\d{2}-\d{2}$/.test(query.to) ? DAY_MS - 1 : 0) : undefined;
  return { siteId, actor: query.actor, action: query.action, from: query.from !== undefined ? Date.parse(query.from) : undefined, to };
}

/** Settings → Audit log (admin or higher): who did what, when, from where. Read-only: no route changes an entry. */
export function createAuditLogService(ctx: AppContext) {
  const { db } = ctx;
  return {
    async list(userId: string, siteId: string, query: Filters & { cursor?: string; limit: number }): Promise<AuditLogPage> {
      await requireSiteRole(ctx, userId, siteId, 'admin');
      const filter = { ...filterOf(siteId, query), ...(query.cursor ? { before: decodeCursor(query.cursor) } : {}) };
      const rows = await repo.listAuditRows(db, filter, query.limit + 1);
      const page = rows.slice(0, query.limit);
      return { entries: page.map(toEntry), next_cursor: rows.length > query.limit ? encodeCursor(page[page.length - 1]!) : null };
    },

    /** The filtered log as CSV (cells neutralised against formula injection); the export itself is logged. */
    async exportCsv(userId: string, siteId: string, query: Filters): Promise<string> {
      await requireSiteRole(ctx, userId, siteId, 'admin');
      const lines = [csvLine(['time', 'actor', 'actor_type', 'action', 'subject_type', 'subject', 'subject_id', 'changed_fields', 'detail', 'address'])];
      const filter = filterOf(siteId, query);
      let before: repo.AuditFilter['before'];
      let total = 0;
      while (total < AUDIT_EXPORT_MAX_ROWS) {
        const rows = await repo.listAuditRows(db, { ...filter, before }, Math.min(EXPORT_PAGE, AUDIT_EXPORT_MAX_ROWS - total));
        for (const row of rows) {
          const entry = toEntry(row);
          lines.push(
            csvLine([
              entry.at,
              entry.actor.label,
              entry.actor.type,
              AUDIT_ACTION_LABELS[entry.action] ?? entry.action,
              entry.subject.type,
              entry.subject.label ?? '',
              entry.subject.id ?? '',
              entry.changed_fields.join(' '),
              JSON.stringify(entry.detail),
              entry.address ?? '',
            ]),
          );
        }
        total += rows.length;
        if (rows.length < EXPORT_PAGE) break;
        const last = rows[rows.length - 1]!;
        before = { createdAt: last.created_at, id: last.id };
      }
      await recordAudit(ctx, { siteId, actor: { userId }, action: 'export_run', subject: { type: 'audit_log' }, detail: { rows: total, ...query } });
      return lines.join('');
    },
  };
}

export interface AuditRetentionOptions {
  everyMs: number;
  batchSize: number;
  maxBatches: number;
}

const RETENTION_DEFAULTS: AuditRetentionOptions = { everyMs: 60 * 60_000, batchSize: 1_000, maxBatches: 20 };

/**
 * Keeps the audit log AUDIT_LOG_RETENTION_DAYS days (docs/security.md, "Audit
 * log"): the one place entries are deleted, in bounded batches, at most once
 * an hour per process (deleting the same old rows twice is harmless).
 */
export function auditLogRetentionSource(ctx: Pick<AppContext, 'db' | 'config' | 'log'>, options: AuditRetentionOptions = RETENTION_DEFAULTS): DueWorkSource {
  let lastSweepAt = -Infinity;
  return {
    name: 'audit-log-retention',
    async runDue(now) {
      if (now - lastSweepAt < options.everyMs) return;
      lastSweepAt = now;
      const cutoff = now - ctx.config.auditLogRetentionDays * DAY_MS;
      let deleted = 0;
      for (let batch = 0; batch < options.maxBatches; batch++) {
        const count = await repo.deleteAuditRowsBefore(ctx.db, cutoff, options.batchSize);
        deleted += count;
        if (count < options.batchSize) break;
      }
      if (deleted > 0) ctx.log.info({ deleted }, 'purged old audit log entries');
    },
  };
}
