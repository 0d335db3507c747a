import { sql, type Kysely } from 'kysely';
import type { DatabaseKind } from '../database';

// A delivery names its run by an integer, not the run's UUID text (issue 15
// part 1; docs/storage.md, "Bytes per delivery"): `run_id` (37 bytes in the
// row and again in the (run, subscriber) unique index) becomes `run_seq`, the
// run's `notification_runs.seq` (1–4 bytes on SQLite, 8 on PostgreSQL).
// - notification_runs.seq: unique, given to every run when it is inserted
//   (PostgreSQL: a bigserial; SQLite: a trigger takes the next number after
//   the highest, which one writer at a time makes safe) and to existing runs
//   here. The UUID stays the run's id everywhere else (API, jobs, links).
// - deliveries: run_seq references notification_runs(seq), cascading as
//   run_id did; the unique (run_seq, subscriber_id) constraint keeps its name
//   (deliveries_run_subscriber), and deliveries_run_pending and
//   deliveries_run_variant are rebuilt on run_seq. SQLite cannot change a
//   column's type or foreign key in place, so the table is rebuilt (one
//   copy of the rows kept by DELIVERY_RETENTION_DAYS; CHANGELOG, "Upgrade").
// Shipped migrations are never edited: add a new file instead.
/** The columns a delivery row keeps besides its run, in table order after it. */
const KEPT_COLUMNS = ['subscriber_id', 'status', 'attempts', 'next_attempt_at', 'lease_until', 'error', 'sent_at', 'delivered_at', 'clicked_at', 'created_at', 'reason', 'push_service', 'throttle_window', 'variant_index'];

/** How a delivery row names its run: by number (up) or by UUID (down); and the column it is filled from. */
const RUN_KEYS = {
  run_seq: { definition: 'integer not null references notification_runs (seq) on delete cascade', runColumn: 'seq', from: { column: 'run_id', runColumn: 'id' } },
  run_id: { definition: 'text not null references notification_runs (id) on delete cascade', runColumn: 'id', from: { column: 'run_seq', runColumn: 'seq' } },
} as const;

/**
 * SQLite: rebuilds deliveries with its run named by `key`, copying every row
 * (a column's type and foreign key cannot change in place), then puts back
 * the index that is not about the run.
 */
async function rebuildDeliveriesOnSqlite(db: Kysely<unknown>, key: keyof typeof RUN_KEYS): Promise<void> {
  const run = RUN_KEYS[key];
  await sql`
    create table deliveries_rebuilt (
      id integer primary key,
      ${sql.raw(`${key} ${run.definition}`)},
      subscriber_id text not null,
      status text not null,
      attempts integer default 0 not null,
      next_attempt_at bigint,
      lease_until bigint,
      error text,
      sent_at bigint,
      delivered_at bigint,
      clicked_at bigint,
      created_at bigint not null,
      reason text,
      push_service text,
      throttle_window bigint,
      variant_index integer,
      constraint deliveries_run_subscriber unique (${sql.raw(key)}, subscriber_id)
    )`.execute(db);
  await sql`
    insert into deliveries_rebuilt (id, ${sql.raw(key)}, ${sql.raw(KEPT_COLUMNS.join(', '))})
    select d.id, run.${sql.raw(run.runColumn)}, ${sql.raw(KEPT_COLUMNS.map((column) => `d.${column}`).join(', '))}
    from deliveries d join notification_runs run on run.${sql.raw(run.from.runColumn)} = d.${sql.raw(run.from.column)}`.execute(db);
  await sql`drop table deliveries`.execute(db);
  await sql`alter table deliveries_rebuilt rename to deliveries`.execute(db);
  await sql`create index deliveries_subscriber_status_sent on deliveries (subscriber_id, status, sent_at)`.execute(db);
}

export async function up(db: Kysely<unknown>, kind: DatabaseKind): Promise<void> {
  if (kind === 'postgres') {
    await sql`alter table notification_runs add column seq bigserial`.execute(db);
    await sql`alter table notification_runs add constraint notification_runs_seq unique (seq)`.execute(db);
    await sql`alter table deliveries add column run_seq bigint`.execute(db);
    await sql`update deliveries d set run_seq = run.seq from notification_runs run where run.id = d.run_id`.execute(db);
    await sql`alter table deliveries alter column run_seq set not null`.execute(db);
    // Drops with it the foreign key, the unique constraint and the two indexes on run_id.
    await sql`alter table deliveries drop column run_id`.execute(db);
    await sql`alter table deliveries add constraint deliveries_run_subscriber unique (run_seq, subscriber_id)`.execute(db);
    await sql`alter table deliveries add constraint deliveries_run_seq_fkey foreign key (run_seq) references notification_runs (seq) on delete cascade`.execute(db);
  } else {
    await sql`alter table notification_runs add column seq integer`.execute(db);
    await sql`update notification_runs set seq = rowid`.execute(db);
    await sql`create unique index notification_runs_seq on notification_runs (seq)`.execute(db);
    await sql`
      create trigger notification_runs_next_seq after insert on notification_runs when new.seq is null
      begin
        update notification_runs set seq = (select coalesce(max(seq), 0) + 1 from notification_runs) where rowid = new.rowid;
      end`.execute(db);
    await rebuildDeliveriesOnSqlite(db, 'run_seq');
  }
  await sql`create index deliveries_run_pending on deliveries (run_seq, id) where status = 'pending'`.execute(db);
  await sql`create index deliveries_run_variant on deliveries (run_seq, variant_index, status, delivered_at, clicked_at) where variant_index is not null`.execute(db);
}

export async function down(db: Kysely<unknown>, kind: DatabaseKind): Promise<void> {
  // Back to run_id (the run's UUID) on each row, then the run numbers go.
  await sql`drop index deliveries_run_variant`.execute(db);
  await sql`drop index deliveries_run_pending`.execute(db);
  if (kind === 'postgres') {
    await sql`alter table deliveries add column run_id text`.execute(db);
    await sql`update deliveries d set run_id = run.id from notification_runs run where run.seq = d.run_seq`.execute(db);
    await sql`alter table deliveries alter column run_id set not null`.execute(db);
    await sql`alter table deliveries drop column run_seq`.execute(db);
    await sql`alter table deliveries add constraint deliveries_run_subscriber unique (run_id, subscriber_id)`.execute(db);
    await sql`alter table deliveries add constraint deliveries_run_id_fkey foreign key (run_id) references notification_runs (id) on delete cascade`.execute(db);
    await sql`alter table notification_runs drop column seq`.execute(db);
  } else {
    await rebuildDeliveriesOnSqlite(db, 'run_id');
    await sql`drop trigger notification_runs_next_seq`.execute(db);
    await sql`drop index notification_runs_seq`.execute(db);
    await sql`alter table notification_runs drop column seq`.execute(db);
  }
  await sql`create index deliveries_run_pending on deliveries (run_id, id) where status = 'pending'`.execute(db);
  await sql`create index deliveries_run_variant on deliveries (run_id, variant_index, status, delivered_at, clicked_at) where variant_index is not null`.execute(db);
}
