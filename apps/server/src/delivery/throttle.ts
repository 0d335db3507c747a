// Throttled sends (issue 14 §5; docs/delivery.md, "Throttled sends"): a
// notification with `throttle_per_minute` N never has more than N push
// attempts, retries included, in any minute of its send, however many
// workers share it, and after any restart.
//
// The database says what may be sent when: each tick, the scheduler grants
// the run's current minute up to N of its pending deliveries (a
// compare-and-set on the run's minute counter, so two schedulers never grant
// the same place twice) and enqueues them as batches; a worker claims a
// delivery only while the minute it was granted is still running. A batch
// job that was lost, or came late, sends nothing: its deliveries are granted
// again in a later minute. Nothing is enqueued ahead of time, so a lost queue
// costs at most a minute, and the scheduler keeps the run's lease alive while
// it waits between minutes (the recovery sweep does not take it over).
import { sql, type Kysely, type Transaction, type UpdateQueryBuilder, type SelectQueryBuilder } from 'kysely';
import type { AppContext } from '../context';
import type { Database } from '../db/schema';
import type { JobQueue } from '../jobs/queue';
import type { DueWorkSource } from '../jobs/scheduler';
import { BATCH_SIZE } from './fan-out';
import { extendRunLease, THROTTLE_WINDOW_MS } from './runs';
import { sendBatchJob } from './send-batch';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * The most one tick grants one run (the scheduler ticks every second by
 * default): a throttle above 600,000 a minute is not reached, and a tick
 * adds at most 40 batches of a run to the queue.
 */
const GRANT_PER_TICK_MAX = 40 * BATCH_SIZE;

/** As the fan-out (fan-out.ts): no grants while more batches than this wait for a worker. */
const MAX_QUEUED_BATCHES = 16;

/** `status = 'pending'` as a literal, so the partial index on pending deliveries is used (see runs.ts). */
const PENDING = sql<'pending'>`'pending'`;

interface ThrottledRun {
  id: string;
  seq: number;
  fanout_done: number;
  lease_until: number | null;
  throttle_window_start: number | null;
  throttle_window_used: number;
  throttle_per_minute: number;
}

function throttledRunsSending(db: Db): Promise<ThrottledRun[]> {
  return db
    .selectFrom('notification_runs')
    .innerJoin('notifications', 'notifications.id', 'notification_runs.notification_id')
    .select([
      'notification_runs.id',
      'notification_runs.seq',
      'notification_runs.fanout_done',
      'notification_runs.lease_until',
      'notification_runs.throttle_window_start',
      'notification_runs.throttle_window_used',
      'notifications.throttle_per_minute',
    ])
    .where('notification_runs.status', '=', 'sending')
    .where('notifications.throttle_per_minute', 'is not', null)
    .orderBy('notification_runs.id')
    .execute() as Promise<ThrottledRun[]>;
}

/**
 * A delivery that may be granted a place now: pending, held by no worker,
 * due (a retry waits for its time), and not granted a minute still running
 * (one granted in a minute that passed unclaimed lost its job).
 */
function grantable<Q extends SelectQueryBuilder<Database, 'deliveries', object> | UpdateQueryBuilder<Database, 'deliveries', 'deliveries', object>>(query: Q, now: number): Q {
  return (query as SelectQueryBuilder<Database, 'deliveries', object>)
    .where('status', '=', PENDING)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
    .where((eb) => eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', now)]))
    .where((eb) => eb.or([eb('throttle_window', 'is', null), eb('throttle_window', '<=', now - THROTTLE_WINDOW_MS)])) as unknown as Q;
}

/**
 * Grants the run's current minute what room it has left and returns the
 * deliveries granted (to enqueue). A minute starts when the previous one has
 * passed; its places are counted on the run with a compare-and-set, so
 * however many schedulers tick, a minute never holds more than N.
 */
export async function grantThrottledDeliveries(db: Kysely<Database>, run: ThrottledRun, now: number): Promise<number[]> {
  const fresh = run.throttle_window_start === null || now >= run.throttle_window_start + THROTTLE_WINDOW_MS;
  const windowStart = fresh ? now : run.throttle_window_start!;
  const used = fresh ? 0 : run.throttle_window_used;
  const room = Math.min(run.throttle_per_minute - used, GRANT_PER_TICK_MAX);
  if (room <= 0) return [];
  const candidates = await grantable(db.selectFrom('deliveries').select('id').where('run_seq', '=', run.seq), now).orderBy('id').limit(room).execute();
  if (!candidates.length) return [];
  return db.transaction().execute(async (trx) => {
    let taken = trx
      .updateTable('notification_runs')
      .set({ throttle_window_start: windowStart, throttle_window_used: used + candidates.length })
      .where('id', '=', run.id)
      .where('status', '=', 'sending')
      .where('throttle_window_used', '=', run.throttle_window_used);
    taken = run.throttle_window_start === null ? taken.where('throttle_window_start', 'is', null) : taken.where('throttle_window_start', '=', run.throttle_window_start);
    // Another scheduler granted first: this tick grants nothing (the next one reads the new count).
    if (!Number((await taken.executeTakeFirst()).numUpdatedRows)) return [];
    const granted = await grantable(
      trx
        .updateTable('deliveries')
        .set({ throttle_window: windowStart })
        .where('id', 'in', candidates.map((c) => c.id)),
      now,
    )
      .returning('id')
      .execute();
    return granted.map((row) => Number(row.id)).sort((a, b) => a - b);
  });
}

/**
 * The scheduler's part of throttled sends: each tick, every throttled run
 * still sending gets its current minute's places granted and enqueued, and
 * (once its fan-out is done: a fan-out keeps its own lease) its lease
 * renewed, since the scheduler is what moves it on between minutes.
 */
export function throttledSendsSource(ctx: Pick<AppContext, 'db' | 'config' | 'log'>, queue: JobQueue): DueWorkSource {
  return {
    name: 'throttled-sends',
    async runDue(now) {
      // Workers behind (more batches waiting than a fan-out lets queue up): places granted now would pass unclaimed.
      const behind = (await queue.backlog(sendBatchJob)) > MAX_QUEUED_BATCHES;
      for (const run of await throttledRunsSending(ctx.db)) {
        // Renewed once a third of it has passed, not written every tick.
        const lease = ctx.config.deliveryLeaseMs;
        if (run.fanout_done && (run.lease_until === null || run.lease_until < now + (2 * lease) / 3)) await extendRunLease(ctx.db, run.id, now + lease);
        if (behind) continue;
        const granted = await grantThrottledDeliveries(ctx.db, run, now);
        for (let i = 0; i < granted.length; i += BATCH_SIZE) {
          await queue.enqueue(sendBatchJob, { runId: run.id, deliveryIds: granted.slice(i, i + BATCH_SIZE) });
        }
        if (granted.length) ctx.log.debug({ runId: run.id, granted: granted.length }, 'throttled send: granted this minute');
      }
    },
  };
}
