// SQL of delivery retention (docs/storage.md, "Retention"): the finished runs
// whose delivery rows are past the retention, and the step that turns up to
// `limit` of their rows into their notifications' counts
// (compacted_deliveries) and the subscribers' last-* columns, in one
// transaction.
import { sql, type Kysely, type SqlBool, type Transaction } from 'kysely';
import type { DatabaseKind } from '../../db/database';
import type { Database, RunStatus } from '../../db/schema';
import { inKeyOrder } from '../../db/lock-order';
import { AB_REST_RUN_KEY_PREFIX } from '../../delivery/ab-split';
import { pushServiceOf } from '../../delivery/push-services';
import { addToCompacted, REPORT_READ_LOCK, type RemovedDelivery } from './compacted';

type Db = Kysely<Database> | Transaction<Database>;

/** A run in one of these states sends nothing more: its rows only serve reports. */
const FINISHED: RunStatus[] = ['completed', 'completed_with_errors', 'failed', 'cancelled'];

/**
 * Finished runs, oldest first, that finished before `cutoff` and whose rows
 * are not all compacted (partial index notification_runs_to_compact). The
 * runs of a notification whose A/B test has a sample keep their rows until
 * the rest of the audience has been sent the winner: the rest is everyone
 * with no delivery of the sample (delivery/ab-split.ts), and a winner picked
 * by hand may come any time later (docs/storage.md, "Retention"). Nor are
 * the runs of a notification whose CSV report is being downloaded.
 */
export async function runsToCompact(db: Db, cutoff: number, limit: number, now: number): Promise<string[]> {
  const rows = await db
    .selectFrom('notification_runs as run')
    .select('run.id')
    .where('run.deliveries_compacted_at', 'is', null)
    .where('run.finished_at', '<', cutoff)
    .where('run.status', 'in', FINISHED)
    // A report being downloaded holds its notification's rows (compacted.ts, holdCompactionForReport).
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('report_reads as hold').select('hold.notification_id').whereRef('hold.notification_id', '=', 'run.notification_id').where('hold.until', '>=', now))))
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('ab_tests as test')
            .select('test.notification_id')
            .whereRef('test.notification_id', '=', 'run.notification_id')
            .where('test.sample_percent', 'is not', null)
            .where(({ not, exists, selectFrom }) =>
              not(
                exists(
                  selectFrom('notification_runs as rest')
                    .select('rest.id')
                    .where('rest.dedupe_key', '=', sql<string>`${AB_REST_RUN_KEY_PREFIX} || test.notification_id`)
                    .where('rest.status', 'in', FINISHED),
                ),
              ),
            ),
        ),
      ),
    )
    .orderBy('run.finished_at')
    .limit(limit)
    .execute();
  return rows.map((row) => row.id);
}


/** What a compaction step did. */
export interface CompactStepResult {
  /** Delivery rows it removed. */
  removed: number;
  /** Runs it found emptied and marked compacted. */
  marked: number;
}

/**
 * One compaction step, in one transaction: deletes up to `limit` delivery
 * rows of the given runs, of those still finished before `cutoff` (a retried
 * run is sending again and keeps its rows), adds what they were to their
 * notifications' compacted_deliveries and moves the subscribers'
 * last_sent_at / last_clicked_at forward. Rows and counts change together,
 * so a crash loses nothing and counts nothing twice. Several runs at once: a
 * trigger or welcome step is a run of one delivery.
 *
 * On PostgreSQL the step first locks its runs' rows, by number (their key
 * order, lock-order.ts), and takes only the runs still finished once it
 * holds them. Retry locks its run the same way before it reads or resets a
 * delivery (reopenFailedRun), so the two
 * take turns: a step never deletes deliveries a Retry has just put back to
 * pending (PostgreSQL re-checks a waited-for row against the DELETE's own
 * conditions, not a subquery's), and a Retry reads its failure groups after
 * the step's deletions. Two schedulers' steps on the same runs take turns too.
 * A run is marked compacted only when none of its rows is left, whatever else
 * deleted rows meanwhile (another step, a subscriber's erasure).
 */
export async function compactStep(db: Kysely<Database>, kind: DatabaseKind, runIds: string[], cutoff: number, limit: number, now: number): Promise<CompactStepResult> {
  return db.transaction().execute(async (trx) => {
    const stillFinished = trx.selectFrom('notification_runs').select(['seq', 'notification_id']).where('id', 'in', runIds).where('status', 'in', FINISHED).where('finished_at', '<', cutoff).orderBy('seq');
    const locked = await (kind === 'postgres' ? stillFinished.forNoKeyUpdate() : stillFinished).execute();
    const runs = await withoutReportsBeingRead(trx, kind, locked, now);
    if (!runs.length) return { removed: 0, marked: 0 };
    const runSeqs = runs.map((run) => run.seq);
    const batch = trx.selectFrom('deliveries').select('id').where('run_seq', 'in', runSeqs).limit(limit);
    const deleted = await trx
      .deleteFrom('deliveries')
      .where('id', 'in', batch)
      .where('run_seq', 'in', runSeqs)
      .returning(['run_seq', 'subscriber_seq', 'status', 'reason', 'push_service', 'variant_index', 'sent_at', 'delivered_at', 'clicked_at'])
      .execute();
    // A delivery row names only its run, by number (migrations 0034, 0035); the compacted counts are the notification's.
    const notificationOfRun = new Map(runs.map((run) => [run.seq, run.notification_id]));
    const removed: RemovedDelivery[] = deleted.map(({ run_seq, ...row }) => ({ ...row, notification_id: notificationOfRun.get(run_seq)! }));
    await namePushServices(trx, removed);
    await addToCompacted(trx, removed);
    await moveLastActivity(trx, removed);
    let marked = 0;
    // A step that removed `limit` rows has likely left some; the next one marks.
    if (removed.length < limit) {
      const result = await trx
        .updateTable('notification_runs')
        .set({ deliveries_compacted_at: now })
        .where('seq', 'in', runSeqs)
        .where('deliveries_compacted_at', 'is', null)
        .where(({ not, exists, selectFrom }) => not(exists(selectFrom('deliveries').select('deliveries.id').whereRef('deliveries.run_seq', '=', 'notification_runs.seq'))))
        .executeTakeFirst();
      marked = Number(result.numUpdatedRows);
    }
    return { removed: removed.length, marked };
  });
}

/**
 * The runs whose notification's CSV report is not being read now
 * (compacted.ts, holdCompactionForReport). On PostgreSQL the step holds each
 * notification's report lock shared, in key order, until it commits: a report
 * starting meanwhile waits for it, and this reads holds written before.
 */
async function withoutReportsBeingRead<Run extends { notification_id: string }>(trx: Transaction<Database>, kind: DatabaseKind, runs: Run[], now: number): Promise<Run[]> {
  const notificationIds = [...new Set(runs.map((run) => run.notification_id))];
  if (!notificationIds.length) return runs;
  if (kind === 'postgres') {
    await sql`select pg_advisory_xact_lock_shared(hashtext(${REPORT_READ_LOCK}), hashtext(id)) from unnest(${notificationIds}::text[]) as id order by id`.execute(trx);
  }
  const held = await trx.selectFrom('report_reads').select('notification_id').where('notification_id', 'in', notificationIds).where('until', '>=', now).execute();
  if (!held.length) return runs;
  const beingRead = new Set(held.map((row) => row.notification_id));
  return runs.filter((run) => !beingRead.has(run.notification_id));
}

/**
 * Removes up to `limit` one-subscriber runs (trigger firings, welcome steps)
 * whose deliveries compaction has taken, oldest compaction first, and adds
 * them to their notifications' removed_run_count, in one transaction. A run
 * stays while it is its notification's latest (Retry and the "kept N days"
 * answer read that one): it goes once a later run exists. Two schedulers at
 * once: a run is deleted once and counted by the one that deleted it.
 * Returns how many runs it removed.
 */
export async function removeCompactedPersonalRuns(db: Kysely<Database>, limit: number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const removable = trx
      .selectFrom('notification_runs as run')
      .select('run.id')
      // Word for word the predicate of the partial index notification_runs_personal_compacted (migration 0033).
      .where(sql<SqlBool>`run.subscriber_id is not null and run.deliveries_compacted_at is not null`)
      .where(({ exists, selectFrom }) =>
        exists(
          selectFrom('notification_runs as later')
            .select('later.id')
            .whereRef('later.notification_id', '=', 'run.notification_id')
            .whereRef('later.created_at', '>', 'run.created_at'),
        ),
      )
      .orderBy('run.deliveries_compacted_at')
      .limit(limit);
    const removed = await trx
      .deleteFrom('notification_runs')
      .where('id', 'in', removable)
      .returning('notification_id')
      .execute();
    const perNotification = new Map<string, number>();
    for (const row of removed) perNotification.set(row.notification_id, (perNotification.get(row.notification_id) ?? 0) + 1);
    for (const [notificationId, count] of inKeyOrder(perNotification.entries(), ([id]) => [id])) {
      await trx
        .updateTable('notifications')
        .set((eb) => ({ removed_run_count: eb('removed_run_count', '+', count) }))
        .where('id', '=', notificationId)
        .execute();
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
  const unnamed = [...new Set(removed.filter((row) => row.push_service === null).map((row) => row.subscriber_seq))];
  if (!unnamed.length) return;
  const endpoints = new Map((await trx.selectFrom('subscribers').select(['seq', 'endpoint']).where('seq', 'in', unnamed).execute()).map((row) => [row.seq, row.endpoint]));
  for (const row of removed) {
    const endpoint = endpoints.get(row.subscriber_seq);
    if (row.push_service === null && endpoint) row.push_service = pushServiceOf(endpoint);
  }
}


/** UPDATE … FROM a list of values (SQLite 3.33+ and PostgreSQL): one statement for the batch's subscribers, by number (migration 0036), in order. */
async function moveLastActivity(trx: Transaction<Database>, removed: readonly RemovedDelivery[]): Promise<void> {
  const latest = new Map<number, { sent: number | null; clicked: number | null }>();
  for (const row of removed) {
    if (row.sent_at === null && row.clicked_at === null) continue;
    const seen = latest.get(row.subscriber_seq) ?? { sent: null, clicked: null };
    latest.set(row.subscriber_seq, { sent: maxOf(seen.sent, row.sent_at), clicked: maxOf(seen.clicked, row.clicked_at) });
  }
  if (!latest.size) return;
  const values = [...latest.entries()]
    .sort(([a], [b]) => a - b)
    .map(([seq, at]) => sql`(cast(${seq} as bigint), cast(${at.sent} as bigint), cast(${at.clicked} as bigint))`);
  await sql`
    with v(seq, sent, clicked) as (values ${sql.join(values)})
    update subscribers set
      last_sent_at = case when v.sent is not null and (subscribers.last_sent_at is null or subscribers.last_sent_at < v.sent) then v.sent else subscribers.last_sent_at end,
      last_clicked_at = case when v.clicked is not null and (subscribers.last_clicked_at is null or subscribers.last_clicked_at < v.clicked) then v.clicked else subscribers.last_clicked_at end
    from v
    where subscribers.seq = v.seq`.execute(trx);
}

const maxOf = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.max(a, b));
