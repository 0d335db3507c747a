import type { Kysely } from 'kysely';
import type { DatabaseKind } from '../database';

// Beacons counted in batches (docs/delivery.md, "How beacons are counted"):
// a delivered or clicked beacon marks its delivery and appends one row here,
// in its transaction, instead of adding to the run's, the notification's and
// the hourly counters itself (on PostgreSQL every beacon of a send waited for
// those same three rows). The fold (features/tracking/fold.ts) deletes a batch
// of these rows and adds their sums to the counters in one transaction, so a
// row is counted exactly once. No foreign keys: a row lives about a second,
// and inserting it must cost no lookups; the fold skips rows of a site that
// was deleted meanwhile. The integer key is the order rows are folded in.
// Shipped migrations are never edited: add a new file instead.
export async function up(db: Kysely<unknown>, kind: DatabaseKind): Promise<void> {
  await db.schema
    .createTable('uncounted_beacons')
    .addColumn('id', kind === 'postgres' ? 'bigserial' : 'integer', (c) => c.primaryKey())
    .addColumn('site_id', 'text', (c) => c.notNull())
    .addColumn('notification_id', 'text', (c) => c.notNull())
    .addColumn('run_id', 'text', (c) => c.notNull())
    // When the beacon came: the hour of the rollup it is counted in.
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('delivered', 'integer', (c) => c.notNull())
    .addColumn('clicked', 'integer', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('uncounted_beacons').execute();
}
