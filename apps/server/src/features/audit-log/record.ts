import crypto from 'node:crypto';
import type { AuditAction, AuditSubjectType } from '@herald/contracts';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema';
import type { Clock } from '../../platform/clock';
import { currentClientAddress } from '../../platform/request-context';
import { insertAuditRow } from './repository';

// The one entry point that writes the audit log (docs/product.md, "Teams";
// docs/security.md, "Audit log"). Services call it for every change they make,
// inside the change's transaction where they have one; routes never do.

export type AuditActor = { userId: string } | { apiKeyId: string };

export interface AuditRecord {
  siteId: string;
  actor: AuditActor;
  action: AuditAction;
  subject: { type: AuditSubjectType; id?: string | null; label?: string | null };
  changedFields?: string[];
  detail?: Record<string, unknown>;
}

let sequence = 0;

/** Sorts by time, then by the order this process wrote them, so entries of one millisecond keep their order. */
function entryId(now: number): string {
  sequence = (sequence + 1) % 36 ** 4;
  return `${now.toString(36).padStart(9, '0')}${sequence.toString(36).padStart(4, '0')}${crypto.randomBytes(6).toString('hex')}`;
}

export async function recordAudit(ctx: { db: Kysely<Database>; clock: Clock }, record: AuditRecord, trx?: Transaction<Database>): Promise<void> {
  const now = ctx.clock.now();
  await insertAuditRow(trx ?? ctx.db, {
    id: entryId(now),
    site_id: record.siteId,
    created_at: now,
    actor: 'userId' in record.actor ? { type: 'user', userId: record.actor.userId } : { type: 'api_key', apiKeyId: record.actor.apiKeyId },
    action: record.action,
    subject_type: record.subject.type,
    subject_id: record.subject.id ?? null,
    subject_label: record.subject.label ?? null,
    changed_fields: JSON.stringify(record.changedFields ?? []),
    detail: JSON.stringify(record.detail ?? {}),
    address: currentClientAddress(),
  });
}

/**
 * The names of the fields an update changes: those of `changes` whose value
 * differs from `before` (bookkeeping columns left out), in the API's words
 * where `names` renames a column.
 */
export function changedFields(before: object, changes: object, names: Record<string, string> = {}): string[] {
  const old = before as Record<string, unknown>;
  return Object.entries(changes)
    .filter(([key, value]) => value !== undefined && key !== 'updated_at' && old[key] !== value)
    .map(([key]) => names[key] ?? key);
}
