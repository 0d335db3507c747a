// SQL for notification runs and their per-subscriber deliveries (the
// invariants of docs/delivery.md live here: runs and deliveries are claimed
// with conditional updates, deliveries are unique per (run, subscriber)). The
// counters a send adds to are in run-counters.ts.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, NotificationRow, RunRow, RunStatus, SiteRow } from '../db/schema';
import type { DatabaseKind } from '../db/database';
import { runSeqOf } from '../db/run-seq';
import type { RunFinished } from './ports';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * `status = 'pending'` written as a literal: the partial index on pending
 * deliveries (migration 0002) is only used when the query repeats its
 * condition verbatim, which a bound parameter does not.
 */
const PENDING = sql<'pending'>`'pending'`;

export interface NewRun {
  id: string;
  notification_id: string;
  site_id: string;
  dedupe_key: string;
  due_at: number;
  segment_id: string | null;
  subscriber_id: string | null;
  /** Set when this run must wait for another to finish first (docs/delivery.md, "Runs that follow another run"). */
  after_run_id?: string | null;
  /** A part of a send split by zone (zone-runs.ts): its subscriber zones, as JSON, and the run it came from. */
  zones?: string | null;
  zone_send_id?: string | null;
  created_at: number;
}

/** Creates a run unless one with the same dedupe key exists; true when created. */
export async function insertRun(db: Db, run: NewRun): Promise<boolean> {
  const result = await db
    .insertInto('notification_runs')
    .values({ after_run_id: null, zones: null, zone_send_id: null, ...run, status: 'pending', fanout_done: 0, fanout_cursor: null, lease_owner: null, lease_until: null, started_at: null, finished_at: null, last_error: null })
    .onConflict((oc) => oc.column('dedupe_key').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/**
 * Moves the runs that follow this one (a welcome sequence's later steps), still
 * waiting, later by `byMs`. Only runs made for one subscriber follow another:
 * they are found through that subscriber's runs (index notification_runs_subscriber_due).
 */
export async function delayFollowingRuns(db: Db, run: Pick<RunRow, 'id' | 'subscriber_id'>, byMs: number): Promise<void> {
  if (byMs <= 0 || run.subscriber_id === null) return;
  for (let previous: string | undefined = run.id; previous; ) {
    const next: { id: string } | undefined = await db
      .selectFrom('notification_runs')
      .select('id')
      .where('subscriber_id', '=', run.subscriber_id)
      .where('after_run_id', '=', previous)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    if (next) await db.updateTable('notification_runs').set((eb) => ({ due_at: eb('due_at', '+', byMs) })).where('id', '=', next.id).execute();
    previous = next?.id;
  }
}

/**
 * Claims due runs in one statement. With two schedulers on PostgreSQL the
 * second UPDATE waits for the first's row locks and then re-checks
 * `status = 'pending'`, so each run is claimed exactly once.
 *
 * A run that follows another (`after_run_id`) is not due while that run is
 * pending or sending (docs/delivery.md, "Runs that follow another run"). The
 * check is part of the same statement: both runs due at once means only the
 * earlier is claimed, whoever else is claiming, whenever they were created.
 */
export async function claimDueRuns(
  db: Db,
  now: number,
  owner: string,
  leaseMs: number,
  { limit = 50, dueBy = now }: { limit?: number; dueBy?: number } = {},
): Promise<Array<Pick<RunRow, 'id' | 'notification_id' | 'due_at'>>> {
  const due = db
    .selectFrom('notification_runs')
    .select('id')
    .where('status', '=', 'pending')
    .where('due_at', '<=', dueBy)
    .where((eb) =>
      eb.or([
        eb('after_run_id', 'is', null),
        eb.not(
          eb.exists(
            eb
              .selectFrom('notification_runs as previous')
              .select(sql<number>`1`.as('one'))
              .whereRef('previous.id', '=', 'notification_runs.after_run_id')
              .where('previous.status', 'in', ['pending', 'sending']),
          ),
        ),
      ]),
    )
    .orderBy('due_at')
    .limit(limit);
  return db
    .updateTable('notification_runs')
    .set({ status: 'sending', started_at: now, lease_owner: owner, lease_until: now + leaseMs })
    .where('id', 'in', due)
    .where('status', '=', 'pending')
    .returning(['id', 'notification_id', 'due_at'])
    .execute();
}

/**
 * For the frequency cap: the pushes of these subscribers accepted since
 * `since`, and their deliveries of other runs still pending (being sent, or
 * waiting to be). Read by range over (subscriber_seq, status, sent_at)
 * (migrations 0023, 0036), never a subscriber's whole history.
 */
export async function recentPushesOf(db: Db, subscriberSeqs: number[], runId: string, since: number): Promise<Array<{ subscriberSeq: number; deliveryId: number; pending: boolean }>> {
  const [sent, pending] = await Promise.all([
    db.selectFrom('deliveries').select(['subscriber_seq', 'id']).where('subscriber_seq', 'in', subscriberSeqs).where('status', '=', 'sent').where('sent_at', '>=', since).execute(),
    db.selectFrom('deliveries').select(['subscriber_seq', 'id']).where('subscriber_seq', 'in', subscriberSeqs).where('status', '=', 'pending').where('run_seq', '!=', runSeqOf(runId)).execute(),
  ]);
  return [
    ...sent.map((row) => ({ subscriberSeq: Number(row.subscriber_seq), deliveryId: Number(row.id), pending: false })),
    ...pending.map((row) => ({ subscriberSeq: Number(row.subscriber_seq), deliveryId: Number(row.id), pending: true })),
  ];
}

/** Runs still sending whose lease ran out: their worker died or their jobs were lost. */
export function findStalledRuns(db: Db, now: number, limit = 20): Promise<Array<Pick<RunRow, 'id' | 'lease_until'>>> {
  return db
    .selectFrom('notification_runs')
    .select(['id', 'lease_until'])
    .where('status', '=', 'sending')
    .where('lease_until', '<', now)
    .orderBy('lease_until')
    .limit(limit)
    .execute();
}

/** Runs still sending, whatever their lease: after the queue lost its jobs, each is resumed at once. */
export function findSendingRuns(db: Db, afterId: string | null, limit = 100): Promise<Array<Pick<RunRow, 'id'>>> {
  let query = db.selectFrom('notification_runs').select(['id']).where('status', '=', 'sending');
  if (afterId !== null) query = query.where('id', '>', afterId);
  return query.orderBy('id').limit(limit).execute();
}

/** Takes over a stalled run if nobody else did first (compare-and-set on the old lease). */
export async function reclaimStalledRun(db: Db, runId: string, oldLeaseUntil: number | null, now: number, owner: string, leaseMs: number): Promise<boolean> {
  let query = db.updateTable('notification_runs').set({ lease_owner: owner, lease_until: now + leaseMs }).where('id', '=', runId).where('status', '=', 'sending');
  query = oldLeaseUntil === null ? query.where('lease_until', 'is', null) : query.where('lease_until', '=', oldLeaseUntil);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Takes over a run still sending whatever its lease says (the queue lost its
 * jobs): no compare-and-set on the old lease, because workers finishing the
 * batches they held when the queue was emptied keep extending it, and the run
 * must be resumed all the same (docs/delivery.md, "When Redis loses the
 * queue"). False if the run is no longer sending.
 */
export async function takeOverSendingRun(db: Db, runId: string, now: number, owner: string, leaseMs: number): Promise<boolean> {
  const result = await db.updateTable('notification_runs').set({ lease_owner: owner, lease_until: now + leaseMs }).where('id', '=', runId).where('status', '=', 'sending').executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Keeps a run's lease alive while work on it progresses; never shortens it. */
export async function extendRunLease(db: Db, runId: string, until: number): Promise<void> {
  await db
    .updateTable('notification_runs')
    .set({ lease_until: until })
    .where('id', '=', runId)
    .where('status', '=', 'sending')
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', until)]))
    .execute();
}

export interface RunForSending {
  run: RunRow;
  notification: NotificationRow;
  site: SiteRow;
  /** The site owner's email: the VAPID contact of a site not yet on https. */
  ownerEmail: string | undefined;
}

export async function loadRunForSending(db: Db, runId: string): Promise<RunForSending | undefined> {
  const run = await db.selectFrom('notification_runs').selectAll().where('id', '=', runId).executeTakeFirst();
  if (!run) return undefined;
  const notification = await db.selectFrom('notifications').selectAll().where('id', '=', run.notification_id).executeTakeFirst();
  const site = await db.selectFrom('sites').selectAll().where('id', '=', run.site_id).executeTakeFirst();
  if (!notification || !site) return undefined;
  const owner = await db.selectFrom('users').select('email').where('id', '=', site.user_id).executeTakeFirst();
  return { run, notification, site, ownerEmail: owner?.email };
}

/** Why a run reaches nobody (its segment is gone), shown on the run and its notification. */
export async function setRunError(db: Db, runId: string, error: string): Promise<void> {
  await db.updateTable('notification_runs').set({ last_error: error }).where('id', '=', runId).execute();
}

/**
 * A one-time notification shows its single run's state (spec §4 statuses).
 * Its sent_at is set only once a push service accepts something
 * (addToRunCounters): a send nobody accepted was never "sent".
 */
export async function markNotificationSending(db: Db, notificationId: string, now: number): Promise<void> {
  await db
    .updateTable('notifications')
    .set({ status: 'sending', updated_at: now })
    .where('id', '=', notificationId)
    .where('type', '=', 'ONE_TIME')
    .where('status', 'in', ['draft', 'scheduled', 'failed', 'completed_with_errors'])
    .execute();
}

export async function recordFanoutPage(db: Db, run: Pick<RunRow, 'id' | 'notification_id'>, cursor: string, inserted: number, leaseUntil: number): Promise<void> {
  await db
    .updateTable('notification_runs')
    .set((eb) => ({ fanout_cursor: cursor, total_count: eb('total_count', '+', inserted), lease_until: leaseUntil }))
    .where('id', '=', run.id)
    .execute();
  if (inserted) {
    await db
      .updateTable('notifications')
      .set((eb) => ({ total_count: eb('total_count', '+', inserted) }))
      .where('id', '=', run.notification_id)
      .execute();
  }
}

export async function markFanoutDone(db: Db, runId: string): Promise<void> {
  await db.updateTable('notification_runs').set({ fanout_done: 1 }).where('id', '=', runId).execute();
}

/**
 * One delivery row per (run, subscriber), in the page's order; a re-run of the
 * same page inserts nothing new. Answers the ids of the rows it inserted, in
 * id order: the page's batches to enqueue (docs/delivery.md, "Runs and
 * deliveries"). The page travels as one parameter (a JSON
 * array on SQLite, arrays on PostgreSQL): a statement of the same text for
 * every page, instead of a thousand rows of values for the query builder to
 * compile (about 8 µs of CPU per delivery, measured by `npm run bench:send`).
 * Every column not named keeps its default (null).
 */
export async function insertPendingDeliveries(
  db: Db,
  kind: DatabaseKind,
  run: Pick<RunRow, 'seq'>,
  /** Each subscriber by its number (migration 0036), with its A/B variant (delivery/ab-split.ts; null: not an A/B send). */
  recipients: ReadonlyArray<{ seq: number; variant: number | null }>,
  now: number,
): Promise<number[]> {
  if (!recipients.length) return [];
  const seqs = recipients.map((recipient) => recipient.seq);
  const variants = recipients.map((recipient) => recipient.variant);
  const rows =
    kind === 'postgres'
      ? sql`select ${run.seq}::bigint, s, 'pending', ${now}::bigint, v
            from unnest(${seqs}::bigint[], ${variants}::int[]) with ordinality as page(s, v, n)
            order by n`
      : // The WHERE is SQLite's: an INSERT … SELECT with an upsert clause needs one to parse.
        sql`select ${run.seq}, json_extract(value, '$[0]'), 'pending', ${now}, json_extract(value, '$[1]')
            from json_each(${JSON.stringify(recipients.map((recipient) => [recipient.seq, recipient.variant]))})
            where true order by key`;
  const result = await sql<{ id: number }>`insert into deliveries (run_seq, subscriber_seq, status, created_at, variant_index) ${rows}
    on conflict (run_seq, subscriber_seq) do nothing returning id`.execute(db);
  return result.rows.map((row) => Number(row.id)).sort((a, b) => a - b);
}

/** Pending delivery ids of a run in id order, for (re-)enqueueing batches. */
export async function pendingDeliveryIds(db: Db, runId: string, options: { afterId: number; limit: number }): Promise<number[]> {
  const query = db.selectFrom('deliveries').select('id').where('run_seq', '=', runSeqOf(runId)).where('status', '=', PENDING).where('id', '>', options.afterId);
  const rows = await query.orderBy('id').limit(options.limit).execute();
  return rows.map((r) => r.id);
}

/** A delivery claimed for sending, with its A/B variant (null: the notification's own content). */
export interface ClaimedDeliveryRow {
  id: number;
  subscriber_seq: number;
  attempts: number;
  variant_index: number | null;
}

/** One minute: the unit a throttled send counts in (docs/delivery.md, "Throttled sends"). */
export const THROTTLE_WINDOW_MS = 60_000;

/**
 * Claims deliveries for sending: pending, not leased by another worker, and
 * due. Two workers handed the same batch (a stalled BullMQ job re-run) cannot
 * both send a row: the second finds the lease taken.
 *
 * A throttled run's deliveries (`throttled`) are claimed only within the
 * minute they were granted (delivery/throttle.ts), and the claim uses the
 * grant up: a retry, or a delivery whose worker died, waits for a place in
 * a later minute.
 */
export async function claimDeliveries(db: Db, ids: number[], now: number, leaseMs: number, { throttled = false }: { throttled?: boolean } = {}): Promise<ClaimedDeliveryRow[]> {
  if (!ids.length) return [];
  let claim = db
    .updateTable('deliveries')
    .set((eb) => ({ lease_until: now + leaseMs, next_attempt_at: null, attempts: eb('attempts', '+', 1), ...(throttled ? { throttle_window: null } : {}) }))
    .where('id', 'in', ids)
    .where('status', '=', 'pending')
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
    .where((eb) => eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', now)]));
  if (throttled) claim = claim.where('throttle_window', 'is not', null).where('throttle_window', '<=', now).where('throttle_window', '>', now - THROTTLE_WINDOW_MS);
  return claim.returning(['id', 'subscriber_seq', 'attempts', 'variant_index']).execute();
}

/** Keeps a working batch's claims (and its run) leased; rows already recorded are left alone. */
export async function renewLeases(db: Kysely<Database>, runId: string, deliveryIds: number[], until: number): Promise<void> {
  if (deliveryIds.length) {
    await db.updateTable('deliveries').set({ lease_until: until }).where('id', 'in', deliveryIds).where('status', '=', 'pending').where('next_attempt_at', 'is', null).execute();
  }
  await extendRunLease(db, runId, until);
}

/** The subscribers with these numbers (delivery rows name them by number: migration 0036). */
export function loadSubscribersForSending(db: Db, seqs: number[]) {
  if (!seqs.length) return Promise.resolve([]);
  // Each with the key pair it subscribed with (docs/web-push.md, "RFC 8292:
  // VAPID"); null for a row written without one: the site's primary key.
  return db
    .selectFrom('subscribers')
    .leftJoin('site_vapid_keys', 'site_vapid_keys.id', 'subscribers.vapid_key_id')
    .select([
      'subscribers.id',
      'subscribers.seq',
      'subscribers.endpoint',
      'subscribers.endpoint_hash',
      'subscribers.p256dh',
      'subscribers.auth',
      'subscribers.is_active',
      'subscribers.vapid_key_id',
      'site_vapid_keys.public_key as vapid_public_key',
      'site_vapid_keys.private_key as vapid_private_key',
    ])
    .where('subscribers.seq', 'in', seqs)
    .execute();
}

export async function hasPendingDeliveries(db: Db, runId: string): Promise<boolean> {
  const row = await db.selectFrom('deliveries').select('id').where('run_seq', '=', runSeqOf(runId)).where('status', '=', PENDING).limit(1).executeTakeFirst();
  return row !== undefined;
}

/**
 * The final state of a run from its counters (issue 11): `failed` when
 * deliveries failed or expired and none was accepted, `completed_with_errors`
 * when some failed, else `completed` (expired subscriptions are churn, not an
 * error of the send).
 */
export function finalRunStatus(counts: Pick<RunRow, 'sent_count' | 'failed_count' | 'expired_count'>): Extract<RunStatus, 'completed' | 'completed_with_errors' | 'failed'> {
  if (counts.sent_count === 0 && counts.failed_count + counts.expired_count > 0) return 'failed';
  return counts.failed_count > 0 ? 'completed_with_errors' : 'completed';
}

/**
 * Finishes a run whose fan-out is done and whose deliveries are all terminal,
 * with its final status and, when something failed, a summary of why. A
 * one-time notification finishes once none of its runs is left to send, in
 * the state of all of them together (its counters): a send split by zone
 * (zone-runs.ts) and an A/B test's sample and rest are several runs.
 *
 * On PostgreSQL the run's row is locked first: a batch's result transaction
 * adds to the run's counters under that lock, so the counters and the
 * pending check read here are after its last result, never between them
 * (the fan-out's finish and a batch's finish may race). The notification's
 * row is locked next, so the last two runs of a send finishing at once take
 * turns and the second sees the first finished (lock-order.ts: runs, then
 * notifications).
 */
export async function completeRunIfFinished(db: Kysely<Database>, kind: DatabaseKind, runId: string, now: number, runFinished?: RunFinished): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const runQuery = trx.selectFrom('notification_runs').selectAll().where('id', '=', runId);
    const run = await (kind === 'postgres' ? runQuery.forNoKeyUpdate() : runQuery).executeTakeFirst();
    if (!run || run.status !== 'sending' || !run.fanout_done) return false;
    if (await hasPendingDeliveries(trx, runId)) return false;
    const status = finalRunStatus(run);
    const lastError = status === 'completed' ? run.last_error : ((await failureSummary(trx, runId, run.total_count)) ?? run.last_error);
    const updated = await trx
      .updateTable('notification_runs')
      .set({ status, finished_at: now, lease_until: null, last_error: lastError })
      .where('id', '=', runId)
      .where('status', '=', 'sending')
      .executeTakeFirst();
    if (!Number(updated.numUpdatedRows)) return false;
    const sendStatus = await endedSendStatus(trx, kind, run.notification_id);
    if (sendStatus) {
      await trx
        .updateTable('notifications')
        .set({ status: sendStatus, completed_at: now, last_error: lastError, updated_at: now })
        .where('id', '=', run.notification_id)
        .where('type', 'in', ['ONE_TIME', 'RECURRING'])
        .where('status', '=', 'sending')
        .execute();
    }
    await runFinished?.(trx, { ...run, status, finished_at: now, lease_until: null, last_error: lastError }, now);
    return true;
  });
}

/**
 * The final state of a one-time notification's send, or of a recurring
 * notification whose schedule ended ("sending" its last occurrence:
 * endRecurringNotification), once none of its runs is left to send
 * (undefined until then, and for other notifications), from the
 * notification's counters: every run of it together, so a send is never
 * "completed" while part of its audience failed in another run.
 */
async function endedSendStatus(trx: Transaction<Database>, kind: DatabaseKind, notificationId: string): Promise<ReturnType<typeof finalRunStatus> | undefined> {
  const kindOf = await trx.selectFrom('notifications').select('type').where('id', '=', notificationId).executeTakeFirst();
  if (kindOf?.type !== 'ONE_TIME' && kindOf?.type !== 'RECURRING') return undefined;
  // Locked before the status is read: a recurring notification's schedule ending at this moment is seen, or waits for this.
  const countsQuery = trx.selectFrom('notifications').select(['status', 'sent_count', 'failed_count', 'expired_count']).where('id', '=', notificationId);
  const notification = await (kind === 'postgres' ? countsQuery.forNoKeyUpdate() : countsQuery).executeTakeFirst();
  if (!notification || notification.status !== 'sending') return undefined;
  const open = await trx.selectFrom('notification_runs').select('id').where('notification_id', '=', notificationId).where('status', 'in', ['pending', 'sending']).limit(1).executeTakeFirst();
  if (open) return undefined;
  return finalRunStatus(notification);
}

/**
 * "12 of 40 not accepted: 8 unreachable (fcm), 4 expired (mozilla)": the
 * reasons of a finished run's failed and expired deliveries, most frequent
 * first. Read once, when the run finishes, through its (run_seq, …) index.
 */
async function failureSummary(db: Db, runId: string, targeted: number): Promise<string | null> {
  const rows = await db
    .selectFrom('deliveries')
    .select(['reason', 'push_service', (eb) => eb.fn.countAll<number>().as('n')])
    .where('run_seq', '=', runSeqOf(runId))
    .where('status', 'in', ['failed', 'gone'])
    .groupBy(['reason', 'push_service'])
    .execute();
  if (!rows.length) return null;
  const groups = rows
    .map((row) => ({ reason: row.reason === 'gone' ? 'expired' : (row.reason ?? 'unknown'), service: row.push_service ?? 'other', count: Number(row.n) }))
    .sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));
  const total = groups.reduce((sum, group) => sum + group.count, 0);
  return `${total} of ${targeted} not accepted: ${groups.map((group) => `${group.count} ${group.reason} (${group.service})`).join(', ')}`;
}

/**
 * Pending deliveries now: how many, how many a worker holds (lease in
 * force), and the oldest one's creation time (metrics; the partial index on
 * pending rows keeps this cheap).
 */
export async function deliveryBacklog(db: Db, now: number): Promise<{ pending: number; leased: number; oldestPendingAt: number | null }> {
  const row = await db
    .selectFrom('deliveries')
    .select((eb) => [
      eb.fn.countAll<number>().as('pending'),
      eb.fn.sum<number | null>(eb.case().when('lease_until', '>', now).then(1).else(0).end()).as('leased'),
      eb.fn.min('created_at').as('oldest'),
    ])
    .where('status', '=', PENDING)
    .executeTakeFirstOrThrow();
  return { pending: Number(row.pending), leased: Number(row.leased ?? 0), oldestPendingAt: row.oldest === null ? null : Number(row.oldest) };
}
