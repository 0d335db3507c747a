import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldBeacons } from './support/beacon-counts';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from './support/delivery-harness';
import { runSeqsOfNotification } from '../src/db/run-seq';
import { ManualClock } from '../src/platform/clock';
import { waitFor } from './support/test-app';

// Issue 3: a notification written in the dashboard reaches every subscriber,
// exactly once, encrypted and VAPID-signed; the local push service checks both.
describe('sending a one-time notification', () => {
  let h: DeliveryHarness;
  beforeAll(async () => {
    h = await createDeliveryHarness();
  });
  afterAll(async () => h.close());

  it('delivers to 1,000 subscribers exactly once, each payload decrypted and checked', async () => {
    const subscribers = [];
    for (let i = 0; i < 1000; i++) subscribers.push(await h.subscribe());
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput({ actions: [{ title: 'Shop now', url: 'https://push-shop.example/now' }] }) });
    expect(created.status).toBe(201);
    const id = created.body.data.notification.id;
    expect(created.body.data.notification.status).toBe('draft');

    const sent = await h.t.request('POST', `/api/notifications/${id}/send`, { token: h.owner.token });
    expect(sent.status).toBe(200);
    expect(sent.body.data.notification.status).toBe('sending');

    const done = await h.waitForStatus(id, ['completed', 'failed'], 60_000);
    expect(done.status).toBe('completed');
    expect(done.stats).toMatchObject({ total: 1000, sent: 1000, failed: 0 });

    const bySubscription = new Map<string, any[]>();
    for (const message of h.push.messages) bySubscription.set(message.subscriptionId, [...(bySubscription.get(message.subscriptionId) ?? []), message]);
    expect(bySubscription.size).toBe(1000);
    const tokens = new Set<string>();
    for (const { subscription } of subscribers) {
      const received = bySubscription.get(subscription.id) ?? [];
      expect(received).toHaveLength(1);
      const payload = received[0].payload;
      expect(payload).toMatchObject({
        title: 'Summer sale',
        body: 'Everything 20% off until Sunday',
        url: 'https://push-shop.example/sale',
        icon: 'https://push-shop.example/icon.png',
        image: null,
        tag: `herald-${id}`,
        api: 'http://herald.test',
        actions: [{ action: 'action-1', title: 'Shop now', url: 'https://push-shop.example/now' }],
      });
      tokens.add(payload.token);
      expect(received[0].headers['ttl']).toBe('86400');
      expect(received[0].headers['topic']).toMatch(/^[A-Za-z0-9]{1,32}$/);
    }
    expect(tokens.size).toBe(1000);
    // Keep-alive: the pool's connections (PUSH_CONNECTIONS at most) carried 1,000 pushes, several each.
    expect(h.push.stats().connections.total).toBeLessThanOrEqual(h.t.ctx.config.pushConnections);
    expect(h.push.stats().connections.total).toBeLessThan(1000 / 2);

    const rows = await h.t.ctx.db.selectFrom('deliveries').select(['status']).where('run_seq', 'in', runSeqsOfNotification(id)).execute();
    expect(rows).toHaveLength(1000);
    expect(rows.every((r) => r.status === 'sent')).toBe(true);

    // Beacons: delivered counts once, clicked counts once, forged tokens are refused.
    const [first, second] = [...tokens];
    const beacon = (type: string, token: string) => h.t.request('POST', '/api/public/events', { body: { type, token }, headers: { origin: 'https://push-shop.example' } });
    expect((await beacon('delivered', first!)).body.data).toEqual({ counted: true });
    expect((await beacon('delivered', first!)).body.data).toEqual({ counted: false });
    expect((await beacon('clicked', first!)).body.data).toEqual({ counted: true });
    expect((await beacon('clicked', first!)).body.data).toEqual({ counted: false });
    // A click without a delivered beacon counts as a delivery too: clicks never exceed deliveries.
    expect((await beacon('clicked', second!)).body.data).toEqual({ counted: true });
    const forged = await beacon('clicked', `${first!.split('.')[0]}.${'A'.repeat(22)}`);
    expect(forged.status).toBe(400);
    expect((await beacon('delivered', 'garbage')).status).toBe(400);
    const cors = await beacon('delivered', first!);
    expect(cors.headers['access-control-allow-origin']).toBe('*');
    await foldBeacons(h.t.ctx);

    const performance = await h.t.request('GET', `/api/notifications/${id}/performance`, { token: h.owner.token });
    expect(performance.body.data).toMatchObject({ sent: 1000, delivered: 2, clicked: 2, failed: 0, click_rate: 100, delivery_rate: 0.2 });
    const list = await h.t.request('GET', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token });
    expect(list.body.data.notifications[0]).toMatchObject({ id, status: 'completed' });

    // Spec §4: a sent notification can no longer be sent, edited or deleted.
    expect((await h.t.request('POST', `/api/notifications/${id}/send`, { token: h.owner.token })).status).toBe(409);
    expect((await h.t.request('PATCH', `/api/notifications/${id}`, { token: h.owner.token, body: { title: 'x' } })).status).toBe(409);
    expect((await h.t.request('DELETE', `/api/notifications/${id}`, { token: h.owner.token })).status).toBe(409);
  }, 120_000);
});

describe('push-service answers', () => {
  let h: DeliveryHarness;
  beforeAll(async () => {
    h = await createDeliveryHarness({ env: { DELIVERY_MAX_ATTEMPTS: '3', PUSH_TIMEOUT_MS: '300' } });
  });
  afterAll(async () => h.close());

  it('deactivates 404/410 subscribers, retries 5xx, 429 and timeouts, and keeps subscribers on 401/403', async () => {
    const ok = await h.subscribe();
    const gone410 = await h.subscribe();
    const gone404 = await h.subscribe();
    const flaky = await h.subscribe();
    const throttled = await h.subscribe();
    const unauthorized = await h.subscribe();
    const tooLarge = await h.subscribe();
    const hanging = await h.subscribe();
    h.push.setAnswer({ status: 410 }, gone410.subscription.id);
    h.push.setAnswer({ status: 404 }, gone404.subscription.id);
    h.push.scriptAnswers([{ status: 500 }, { status: 503 }, { status: 201 }], flaky.subscription.id);
    h.push.scriptAnswers([{ status: 429, retryAfter: 1 }, { status: 201 }], throttled.subscription.id);
    h.push.setAnswer({ status: 401, body: 'bad vapid' }, unauthorized.subscription.id);
    h.push.setAnswer({ status: 413 }, tooLarge.subscription.id);
    h.push.setAnswer({ hang: true }, hanging.subscription.id);

    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput() });
    const id = created.body.data.notification.id;
    await h.t.request('POST', `/api/notifications/${id}/send`, { token: h.owner.token });
    const done = await h.waitForStatus(id, ['completed', 'completed_with_errors', 'failed'], 30_000);
    // 401, 413 and the hanging endpoint failed: completed, with errors.
    expect(done.status).toBe('completed_with_errors');

    const deliveries = await h.t.ctx.db.selectFrom('deliveries').innerJoin('subscribers', 'subscribers.seq', 'deliveries.subscriber_seq').select(['subscribers.id as subscriber_id', 'status', 'error', 'attempts']).where('run_seq', 'in', runSeqsOfNotification(id)).execute();
    const bySubscriber = new Map(deliveries.map((d) => [d.subscriber_id, d]));
    expect(bySubscriber.get(ok.subscriberId)?.status).toBe('sent');
    expect(bySubscriber.get(flaky.subscriberId)?.status).toBe('sent');
    expect(bySubscriber.get(throttled.subscriberId)?.status).toBe('sent');
    expect(bySubscriber.get(gone410.subscriberId)?.status).toBe('gone');
    expect(bySubscriber.get(gone404.subscriberId)?.status).toBe('gone');
    expect(bySubscriber.get(unauthorized.subscriberId)).toMatchObject({ status: 'failed' });
    expect(bySubscriber.get(unauthorized.subscriberId)?.error).toMatch(/401/);
    expect(bySubscriber.get(tooLarge.subscriberId)?.status).toBe('failed');
    expect(bySubscriber.get(hanging.subscriberId)).toMatchObject({ status: 'failed', attempts: 3 });

    const subscribers = await h.t.ctx.db.selectFrom('subscribers').select(['id', 'is_active']).execute();
    const active = new Map(subscribers.map((s) => [s.id, s.is_active]));
    expect(active.get(gone410.subscriberId)).toBe(0);
    expect(active.get(gone404.subscriberId)).toBe(0);
    for (const kept of [ok, flaky, throttled, unauthorized, tooLarge, hanging]) expect(active.get(kept.subscriberId)).toBe(1);
    const site = await h.t.request('GET', `/api/sites/${h.site.id}`, { token: h.owner.token });
    expect(site.body.data.site.subscriber_count).toBe(6);

    // 429: nothing reached the throttled subscription's origin before Retry-After passed.
    const throttledRequests = h.push.requests.filter((r) => r.subscriptionId === throttled.subscription.id);
    expect(throttledRequests).toHaveLength(2);
    expect(throttledRequests[1]!.receivedAt - throttledRequests[0]!.receivedAt).toBeGreaterThanOrEqual(950);

    const performance = await h.t.request('GET', `/api/notifications/${id}/performance`, { token: h.owner.token });
    // 404/410 are expired, counted apart from the failures (issue 11).
    expect(performance.body.data).toMatchObject({ total: 8, sent: 3, failed: 3, counts: { targeted: 8, sent: 3, failed: 3, expired: 2, skipped: 0, pending: 0 } });
    expect(performance.body.data.failures.map((group: { reason: string; count: number }) => [group.reason, group.count])).toEqual([
      ['rejected', 1],
      ['timeout', 1],
      ['too_large', 1],
    ]);
  }, 60_000);

  it('marks a notification failed with the reason when every push is refused, and retries it on request', async () => {
    const fresh = await createDeliveryHarness();
    try {
      const a = await fresh.subscribe();
      const b = await fresh.subscribe();
      fresh.push.setAnswer({ status: 403, body: '{"reason":"BadJwtToken"}' });
      const created = await fresh.t.request('POST', `/api/sites/${fresh.site.id}/notifications`, { token: fresh.owner.token, body: notificationInput() });
      const id = created.body.data.notification.id;
      await fresh.t.request('POST', `/api/notifications/${id}/send`, { token: fresh.owner.token });
      const failed = await fresh.waitForStatus(id, ['completed', 'completed_with_errors', 'failed']);
      expect(failed.status).toBe('failed');
      expect(failed.last_error).toBe('2 of 2 not accepted: 2 rejected (other)');
      const performance = await fresh.t.request('GET', `/api/notifications/${id}/performance`, { token: fresh.owner.token });
      expect(performance.body.data.failures).toEqual([{ reason: 'rejected', push_service: 'other', count: 2, sample_error: 'VAPID rejected: 403 {"reason":"BadJwtToken"}' }]);
      // Our VAPID fault: subscribers are kept.
      const active = await fresh.t.ctx.db.selectFrom('subscribers').select('id').where('is_active', '=', 1).execute();
      expect(active.map((s) => s.id).sort()).toEqual([a.subscriberId, b.subscriberId].sort());

      fresh.push.setAnswer({ status: 201 });
      const retried = await fresh.t.request('POST', `/api/notifications/${id}/retry`, { token: fresh.owner.token });
      expect(retried.status).toBe(200);
      const completed = await fresh.waitForStatus(id, ['completed', 'failed']);
      expect(completed.status).toBe('completed');
      expect(completed.stats).toMatchObject({ sent: 2, failed: 0 });
      expect(fresh.push.messages).toHaveLength(2);
    } finally {
      await fresh.close();
    }
  }, 60_000);

  it('a Retry days after the send gives the re-sent pushes their whole lifetime: a 5xx is tried again, not failed at once', async () => {
    const clock = new ManualClock(Date.UTC(2026, 6, 1, 9));
    const fresh = await createDeliveryHarness({ clock, env: { DELIVERY_MAX_ATTEMPTS: '3' } });
    try {
      await fresh.subscribe();
      fresh.push.setAnswer({ status: 403, body: '{"reason":"BadJwtToken"}' });
      const created = await fresh.t.request('POST', `/api/sites/${fresh.site.id}/notifications`, { token: fresh.owner.token, body: notificationInput({ title: 'Old sale', ttl_seconds: 3600 }) });
      const id = created.body.data.notification.id;
      await fresh.t.request('POST', `/api/notifications/${id}/send`, { token: fresh.owner.token });
      expect((await fresh.waitForStatus(id, ['completed', 'completed_with_errors', 'failed'])).status).toBe('failed');

      // Two days later, past the one-hour lifetime the send started with, the owner fixes the key and retries.
      clock.advance(2 * 24 * 3_600_000);
      fresh.push.setAnswer({ status: 503 });
      expect((await fresh.t.request('POST', `/api/notifications/${id}/retry`, { token: fresh.owner.token })).status).toBe(200);
      const delivery = () => fresh.t.ctx.db.selectFrom('deliveries').select(['status', 'attempts', 'next_attempt_at', 'error']).where('run_seq', 'in', runSeqsOfNotification(id)).executeTakeFirstOrThrow();
      const waiting = await waitFor(async () => {
        const row = await delivery();
        // Claimed (attempts counts at the claim), then answered: a retry time, or failed.
        return row.attempts === 1 && (row.next_attempt_at !== null || row.status !== 'pending') ? row : undefined;
      });
      // The 503 is an attempt with a retry to come, not "not accepted within the message lifetime".
      expect(waiting).toMatchObject({ status: 'pending', attempts: 1 });
      expect(waiting.next_attempt_at, JSON.stringify(waiting)).toBeGreaterThan(clock.now());

      fresh.push.setAnswer({ status: 201 });
      const sent = await waitFor(async () => {
        const notification = (await fresh.t.request('GET', `/api/notifications/${id}`, { token: fresh.owner.token })).body.data.notification;
        if (notification.status === 'sending') clock.advance(5_000);
        return notification.status === 'sending' ? undefined : notification;
      }, { timeoutMs: 20_000, intervalMs: 25 });
      expect(sent.status).toBe('completed');
      expect(sent.stats).toMatchObject({ sent: 1, failed: 0 });
    } finally {
      await fresh.close();
    }
  }, 60_000);
});
