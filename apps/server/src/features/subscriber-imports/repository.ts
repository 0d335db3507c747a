// All SQL of subscriber imports (docs/product.md, "Importing subscribers").
import { sql, type Insertable, type Kysely, type RawBuilder, type Selectable, type Transaction } from 'kysely';
import type { DatabaseKind } from '../../db/database';
import { membershipsOf } from '../../db/membership';
import { numberNewSubscribers } from '../../db/subscriber-seq';
import type { Database, SubscriberImportRejectsTable, SubscriberImportsTable, SubscribersTable } from '../../db/schema';
import type { WithMemberRole } from '../../platform/site-roles';

type Db = Kysely<Database> | Transaction<Database>;
export type ImportRow = Selectable<SubscriberImportsTable>;

/** The site's VAPID keys a subscription may name (retired ones are not), the primary one marked. */
export function siteKeys(db: Db, siteId: string): Promise<Array<{ id: string; public_key: string; is_primary: number }>> {
  return db.selectFrom('site_vapid_keys').select(['id', 'public_key', 'is_primary']).where('site_id', '=', siteId).where('retired_at', 'is', null).execute();
}

export async function insertImport(db: Db, row: Insertable<SubscriberImportsTable>): Promise<void> {
  await db.insertInto('subscriber_imports').values(row).execute();
}

export function findImport(db: Db, importId: string): Promise<ImportRow | undefined> {
  return db.selectFrom('subscriber_imports').selectAll().where('id', '=', importId).executeTakeFirst();
}

/** The import if it belongs to a site of the user, with the user's role there. */
export function findImportOfUser(db: Db, userId: string, importId: string): Promise<(ImportRow & WithMemberRole) | undefined> {
  return db
    .selectFrom('subscriber_imports')
    .innerJoin(membershipsOf(db, userId), 'membership.site_id', 'subscriber_imports.site_id')
    .selectAll('subscriber_imports')
    .select('membership.role as member_role')
    .where('subscriber_imports.id', '=', importId)
    .executeTakeFirst();
}

export function listImports(db: Db, siteId: string, limit: number): Promise<ImportRow[]> {
  return db.selectFrom('subscriber_imports').selectAll().where('site_id', '=', siteId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

/**
 * Claims imports to run: queued ones, and running ones whose lease ran out
 * (their worker died). One conditional UPDATE each, so two schedulers never
 * both take one; returns the claims with their attempt number.
 */
export async function claimImports(db: Db, now: number, leaseUntil: number, limit: number): Promise<Array<{ id: string; attempts: number }>> {
  const candidates = await db
    .selectFrom('subscriber_imports')
    .select('id')
    .where((eb) => eb.or([eb('status', '=', 'queued'), eb.and([eb('status', '=', 'running'), eb('lease_until', '<', now)])]))
    .orderBy('created_at')
    .limit(limit)
    .execute();
  const claimed: Array<{ id: string; attempts: number }> = [];
  for (const { id } of candidates) {
    const row = await db
      .updateTable('subscriber_imports')
      .set((eb) => ({ status: 'running', attempts: eb('attempts', '+', 1), lease_until: leaseUntil }))
      .where('id', '=', id)
      .where((eb) => eb.or([eb('status', '=', 'queued'), eb.and([eb('status', '=', 'running'), eb('lease_until', '<', now)])]))
      .returning('attempts')
      .executeTakeFirst();
    if (row) claimed.push({ id, attempts: Number(row.attempts) });
  }
  return claimed;
}

/** The lines these subscribers were written from, for those this import wrote already (a later line with their endpoint is a duplicate). */
export async function seenLines(db: Db, importId: string, subscriberIds: string[]): Promise<Map<string, number>> {
  if (!subscriberIds.length) return new Map();
  const rows = await db.selectFrom('subscriber_import_seen').select(['subscriber_id', 'line']).where('import_id', '=', importId).where('subscriber_id', 'in', subscriberIds).execute();
  return new Map(rows.map((row) => [row.subscriber_id, Number(row.line)]));
}

/**
 * PostgreSQL takes a batch as one array per column (`unnest`): a handful of
 * parameters instead of twenty per row, so a 5,000-row batch is one short
 * statement to parse and plan (docs/product.md, "Importing subscribers").
 */
function unnestColumns<Row>(rows: readonly Row[], columns: ReadonlyArray<readonly [keyof Row & string, 'text' | 'integer' | 'bigint']>): RawBuilder<unknown> {
  return sql`select * from unnest(${sql.join(columns.map(([column, type]) => sql`${rows.map((row) => row[column])}::${sql.raw(type)}[]`))})`;
}

const SUBSCRIBER_COLUMNS = [
  ['id', 'text'],
  ['site_id', 'text'],
  ['endpoint', 'text'],
  ['endpoint_hash', 'text'],
  ['p256dh', 'text'],
  ['auth', 'text'],
  ['vapid_key_id', 'text'],
  ['browser', 'text'],
  ['os', 'text'],
  ['country', 'text'],
  ['language', 'text'],
  ['timezone', 'text'],
  ['external_id', 'text'],
  ['is_active', 'integer'],
  ['subscribed_at', 'bigint'],
  ['updated_at', 'bigint'],
] as const;

/** A new subscriber as an import writes it (every other column keeps its default). */
export type ImportedSubscriber = { [Column in (typeof SUBSCRIBER_COLUMNS)[number][0]]: Insertable<SubscribersTable>[Column] };

/** Records the subscribers a batch wrote, with their lines. */
export async function markSeen(db: Db, kind: DatabaseKind, importId: string, rows: Array<{ subscriberId: string; line: number }>): Promise<void> {
  if (kind === 'postgres' && rows.length) {
    const values = unnestColumns(
      rows.map((row) => ({ import_id: importId, subscriber_id: row.subscriberId, line: row.line })),
      [
        ['import_id', 'text'],
        ['subscriber_id', 'text'],
        ['line', 'bigint'],
      ],
    );
    await sql`insert into subscriber_import_seen (import_id, subscriber_id, line) ${values} on conflict (import_id, subscriber_id) do nothing`.execute(db);
    return;
  }
  for (let i = 0; i < rows.length; i += 1000) {
    await db
      .insertInto('subscriber_import_seen')
      .values(rows.slice(i, i + 1000).map((row) => ({ import_id: importId, subscriber_id: row.subscriberId, line: row.line })))
      .onConflict((oc) => oc.columns(['import_id', 'subscriber_id']).doNothing())
      .execute();
  }
}

/** The site's subscribers with these endpoint hashes. */
export function subscribersByHash(db: Db, siteId: string, hashes: string[]): Promise<Array<{ id: string; endpoint_hash: string; external_id: string | null }>> {
  if (!hashes.length) return Promise.resolve([]);
  return db.selectFrom('subscribers').select(['id', 'endpoint_hash', 'external_id']).where('site_id', '=', siteId).where('endpoint_hash', 'in', hashes).execute();
}

/** Rows per INSERT on SQLite (16 parameters a row, well under its limit). */
const SQLITE_INSERT_CHUNK = 500;

/** Inserts new subscribers; the hashes of those inserted (a concurrent subscribe may have taken one). */
export async function insertSubscribers(db: Db, kind: DatabaseKind, rows: ImportedSubscriber[]): Promise<Set<string>> {
  const inserted = new Set<string>();
  if (!rows.length) return inserted;
  if (kind === 'postgres') {
    const columns = sql.join(SUBSCRIBER_COLUMNS.map(([column]) => sql.ref(column)));
    const result = await sql<{ endpoint_hash: string }>`insert into subscribers (${columns}) ${unnestColumns(rows, SUBSCRIBER_COLUMNS)}
      on conflict (site_id, endpoint_hash) do nothing returning endpoint_hash`.execute(db);
    for (const row of result.rows) inserted.add(row.endpoint_hash);
    return inserted;
  }
  for (let i = 0; i < rows.length; i += SQLITE_INSERT_CHUNK) {
    const chunk = await db
      .insertInto('subscribers')
      .values(await numberNewSubscribers(db, kind, rows.slice(i, i + SQLITE_INSERT_CHUNK)))
      .onConflict((oc) => oc.columns(['site_id', 'endpoint_hash']).doNothing())
      .returning('endpoint_hash')
      .execute();
    for (const row of chunk) inserted.add(row.endpoint_hash);
  }
  return inserted;
}

export interface SubscriberImportUpdate {
  p256dh: string;
  auth: string;
  vapid_key_id: string;
  updated_at: number;
  browser?: string;
  os?: string;
  country?: string;
  language?: string;
  timezone?: string;
  external_id?: string;
}

/** Updates a known endpoint's keys, key and the metadata the row gave; its active state stays as it is. */
export async function updateSubscriber(db: Db, siteId: string, hash: string, update: SubscriberImportUpdate): Promise<string | undefined> {
  const row = await db.updateTable('subscribers').set(update).where('site_id', '=', siteId).where('endpoint_hash', '=', hash).returning('id').executeTakeFirst();
  return row?.id;
}

/** Adds tags (kept ones stay: tags are merged). */
export async function addTags(db: Db, kind: DatabaseKind, rows: Array<{ subscriber_id: string; site_id: string; tag: string }>): Promise<void> {
  if (kind === 'postgres' && rows.length) {
    const values = unnestColumns(rows, [
      ['subscriber_id', 'text'],
      ['site_id', 'text'],
      ['tag', 'text'],
    ]);
    await sql`insert into subscriber_tags (subscriber_id, site_id, tag) ${values} on conflict (subscriber_id, tag) do nothing`.execute(db);
    return;
  }
  for (let i = 0; i < rows.length; i += 1000) {
    await db
      .insertInto('subscriber_tags')
      .values(rows.slice(i, i + 1000))
      .onConflict((oc) => oc.columns(['subscriber_id', 'tag']).doNothing())
      .execute();
  }
}

export async function insertRejects(db: Db, rows: Array<Insertable<SubscriberImportRejectsTable>>): Promise<void> {
  for (let i = 0; i < rows.length; i += 500) {
    await db
      .insertInto('subscriber_import_rejects')
      .values(rows.slice(i, i + 500))
      .onConflict((oc) => oc.columns(['import_id', 'line']).doNothing())
      .execute();
  }
}

export interface Progress {
  bytesRead: number;
  linesRead: number;
  rows: number;
  imported: number;
  updated: number;
  rejected: number;
  columns?: string;
}

/**
 * Moves the import's progress on and renews its lease, only while this claim
 * (attempt) holds it: false when another worker took it over, and the
 * caller's transaction is rolled back.
 */
export async function advanceImport(db: Db, importId: string, attempt: number, progress: Progress, leaseUntil: number): Promise<boolean> {
  const row = await db
    .updateTable('subscriber_imports')
    .set((eb) => ({
      bytes_read: progress.bytesRead,
      lines_read: progress.linesRead,
      rows_read: eb('rows_read', '+', progress.rows),
      imported: eb('imported', '+', progress.imported),
      updated: eb('updated', '+', progress.updated),
      rejected: eb('rejected', '+', progress.rejected),
      lease_until: leaseUntil,
      ...(progress.columns !== undefined ? { columns: progress.columns } : {}),
    }))
    .where('id', '=', importId)
    .where('status', '=', 'running')
    .where('attempts', '=', attempt)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Ends an import (done or failed); false when this claim no longer holds it. */
export async function finishImport(db: Db, importId: string, attempt: number | null, status: 'done' | 'failed', error: string | null, now: number): Promise<boolean> {
  let query = db.updateTable('subscriber_imports').set({ status, error, finished_at: now, lease_until: null }).where('id', '=', importId).where('status', 'in', ['queued', 'running']);
  if (attempt !== null) query = query.where('attempts', '=', attempt);
  return (await query.returning('id').executeTakeFirst()) !== undefined;
}

export async function forgetSeen(db: Db, importId: string): Promise<void> {
  await db.deleteFrom('subscriber_import_seen').where('import_id', '=', importId).execute();
}

/** One page of the report, by line. */
export function rejectsPage(db: Db, importId: string, afterLine: number, limit: number): Promise<Array<Selectable<SubscriberImportRejectsTable>>> {
  return db.selectFrom('subscriber_import_rejects').selectAll().where('import_id', '=', importId).where('line', '>', afterLine).orderBy('line').limit(limit).execute();
}

