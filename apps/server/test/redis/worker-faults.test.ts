import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestSubscription } from '../support/push-service';
import { startPushServiceProcess, type RemotePushService } from '../support/push-service-process';
import { Deployment } from '../scale/deployment';
import { waitUntil } from '../scale/herald-processes';
import { expectDeliveredOnce } from '../scale/send-check';

// docs/delivery.md, "Fault tests", on the scale-out deployment (PostgreSQL +
// Redis, two schedulers, two workers, all real processes of the built
// product): a worker killed or stopped mid-send, every worker stopped while
// the fan-out is still paging, Redis restarted (its queue lost) and
// PostgreSQL restarted mid-send. Each time the send finishes, every
// subscriber ends with exactly one `sent` delivery row, and the push service
// saw re-sends only within the in-flight bound (pushes in flight plus those
// sent but not yet recorded never exceed PUSH_CONCURRENCY per process,
// push-slots.ts), all under the same Topic.
const SUBSCRIBERS = 6000;
const PUSH_CONCURRENCY = 20;
const WORKERS = 2;
/** Seconds a worker owns a claimed run or delivery before another may take it over. */
const LEASE_SECONDS = 10;

describe('faults mid-send on PostgreSQL + Redis', () => {
  let push: RemotePushService;
  let d: Deployment;

  beforeAll(async () => {
    push = await startPushServiceProcess({ decrypt: false, keepRecords: true });
    d = await Deployment.start({
      schedulers: 2,
      workers: WORKERS,
      pushOrigins: [push.origin],
      env: { PUSH_CONCURRENCY: String(PUSH_CONCURRENCY), DELIVERY_LEASE_SECONDS: String(LEASE_SECONDS), DELIVERY_RETRY_BASE_MS: '200' },
    });
  }, 120_000);
  afterAll(async () => {
    await d?.close();
    await push?.close();
  }, 60_000);

  beforeEach(async () => {
    // A test that failed half-way may have left fewer workers running.
    while (d.workers.filter((w) => w.alive).length < WORKERS) await d.addWorker();
    await push.reset();
    // A push takes a little while, as over the Internet: the send lasts long enough to be interrupted.
    await push.setAnswer({ status: 201, delayMs: 20 });
  });

  let sends = 0;
  /** A site with `count` subscribers on the push service, and a notification to all of them sent through the API. */
  async function startSend(count = SUBSCRIBERS): Promise<{ id: string; subscriptions: TestSubscription[] }> {
    const site = await d.createSite(`Fault Shop ${++sends}`);
    const subscriptions = await push.createSubscriptions(count, { applicationServerKey: site.vapid_public_key });
    await d.seedSubscribers(site.id, subscriptions);
    const id = await d.createNotification(site.id, { title: `Fault ${sends}` });
    expect((await d.api('POST', `/notifications/${id}/send`)).status).toBe(200);
    return { id, subscriptions };
  }

  const accepted = async () => (await push.stats()).accepted;
  const underWay = (atLeast: number) => waitUntil(`${atLeast} pushes accepted`, async () => (await accepted()) >= atLeast, 60_000, 25);

  async function expectFinished(id: string, count: number, timeoutMs = 180_000) {
    const done = await d.waitForNotification(id, ['completed', 'failed'], timeoutMs).catch(async (error: unknown) => {
      console.error(await d.diagnose());
      throw error;
    });
    const exited = [d.serve, ...d.schedulers, ...d.workers].filter((p) => p.crashed);
    if (exited.length) console.error(await d.diagnose());
    expect(exited.map((p) => p.name), 'processes that ended by themselves').toEqual([]);
    expect(done.status).toBe('completed');
    expect(done.stats).toMatchObject({ total: count, sent: count, failed: 0 });
  }

  const liveWorkers = () => d.workers.filter((w) => w.alive);

  it('SIGKILL of a worker: the send finishes, each subscriber once, re-sends within the in-flight bound', async () => {
    const { id, subscriptions } = await startSend();
    await underWay(SUBSCRIBERS / 4);
    const victim = liveWorkers()[0]!;
    await victim.kill();
    expect(victim.exitSignal).toBe('SIGKILL');
    expect(await accepted()).toBeLessThan(SUBSCRIBERS);
    await d.addWorker();

    await expectFinished(id, SUBSCRIBERS);
    const report = await expectDeliveredOnce(d, push, id, subscriptions, PUSH_CONCURRENCY);
    console.log(`SIGKILL: ${report.duplicates} re-sent pushes (bound ${PUSH_CONCURRENCY})`);
  }, 240_000);

  it('SIGTERM of a worker: it finishes what it holds and exits 0; no push is sent twice', async () => {
    const { id, subscriptions } = await startSend();
    await underWay(SUBSCRIBERS / 4);
    const victim = liveWorkers()[0]!;
    const stopping = Date.now();
    expect(await victim.stop('SIGTERM', 30_000)).toBe(0);
    console.log(`SIGTERM: worker exited in ${Date.now() - stopping} ms`);
    expect(await accepted()).toBeLessThan(SUBSCRIBERS);
    await d.addWorker();

    await expectFinished(id, SUBSCRIBERS);
    await expectDeliveredOnce(d, push, id, subscriptions, 0);
  }, 240_000);

  it('SIGTERM of every worker while the fan-out is still paging: each exits promptly, a new worker finishes the send, nothing twice', async () => {
    // 20,000 subscribers: the fan-out waits for the batch backlog to drain, page after page.
    const { id, subscriptions } = await startSend(20_000);
    await underWay(2_000);
    const stopping = Date.now();
    const codes = await Promise.all(liveWorkers().map((w) => w.stop('SIGTERM', 30_000)));
    const exitMs = Date.now() - stopping;
    console.log(`SIGTERM of all workers: exited in ${exitMs} ms with ${codes.join(', ')}`);
    expect(codes.every((code) => code === 0)).toBe(true);
    expect(exitMs).toBeLessThan(20_000);
    const acceptedWhileStopped = await accepted();
    expect(acceptedWhileStopped).toBeLessThan(20_000);

    for (let i = 0; i < WORKERS; i++) await d.addWorker();
    await expectFinished(id, 20_000);
    await expectDeliveredOnce(d, push, id, subscriptions, 0);
  }, 300_000);

  it('Redis restarts mid-send (its queue is lost): the send finishes from the database, nothing lost', async () => {
    const { id, subscriptions } = await startSend();
    await underWay(SUBSCRIBERS / 4);
    await d.redis.restart();
    expect(await accepted()).toBeLessThan(SUBSCRIBERS);

    await expectFinished(id, SUBSCRIBERS);
    const report = await expectDeliveredOnce(d, push, id, subscriptions, WORKERS * PUSH_CONCURRENCY);
    console.log(`Redis restart: ${report.duplicates} re-sent pushes (bound ${WORKERS * PUSH_CONCURRENCY})`);
    for (const p of [d.serve, ...d.schedulers, ...liveWorkers()]) expect(p.alive, `${p.name} survived the restart`).toBe(true);
    expect(liveWorkers()).toHaveLength(WORKERS);
  }, 240_000);

  it('PostgreSQL restarts mid-send: the send finishes after it is back, nothing lost, re-sends within the in-flight bound', async () => {
    const { id, subscriptions } = await startSend();
    await underWay(SUBSCRIBERS / 4);
    const restarting = performance.now();
    d.pg.restart();
    const downMs = performance.now() - restarting;
    expect(await accepted()).toBeLessThan(SUBSCRIBERS);

    await expectFinished(id, SUBSCRIBERS);
    // Results that could not be written are written again for half a lease
    // (record-outcomes.ts): a restart shorter than that doubles nothing; a longer
    // one at most the pushes in flight.
    const shortOutage = downMs < (LEASE_SECONDS * 1000) / 2 - 1000;
    const report = await expectDeliveredOnce(d, push, id, subscriptions, shortOutage ? 0 : WORKERS * PUSH_CONCURRENCY);
    console.log(`PostgreSQL restart (${Math.round(downMs)} ms down): ${report.duplicates} re-sent pushes`);
    for (const p of [d.serve, ...d.schedulers, ...liveWorkers()]) expect(p.alive, `${p.name} survived the restart`).toBe(true);
  }, 240_000);
});
