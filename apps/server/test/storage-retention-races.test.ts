import crypto from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { runSeqOf } from '../src/db/run-seq';
import type { FailureReason } from '@herald/contracts';
import type { DeliveryStatus, RunStatus } from '../src/db/schema';
import { insertRun } from '../src/delivery/runs';
import { notificationReportCsv } from '../src/features/notifications/report';
import { reopenFailedRun } from '../src/features/notifications/repository';
import { compactStep } from '../src/features/retention/repository';
import { compactOldDeliveries } from '../src/features/retention/service';
import { csvCells } from '../src/features/subscriber-imports/import-file';
import { ManualClock } from '../src/platform/clock';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from './support/delivery-harness';
import { sessionsWaitingOnLocks } from './support/lock-waits';
import { subscriberRow } from './support/subscriber-rows';
import { createTestApp, waitFor, type TestApp } from './support/test-app';

// Retention against what else runs meanwhile (docs/storage.md, "Retention"):
// an A/B test whose winner is picked by hand long after its sample, a second
// scheduler compacting the same runs, and the owner's Retry of a send being
// compacted. On PostgreSQL the races are played out on two connections, with
// a transaction holding rows so that one side waits on the other's locks at
// the worst moment; on SQLite (one writer at a time) the same steps run one
// after the other and must end the same way.

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 5, 1, 8);
const variant = (letter: string) => ({ title: `Sale ${letter}`, message: `Offer ${letter}`, destination_url: `https://push-shop.example/${letter.toLowerCase()}`, image_url: null });

/** Until `release()`, a transaction holds the site's subscriber rows: a compaction step waits there, after its DELETE, with its locks taken. */
async function holdSubscribers(t: TestApp, siteId: string): Promise<{ release: () => void; done: Promise<void> }> {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let taken!: () => void;
  const lockTaken = new Promise<void>((resolve) => (taken = resolve));
  const done = t.ctx.db.transaction().execute(async (trx) => {
    await trx.selectFrom('subscribers').select('seq').where('site_id', '=', siteId).forUpdate().execute();
    taken();
    await held;
  });
  await lockTaken;
  return { release, done };
}

interface OldSend {
  t: TestApp;
  notificationId: string;
  runId: string;
  siteId: string;
  subscriberIds: string[];
}

/** A one-time send finished at T0 + 1 min, one delivery per status given, written straight into the tables. */
async function oldSend(clock: ManualClock, statuses: DeliveryStatus[], runStatus: RunStatus): Promise<OldSend> {
  const t = await createTestApp({ clock });
  const db = t.ctx.db;
  const owner = await t.createUser();
  const site = await t.createSite(owner.token, { name: 'Push Shop', url: 'https://push-shop.example' });
  const notificationId = (await t.request('POST', `/api/sites/${site.id}/notifications`, { token: owner.token, body: notificationInput({ title: 'Old send' }) })).body.data.notification.id as string;
  const subscriberIds = statuses.map(() => crypto.randomUUID());
  await db.insertInto('subscribers').values(subscriberIds.map((id) => subscriberRow(site.id, { id, subscribed_at: T0 }))).execute();
  const seqs = (await db.selectFrom('subscribers').select('seq').where('site_id', '=', site.id).orderBy('seq').execute()).map((row) => Number(row.seq));
  const runId = crypto.randomUUID();
  await insertRun(db, { id: runId, notification_id: notificationId, site_id: site.id, dedupe_key: `test:${runId}`, due_at: T0, segment_id: null, subscriber_id: null, created_at: T0 });
  const failed = statuses.filter((status) => status === 'failed').length;
  const counts = { total_count: statuses.length, sent_count: statuses.length - failed, failed_count: failed };
  await db.updateTable('notification_runs').set({ status: runStatus, started_at: T0, finished_at: T0 + 60_000, ...counts }).where('id', '=', runId).execute();
  await db.updateTable('notifications').set({ status: runStatus === 'completed' ? 'completed' : 'completed_with_errors', ...counts }).where('id', '=', notificationId).execute();
  if (failed) await db.insertInto('notification_failures').values({ notification_id: notificationId, reason: 'server_error', push_service: 'fcm', count: failed, sample_error: 'boom' }).execute();
  // One insert per row, in the order given: a step of N rows takes the first N.
  for (const [i, status] of statuses.entries()) {
    const isFailed = status === 'failed';
    await db
      .insertInto('deliveries')
      .values({
        run_seq: runSeqOf(runId),
        subscriber_seq: seqs[i]!,
        status,
        attempts: 1,
        next_attempt_at: null,
        lease_until: null,
        throttle_window: null,
        error: isFailed ? 'boom' : null,
        reason: isFailed ? ('server_error' as FailureReason) : null,
        push_service: isFailed ? 'fcm' : null,
        sent_at: isFailed ? null : T0 + 1_000,
        delivered_at: null,
        clicked_at: null,
        created_at: T0,
      })
      .execute();
  }
  return { t, notificationId, runId, siteId: site.id, subscriberIds };
}

describe('retention and an A/B test decided by hand', () => {
  let h: DeliveryHarness;
  afterEach(async () => h?.close());

  it('keeps the sample’s rows until the rest has been sent, so a winner picked after the retention reaches only who got no push of the sample', async () => {
    const clock = new ManualClock(T0);
    h = await createDeliveryHarness({ clock });
    for (let i = 0; i < 10; i++) await h.subscribe();
    const runsOf = (id: string) => h.t.ctx.db.selectFrom('notification_runs').select(['id', 'status']).where('notification_id', '=', id).execute();
    const allFinished = async (id: string, count: number) => {
      const runs = await runsOf(id);
      return runs.length === count && runs.every((run) => run.status !== 'pending' && run.status !== 'sending') ? true : undefined;
    };
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, {
      token: h.owner.token,
      body: notificationInput({ variants: [variant('A'), variant('B')], ab_test: { sample_percent: 50, decide_after_minutes: 1, metric: 'click_rate', decide: 'manual' } }),
    });
    const id = created.body.data.notification.id as string;
    await h.t.request('POST', `/api/notifications/${id}/send`, { token: h.owner.token });
    await h.waitForStatus(id, ['completed']);
    await waitFor(() => allFinished(id, 1), { timeoutMs: 20_000 });
    expect(h.push.messages).toHaveLength(5);

    // The owner comes back 31 days later: the sample's rows are past the retention, but no winner has been sent yet.
    await h.engine.scheduler!.stop();
    clock.advance(31 * DAY);
    const token = (await h.t.request('POST', '/api/auth/login', { body: { email: h.owner.email, password: h.owner.password } })).body.data.token as string;
    expect(await compactOldDeliveries(h.t.ctx, clock.now())).toBe(0);
    await h.engine.scheduler!.start();

    const picked = await h.t.request('POST', `/api/notifications/${id}/ab-test/winner`, { token, body: { variant_index: 1 } });
    expect(picked.status, JSON.stringify(picked.body)).toBe(200);
    await h.engine.scheduler!.tick();
    await waitFor(() => allFinished(id, 2), { timeoutMs: 20_000 });
    const perBrowser = new Map<string, number>();
    for (const message of h.push.messages) perBrowser.set(message.subscriptionId, (perBrowser.get(message.subscriptionId) ?? 0) + 1);
    expect({ pushes: h.push.messages.length, browsersPushedTwice: [...perBrowser.values()].filter((n) => n > 1).length }).toEqual({ pushes: 10, browsersPushedTwice: 0 });

    // Once the rest has gone, the sample's rows are compacted like any others (the rest's own rows wait their 30 days).
    await h.engine.scheduler!.stop();
    expect(await compactOldDeliveries(h.t.ctx, clock.now())).toBe(5);
  }, 60_000);
});

describe('retention racing other writers', () => {
  let t: TestApp | undefined;
  afterEach(async () => t?.close());

  it('two schedulers compacting the same send take turns: every row is counted once and no run is marked compacted while rows remain', async () => {
    const clock = new ManualClock(T0);
    const send = await oldSend(clock, Array.from({ length: 30 }, () => 'sent'), 'completed');
    t = send.t;
    const db = t.ctx.db;
    const remaining = async () => (await db.selectFrom('deliveries').select('id').where('run_seq', '=', runSeqOf(send.runId)).execute()).length;
    const compacted = async () => Number((await db.selectFrom('compacted_deliveries').select((eb) => eb.fn.sum<number>('count').as('n')).where('notification_id', '=', send.notificationId).executeTakeFirst())?.n ?? 0);
    const now = T0 + 31 * DAY;
    // Scaled down: 10 rows a step, 2 steps a sweep, so the 30-row send outlasts a sweep as a big send outlasts 40 × 1,000.
    const options = { everyMs: 0, batchSize: 10, maxBatches: 2 };

    if (t.ctx.dbKind === 'postgres') {
      // Scheduler A's first step waits after its DELETE; scheduler B's step on the same run then waits for A's locks.
      const blocker = await holdSubscribers(t, send.siteId);
      const a = compactOldDeliveries(t.ctx, now, options);
      await waitFor(async () => ((await sessionsWaitingOnLocks(t!.ctx.db)) >= 1 ? true : undefined), { timeoutMs: 10_000 });
      const b = compactOldDeliveries(t.ctx, now, options);
      await waitFor(async () => ((await sessionsWaitingOnLocks(t!.ctx.db)) >= 2 ? true : undefined), { timeoutMs: 10_000 });
      blocker.release();
      await blocker.done;
      const [byA, byB] = await Promise.all([a, b]);
      // Before the run was locked first, B found A's rows gone, removed none and marked the run done with 10 rows left.
      expect(byA + byB).toBe(30);
    } else {
      const [byA, byB] = await Promise.all([compactOldDeliveries(t.ctx, now, options), compactOldDeliveries(t.ctx, now, options)]);
      expect(byA + byB).toBe(30);
    }
    expect({ left: await remaining(), counted: await compacted() }).toEqual({ left: 0, counted: 30 });
    const run = await db.selectFrom('notification_runs').select('deliveries_compacted_at').where('id', '=', send.runId).executeTakeFirstOrThrow();
    expect(run.deliveries_compacted_at).not.toBeNull();
  }, 60_000);

  it('a run is marked compacted only once none of its rows is left, whatever else removed rows meanwhile', async () => {
    const clock = new ManualClock(T0);
    const send = await oldSend(clock, Array.from({ length: 6 }, () => 'sent'), 'completed');
    t = send.t;
    const db = t.ctx.db;
    const now = T0 + 31 * DAY;
    // Another writer (a subscriber's erasure, another step) removed the rows this step would take first.
    const firstTwo = await db.selectFrom('deliveries').select('id').where('run_seq', '=', runSeqOf(send.runId)).orderBy('id').limit(2).execute();
    await db.deleteFrom('deliveries').where('id', 'in', firstTwo.map((row) => row.id)).execute();
    // A step of 3 rows that removes 3: rows may be left, nothing is marked.
    expect(await compactStep(db, t.ctx.dbKind, [send.runId], now - 30 * DAY, 3, now)).toEqual({ removed: 3, marked: 0 });
    // A step that removes fewer than it may (1 of 3) marks the run, as none is left.
    expect(await compactStep(db, t.ctx.dbKind, [send.runId], now - 30 * DAY, 3, now)).toEqual({ removed: 1, marked: 1 });
    // Marked once.
    expect(await compactStep(db, t.ctx.dbKind, [send.runId], now - 30 * DAY, 3, now)).toEqual({ removed: 0, marked: 0 });
  }, 60_000);

  it('a compaction step that meets a Retry in progress leaves the deliveries the Retry put back to pending', async () => {
    const clock = new ManualClock(T0);
    const send = await oldSend(clock, ['failed', 'failed', 'sent', 'sent', 'sent', 'sent'], 'completed_with_errors');
    t = send.t;
    const db = t.ctx.db;
    const run = await db.selectFrom('notification_runs').selectAll().where('id', '=', send.runId).executeTakeFirstOrThrow();
    const now = T0 + 31 * DAY;
    const kind = t.ctx.dbKind;
    let step: Awaited<ReturnType<typeof compactStep>>;
    if (kind === 'postgres') {
      // The owner's Retry has reset the failed rows and not yet committed when the sweep's step on this run starts.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let reopened!: (count: number) => void;
      const didReopen = new Promise<number>((resolve) => (reopened = resolve));
      const retry = db.transaction().execute(async (trx) => {
        reopened(await reopenFailedRun(trx, kind, run, now));
        await held;
      });
      expect(await didReopen).toBe(2);
      const pending = compactStep(db, kind, [send.runId], now - 30 * DAY, 1000, now);
      await waitFor(async () => ((await sessionsWaitingOnLocks(t!.ctx.db)) >= 1 ? true : undefined), { timeoutMs: 10_000 });
      release();
      await retry;
      step = await pending;
    } else {
      expect(await db.transaction().execute((trx) => reopenFailedRun(trx, kind, run, now))).toBe(2);
      step = await compactStep(db, kind, [send.runId], now - 30 * DAY, 1000, now);
    }
    // The run is sending again: it keeps every row (before the fix the step deleted all six, the two pending ones among them).
    expect(step).toEqual({ removed: 0, marked: 0 });
    const left = await db.selectFrom('deliveries').select('status').where('run_seq', '=', runSeqOf(send.runId)).execute();
    expect(left.filter((row) => row.status === 'pending')).toHaveLength(2);
    expect(await db.selectFrom('compacted_deliveries').select('status').where('notification_id', '=', send.notificationId).execute()).toEqual([]);
  }, 60_000);

  it('a Retry that meets a compaction step in progress keeps the failure groups equal to the failed count', async () => {
    const clock = new ManualClock(T0);
    // Row order: failed, sent, sent, sent, sent, failed: a step of 3 takes the first failed one and leaves the last.
    const send = await oldSend(clock, ['failed', 'sent', 'sent', 'sent', 'sent', 'failed'], 'completed_with_errors');
    t = send.t;
    const db = t.ctx.db;
    const run = await db.selectFrom('notification_runs').selectAll().where('id', '=', send.runId).executeTakeFirstOrThrow();
    const now = T0 + 31 * DAY;
    const kind = t.ctx.dbKind;
    let reopened: number;
    if (kind === 'postgres') {
      // The step has deleted its 3 rows and waits on the subscribers' rows when the owner presses Retry.
      const blocker = await holdSubscribers(t, send.siteId);
      const step = compactStep(db, kind, [send.runId], now - 30 * DAY, 3, now);
      await waitFor(async () => ((await sessionsWaitingOnLocks(t!.ctx.db)) >= 1 ? true : undefined), { timeoutMs: 10_000 });
      const retry = db.transaction().execute((trx) => reopenFailedRun(trx, kind, run, now));
      await waitFor(async () => ((await sessionsWaitingOnLocks(t!.ctx.db)) >= 2 ? true : undefined), { timeoutMs: 10_000 });
      blocker.release();
      await blocker.done;
      const [stepped, retried] = await Promise.all([step, retry]);
      expect(stepped.removed).toBe(3);
      reopened = retried;
    } else {
      expect((await compactStep(db, kind, [send.runId], now - 30 * DAY, 3, now)).removed).toBe(3);
      reopened = await db.transaction().execute((trx) => reopenFailedRun(trx, kind, run, now));
    }
    // The compacted failure stays counted as failed (its row is gone, it cannot be sent again); the other is retried.
    expect(reopened).toBe(1);
    const notification = await db.selectFrom('notifications').select('failed_count').where('id', '=', send.notificationId).executeTakeFirstOrThrow();
    const failures = await db.selectFrom('notification_failures').select('count').where('notification_id', '=', send.notificationId).execute();
    const compactedFailed = await db.selectFrom('compacted_deliveries').select('count').where('notification_id', '=', send.notificationId).where('status', '=', 'failed').execute();
    expect({ failedCount: Number(notification.failed_count), failureGroups: failures.reduce((sum, group) => sum + Number(group.count), 0), compactedFailed: compactedFailed.map((group) => Number(group.count)) }).toEqual({ failedCount: 1, failureGroups: 1, compactedFailed: [1] });
  }, 60_000);
});

describe('retention and a CSV report being downloaded', () => {
  let t: TestApp | undefined;
  afterEach(async () => t?.close());

  /** What the report's `deliveries` column adds up to. */
  async function reportTotal(chunks: AsyncIterable<string> | string[]): Promise<number> {
    let text = '';
    for await (const chunk of chunks) text += chunk;
    const lines = text.replace(/^\uFEFF/, '').trimEnd().split('\r\n');
    const header = csvCells(lines[0]!);
    return lines.slice(1).map(csvCells).reduce((sum, cells) => sum + Number(cells[header.indexOf('deliveries')]), 0);
  }

  it('leaves the notification’s rows alone while its report is read, so the report adds up to the count; compacts them once the download is over', async () => {
    const clock = new ManualClock(T0);
    const send = await oldSend(clock, Array.from({ length: 5 }, () => 'sent'), 'completed');
    t = send.t;
    const now = T0 + 31 * DAY;
    clock.set(now);
    // The owner's download has written the header and the first page of lines...
    const report = notificationReportCsv(t.ctx, send.notificationId);
    const chunks: string[] = [];
    for (let i = 0; i < 2; i++) chunks.push((await report.next()).value as string);
    // ...when the retention sweep runs: it leaves this notification for later (before, it compacted the 5 rows and the report counted them twice).
    expect(await compactOldDeliveries(t.ctx, now)).toBe(0);
    // A second download, left after its first line (its connection lost, say): its hold stays until it runs out.
    const abandoned = notificationReportCsv(t.ctx, send.notificationId);
    await abandoned.next();
    for await (const chunk of report) chunks.push(chunk);
    expect(await reportTotal(chunks)).toBe(5);
    // The first download's end lifts its hold, not the other's.
    expect(await t.ctx.db.selectFrom('report_reads').select('notification_id').execute()).toHaveLength(1);
    expect(await compactOldDeliveries(t.ctx, now)).toBe(0);
    // Ten minutes on, the lost download's hold has run out: the sweep compacts, and a report then still adds up.
    clock.advance(11 * 60_000);
    expect(await compactOldDeliveries(t.ctx, clock.now())).toBe(5);
    expect(await reportTotal(notificationReportCsv(t.ctx, send.notificationId))).toBe(5);
    expect(await t.ctx.db.selectFrom('report_reads').select('notification_id').execute()).toEqual([]);
  }, 60_000);

  it('a report that starts while a compaction step of its notification is under way reads after it', async () => {
    const clock = new ManualClock(T0);
    const send = await oldSend(clock, Array.from({ length: 5 }, () => 'sent'), 'completed');
    t = send.t;
    const now = T0 + 31 * DAY;
    clock.set(now);
    const report = notificationReportCsv(t.ctx, send.notificationId);
    if (t.ctx.dbKind === 'postgres') {
      // The step has deleted 3 rows and waits on the subscribers' rows; the report's hold waits for the step to commit.
      const blocker = await holdSubscribers(t, send.siteId);
      const step = compactStep(t.ctx.db, 'postgres', [send.runId], now - 30 * DAY, 3, now);
      await waitFor(async () => ((await sessionsWaitingOnLocks(t!.ctx.db)) >= 1 ? true : undefined), { timeoutMs: 10_000 });
      const header = report.next();
      await waitFor(async () => ((await sessionsWaitingOnLocks(t!.ctx.db)) >= 2 ? true : undefined), { timeoutMs: 10_000 });
      blocker.release();
      await blocker.done;
      expect((await step).removed).toBe(3);
      const chunks = [(await header).value as string];
      for await (const chunk of report) chunks.push(chunk);
      expect(await reportTotal(chunks)).toBe(5);
    } else {
      // One writer at a time: the step has committed before the report's hold is written.
      expect((await compactStep(t.ctx.db, 'sqlite', [send.runId], now - 30 * DAY, 3, now)).removed).toBe(3);
      expect(await reportTotal(report)).toBe(5);
    }
  }, 60_000);
});
