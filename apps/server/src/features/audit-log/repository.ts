import { sql, type Kysely, type Transaction } from 'kysely';
import type { AuditLogRow, Database } from '../../db/schema';

type Db = Kysely<Database> | Transaction<Database>;

export interface NewAuditRow {
  id: string;
  site_id: string;
  created_at: number;
  actor: { type: 'user'; userId: string } | { type: 'api_key'; apiKeyId: string };
  action: AuditLogRow['action'];
  subject_type: AuditLogRow['subject_type'];
  subject_id: string | null;
  subject_label: string | null;
  changed_fields: string;
  detail: string;
  address: string | null;
}

/** One insert; the actor's label (name and email, or the key's name) is read in the same statement, as it is now. */
export async function insertAuditRow(db: Db, row: NewAuditRow): Promise<void> {
  const { actor, ...rest } = row;
  const actorLabel =
    actor.type === 'user'
      ? db
          .selectFrom('users')
          .select(sql<string>`users.name || ' <' || users.email || '>'`.as('label'))
          .where('users.id', '=', actor.userId)
      : db.selectFrom('site_api_keys').select(sql<string>`'API key ' || site_api_keys.name`.as('label')).where('site_api_keys.id', '=', actor.apiKeyId);
  await db
    .insertInto('audit_log')
    .values({
      ...rest,
      actor_type: actor.type,
      actor_id: actor.type === 'user' ? actor.userId : actor.apiKeyId,
      actor_label: sql<string>`coalesce((${actorLabel}), ${actor.type === 'user' ? actor.userId : actor.apiKeyId})`,
    })
    .execute();
}

export interface AuditFilter {
  siteId: string;
  actor?: string;
  action?: AuditLogRow['action'];
  from?: number;
  to?: number;
  /** Keyset: the entries strictly older than this one (newest first). */
  before?: { createdAt: number; id: string };
}

/** Newest first, by (created_at, id): a keyset page, stable while new entries arrive. */
export function listAuditRows(db: Db, filter: AuditFilter, limit: number): Promise<AuditLogRow[]> {
  let query = db.selectFrom('audit_log').selectAll().where('site_id', '=', filter.siteId);
  if (filter.actor !== undefined) {
    const actor = filter.actor;
    query = query.where((eb) =>
      eb.or([eb('actor_id', '=', actor), eb('actor_id', 'in', eb.selectFrom('users').select('users.id').where('users.email', '=', actor.toLowerCase()))]),
    );
  }
  if (filter.action !== undefined) query = query.where('action', '=', filter.action);
  if (filter.from !== undefined) query = query.where('created_at', '>=', filter.from);
  if (filter.to !== undefined) query = query.where('created_at', '<=', filter.to);
  if (filter.before) {
    const { createdAt, id } = filter.before;
    query = query.where((eb) => eb.or([eb('created_at', '<', createdAt), eb.and([eb('created_at', '=', createdAt), eb('id', '<', id)])]));
  }
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

/** Deletes up to `limit` entries older than `cutoff`; returns how many (the retention sweep, the only deleter). */
export async function deleteAuditRowsBefore(db: Db, cutoff: number, limit: number): Promise<number> {
  const old = db.selectFrom('audit_log').select('id').where('created_at', '<', cutoff).limit(limit);
  const result = await db.deleteFrom('audit_log').where('id', 'in', old).executeTakeFirst();
  return Number(result.numDeletedRows);
}
