// SQL of delivery retention (docs/storage.md, "Retention"): the finished runs
// whose delivery rows are past the retention, and the batch that turns up to
// `limit` of a run's rows into counts (compacted_deliveries) and the
// subscribers' last-* columns, in one transaction.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, DeliveryStatus, RunStatus } from '../../db/schema';
import { pushServiceOf } from '../../delivery/push-services';

type Db = Kysely<Database> | Transaction<Database>;

/** A run in one of these states sends nothing more: its rows only serve reports. */
const FINISHED: RunStatus[] = ['completed', 'completed_with_errors', 'failed', 'cancelled'];

/** Finished runs, oldest first, that finished before `cutoff` and whose rows are not all compacted (partial index notification_runs_to_compact). */
export function runsToCompact(db: Db, cutoff: number, limit: number) {
  return db
    .selectFrom('notification_runs')
    .select(['id', 'notification_id'])
    .where('deliveries_compacted_at', 'is', null)
    .where('finished_at', '<', cutoff)
    .where('status', 'in', FINISHED)
    .orderBy('finished_at')
    .limit(limit)
    .execute();
}

interface RemovedDelivery {
  subscriber_id: string;
  status: DeliveryStatus;
  reason: string | null;
  push_service: string | null;
  variant_index: number | null;
  sent_at: number | null;
  delivered_at: number | null;
  clicked_at: number | null;
}

/**
 * One compaction step of a run, in one transaction: deletes up to `limit` of
 * its delivery rows (only while the run is still finished and older than
 * `cutoff`: a retried run is sending again and keeps its rows), adds what they
 * were to compacted_deliveries and moves the subscribers' last_sent_at /
 * last_clicked_at forward. Rows and counts change together, so a crash loses
 * nothing and counts nothing twice. The step that finds fewer than `limit`
 * rows marks the run compacted. Returns how many rows it removed.
 */
export async function compactRunStep(db: Kysely<Database>, run: { id: string; notification_id: string }, cutoff: number, limit: number, now: number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const batch = trx.selectFrom('deliveries').select('id').where('run_id', '=', run.id).limit(limit);
    const stillFinished = trx.selectFrom('notification_runs').select('id').where('id', '=', run.id).where('status', 'in', FINISHED).where('finished_at', '<', cutoff);
    const removed: RemovedDelivery[] = await trx
      .deleteFrom('deliveries')
      .where('id', 'in', batch)
      .where('run_id', 'in', stillFinished)
      .returning(['subscriber_id', 'status', 'reason', 'push_service', 'variant_index', 'sent_at', 'delivered_at', 'clicked_at'])
      .execute();
    await namePushServices(trx, removed);
    await addToCompacted(trx, run, removed);
    await moveLastActivity(trx, removed);
    if (removed.length < limit) {
      await trx.updateTable('notification_runs').set({ deliveries_compacted_at: now }).where('id', '=', run.id).where('status', 'in', FINISHED).execute();
    }
    return removed.length;
  });
}

/**
 * An accepted delivery's row names no push service (the report reads it from
 * the subscriber's endpoint): named here, so the compacted group says the
 * same as the report's lines did.
 */
async function namePushServices(trx: Transaction<Database>, removed: RemovedDelivery[]): Promise<void> {
  const unnamed = [...new Set(removed.filter((row) => row.push_service === null).map((row) => row.subscriber_id))];
  if (!unnamed.length) return;
  const endpoints = new Map((await trx.selectFrom('subscribers').select(['id', 'endpoint']).where('id', 'in', unnamed).execute()).map((row) => [row.id, row.endpoint]));
  for (const row of removed) {
    const endpoint = endpoints.get(row.subscriber_id);
    if (row.push_service === null && endpoint) row.push_service = pushServiceOf(endpoint);
  }
}

async function addToCompacted(trx: Transaction<Database>, run: { id: string; notification_id: string }, removed: readonly RemovedDelivery[]): Promise<void> {
  const groups = new Map<string, { variant_index: number; status: DeliveryStatus; reason: string; push_service: string; count: number; delivered: number; clicked: number }>();
  for (const row of removed) {
    const variant = row.variant_index ?? -1;
    const reason = row.reason ?? '';
    const pushService = row.push_service ?? '';
    const key = `${variant} ${row.status} ${reason} ${pushService}`;
    const group = groups.get(key) ?? { variant_index: variant, status: row.status, reason, push_service: pushService, count: 0, delivered: 0, clicked: 0 };
    group.count += 1;
    if (row.delivered_at !== null) group.delivered += 1;
    if (row.clicked_at !== null) group.clicked += 1;
    groups.set(key, group);
  }
  // Sorted: two compactions of one run take the same rows in the same order (PostgreSQL).
  for (const group of [...groups.values()].sort((a, b) => a.variant_index - b.variant_index || cmp(a.status, b.status) || cmp(a.reason, b.reason) || cmp(a.push_service, b.push_service))) {
    await trx
      .insertInto('compacted_deliveries')
      .values({ run_id: run.id, notification_id: run.notification_id, ...group })
      .onConflict((oc) =>
        oc.columns(['run_id', 'variant_index', 'status', 'reason', 'push_service']).doUpdateSet((eb) => ({
          count: eb('compacted_deliveries.count', '+', eb.ref('excluded.count')),
          delivered: eb('compacted_deliveries.delivered', '+', eb.ref('excluded.delivered')),
          clicked: eb('compacted_deliveries.clicked', '+', eb.ref('excluded.clicked')),
        })),
      )
      .execute();
  }
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** UPDATE … FROM a list of values (SQLite 3.33+ and PostgreSQL): one statement for the batch's subscribers, in id order. */
async function moveLastActivity(trx: Transaction<Database>, removed: readonly RemovedDelivery[]): Promise<void> {
  const latest = new Map<string, { sent: number | null; clicked: number | null }>();
  for (const row of removed) {
    if (row.sent_at === null && row.clicked_at === null) continue;
    const seen = latest.get(row.subscriber_id) ?? { sent: null, clicked: null };
    latest.set(row.subscriber_id, { sent: maxOf(seen.sent, row.sent_at), clicked: maxOf(seen.clicked, row.clicked_at) });
  }
  if (!latest.size) return;
  const values = [...latest.entries()]
    .sort(([a], [b]) => cmp(a, b))
    .map(([id, at]) => sql`(${id}, cast(${at.sent} as bigint), cast(${at.clicked} as bigint))`);
  await sql`
    with v(id, sent, clicked) as (values ${sql.join(values)})
    update subscribers set
      last_sent_at = case when v.sent is not null and (subscribers.last_sent_at is null or subscribers.last_sent_at < v.sent) then v.sent else subscribers.last_sent_at end,
      last_clicked_at = case when v.clicked is not null and (subscribers.last_clicked_at is null or subscribers.last_clicked_at < v.clicked) then v.clicked else subscribers.last_clicked_at end
    from v
    where subscribers.id = v.id`.execute(trx);
}

const maxOf = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.max(a, b));
