import { sql, type Kysely, type Transaction } from 'kysely';
import type { DatabaseKind } from '../../db/database';
import type { Database } from '../../db/schema';

type Db = Kysely<Database> | Transaction<Database>;

/** What a marked delivery tells its beacon: its run and its subscriber, by number (migrations 0035, 0036). */
const BEACON_COLUMNS = ['run_seq', 'subscriber_seq'] as const;

/** What a beacon counts for, of the run with this number: its id, notification and site (a delivery row holds only the run's number: migrations 0034, 0035). */
export function runCountedFor(db: Db, runSeq: number) {
  return db.selectFrom('notification_runs').select(['id', 'notification_id', 'site_id']).where('seq', '=', runSeq).executeTakeFirstOrThrow();
}

/**
 * Records the first "delivered" of a delivery (a click marks it too, when its
 * beacon never came); undefined when one was already recorded (a replay) or
 * the delivery is gone. One conditional UPDATE: two beacons of the same
 * delivery at once mark it once (PostgreSQL re-checks the condition after
 * the first one's row lock).
 */
export function markDelivered(db: Db, deliveryId: number, at: number) {
  return db.updateTable('deliveries').set({ delivered_at: at }).where('id', '=', deliveryId).where('delivered_at', 'is', null).returning(BEACON_COLUMNS).executeTakeFirst();
}

/** Records the first click; undefined for a replay or a delivery that is gone. */
export function markClicked(db: Db, deliveryId: number, at: number) {
  return db.updateTable('deliveries').set({ clicked_at: at }).where('id', '=', deliveryId).where('clicked_at', 'is', null).returning(BEACON_COLUMNS).executeTakeFirst();
}

/**
 * The subscriber's latest delivered push (stale subscribers have none for 90+
 * days). After the delivery's row: the row order of the result transactions
 * (delivery/run-counters.ts).
 */
export async function recordDeliveredTo(db: Db, subscriberSeq: number, at: number): Promise<void> {
  await db
    .updateTable('subscribers')
    .set({ last_delivered_at: at })
    .where('seq', '=', subscriberSeq)
    .where((eb) => eb.or([eb('last_delivered_at', 'is', null), eb('last_delivered_at', '<', at)]))
    .execute();
}

/** A counted beacon waiting for the fold (an insert of a new row: no row another beacon waits for). */
export async function addUncountedBeacon(
  db: Db,
  beacon: { site_id: string; notification_id: string; run_id: string; at: number; delivered: number; clicked: number },
): Promise<void> {
  await db.insertInto('uncounted_beacons').values(beacon).execute();
}

/**
 * Takes (deletes and returns) up to `limit` uncounted beacons, oldest first,
 * in the caller's transaction: they are counted if it commits, and back for
 * the next fold if it does not. On PostgreSQL a second folder skips the rows
 * the first holds (FOR UPDATE SKIP LOCKED) and takes others instead of
 * waiting; SQLite runs one write transaction at a time.
 */
export function takeUncountedBeacons(trx: Transaction<Database>, kind: DatabaseKind, limit: number) {
  return trx
    .deleteFrom('uncounted_beacons')
    .where('id', 'in', (eb) => {
      const oldest = eb.selectFrom('uncounted_beacons').select('id').orderBy('id').limit(limit);
      return kind === 'postgres' ? oldest.forUpdate().skipLocked() : oldest;
    })
    .returning(['site_id', 'notification_id', 'run_id', 'at', 'delivered', 'clicked'])
    .execute();
}

/** Beacons waiting for the fold, and when the oldest of them came (null: none), in one read. */
export async function unfoldedBeacons(db: Db): Promise<{ count: number; oldestAt: number | null }> {
  const row = await db
    .selectFrom('uncounted_beacons')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('at').as('oldest')])
    .executeTakeFirstOrThrow();
  return { count: Number(row.n), oldestAt: row.oldest === null ? null : Number(row.oldest) };
}

/** Of these sites, the ones that still exist (a deleted site's beacons count nowhere). */
export async function existingSites(db: Db, siteIds: readonly string[]): Promise<Set<string>> {
  if (!siteIds.length) return new Set();
  return new Set((await db.selectFrom('sites').select('id').where('id', 'in', siteIds).execute()).map((row) => row.id));
}

/** Adds folded beacons to a run's or a notification's counters (a row that is gone matches nothing). */
export async function addBeaconCounts(db: Db, table: 'notification_runs' | 'notifications', id: string, delivered: number, clicked: number): Promise<void> {
  await db
    .updateTable(table)
    .set((eb) => ({ delivered_count: eb('delivered_count', '+', delivered), clicked_count: eb('clicked_count', '+', clicked) }))
    .where('id', '=', id)
    .execute();
}

/** One beacon of a batch: the delivery its token names, and whether it is a click. */
export interface BeaconWrite {
  deliveryId: number;
  type: 'delivered' | 'clicked';
  /** When it arrived (epoch ms): the hour it counts in. */
  at: number;
}

/**
 * PostgreSQL: a batch of beacons (features/tracking/service.ts, group commit)
 * as one statement, atomic by itself, with the rules SQLite runs as
 * markDelivered / markClicked / recordDeliveredTo / addUncountedBeacon in a
 * transaction (no data-modifying WITH there): the deliveries are locked in
 * id order (so two batches cannot deadlock on them) and re-checked after the
 * lock, so the `delivered_at` a click reads is the one it replaces; then
 * marked, their subscribers' last delivered push moved (those rows locked in
 * seq order first: batches of two sends share subscribers), and one
 * uncounted row added per counted beacon.
 * Each delivery id may appear once (the caller writes repeats alone: a
 * statement cannot change one row twice). Answers the delivery ids counted.
 */
export async function recordBeaconsInOneStatement(db: Db, beacons: readonly BeaconWrite[]): Promise<Set<number>> {
  const ids = beacons.map((beacon) => beacon.deliveryId);
  const clicks = beacons.map((beacon) => (beacon.type === 'clicked' ? 1 : 0));
  const ats = beacons.map((beacon) => beacon.at);
  const result = await sql<{ id: number }>`
    with input as (
      select * from unnest(${ids}::bigint[], ${clicks}::int[], ${ats}::bigint[]) as t(delivery_id, clicked, at)
    ), before as (
      select d.id, d.delivered_at, input.clicked, input.at from deliveries d join input on input.delivery_id = d.id
      where (input.clicked = 0 and d.delivered_at is null) or (input.clicked = 1 and d.clicked_at is null)
      order by d.id
      for update of d
    ), marked as (
      update deliveries d set
        delivered_at = coalesce(d.delivered_at, before.at),
        clicked_at = case when before.clicked = 1 then before.at else d.clicked_at end
      from before, notification_runs run where d.id = before.id and run.seq = d.run_seq
      returning d.id, run.id as run_id, run.notification_id, run.site_id, d.subscriber_seq, before.delivered_at is null as newly_delivered, before.clicked, before.at
    ), latest as (
      -- A subscriber with several deliveries in the batch: its latest beacon.
      select subscriber_seq, max(at) as at from marked where newly_delivered group by subscriber_seq
    ), moving as (
      -- Locked in seq order: two batches of two sends to the same people share subscribers, not deliveries.
      select s.seq, latest.at from subscribers s join latest on s.seq = latest.subscriber_seq
      where s.last_delivered_at is null or s.last_delivered_at < latest.at
      order by s.seq
      for no key update of s
    ), seen as (
      update subscribers s set last_delivered_at = moving.at from moving
      where s.seq = moving.seq and (s.last_delivered_at is null or s.last_delivered_at < moving.at)
    ), counted as (
      insert into uncounted_beacons (site_id, notification_id, run_id, at, delivered, clicked)
      select site_id, notification_id, run_id, at, case when newly_delivered then 1 else 0 end, clicked from marked
    )
    select id from marked`.execute(db);
  return new Set(result.rows.map((row) => Number(row.id)));
}
