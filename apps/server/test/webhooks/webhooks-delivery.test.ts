import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_PURGE_INTERVAL_MS, webhooksDueWork } from '../../src/features/webhooks/deliver';
import { newOutboxRow } from '../../src/features/webhooks/events';
import { ManualClock } from '../../src/platform/clock';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from '../support/delivery-harness';
import { waitFor } from '../support/test-app';
import { WebhookReceiver } from '../support/webhook-receiver';

// docs/product.md, "Webhooks"; docs/delivery.md, "Webhooks": real events from
// the engine in this process (the local push service, beacons, the public
// SDK API) reach a local endpoint, each one signed as Standard Webhooks says
// and verified by the standardwebhooks package; failed attempts are retried
// with exponential backoff (ManualClock) until a 2xx or 24 hours.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('webhook events', () => {
  const clock = new ManualClock(Date.now());
  let h: DeliveryHarness;
  let receiver: WebhookReceiver;
  let webhook: any;
  beforeAll(async () => {
    h = await createDeliveryHarness({ clock, env: { OUTBOUND_ALLOW_HOSTS: '127.0.0.1' } });
    receiver = await WebhookReceiver.start(() => clock.now());
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/webhooks`, {
      token: h.owner.token,
      body: { url: receiver.url, events: ['subscriber.created', 'subscriber.removed', 'notification.completed', 'notification.failed', 'notification.clicked'] },
    });
    webhook = created.body.data.webhook;
    receiver.useSecret(webhook.secret);
  });
  afterAll(async () => {
    await h.close();
    await receiver.close();
  });

  /** Sends a notification and waits for its final status; `retries`: push retries are due on the ManualClock, which moves 30 s a poll. */
  const send = async (title: string, retries = false) => {
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput({ title }) });
    const id = created.body.data.notification.id;
    expect((await h.t.request('POST', `/api/notifications/${id}/send`, { token: h.owner.token })).status).toBe(200);
    if (!retries) await h.waitForStatus(id, ['completed', 'completed_with_errors', 'failed']);
    else {
      await waitFor(
        async () => {
          clock.advance(30_000);
          const status = (await h.t.request('GET', `/api/notifications/${id}`, { token: h.owner.token })).body.data.notification.status;
          return ['completed', 'completed_with_errors', 'failed'].includes(status) ? status : undefined;
        },
        { timeoutMs: 15_000, intervalMs: 100 },
      );
    }
    return id as string;
  };
  const beacon = (token: string) => h.t.request('POST', '/api/public/events', { body: { type: 'clicked', token } });
  const tokenFor = (notificationId: string, subscriptionId: string) => (h.push.messages.find((m) => m.subscriptionId === subscriptionId && (m.payload as any).tag === `herald-${notificationId}`)!.payload as any).token as string;

  it('tells the endpoint of subscribes, a completed send with its counts, batched clicks and each removal with its cause, every request signed', async () => {
    const [a, b, c] = [await h.subscribe(), await h.subscribe(), await h.subscribe()];
    const created = await waitFor(() => (receiver.of('subscriber.created').length >= 3 ? receiver.of('subscriber.created') : undefined));
    expect(created.map((r) => r.payload.data.subscriber.id).sort()).toEqual([a.subscriberId, b.subscriberId, c.subscriberId].sort());
    expect(created[0]!.payload).toMatchObject({ type: 'subscriber.created', timestamp: expect.any(String), data: { site_id: h.site.id, subscriber: { id: expect.any(String), subscribed_at: expect.any(String) } } });

    // a's browser unsubscribed at its push service: the send finds it gone.
    h.push.expire(a.subscription.id);
    const sale = await send('Summer sale');
    const completed = await waitFor(() => receiver.of('notification.completed')[0]);
    expect(completed.payload.data).toMatchObject({
      site_id: h.site.id,
      notification: { id: sale, title: 'Summer sale', type: 'ONE_TIME' },
      run: { id: expect.any(String), status: 'completed', finished_at: expect.any(String) },
      counts: { targeted: 3, sent: 2, failed: 0, expired: 1, skipped: 0, pending: 0, delivered: 0, clicked: 0 },
    });
    const gone = await waitFor(() => receiver.of('subscriber.removed')[0]);
    expect(gone.payload.data).toMatchObject({ subscriber: { id: a.subscriberId }, cause: 'gone' });

    const news = await send('News');
    await waitFor(() => (receiver.of('notification.completed').length >= 2 ? true : undefined));

    // Clicks: at most one notification.clicked per minute, carrying the clicks per notification since the last one.
    expect((await beacon(tokenFor(sale, b.subscription.id))).body.data).toEqual({ counted: true });
    expect((await beacon(tokenFor(sale, c.subscription.id))).body.data).toEqual({ counted: true });
    expect((await beacon(tokenFor(news, b.subscription.id))).body.data).toEqual({ counted: true });
    expect((await beacon(tokenFor(news, b.subscription.id))).body.data).toEqual({ counted: false });
    await waitFor(() => receiver.of('notification.clicked')[0]);
    await new Promise((resolve) => setTimeout(resolve, 400));
    const withinTheMinute = receiver.of('notification.clicked').length;
    expect(withinTheMinute).toBe(1);
    clock.advance(MINUTE);
    const totals = () => {
      const sum: Record<string, number> = {};
      for (const r of receiver.of('notification.clicked')) for (const item of r.payload.data.clicks) sum[item.notification_id] = (sum[item.notification_id] ?? 0) + item.clicks;
      return sum;
    };
    await waitFor(() => (totals()[sale] === 2 && totals()[news] === 1 ? true : undefined));
    const clicked = receiver.of('notification.clicked');
    expect(clicked.length).toBeLessThanOrEqual(2);
    for (const r of clicked) expect(r.payload.data.total).toBe(r.payload.data.clicks.reduce((s: number, i: any) => s + i.clicks, 0));
    if (clicked.length === 2) expect(clicked[1]!.timestamp - clicked[0]!.timestamp).toBeGreaterThanOrEqual(60);

    // b unsubscribes in its browser; the owner removes c.
    expect((await h.t.request('POST', `/api/public/sites/${h.site.id}/subscribers/unsubscribe`, { body: { endpoint: b.subscription.endpoint } })).status).toBe(200);
    expect((await h.t.request('DELETE', `/api/subscribers/${c.subscriberId}`, { token: h.owner.token })).status).toBe(200);
    const removed = await waitFor(() => (receiver.of('subscriber.removed').length >= 3 ? receiver.of('subscriber.removed') : undefined));
    // Webhooks promise no order (Standard Webhooks; each message is its own delivery): compare as a set.
    expect(removed.map((r) => [r.payload.data.subscriber.id, r.payload.data.cause]).sort((x, y) => x[1]!.localeCompare(y[1]!))).toEqual([
      [a.subscriberId, 'gone'],
      [c.subscriberId, 'removed'],
      [b.subscriberId, 'unsubscribed'],
    ]);
    // Removing an inactive subscriber again is no new event.
    await h.t.request('DELETE', `/api/subscribers/${c.subscriberId}`, { token: h.owner.token });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.of('subscriber.removed')).toHaveLength(3);

    // Every request was verified by standardwebhooks, each event has its own webhook-id, and each was delivered once.
    expect(receiver.received.length).toBeGreaterThan(8);
    for (const r of receiver.received) {
      expect(r.verified, r.verifyError).toBe(true);
      expect(r.answered).toBe(200);
    }
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(receiver.received.length);
    const log = await h.t.request('GET', `/api/webhooks/${webhook.id}/deliveries?limit=100`, { token: h.owner.token });
    expect(log.body.data.deliveries).toHaveLength(receiver.received.length);
    expect(log.body.data.deliveries.every((d: any) => d.status_code === 200 && d.delivery_status === 'delivered' && d.attempt === 1)).toBe(true);
  });

  it('tells a failed send as notification.failed, and only webhooks that asked for an event receive it', async () => {
    const only = await WebhookReceiver.start(() => clock.now());
    try {
      const created = await h.t.request('POST', `/api/sites/${h.site.id}/webhooks`, { token: h.owner.token, body: { url: only.url, events: ['notification.failed'] } });
      only.useSecret(created.body.data.webhook.secret);
      const d = await h.subscribe({ unreachable: true });
      const failedId = await send('Nobody home', true);
      const failed = await waitFor(() => only.of('notification.failed')[0]);
      expect(failed.verified).toBe(true);
      expect(failed.payload.data).toMatchObject({ notification: { id: failedId }, run: { status: 'failed' }, counts: { targeted: 1, sent: 0, failed: 1 } });
      await waitFor(() => receiver.of('notification.failed')[0]);
      expect(only.received.map((r) => r.payload.type)).toEqual(['notification.failed']);
      expect(receiver.of('subscriber.created').map((r) => r.payload.data.subscriber.id)).toContain(d.subscriberId);
    } finally {
      await only.close();
    }
  });
});

describe('webhook retries', () => {
  const clock = new ManualClock(Date.now());
  let h: DeliveryHarness;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    h = await createDeliveryHarness({ clock, env: { OUTBOUND_ALLOW_HOSTS: '127.0.0.1' } });
    receiver = await WebhookReceiver.start(() => clock.now());
  });
  afterAll(async () => {
    await h.close();
    await receiver.close();
  });

  const addWebhook = async (events: string[]) => {
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/webhooks`, { token: h.owner.token, body: { url: receiver.url, events } });
    receiver.useSecret(created.body.data.webhook.secret);
    return created.body.data.webhook;
  };
  const log = async (id: string) => (await h.t.request('GET', `/api/webhooks/${id}/deliveries?limit=100`, { token: h.owner.token })).body.data.deliveries as any[];
  const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

  it('retries a failed delivery with exponential backoff, the same webhook-id and body each time, until the endpoint answers 2xx', async () => {
    const webhook = await addWebhook(['subscriber.created']);
    receiver.answer(500, 500, 503, 200);
    const started = clock.now();
    await h.subscribe();
    // Each step waits until the attempt is in the log: its next try is reckoned from the clock when it is recorded.
    const recorded = (n: number) => waitFor(async () => ((await log(webhook.id)).length >= n ? true : undefined));
    await recorded(1);
    clock.advance(29_000);
    await settle();
    expect(receiver.received).toHaveLength(1);
    clock.advance(1_000);
    await recorded(2);
    clock.advance(59_000);
    await settle();
    expect(receiver.received).toHaveLength(2);
    clock.advance(1_000);
    await recorded(3);
    clock.advance(120_000);
    await recorded(4);
    clock.advance(HOUR);
    await settle();

    expect(receiver.received.map((r) => r.answered)).toEqual([500, 500, 503, 200]);
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(1);
    expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
    expect(receiver.received.map((r) => r.timestamp - Math.floor(started / 1000))).toEqual([0, 30, 90, 210]);
    const attempts = await log(webhook.id);
    expect(attempts.map((a) => [a.attempt, a.status_code, a.delivery_status])).toEqual([
      [4, 200, 'delivered'],
      [3, 503, 'delivered'],
      [2, 500, 'delivered'],
      [1, 500, 'delivered'],
    ]);
    expect(attempts[3].error).toBe('The endpoint answered 500');
    await h.t.request('DELETE', `/api/webhooks/${webhook.id}`, { token: h.owner.token });
  });

  it('gives up 24 hours after the event: waits double up to 6 hours, the last attempt at 24 h, none after', async () => {
    receiver.received.length = 0;
    receiver.answer(503);
    const webhook = await addWebhook(['notification.clicked']);
    const first = (await h.t.request('POST', `/api/webhooks/${webhook.id}/test`, { token: h.owner.token })).body.data.delivery;
    expect(first).toMatchObject({ attempt: 1, status_code: 503, delivery_status: 'pending' });
    const createdAt = Date.parse(first.attempted_at);
    for (let attempt = 1; attempt < 40; attempt++) {
      const latest = (await log(webhook.id))[0];
      if (latest.delivery_status === 'failed') break;
      clock.set(Date.parse(latest.next_attempt_at));
      await waitFor(async () => ((await log(webhook.id)).length > attempt ? true : undefined));
    }
    const attempts = (await log(webhook.id)).reverse();
    expect(attempts.at(-1).delivery_status).toBe('failed');
    const times = attempts.map((a) => Date.parse(a.attempted_at) - createdAt);
    const waits = times.slice(1).map((time, i) => time - times[i]!);
    const expected: number[] = [];
    for (let wait = 30_000, at = 0; at < 24 * HOUR; wait = Math.min(wait * 2, 6 * HOUR)) {
      const next = Math.min(at + wait, 24 * HOUR);
      expected.push(next - at);
      at = next;
    }
    expect(waits).toEqual(expected);
    expect(times.at(-1)).toBe(24 * HOUR);
    expect(receiver.received).toHaveLength(attempts.length);
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(1);

    clock.advance(48 * HOUR);
    await settle();
    expect(receiver.received).toHaveLength(attempts.length);

    // The log keeps a finished event 30 days, then the scheduler deletes it with its attempts (read from the
    // database: the owner's 30-day session has run out by then).
    const logged = () => h.t.ctx.db.selectFrom('webhook_attempts').select('id').where('webhook_id', '=', webhook.id).execute();
    clock.set(createdAt + 24 * HOUR + 30 * 24 * HOUR - MINUTE);
    await settle();
    expect(await logged()).toHaveLength(attempts.length);
    // The purge runs at most every WEBHOOK_PURGE_INTERVAL_MS: within that of the 30 days, it is gone.
    clock.advance(WEBHOOK_PURGE_INTERVAL_MS);
    await waitFor(async () => ((await logged()).length === 0 ? true : undefined));
    expect(await h.t.ctx.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', webhook.id).execute()).toEqual([]);
  });

  it('purges the delivery log at most every 5 minutes per scheduler, not on every tick', async () => {
    // Written straight to the database: by this test the owner's session has run out (the clock moved 54 days).
    const webhook = { id: crypto.randomUUID() };
    await h.t.ctx.db
      .insertInto('webhooks')
      .values({ id: webhook.id, site_id: h.site.id, url: receiver.url, events: '["notification.clicked"]', secret: 'whsec_dGVzdA==', clicks_next_at: null, created_at: clock.now() })
      .execute();
    // Finished 60 days ahead of the test's clock: the engine's own scheduler (at the clock's time) leaves these alone,
    // and this source is run by hand 100 days ahead, where they are past the 30 days.
    const finishedAt = clock.now() + 60 * 24 * HOUR;
    const insertFinished = async () => {
      const row = { ...newOutboxRow(webhook.id, 'notification.clicked', finishedAt, { clicks: [], total: 0 }), status: 'delivered' as const, next_attempt_at: null, finished_at: finishedAt };
      await h.t.ctx.db.insertInto('webhook_deliveries').values(row).execute();
      return row.id;
    };
    const exists = async (id: string) => (await h.t.ctx.db.selectFrom('webhook_deliveries').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
    const source = webhooksDueWork(h.t.ctx, h.engine.queue);
    const t0 = clock.now() + 100 * 24 * HOUR;

    const first = await insertFinished();
    await source.runDue(t0);
    expect(await exists(first)).toBe(false);

    const second = await insertFinished();
    await source.runDue(t0 + 1_000);
    await source.runDue(t0 + WEBHOOK_PURGE_INTERVAL_MS - 1);
    expect(await exists(second)).toBe(true);
    await source.runDue(t0 + WEBHOOK_PURGE_INTERVAL_MS);
    expect(await exists(second)).toBe(false);

    // A clock set back does not put the purge off.
    const third = await insertFinished();
    await source.runDue(t0 + WEBHOOK_PURGE_INTERVAL_MS - 10 * MINUTE);
    expect(await exists(third)).toBe(false);
    await h.t.ctx.db.deleteFrom('webhooks').where('id', '=', webhook.id).execute();
  });
});
