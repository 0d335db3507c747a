// SQL of A/B tests (docs/delivery.md, "A/B tests"): the ab_tests row of a
// notification, each variant's figures read from its deliveries, the tests
// whose decision is due, and the decision's compare-and-set.
import { sql, type Kysely, type Transaction } from 'kysely';
import { runSeqsOfNotification } from '../../db/run-seq';
import type { AbTestRow, Database, RunRow } from '../../db/schema';
import { compactedVariantFigures } from '../retention/compacted';
import { oneTimeRunKey } from './one-time-run';

type Db = Kysely<Database> | Transaction<Database>;

export function findAbTest(db: Db, notificationId: string): Promise<AbTestRow | undefined> {
  return db.selectFrom('ab_tests').selectAll().where('notification_id', '=', notificationId).executeTakeFirst();
}

export async function abTestsOfNotifications(db: Db, ids: string[]): Promise<Map<string, AbTestRow>> {
  if (!ids.length) return new Map();
  const rows = await db.selectFrom('ab_tests').selectAll().where('notification_id', 'in', ids).execute();
  return new Map(rows.map((row) => [row.notification_id, row]));
}

export async function upsertAbTest(db: Db, row: AbTestRow): Promise<void> {
  await db
    .insertInto('ab_tests')
    .values(row)
    .onConflict((oc) =>
      oc.column('notification_id').doUpdateSet({
        variants: row.variants,
        sample_percent: row.sample_percent,
        decide_after_minutes: row.decide_after_minutes,
        decide: row.decide,
        updated_at: row.updated_at,
      }),
    )
    .execute();
}

export async function deleteAbTest(db: Db, notificationId: string): Promise<void> {
  await db.deleteFrom('ab_tests').where('notification_id', '=', notificationId).execute();
}

/** The sample's run (the one-time run of the notification). */
export function sampleRunOf(db: Db, notificationId: string): Promise<RunRow | undefined> {
  return db.selectFrom('notification_runs').selectAll().where('dedupe_key', '=', oneTimeRunKey(notificationId)).executeTakeFirst();
}

export interface VariantFigures {
  index: number;
  /** Accepted by the push service. */
  reach: number;
  delivered: number;
  clicked: number;
}

/** Each variant's figures from the deliveries of the notification's runs (index deliveries_run_variant) and their compacted counts. */
export async function variantFigures(db: Db, notificationId: string): Promise<Map<number, VariantFigures>> {
  const rows = await db
    .selectFrom('deliveries')
    .select((eb) => [
      'variant_index',
      eb.fn.sum<number>(eb.case().when('status', '=', 'sent').then(1).else(0).end()).as('reach'),
      eb.fn.count<number>('delivered_at').as('delivered'),
      eb.fn.count<number>('clicked_at').as('clicked'),
    ])
    .where('run_seq', 'in', runSeqsOfNotification(notificationId))
    .where('variant_index', 'is not', null)
    .groupBy('variant_index')
    // Plus the rows retention compacted (docs/storage.md, "Retention"), in the same statement.
    .unionAll(compactedVariantFigures(db, notificationId))
    .execute();
  const figures = new Map<number, VariantFigures>();
  for (const row of rows) {
    const index = row.variant_index!;
    const sum = figures.get(index) ?? { index, reach: 0, delivered: 0, clicked: 0 };
    figures.set(index, { index, reach: sum.reach + Number(row.reach ?? 0), delivered: sum.delivered + Number(row.delivered ?? 0), clicked: sum.clicked + Number(row.clicked ?? 0) });
  }
  return figures;
}

/**
 * Tests to decide automatically now: still testing, their sample run
 * finished, and started at least the wait ago.
 */
export async function dueAbDecisions(db: Db, now: number, limit = 20): Promise<string[]> {
  const rows = await db
    .selectFrom('ab_tests')
    .innerJoin('notification_runs', 'notification_runs.notification_id', 'ab_tests.notification_id')
    .select('ab_tests.notification_id')
    .where('ab_tests.status', '=', 'testing')
    .where('ab_tests.decide', '=', 'auto')
    .where('ab_tests.sample_percent', 'is not', null)
    .where('notification_runs.dedupe_key', 'like', 'once:%')
    .where('notification_runs.status', 'in', ['completed', 'completed_with_errors', 'failed'])
    .where(sql<boolean>`notification_runs.started_at + ab_tests.decide_after_minutes * 60000 <= ${now}`)
    .limit(limit)
    .execute();
  return rows.map((row) => row.notification_id);
}

/** The decision's compare-and-set: true for the one caller that moved the test from testing to decided. */
export async function markDecided(db: Db, notificationId: string, decision: { winner: number; significant: boolean; by: 'auto' | 'manual'; at: number }): Promise<boolean> {
  const result = await db
    .updateTable('ab_tests')
    .set({ status: 'decided', winner_index: decision.winner, significant: decision.significant ? 1 : 0, decided_by: decision.by, decided_at: decision.at, updated_at: decision.at })
    .where('notification_id', '=', notificationId)
    .where('status', '=', 'testing')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The notification is sending again while the winner goes to the rest; the remainder's run gives it its final state. */
export async function markSendingToRest(db: Db, notificationId: string, now: number): Promise<void> {
  await db
    .updateTable('notifications')
    .set({ status: 'sending', updated_at: now })
    .where('id', '=', notificationId)
    .where('type', '=', 'ONE_TIME')
    .where('status', 'in', ['completed', 'completed_with_errors', 'failed'])
    .execute();
}
