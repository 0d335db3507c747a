// Issue 17, 7b and item 1 on the scale-out deployment (PostgreSQL + Redis,
// real processes): when Redis comes back empty mid-send, the scheduler
// re-enqueues what the database says is unfinished within seconds, not after
// DELIVERY_LEASE_SECONDS (120 s here, the default); and a worker with
// METRICS_PORT answers /healthz, /readyz and /metrics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/pg-cluster';
import { startPushServiceProcess, type RemotePushService } from '../support/push-service-process';
import { Deployment } from '../scale/deployment';
import { waitUntil } from '../scale/herald-processes';
import { expectDeliveredOnce } from '../scale/send-check';

const SUBSCRIBERS = 4000;
const PUSH_CONCURRENCY = 20;

describe('Redis restarted empty mid-send, with the default lease', () => {
  let push: RemotePushService;
  let d: Deployment;
  let metricsUrl: string;

  beforeAll(async () => {
    push = await startPushServiceProcess({ decrypt: false, keepRecords: true });
    d = await Deployment.start({ schedulers: 1, workers: 1, pushOrigins: [push.origin], env: { PUSH_CONCURRENCY: String(PUSH_CONCURRENCY), DELIVERY_RETRY_BASE_MS: '200' } });
    const metricsPort = await freePort();
    await d.addWorker({ METRICS_PORT: String(metricsPort), METRICS_TOKEN: 'worker-metrics-token-0123456789' });
    metricsUrl = `http://127.0.0.1:${metricsPort}`;
  }, 120_000);
  afterAll(async () => {
    await d?.close();
    await push?.close();
  }, 60_000);

  it('a worker with METRICS_PORT answers /healthz and /readyz (database, migrations, Redis, queue)', async () => {
    expect((await fetch(`${metricsUrl}/healthz`)).status).toBe(200);
    const ready = await fetch(`${metricsUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      ready: true,
      checks: { running: { ok: true }, database: { ok: true }, migrations: { ok: true }, redis: { ok: true }, queue: { ok: true } },
    });
    expect((await fetch(`${metricsUrl}/metrics`)).status).toBe(401);
  });

  it('resumes the send within seconds of Redis coming back empty; nothing lost, re-sends within the in-flight bound', async () => {
    const site = await d.createSite('Redis Shop');
    const subscriptions = await push.createSubscriptions(SUBSCRIBERS, { applicationServerKey: site.vapid_public_key });
    await d.seedSubscribers(site.id, subscriptions);
    await push.setAnswer({ status: 201, delayMs: 20 });
    const id = await d.createNotification(site.id, { title: 'Through a Redis restart' });
    expect((await d.api('POST', `/notifications/${id}/send`)).status).toBe(200);
    await waitUntil('a quarter accepted', async () => (await push.stats()).accepted >= SUBSCRIBERS / 4, 60_000, 25);

    await d.redis.restart();
    const restarted = Date.now();
    expect((await push.stats()).accepted).toBeLessThan(SUBSCRIBERS);
    const done = await d.waitForNotification(id, ['completed', 'failed'], 60_000).catch(async (error: unknown) => {
      console.error(await d.diagnose());
      throw error;
    });
    const tookMs = Date.now() - restarted;
    console.log(`Redis restart: the send finished ${tookMs} ms after Redis came back`);
    expect(done.status).toBe('completed');
    expect(done.stats).toMatchObject({ total: SUBSCRIBERS, sent: SUBSCRIBERS, failed: 0 });
    // Far below the 120 s lease the recovery sweep would have waited for.
    expect(tookMs).toBeLessThan(45_000);
    expect(d.schedulers[0]!.logs().some((l) => String(l.msg).startsWith('the queue lost its jobs'))).toBe(true);
    await expectDeliveredOnce(d, push, id, subscriptions, 2 * PUSH_CONCURRENCY);

    // The worker's own metrics count what it sent.
    const scraped = await fetch(`${metricsUrl}/metrics`, { headers: { authorization: 'Bearer worker-metrics-token-0123456789' } });
    expect(scraped.status).toBe(200);
    const text = await scraped.text();
    expect(text).toMatch(/^herald_pushes_total\{push_service="other",outcome="sent",reason="none"\} [1-9]\d*$/m);
    expect(text).toMatch(/^herald_queue_jobs\{queue="send-batch",state="waiting"\} \d+$/m);
  }, 240_000);
});
