// A delivery row names its subscriber by the subscriber's number,
// subscribers.seq, not by its UUID (migration 0036; docs/storage.md, "Bytes
// per delivery"), as it names its run (run-seq.ts). Everything outside the
// deliveries table keeps the UUID. A send's audience pages carry each
// subscriber's number; elsewhere subscriberSeqOf turns one UUID into its
// number inside a query (a primary-key read evaluated once per statement,
// so the deliveries' subscriber index serves the rest). New subscribers are
// numbered on insert: reserveSubscriberSeqs.
import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { DatabaseKind } from './database';
import type { Database } from './schema';

/** For `.where('subscriber_seq', '=', …)`: the number of the subscriber with this id. */
export function subscriberSeqOf(subscriberId: string): RawBuilder<number> {
  return sql<number>`(select seq from subscribers where id = ${subscriberId})`;
}

/**
 * Numbers for `count` subscribers about to be inserted, so that the INSERT
 * sets `seq` itself. SQLite: taken from the counter row in one statement
 * (migration 0036), which spares each row the trigger's second write (a
 * number taken for a row the insert then skips is simply never used);
 * PostgreSQL: none, the column's sequence numbers each row as it goes in.
 */
export async function reserveSubscriberSeqs(db: Kysely<Database> | Transaction<Database>, kind: DatabaseKind, count: number): Promise<number[] | undefined> {
  if (kind === 'postgres' || count === 0) return undefined;
  const { last } = await db
    .updateTable('seq_counters')
    .set((eb) => ({ last: eb('last', '+', count) }))
    .where('name', '=', 'subscribers')
    .returning('last')
    .executeTakeFirstOrThrow();
  return Array.from({ length: count }, (_, i) => last - count + 1 + i);
}
