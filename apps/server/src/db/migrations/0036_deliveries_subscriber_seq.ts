import { sql, type Kysely } from 'kysely';
import type { DatabaseKind } from '../database';

// A delivery names its subscriber by an integer, not the subscriber's UUID
// text (issue 15 part 1; docs/storage.md, "Bytes per delivery"), as 0035 did
// for its run: `subscriber_id` (37 bytes in the row, again in the (run,
// subscriber) unique index and again in deliveries_subscriber_status_sent)
// becomes `subscriber_seq`, the subscriber's `subscribers.seq`.
// - subscribers.seq: unique, given to every subscriber when it is inserted
//   and to existing ones here, and never given twice, even after the highest
//   is deleted: a send that claimed a delivery of a subscriber erased a
//   moment later must not find a newcomer under its number.
//   PostgreSQL: a bigserial. SQLite: a trigger takes the next value of a
//   counter row in seq_counters (one writer at a time makes that safe).
//   The UUID stays the subscriber's id everywhere else (API, tokens, exports,
//   every other table). subscribers_site_active_id, which a send's audience
//   pages are read from, holds the number too.
// - deliveries: subscriber_seq replaces subscriber_id in the row, in the
//   unique constraint (deliveries_run_subscriber) and in
//   deliveries_subscriber_status_sent. A row whose subscriber no longer
//   exists (0009 merged duplicate subscribers and kept some of their
//   deliveries as history) is kept too, under a number of its own that no
//   subscriber has or will get, one per removed subscriber; going down,
//   such a row is named 'removed-subscriber-<number>'. SQLite cannot change
//   a column in place, so the table is rebuilt: one copy of the rows kept by
//   DELIVERY_RETENTION_DAYS (CHANGELOG, "Upgrade").
// Shipped migrations are never edited: add a new file instead.

/** The columns a delivery row keeps besides its subscriber, in table order. */
const KEPT_COLUMNS = ['run_seq', 'status', 'attempts', 'next_attempt_at', 'lease_until', 'error', 'sent_at', 'delivered_at', 'clicked_at', 'created_at', 'reason', 'push_service', 'throttle_window', 'variant_index'];

/**
 * How a delivery row names its subscriber: by number (up) or by UUID (down);
 * how a row `d` finds its subscriber `s`, and the value it takes (a removed
 * subscriber's rows: see above).
 */
const SUBSCRIBER_KEYS = {
  subscriber_seq: {
    type: 'integer',
    join: 's.id = d.subscriber_id',
    value: `coalesce(s.seq, (select last from seq_counters where name = 'subscribers') + dense_rank() over (partition by s.seq is null order by d.subscriber_id))`,
  },
  subscriber_id: { type: 'text', join: 's.seq = d.subscriber_seq', value: `coalesce(s.id, 'removed-subscriber-' || d.subscriber_seq)` },
} as const;

/**
 * SQLite: rebuilds deliveries with its subscriber named by `key`, copying
 * every row, then puts back the indexes.
 */
async function rebuildDeliveriesOnSqlite(db: Kysely<unknown>, key: keyof typeof SUBSCRIBER_KEYS): Promise<void> {
  const subscriber = SUBSCRIBER_KEYS[key];
  await sql`
    create table deliveries_rebuilt (
      id integer primary key,
      run_seq integer not null references notification_runs (seq) on delete cascade,
      ${sql.raw(`${key} ${subscriber.type} not null`)},
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
      constraint deliveries_run_subscriber unique (run_seq, ${sql.raw(key)})
    )`.execute(db);
  await sql`
    insert into deliveries_rebuilt (id, ${sql.raw(key)}, ${sql.raw(KEPT_COLUMNS.join(', '))})
    select d.id, ${sql.raw(subscriber.value)}, ${sql.raw(KEPT_COLUMNS.map((column) => `d.${column}`).join(', '))}
    from deliveries d left join subscribers s on ${sql.raw(subscriber.join)}`.execute(db);
  await sql`drop table deliveries`.execute(db);
  await sql`alter table deliveries_rebuilt rename to deliveries`.execute(db);
  await sql`create index deliveries_run_pending on deliveries (run_seq, id) where status = 'pending'`.execute(db);
  await sql`create index deliveries_run_variant on deliveries (run_seq, variant_index, status, delivered_at, clicked_at) where variant_index is not null`.execute(db);
}

export async function up(db: Kysely<unknown>, kind: DatabaseKind): Promise<void> {
  if (kind === 'postgres') {
    await sql`alter table subscribers add column seq bigserial`.execute(db);
    await sql`alter table subscribers add constraint subscribers_seq unique (seq)`.execute(db);
    await sql`alter table deliveries add column subscriber_seq bigint`.execute(db);
    await sql`update deliveries d set subscriber_seq = s.seq from subscribers s where s.id = d.subscriber_id`.execute(db);
    await sql`
      update deliveries d set subscriber_seq = removed.seq
      from (select subscriber_id, nextval(pg_get_serial_sequence('subscribers', 'seq')) as seq
            from (select distinct subscriber_id from deliveries where subscriber_seq is null) gone) removed
      where d.subscriber_seq is null and d.subscriber_id = removed.subscriber_id`.execute(db);
    await sql`alter table deliveries alter column subscriber_seq set not null`.execute(db);
    // Drops with it the unique constraint and deliveries_subscriber_status_sent.
    await sql`alter table deliveries drop column subscriber_id`.execute(db);
    await sql`alter table deliveries add constraint deliveries_run_subscriber unique (run_seq, subscriber_seq)`.execute(db);
  } else {
    await sql`create table seq_counters (name text primary key, last integer not null)`.execute(db);
    await sql`alter table subscribers add column seq integer`.execute(db);
    await sql`update subscribers set seq = rowid`.execute(db);
    await sql`create unique index subscribers_seq on subscribers (seq)`.execute(db);
    await sql`insert into seq_counters (name, last) select 'subscribers', coalesce(max(seq), 0) from subscribers`.execute(db);
    await sql`
      create trigger subscribers_next_seq after insert on subscribers when new.seq is null
      begin
        update seq_counters set last = last + 1 where name = 'subscribers';
        update subscribers set seq = (select last from seq_counters where name = 'subscribers') where rowid = new.rowid;
      end`.execute(db);
    await rebuildDeliveriesOnSqlite(db, 'subscriber_seq');
    // The removed subscribers' numbers were taken from the counter above its value: move it past them.
    await sql`update seq_counters set last = coalesce((select max(subscriber_seq) from deliveries), 0) where name = 'subscribers' and last < coalesce((select max(subscriber_seq) from deliveries), 0)`.execute(db);
  }
  await sql`create index deliveries_subscriber_status_sent on deliveries (subscriber_seq, status, sent_at)`.execute(db);
  // A send's audience pages read each subscriber's number with its id, from the index alone.
  await sql`drop index subscribers_site_active_id`.execute(db);
  await sql`create index subscribers_site_active_id on subscribers (site_id, is_active, id, seq)`.execute(db);
}

export async function down(db: Kysely<unknown>, kind: DatabaseKind): Promise<void> {
  // Back to subscriber_id (the subscriber's UUID) on each row, then the numbers go.
  await sql`drop index subscribers_site_active_id`.execute(db);
  await sql`create index subscribers_site_active_id on subscribers (site_id, is_active, id)`.execute(db);
  if (kind === 'postgres') {
    await sql`alter table deliveries add column subscriber_id text`.execute(db);
    await sql`update deliveries d set subscriber_id = coalesce(s.id, 'removed-subscriber-' || d.subscriber_seq) from deliveries d2 left join subscribers s on s.seq = d2.subscriber_seq where d2.id = d.id`.execute(db);
    await sql`alter table deliveries alter column subscriber_id set not null`.execute(db);
    await sql`alter table deliveries drop column subscriber_seq`.execute(db);
    await sql`alter table deliveries add constraint deliveries_run_subscriber unique (run_seq, subscriber_id)`.execute(db);
    await sql`alter table subscribers drop column seq`.execute(db);
  } else {
    await rebuildDeliveriesOnSqlite(db, 'subscriber_id');
    await sql`drop trigger subscribers_next_seq`.execute(db);
    await sql`drop index subscribers_seq`.execute(db);
    await sql`alter table subscribers drop column seq`.execute(db);
    await sql`drop table seq_counters`.execute(db);
  }
  await sql`create index deliveries_subscriber_status_sent on deliveries (subscriber_id, status, sent_at)`.execute(db);
}
