import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PushService, type ReceivedPush } from '../support/push-service';
import { startPushServiceProcess, type RemotePushService } from '../support/push-service-process';
import { countBy, Deployment } from '../scale/deployment';
import { FeedOrigin } from '../scale/feed-origin';
import { sleep, waitUntil, type HeraldProcess } from '../scale/herald-processes';
import { runSeqsOfNotification } from '../../src/db/run-seq';

// Issue 6 §1, the scale-out deployment: ONE `serve --no-scheduler
// --no-worker`, TWO `scheduler` and THREE `worker` processes of the built
// product against one PostgreSQL and one Redis, the push service in another
// process. A one-time send to 50,000 subscribers reaches each exactly once and
// is shared by the workers; meanwhile, on a second site, a scheduled send, a
// recurring occurrence, two welcome drip steps and a feed item each go out
// exactly once although two schedulers race for them, and the feed is polled
// once per interval.
const SUBSCRIBERS = Number(process.env.HERALD_SCALE_SUBSCRIBERS ?? 50_000);
/** Of those, this many are on a push service that decrypts every body (the rest: one that only checks it). */
const DECRYPTED_SAMPLE = 100;
const PUSH_CONCURRENCY = 100;
const RSS_POLL_INTERVAL_SECONDS = 2;
/** The workers' keep-alive pool per push-service origin (PUSH_CONNECTIONS), below PUSH_CONCURRENCY so the pool is what bounds the sockets. */
const CONNECTIONS_PER_ORIGIN = 32;

interface Sample {
  at: number;
  process: string;
  rssMb: number;
  pushSockets: number;
  sockets: number;
}

const titleOf = (message: ReceivedPush) => String((message.payload as { title?: unknown } | null)?.title);

describe('scale-out: 1 serve, 2 schedulers, 3 workers on PostgreSQL + Redis', () => {
  let bulk: RemotePushService;
  let sample: PushService;
  let feed: FeedOrigin;
  let d: Deployment;

  beforeAll(async () => {
    bulk = await startPushServiceProcess({ decrypt: false, keepRecords: true });
    sample = await PushService.start();
    feed = await FeedOrigin.start([{ guid: 'old-1', title: 'An old post', link: 'https://blog.example/old-1', pubDate: new Date(Date.now() - 86_400_000) }]);
    d = await Deployment.start({
      schedulers: 2,
      workers: 3,
      pushOrigins: [bulk.origin, sample.origin],
      env: {
        RSS_POLL_INTERVAL_SECONDS: String(RSS_POLL_INTERVAL_SECONDS),
        OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
        PUSH_CONCURRENCY: String(PUSH_CONCURRENCY),
        PUSH_CONNECTIONS: String(CONNECTIONS_PER_ORIGIN),
        LOG_LEVEL: 'info',
      },
    });
  }, 120_000);

  afterAll(async () => {
    await d?.close();
    await feed?.close();
    await sample?.close();
    await bulk?.close();
  }, 60_000);

  it('sends to 50,000 subscribers once each, shared by the workers; timed work happens once with two schedulers', async () => {
    // ---- Site B: the timed work, on a few subscribers of the decrypting push service.
    const timing = await d.createSite('Timing Shop');
    const subscribe = async () => {
      const subscription = sample.createSubscription({ applicationServerKey: timing.vapid_public_key });
      const response = await d.api(
        'POST',
        `/public/sites/${timing.id}/subscribers`,
        { subscription: { endpoint: subscription.endpoint, keys: subscription.keys }, timezone: 'Europe/Paris', language: 'fr-FR' },
        { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0' },
      );
      expect(response.status).toBe(201);
      return subscription;
    };
    const regulars = [];
    for (let i = 0; i < 5; i++) regulars.push(await subscribe());

    const campaign = await d.api('POST', `/sites/${timing.id}/welcome-campaigns`, {
      name: 'Welcome',
      is_active: true,
      steps: [
        { sequence_order: 1, delay_minutes: 0, notification: { title: 'Welcome 1', message: 'Glad you are here', destination_url: 'https://timing.example/1', icon_url: null, image_url: null } },
        { sequence_order: 2, delay_minutes: 1, notification: { title: 'Welcome 2', message: 'A minute later', destination_url: 'https://timing.example/2', icon_url: null, image_url: null } },
      ],
    });
    expect(campaign.status).toBe(201);
    const newcomer = await subscribe();
    const timingAudience = [...regulars, newcomer];

    const soon = new Date(Math.ceil((Date.now() + 10_000) / 1000) * 1000).toISOString();
    const scheduledId = await d.createNotification(timing.id, { title: 'Scheduled', scheduled_at: soon });
    const recurringId = await d.createNotification(timing.id, {
      type: 'RECURRING',
      title: 'Recurring',
      recurring_schedule: { interval_type: 'DAILY', interval_value: 1, start_date: soon, end_date: null },
    });
    const createdFeed = await d.api('POST', `/sites/${timing.id}/rss-feeds`, { name: 'Scale Blog', url: feed.url, maxPushesPerDay: 5, segmentId: null });
    expect(createdFeed.status).toBe(201);
    const feedId: string = createdFeed.body.data.feed.id;

    // ---- Site A: 50,000 subscribers, all but a sample on the bulk push service.
    const big = await d.createSite('Big Shop');
    const seedStarted = Date.now();
    const bulkSubscriptions = await bulk.createSubscriptions(SUBSCRIBERS - DECRYPTED_SAMPLE, { applicationServerKey: big.vapid_public_key });
    const sampleSubscriptions = Array.from({ length: DECRYPTED_SAMPLE }, () => sample.createSubscription({ applicationServerKey: big.vapid_public_key }));
    await d.seedSubscribers(big.id, [...bulkSubscriptions, ...sampleSubscriptions]);
    console.log(`seeded ${SUBSCRIBERS} subscribers in ${((Date.now() - seedStarted) / 1000).toFixed(1)} s`);

    // The feed's first check records what it lists (never sent); a post published afterwards is sent once.
    await waitUntil('the first feed check', async () => (await d.api('GET', `/rss-feeds/${feedId}`)).body.data.feed.last_fetched_at, 30_000, 200);
    feed.publish({ guid: 'new-1', title: 'Fresh post', link: 'https://blog.example/new-1', pubDate: new Date() });

    // ---- The big send, through the API.
    const bigId = await d.createNotification(big.id, { title: 'Flash sale' });
    const sendStarted = Date.now();
    expect((await d.api('POST', `/notifications/${bigId}/send`)).status).toBe(200);

    const samples: Sample[] = [];
    const pushPort = Number(new URL(bulk.origin).port);
    const measure = (p: HeraldProcess) =>
      samples.push({
        at: Date.now(),
        process: p.name,
        rssMb: p.rssMb(),
        // Connections in use or being opened: a socket the pool has let go of can linger a moment in a
        // closing state (FIN_WAIT, CLOSE_WAIT…) while its replacement opens; the pool bounds live ones.
        pushSockets: p.tcpConnections(pushPort).filter((connection) => connection.state === 'ESTABLISHED' || connection.state === 'SYN_SENT').length,
        sockets: p.socketCount(),
      });
    let done: any;
    for (let i = 0; i < 1200 && !done; i++) {
      for (const p of [d.serve, ...d.schedulers, ...d.workers]) measure(p);
      const notification = await d.notification(bigId);
      if (['completed', 'failed'].includes(notification.status)) done = notification;
      else await sleep(500);
    }
    expect(done, 'the big send finished within 10 minutes').toBeDefined();
    const sendSeconds = (Date.now() - sendStarted) / 1000;
    console.log(`sent ${SUBSCRIBERS} in ${sendSeconds.toFixed(1)} s (${Math.round(SUBSCRIBERS / sendSeconds)}/s)`);
    expect(done).toMatchObject({ status: 'completed' });
    expect(done.stats).toMatchObject({ total: SUBSCRIBERS, sent: SUBSCRIBERS, failed: 0 });

    // ---- The timed work: every piece arrives, then nothing more for a while.
    const expectedTitles = ['Scheduled', 'Recurring', 'Welcome 1', 'Fresh post'];
    await waitUntil(
      'the scheduled send, the recurring occurrence, welcome step 1 and the feed post',
      () => expectedTitles.every((title) => sample.messages.some((m) => titleOf(m) === title)),
      90_000,
      250,
    );
    await waitUntil('welcome step 2, a minute after subscribing', () => sample.messages.some((m) => titleOf(m) === 'Welcome 2'), 90_000, 250);
    // Long enough for a second scheduler, a second poll or a recovery sweep to double anything.
    await sleep(3 * RSS_POLL_INTERVAL_SECONDS * 1000);

    // ---- Every subscriber of the big send got exactly one message.
    const bulkMessages = await bulk.messages();
    const bulkCounts = countBy(bulkMessages, (m) => m.subscriptionId);
    expect(bulkCounts.size).toBe(SUBSCRIBERS - DECRYPTED_SAMPLE);
    expect([...bulkCounts.values()].every((n) => n === 1)).toBe(true);
    expect(new Set(bulkMessages.map((m) => m.headers.topic)).size).toBe(1);
    // The sample decrypted to the notification (RFC 8291 end to end), once each.
    const sampleIds = new Set(sampleSubscriptions.map((s) => s.id));
    const decrypted = sample.messages.filter((m) => sampleIds.has(m.subscriptionId));
    expect(decrypted).toHaveLength(DECRYPTED_SAMPLE);
    expect(new Set(decrypted.map((m) => m.subscriptionId)).size).toBe(DECRYPTED_SAMPLE);
    expect(decrypted.every((m) => titleOf(m) === 'Flash sale' && (m.payload as { body?: string }).body === 'Only today')).toBe(true);
    const bulkStats = await bulk.stats();
    expect(bulkStats.decryptionFailures).toBe(0);
    expect(bulkStats.byStatus).toEqual({ 201: SUBSCRIBERS - DECRYPTED_SAMPLE });

    // Every delivery row is terminal and unique per subscriber.
    const rows = await d.db
      .selectFrom('deliveries')
      .select((eb) => ['status', eb.fn.countAll<number>().as('rows'), eb.fn.count<number>('subscriber_seq').distinct().as('subscribers')])
      .where('run_seq', 'in', runSeqsOfNotification(bigId))
      .groupBy('status')
      .execute();
    expect(rows).toEqual([{ status: 'sent', rows: SUBSCRIBERS, subscribers: SUBSCRIBERS }]);

    // The work was shared: each worker logs one line per batch it sent.
    const [run] = await d.db.selectFrom('notification_runs').select('id').where('notification_id', '=', bigId).execute();
    const perWorker = d.workers.map((w) => {
      const batches = w.logs('batch sent').filter((l) => l.runId === run!.id);
      return { worker: w.name, batches: batches.length, claimed: batches.reduce((sum, l) => sum + Number(l.claimed), 0) };
    });
    console.table(perWorker);
    expect(perWorker.filter((w) => w.batches > 0).length).toBeGreaterThan(1);
    // Claims across processes add up to the audience: no row was claimed by two workers.
    expect(perWorker.reduce((sum, w) => sum + w.claimed, 0)).toBe(SUBSCRIBERS);

    // ---- The timed work, once each.
    const timingIds = new Set(timingAudience.map((s) => s.id));
    const timingMessages = sample.messages.filter((m) => timingIds.has(m.subscriptionId));
    const perBrowserAndTitle = countBy(timingMessages, (m) => `${m.subscriptionId} ${titleOf(m)}`);
    expect([...perBrowserAndTitle.values()].every((n) => n === 1)).toBe(true);
    for (const title of ['Scheduled', 'Recurring', 'Fresh post']) {
      expect(timingMessages.filter((m) => titleOf(m) === title).map((m) => m.subscriptionId).sort(), title).toEqual([...timingIds].sort());
    }
    // Welcome steps go to the new subscriber only, in order.
    expect(timingMessages.filter((m) => titleOf(m).startsWith('Welcome')).map((m) => `${m.subscriptionId} ${titleOf(m)}`)).toEqual([
      `${newcomer.id} Welcome 1`,
      `${newcomer.id} Welcome 2`,
    ]);
    expect(timingMessages).toHaveLength(3 * timingAudience.length + 2);

    const runsOf = (notificationId: string) => d.db.selectFrom('notification_runs').select(['status', 'dedupe_key']).where('notification_id', '=', notificationId).execute();
    expect(await runsOf(scheduledId)).toEqual([expect.objectContaining({ status: 'completed' })]);
    const recurringRuns = await runsOf(recurringId);
    expect(recurringRuns).toHaveLength(1);
    expect(recurringRuns[0]!.dedupe_key).toMatch(/^recurring:.+:0$/);
    const feedNotifications = await d.db.selectFrom('notifications').select(['id', 'title', 'status']).where('site_id', '=', timing.id).where('source', '=', 'rss').execute();
    expect(feedNotifications).toEqual([expect.objectContaining({ title: 'Fresh post', status: 'completed' })]);

    // The feed was polled once per interval, never twice in one: consecutive fetches are about an interval apart
    // (give or take queue latency), never the near-zero gap of two schedulers both claiming one check.
    const gaps = feed.fetches.slice(1).map((at, i) => at - feed.fetches[i]!);
    console.log(`feed fetched ${feed.fetches.length} times; gaps ${gaps.map((g) => (g / 1000).toFixed(2)).join(', ')} s`);
    expect(feed.fetches.length).toBeGreaterThan(3);
    expect(Math.min(...gaps)).toBeGreaterThan((RSS_POLL_INTERVAL_SECONDS * 1000) / 2);

    // ---- Bounded resources during the send.
    const peaks = new Map<string, { rssMb: number; pushSockets: number; sockets: number }>();
    for (const s of samples) {
      const peak = peaks.get(s.process) ?? { rssMb: 0, pushSockets: 0, sockets: 0 };
      peaks.set(s.process, { rssMb: Math.max(peak.rssMb, s.rssMb), pushSockets: Math.max(peak.pushSockets, s.pushSockets), sockets: Math.max(peak.sockets, s.sockets) });
    }
    console.table(Object.fromEntries([...peaks].map(([name, p]) => [name, { 'peak RSS MB': Math.round(p.rssMb), 'peak push sockets': p.pushSockets, 'peak sockets': p.sockets }])));
    for (const worker of d.workers) {
      const peak = peaks.get(worker.name)!;
      expect(peak.pushSockets).toBeLessThanOrEqual(CONNECTIONS_PER_ORIGIN);
      expect(peak.rssMb).toBeLessThan(400);
    }
    for (const p of [d.serve, ...d.schedulers, ...d.workers]) expect(p.alive, `${p.name} still running`).toBe(true);
  }, 600_000);
});
