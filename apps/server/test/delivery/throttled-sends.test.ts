import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fanOutRunJob } from '../../src/delivery/fan-out';
import { sendBatchJob } from '../../src/delivery/send-batch';
import { grantThrottledDeliveries } from '../../src/delivery/throttle';
import { featureDueWorkSources } from '../../src/engine';
import { Scheduler } from '../../src/jobs/scheduler';
import { ManualClock } from '../../src/platform/clock';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from '../support/delivery-harness';
import { waitFor } from '../support/test-app';

// Issue 14 §5: a send spread over at most N pushes a minute
// (docs/delivery.md, "Throttled sends"). The clock is a ManualClock: nothing
// moves to the next minute until the test advances it, so "no more than N
// this minute" is checked by letting every scheduler tick and batch run out
// and then counting what reached the push service.
describe('throttled sends', () => {
  const MINUTE = 60_000;
  const AUDIENCE = 25;
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 8));
  let h: DeliveryHarness;

  beforeAll(async () => {
    h = await createDeliveryHarness({ clock });
    for (let i = 0; i < AUDIENCE; i++) await h.subscribe();
  });
  afterAll(async () => h.close());
  beforeEach(() => h.push.reset());

  const create = (overrides: Record<string, unknown>) => h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput(overrides) });
  const get = async (id: string) => (await h.t.request('GET', `/api/notifications/${id}`, { token: h.owner.token })).body.data.notification;

  async function startThrottled(perMinute: number): Promise<string> {
    const created = await create({ throttle_per_minute: perMinute });
    expect(created.status).toBe(201);
    const id = created.body.data.notification.id as string;
    expect((await h.t.request('POST', `/api/notifications/${id}/send`, { token: h.owner.token })).status).toBe(200);
    return id;
  }

  /** No delivery holds a place in the current minute or a worker's claim: this minute's work is done. */
  const minuteDone = async () => {
    const busy = await h.t.ctx.db
      .selectFrom('deliveries')
      .select('id')
      .where('status', '=', 'pending')
      .where((eb) => eb.or([eb('throttle_window', '>', clock.now() - MINUTE), eb('lease_until', '>', clock.now())]))
      .executeTakeFirst();
    return busy === undefined;
  };

  /**
   * Waits for `requests` push requests in all, then lets the minute run out:
   * the work in hand finishes, two more scheduler passes (ours and a rival's,
   * at once) find nothing to grant, and the count has not moved.
   */
  async function expectRequestsThisMinute(requests: number, rival?: Scheduler) {
    await waitFor(() => h.push.requests.length >= requests, { timeoutMs: 15_000 });
    await waitFor(minuteDone, { timeoutMs: 15_000 });
    await Promise.all([h.engine.scheduler!.tick(), rival?.tick()]);
    await waitFor(minuteDone, { timeoutMs: 15_000 });
    expect(h.push.requests.length).toBe(requests);
  }

  it('refuses a throttle out of bounds, or on a triggered notification, with a message naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ throttle_per_minute: 0 }, 'throttle_per_minute must be at least 1 (or null for no throttle)'],
      [{ throttle_per_minute: 1_000_001 }, 'throttle_per_minute must be at most 1,000,000'],
      [{ throttle_per_minute: 2.5 }, 'throttle_per_minute must be a whole number of messages per minute'],
      [{ throttle_per_minute: '10' }, 'throttle_per_minute must be a number of messages per minute'],
      [{ type: 'TRIGGERED', trigger: { event: 'cart_abandoned', delay_minutes: 0 }, throttle_per_minute: 10 }, 'throttle_per_minute is for one-time and recurring sends'],
    ];
    for (const [body, message] of cases) {
      const response = await create(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.message, JSON.stringify(body)).toContain(message);
    }

    const plain = await create({});
    expect(plain.body.data.notification.throttle_per_minute).toBeNull();
    const id = plain.body.data.notification.id;
    const bad = await h.t.request('PATCH', `/api/notifications/${id}`, { token: h.owner.token, body: { throttle_per_minute: -5 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('throttle_per_minute must be at least 1');
    const set = await h.t.request('PATCH', `/api/notifications/${id}`, { token: h.owner.token, body: { throttle_per_minute: 500 } });
    expect(set.status).toBe(200);
    expect((await get(id)).throttle_per_minute).toBe(500);
    const cleared = await h.t.request('PATCH', `/api/notifications/${id}`, { token: h.owner.token, body: { throttle_per_minute: null } });
    expect(cleared.body.data.notification.throttle_per_minute).toBeNull();
    // A copy keeps it (spec §4: duplicate is for ended notifications: this one is scheduled, then cancelled).
    const later = new Date(clock.now() + 86_400_000).toISOString();
    expect((await h.t.request('PATCH', `/api/notifications/${id}`, { token: h.owner.token, body: { throttle_per_minute: 500, scheduled_at: later } })).status).toBe(200);
    expect((await h.t.request('POST', `/api/notifications/${id}/cancel`, { token: h.owner.token })).status).toBe(200);
    const copy = await h.t.request('POST', `/api/notifications/${id}/duplicate`, { token: h.owner.token });
    expect(copy.body.data.notification.throttle_per_minute).toBe(500);
  });

  it('sends 25 subscribers at 10 a minute as 10, 10 and 5 in three minutes, even with two schedulers, then completes with the right counts', async () => {
    const rival = new Scheduler(h.t.ctx, h.engine.queue, featureDueWorkSources(h.t.ctx, h.engine.queue));
    const id = await startThrottled(10);

    await expectRequestsThisMinute(10, rival);
    const during = await get(id);
    expect(during.status).toBe('sending');
    expect(during.counts).toMatchObject({ targeted: 25, sent: 10, pending: 15 });

    clock.advance(MINUTE);
    await expectRequestsThisMinute(20, rival);
    clock.advance(MINUTE);
    await expectRequestsThisMinute(25, rival);

    const done = await h.waitForStatus(id, ['completed', 'completed_with_errors', 'failed']);
    expect(done.status).toBe('completed');
    expect(done.counts).toMatchObject({ targeted: 25, sent: 25, failed: 0, skipped: 0, pending: 0 });
    // Each subscriber once.
    expect(new Set(h.push.messages.map((m) => m.subscriptionId)).size).toBe(25);
  });

  it('counts retries against the minute: three 500s are tried again in a later minute, inside its 10', async () => {
    h.push.scriptAnswers([{ status: 500 }, { status: 500 }, { status: 500 }]);
    const id = await startThrottled(10);

    await expectRequestsThisMinute(10);
    expect((await get(id)).counts).toMatchObject({ sent: 7, pending: 18 });
    clock.advance(MINUTE);
    await expectRequestsThisMinute(20);
    clock.advance(MINUTE);
    await expectRequestsThisMinute(28);
    const done = await h.waitForStatus(id, ['completed', 'completed_with_errors', 'failed']);
    expect(done.counts).toMatchObject({ targeted: 25, sent: 25, failed: 0, pending: 0 });
  });

  it('a recovery sends nothing early: an expired run lease, a batch job re-run with every pending delivery, grants whose jobs were lost', async () => {
    const id = await startThrottled(10);
    await expectRequestsThisMinute(10);
    const run = await h.t.ctx.db.selectFrom('notification_runs').selectAll().where('notification_id', '=', id).executeTakeFirstOrThrow();

    // The lease ran out (a scheduler stopped for a while), or Redis came back empty: the sweep (or
    // resumeIfQueueLost) takes the run over and enqueues its fan-out in recovery mode.
    await h.t.ctx.db.updateTable('notification_runs').set({ lease_until: clock.now() - 1 }).where('id', '=', run.id).execute();
    await h.engine.queue.enqueue(fanOutRunJob, { runId: run.id, recover: true });
    // A stalled batch job re-run, or one the recovery enqueued, holding every pending delivery.
    const pending = await h.t.ctx.db.selectFrom('deliveries').select('id').where('run_seq', '=', run.seq).where('status', '=', 'pending').execute();
    expect(pending).toHaveLength(15);
    await h.engine.queue.enqueue(sendBatchJob, { runId: run.id, deliveryIds: pending.map((p) => Number(p.id)) });
    await expectRequestsThisMinute(10);
    expect((await h.t.ctx.db.selectFrom('notification_runs').select(['status', 'lease_until']).where('id', '=', run.id).executeTakeFirstOrThrow()).lease_until).toBeGreaterThan(clock.now());

    // Next minute, a scheduler grants its places and dies before enqueueing them (its jobs are lost).
    clock.advance(MINUTE);
    const current = await h.t.ctx.db
      .selectFrom('notification_runs')
      .select(['id', 'seq', 'fanout_done', 'lease_until', 'throttle_window_start', 'throttle_window_used'])
      .where('id', '=', run.id)
      .executeTakeFirstOrThrow();
    const lost = await grantThrottledDeliveries(h.t.ctx.db, { ...current, throttle_per_minute: 10 }, clock.now());
    expect(lost).toHaveLength(10);
    // That minute sends nothing more (its places are taken, their deliveries wait unclaimed), and the run is not declared stalled.
    await h.engine.scheduler!.tick();
    await waitFor(async () => (await h.t.ctx.db.selectFrom('deliveries').select('id').where('run_seq', '=', run.seq).where('lease_until', '>', clock.now()).executeTakeFirst()) === undefined);
    expect(h.push.requests.length).toBe(10);
    expect((await get(id)).status).toBe('sending');
    // The minute after, the lost places are granted again: 10 go, no more.
    clock.advance(MINUTE);
    await expectRequestsThisMinute(20);
    clock.advance(MINUTE);
    await expectRequestsThisMinute(25);
    const done = await h.waitForStatus(id, ['completed', 'completed_with_errors', 'failed']);
    expect(done.counts).toMatchObject({ targeted: 25, sent: 25, pending: 0 });
    expect(new Set(h.push.messages.map((m) => m.subscriptionId)).size).toBe(25);
  });
});
