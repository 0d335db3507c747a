import { sql, type Kysely } from 'kysely';
import type { DatabaseKind } from '../database';

// PostgreSQL leaves room in each page of `deliveries` for a row's next
// version (docs/storage.md, "Room for updates on PostgreSQL").
//
// A delivery row is inserted pending, then updated when its batch claims it
// (lease, next attempt, attempts: no indexed column) and again with its
// outcome. With full pages, every claim wrote the row to another page and
// added an entry for it to each of the table's four indexes. With 40% of
// each page left free at insert, most claims are heap-only (HOT) updates:
// the new version stays in its page, no index entry is added, and the dead
// version is pruned in place without waiting for VACUUM. Measured with
// bench:db-cost (300,000 subscribers, durable PostgreSQL, four runs each):
// WAL per 1,000 deliveries 1,573–1,739 KiB before, 1,293–1,545 after;
// deliveries per second within the noise.
//
// Only pages written from now on are filled to 60%; existing rows stay where
// they are. SQLite has no fillfactor: nothing to do there.
const DELIVERIES_FILLFACTOR = 60;

export async function up(db: Kysely<unknown>, kind: DatabaseKind): Promise<void> {
  if (kind !== 'postgres') return;
  await sql`alter table deliveries set (fillfactor = ${sql.lit(DELIVERIES_FILLFACTOR)})`.execute(db);
}

export async function down(db: Kysely<unknown>, kind: DatabaseKind): Promise<void> {
  if (kind !== 'postgres') return;
  await sql`alter table deliveries reset (fillfactor)`.execute(db);
}
