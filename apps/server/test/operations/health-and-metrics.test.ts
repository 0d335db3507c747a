// Issue 17, items 1 and 2: GET /healthz, /readyz and /metrics on `serve`, and
// the counters a send moves (README, "Health and metrics").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pushServiceOf } from '../../src/delivery/push-services';
import { foldAllBeaconCounts } from '../../src/features/tracking/fold';
import { ManualClock } from '../../src/platform/clock';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from '../support/delivery-harness';
import { createTestApp } from '../support/test-app';

const METRICS_TOKEN = 'metrics-token-for-the-test-0123';

/** The value of one sample of the Prometheus text, 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = Object.fromEntries([...(match[3] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(match[4]);
  }
  return 0;
}

describe('beacons waiting to be counted', () => {
  it('/metrics shows how many beacons wait for the fold and how old the oldest is; none once folded', async () => {
    const clock = new ManualClock(Date.UTC(2026, 6, 1, 8));
    // No scheduler here: nothing folds until the test does.
    const t = await createTestApp({ clock, env: { METRICS_TOKEN } });
    try {
      const scrape = async () => String((await t.request('GET', '/metrics', { token: METRICS_TOKEN })).body);
      expect(sample(await scrape(), 'herald_beacons_unfolded')).toBe(0);
      expect(await scrape()).toMatch(/^herald_beacons_oldest_unfolded_age_seconds 0$/m);
      // Three beacons of a site deleted meanwhile (the fold skips their counts and drops them): 90 s, 30 s and 0 s old.
      const row = (at: number) => ({ site_id: 'gone-site', notification_id: 'gone-notification', run_id: 'gone-run', at, delivered: 1, clicked: 0 });
      await t.ctx.db.insertInto('uncounted_beacons').values([row(clock.now() - 90_000), row(clock.now() - 30_000), row(clock.now())]).execute();
      const waiting = await scrape();
      expect(sample(waiting, 'herald_beacons_unfolded')).toBe(3);
      expect(sample(waiting, 'herald_beacons_oldest_unfolded_age_seconds')).toBe(90);
      await foldAllBeaconCounts(t.ctx);
      const folded = await scrape();
      expect(sample(folded, 'herald_beacons_unfolded')).toBe(0);
      expect(sample(folded, 'herald_beacons_oldest_unfolded_age_seconds')).toBe(0);
    } finally {
      await t.close();
    }
  });
});

describe('health and readiness routes', () => {
  it('/healthz answers without I/O, /readyz checks the database and its migrations, /metrics is off without METRICS_TOKEN', async () => {
    const t = await createTestApp();
    try {
      const health = await t.request('GET', '/healthz');
      expect(health.status).toBe(200);
      expect(health.body).toEqual({ status: 'ok' });
      const ready = await t.request('GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body).toEqual({ ready: true, checks: { database: { ok: true }, migrations: { ok: true } } });
      const metrics = await t.request('GET', '/metrics');
      expect(metrics.status).toBe(404);
      expect(metrics.body.error.message).toMatch(/METRICS_TOKEN/);

      // The database goes away: not ready (503), still alive.
      await t.runtime.database.close();
      const unready = await t.request('GET', '/readyz');
      expect(unready.status).toBe(503);
      expect(unready.body.ready).toBe(false);
      expect(unready.body.checks.database).toEqual({ ok: false, problem: 'does not answer' });
      expect((await t.request('GET', '/healthz')).status).toBe(200);
    } finally {
      await t.app.close();
    }
  });

  it('/metrics needs the bearer token when METRICS_TOKEN is set', async () => {
    const t = await createTestApp({ env: { METRICS_TOKEN } });
    try {
      expect((await t.request('GET', '/metrics')).status).toBe(401);
      expect((await t.request('GET', '/metrics', { token: 'not-the-token-at-all' })).status).toBe(401);
      const scraped = await t.request('GET', '/metrics', { token: METRICS_TOKEN });
      expect(scraped.status).toBe(200);
      expect(String(scraped.headers['content-type'])).toMatch(/^text\/plain/);
      // Node process metrics and the event-loop lag come with every scrape.
      expect(scraped.body).toMatch(/^process_cpu_user_seconds_total /m);
      expect(scraped.body).toMatch(/^nodejs_eventloop_lag_seconds /m);
    } finally {
      await t.close();
    }
  });
});

describe('metrics after a send', () => {
  let h: DeliveryHarness;
  beforeAll(async () => {
    h = await createDeliveryHarness({ env: { METRICS_TOKEN } });
  });
  afterAll(async () => h?.close());

  const scrape = async () => {
    const response = await h.t.request('GET', '/metrics', { token: METRICS_TOKEN });
    expect(response.status).toBe(200);
    return response.body as string;
  };

  it('counts pushes by push service and outcome, their latency, subscribes, beacons, claims and the backlog as the send did', async () => {
    const before = await scrape();
    const subscribed = [];
    for (let i = 0; i < 5; i++) subscribed.push(await h.subscribe());
    // One of them the push service no longer knows: 410, gone.
    h.push.setAnswer({ status: 410 }, subscribed[4]!.subscription.id);
    // A subscribe refused (bad keys) counts as rejected.
    const refused = await h.t.request('POST', `/api/public/sites/${h.site.id}/subscribers`, {
      body: { subscription: { endpoint: subscribed[0]!.subscription.endpoint, keys: { p256dh: 'short', auth: 'short' } } },
      remoteAddress: '198.51.100.77',
    });
    expect(refused.status).toBe(400);

    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput() });
    const id = created.body.data.notification.id;
    expect((await h.t.request('POST', `/api/notifications/${id}/send`, { token: h.owner.token })).status).toBe(200);
    const done = await h.waitForStatus(id, ['completed', 'failed']);
    // The 410 is "expired" in the outcome model (docs/delivery.md, "Outcomes"), not a failure.
    expect(done.stats).toMatchObject({ total: 5, sent: 4, failed: 0 });
    expect(done.counts).toMatchObject({ targeted: 5, sent: 4, expired: 1, failed: 0 });
    const tokens = h.push.messages.map((m) => (m.payload as { token: string }).token);
    expect(tokens).toHaveLength(4);
    for (const token of tokens.slice(0, 2)) expect((await h.t.request('POST', '/api/public/events', { body: { type: 'delivered', token } })).status).toBe(200);
    expect((await h.t.request('POST', '/api/public/events', { body: { type: 'delivered', token: 'forged' } })).status).toBe(400);

    const after = await scrape();
    const moved = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);
    // The local push service is none of the four big ones.
    const service = pushServiceOf(subscribed[0]!.subscription.endpoint);
    expect(service).toBe('other');
    expect(moved('herald_pushes_total', { push_service: 'other', outcome: 'sent' })).toBe(4);
    expect(moved('herald_pushes_total', { push_service: 'other', outcome: 'gone' })).toBe(1);
    expect(moved('herald_pushes_total', { push_service: 'other', outcome: 'gone', reason: 'gone' })).toBe(1);
    expect(moved('herald_pushes_total', { push_service: 'other', outcome: 'failed' })).toBe(0);
    expect(moved('herald_push_request_duration_seconds_count', { push_service: 'other' })).toBe(5);
    expect(moved('herald_subscribe_requests_total', { result: 'created' })).toBe(5);
    expect(moved('herald_subscribe_requests_total', { result: 'rejected' })).toBe(1);
    expect(moved('herald_beacon_requests_total', { result: 'accepted' })).toBe(2);
    expect(moved('herald_beacon_requests_total', { result: 'rejected' })).toBe(1);
    expect(moved('herald_scheduler_claim_lag_seconds_count')).toBe(1);
    // Sign-up mails and the like: none in this send.
    expect(moved('herald_mails_total', { result: 'failed' })).toBe(0);
    // Nothing left to send, and the queue is empty.
    expect(after).toMatch(/^herald_deliveries\{state="pending"\} 0$/m);
    expect(after).toMatch(/^herald_deliveries\{state="leased"\} 0$/m);
    expect(after).toMatch(/^herald_deliveries_oldest_pending_age_seconds 0$/m);
    expect(sample(after, 'herald_queue_jobs', { queue: 'send-batch', state: 'waiting' })).toBe(0);
    expect(after).toMatch(/^herald_queue_jobs\{queue="send-batch",state="active"\} 0$/m);
  });

  it('shows pending deliveries and their age while a send waits', async () => {
    // The push service holds every answer: the deliveries stay pending and leased meanwhile.
    h.push.setAnswer({ status: 201, delayMs: 1500 });
    try {
      const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput({ title: 'Slow' }) });
      const id = created.body.data.notification.id;
      await h.t.request('POST', `/api/notifications/${id}/send`, { token: h.owner.token });
      let text = '';
      for (let i = 0; i < 100 && sample(text, 'herald_deliveries', { state: 'leased' }) === 0; i++) {
        await new Promise((r) => setTimeout(r, 20));
        text = await scrape();
      }
      expect(sample(text, 'herald_deliveries', { state: 'pending' })).toBe(4);
      expect(sample(text, 'herald_deliveries', { state: 'leased' })).toBe(4);
      expect(sample(text, 'herald_deliveries_oldest_pending_age_seconds')).toBeGreaterThanOrEqual(0);
      await h.waitForStatus(id, ['completed']);
      expect(sample(await scrape(), 'herald_deliveries', { state: 'pending' })).toBe(0);
    } finally {
      h.push.setAnswer({ status: 201 });
    }
  });
});

describe('push service names', () => {
  it('labels endpoints by their push service, anything else as other', () => {
    expect(pushServiceOf('https://fcm.googleapis.com/fcm/send/abc')).toBe('fcm');
    expect(pushServiceOf('https://android.googleapis.com/gcm/send/abc')).toBe('fcm');
    expect(pushServiceOf('https://updates.push.services.mozilla.com/wpush/v2/abc')).toBe('mozilla');
    expect(pushServiceOf('https://web.push.apple.com/QGx')).toBe('apple');
    expect(pushServiceOf('https://wns2-par02p.notify.windows.com/w/?token=x')).toBe('microsoft');
    expect(pushServiceOf('https://fcm.googleapis.com.evil.example/x')).toBe('other');
    expect(pushServiceOf('http://fcm.googleapis.com/x')).toBe('other');
    expect(pushServiceOf('not a url')).toBe('other');
    expect(pushServiceOf('http://127.0.0.1:9911/push/x')).toBe('other');
  });
});
