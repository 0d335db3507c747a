// A delivery row names its subscriber by the subscriber's number,
// subscribers.seq, not by its UUID (migration 0036; docs/storage.md, "Bytes
// per delivery"), as it names its run (run-seq.ts). Everything outside the
// deliveries table keeps the UUID. A send's audience pages carry each
// subscriber's number; elsewhere subscriberSeqOf turns one UUID into its
// number inside a query (a primary-key read evaluated once per statement,
// so the deliveries' subscriber index serves the rest). New subscribers are
// numbered on insert: numberNewSubscribers.
import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { DatabaseKind } from './database';
import type { Database } from './schema';

/** For `.where('subscriber_seq', '=', …)`: the number of the subscriber with this id. */
export function subscriberSeqOf(subscriberId: string): RawBuilder<number> {
  return sql<number>`(select seq from subscribers where id = ${subscriberId})`;
}

/**
 * New subscriber rows numbered before they are inserted, so that the INSERT
 * sets `seq` itself. SQLite: the numbers are taken from the counter row in
 * one statement (migration 0036), which spares each row the trigger's second
 * write (a number taken for a row the insert then skips is simply never
 * used); PostgreSQL: the rows as they are, the column's sequence numbers
 * each row as it goes in.
 */
export async function numberNewSubscribers<Row extends object>(db: Kysely<Database> | Transaction<Database>, kind: DatabaseKind, rows: readonly Row[]): Promise<Array<Row & { seq?: number }>> {
  if (kind === 'postgres' || rows.length === 0) return [...rows];
  const { last } = await db
    .updateTable('seq_counters')
    .set((eb) => ({ last: eb('last', '+', rows.length) }))
    .where('name', '=', 'subscribers')
    .returning('last')
    .executeTakeFirstOrThrow();
  return rows.map((row, i) => ({ ...row, seq: last - rows.length + 1 + i }));
}

/** The site's subscribers' numbers by id (for code that writes delivery rows itself: the demo's history, benches). */
export async function subscriberSeqsOfSite(db: Kysely<Database> | Transaction<Database>, siteId: string): Promise<Map<string, number>> {
  const rows = await db.selectFrom('subscribers').select(['id', 'seq']).where('site_id', '=', siteId).execute();
  return new Map(rows.map((row) => [row.id, Number(row.seq)]));
}
