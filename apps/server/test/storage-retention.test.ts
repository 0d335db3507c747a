import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config';
import { compactOldDeliveries, removeCompactedRuns } from '../src/features/retention/service';
import { ManualClock } from '../src/platform/clock';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from './support/delivery-harness';
import { waitFor } from './support/test-app';
// The report is RFC 4180 CSV: read it with the import's own parser.
import { csvCells } from '../src/features/subscriber-imports/import-file';
import { runSeqsOfNotification } from '../src/db/run-seq';

// Issue 15 §1: delivery rows are kept DELIVERY_RETENTION_DAYS after their run
// finished, then compacted (docs/storage.md, "Retention"). Every figure a
// screen or the API shows is read before and after compaction, at the same
// clock time, and must not move: counts, rates, failure groups, A/B variant
// figures, the dashboard and Delivery section, the CSV report's totals. A run
// still sending keeps its rows however old; a beacon for a removed delivery is
// answered like any unknown one; the subscriber keeps its last sent / clicked.
// Time is a ManualClock; the scheduler is stopped before time jumps, so
// compaction runs only when the test calls it.

const DAY = 86_400_000;
const variant = (letter: string) => ({ title: `Sale ${letter}`, message: `Offer ${letter}`, destination_url: `https://push-shop.example/${letter.toLowerCase()}`, image_url: null });

describe('retention settings', () => {
  it('defaults to 30 days of delivery rows, 30 of site events and 180 of feed items, and refuses a delivery retention under a week', () => {
    expect(loadConfig({})).toMatchObject({ deliveryRetentionDays: 30, siteEventRetentionDays: 30, feedItemRetentionDays: 180 });
    expect(loadConfig({ DELIVERY_RETENTION_DAYS: '90', SITE_EVENT_RETENTION_DAYS: '7', FEED_ITEM_RETENTION_DAYS: '365' })).toMatchObject({ deliveryRetentionDays: 90, siteEventRetentionDays: 7, feedItemRetentionDays: 365 });
    // The frequency cap counts a subscriber's pushes of up to a week back from the rows.
    expect(() => loadConfig({ DELIVERY_RETENTION_DAYS: '6' })).toThrow(ConfigError);
    try {
      loadConfig({ DELIVERY_RETENTION_DAYS: '6' });
    } catch (error) {
      expect((error as ConfigError).problems.join('\n')).toContain('DELIVERY_RETENTION_DAYS');
    }
  });
});

describe('delivery retention', () => {
  let h: DeliveryHarness;
  afterEach(async () => h?.close());

  it('compacts the rows of runs finished past the retention; every figure stays, live sends keep their rows, old beacons are answered', async () => {
    const clock = new ManualClock(Date.UTC(2026, 5, 1, 8));
    h = await createDeliveryHarness({ clock, env: { DELIVERY_MAX_ATTEMPTS: '50' } });
    let token = h.owner.token;
    const api = (method: string, url: string, body?: unknown) => h.t.request(method, url, { token, ...(body === undefined ? {} : { body }) });
    /** Weeks pass: the owner signs in again (sessions expire). */
    async function advance(ms: number) {
      clock.advance(ms);
      token = (await h.t.request('POST', '/api/auth/login', { body: { email: h.owner.email, password: h.owner.password } })).body.data.token;
    }
    const beacon = (type: string, token: string) => h.t.request('POST', '/api/public/events', { body: { type, token }, headers: { origin: 'https://push-shop.example' } });
    const db = h.t.ctx.db;

    const subscribers: Array<Awaited<ReturnType<DeliveryHarness['subscribe']>>> = [];
    for (let i = 0; i < 8; i++) subscribers.push(await h.subscribe());
    // One expires (410), one is refused (403: failed, rejected); the rest accept.
    h.push.setAnswer({ status: 410 }, subscribers[0]!.subscription.id);
    h.push.setAnswer({ status: 403, body: 'forbidden' }, subscribers[1]!.subscription.id);

    async function sendAndSettle(body: Record<string, unknown>) {
      const id = (await api('POST', `/api/sites/${h.site.id}/notifications`, notificationInput(body))).body.data.notification.id;
      expect((await api('POST', `/api/notifications/${id}/send`)).status).toBe(200);
      await h.waitForStatus(id, ['completed', 'completed_with_errors', 'failed']);
      return id as string;
    }
    // An A/B send of every variant to everyone, and a plain one.
    const abId = await sendAndSettle({ variants: [variant('A'), variant('B')], ab_test: null });
    const plainId = await sendAndSettle({ title: 'Plain' });

    // Beacons: some delivered, some clicked (a click without a delivered beacon counts as delivered too).
    const tokensOf = (title: (t: string) => boolean) => h.push.messages.filter((m) => title((m.payload as { title: string }).title)).map((m) => ({ subscriptionId: m.subscriptionId, token: (m.payload as { token: string }).token }));
    const abTokens = tokensOf((t) => t.startsWith('Sale'));
    const plainTokens = tokensOf((t) => t === 'Plain');
    expect(abTokens).toHaveLength(6);
    expect(plainTokens).toHaveLength(6);
    for (const { token } of abTokens.slice(0, 4)) expect((await beacon('delivered', token)).body.data).toEqual({ counted: true });
    for (const { token } of [abTokens[0]!, abTokens[5]!]) expect((await beacon('clicked', token)).body.data).toEqual({ counted: true });
    for (const { token } of plainTokens.slice(0, 3)) expect((await beacon('delivered', token)).body.data).toEqual({ counted: true });
    clock.advance(60_000);
    expect((await beacon('clicked', plainTokens[1]!.token)).body.data).toEqual({ counted: true });

    // A send still in progress: a late subscriber's push service answers 500, so its push waits for a retry (TTL 28 days).
    const stuck = await h.subscribe();
    h.push.setAnswer({ status: 500, body: 'try later' }, stuck.subscription.id);
    const liveId = (await api('POST', `/api/sites/${h.site.id}/notifications`, notificationInput({ title: 'Live', ttl_seconds: 28 * 86_400 }))).body.data.notification.id as string;
    await api('POST', `/api/notifications/${liveId}/send`);
    const liveRows = () => db.selectFrom('deliveries').select(['id', 'status', 'reason']).where('run_seq', 'in', runSeqsOfNotification(liveId)).execute();
    await waitFor(async () => {
      const rows = await liveRows();
      return rows.length === 8 && rows.filter((row) => row.status === 'pending').length === 1 && rows.some((row) => row.reason === 'server_error') ? true : undefined;
    }, { timeoutMs: 15_000 });
    await h.engine.scheduler!.stop();
    // No job left running, waiting or delayed (the retry's job claims nothing while the clock stands still; only the
    // scheduler's recovery sweep would queue it again): nothing but the test touches the database from here.
    const idle = async () => Object.values(await h.engine.queue.jobCounts()).every((lane) => !lane.active && !lane.waiting && !lane.delayed);
    await waitFor(async () => ((await idle()) ? true : undefined), { timeoutMs: 10_000 });
    expect((await db.selectFrom('notification_runs').select('status').where('notification_id', '=', liveId).executeTakeFirstOrThrow()).status).toBe('sending');

    // What a subscriber's rows say today: its latest accepted push and click.
    const expectedLast = new Map<string, { sent: number | null; clicked: number | null }>();
    for (const row of await db.selectFrom('deliveries').innerJoin('subscribers', 'subscribers.seq', 'deliveries.subscriber_seq').select(['subscribers.id as subscriber_id', 'sent_at', 'clicked_at']).where('run_seq', 'in', runSeqsOfNotification([abId, plainId])).execute()) {
      const seen = expectedLast.get(row.subscriber_id) ?? { sent: null, clicked: null };
      const max = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.max(a, b));
      expectedLast.set(row.subscriber_id, { sent: max(seen.sent, row.sent_at), clicked: max(seen.clicked, row.clicked_at) });
    }
    expect([...expectedLast.values()].filter((v) => v.clicked !== null).length).toBeGreaterThanOrEqual(2);

    /** Every figure the screens and the API show for these sends. */
    async function figures() {
      const read = async (url: string) => {
        const response = await api('GET', url);
        expect(response.status, url).toBe(200);
        return response.body.data;
      };
      const csvTotals = async (id: string) => {
        const response = await api('GET', `/api/notifications/${id}/report.csv`);
        const lines = String(response.body).replace(/^\uFEFF/, '').trimEnd().split('\r\n');
        const header = csvCells(lines[0]!);
        const totals: Record<string, number> = {};
        for (const cells of lines.slice(1).map(csvCells)) {
          expect(cells).toHaveLength(header.length);
          const n = Number(cells[header.indexOf('deliveries')]);
          const key = `${cells[header.indexOf('outcome')]}/${cells[header.indexOf('reason')]}/${cells[header.indexOf('push_service')]}`;
          totals[key] = (totals[key] ?? 0) + n;
          totals.delivered = (totals.delivered ?? 0) + Number(cells[header.indexOf('delivered')]);
          totals.clicked = (totals.clicked ?? 0) + Number(cells[header.indexOf('clicked')]);
        }
        return totals;
      };
      const perNotification = async (id: string) => {
        const { notification } = await read(`/api/notifications/${id}`);
        const performance = await read(`/api/notifications/${id}/performance`);
        return { counts: notification.counts, status: notification.status, performance: { ...performance, runs: performance.runs.map((run: Record<string, unknown>) => ({ ...run })) }, csv: await csvTotals(id) };
      };
      return {
        ab: await perNotification(abId),
        plain: await perNotification(plainId),
        dashboard: await read(`/api/sites/${h.site.id}/analytics/dashboard?days=90`),
        delivery: await read(`/api/sites/${h.site.id}/analytics/delivery?days=90`),
        // Every figure of the list; whether a send can still be retried is asserted on its own below.
        list: await read(`/api/sites/${h.site.id}/notifications`).then((list) => ({
          ...list,
          notifications: list.notifications.map(({ deliveries_compacted: _compacted, ...notification }: Record<string, unknown>) => notification),
        })),
        compacted: Object.fromEntries(((await read(`/api/sites/${h.site.id}/notifications`)).notifications as Array<{ id: string; deliveries_compacted: boolean }>).map((n) => [n.id, n.deliveries_compacted])),
        // The subscriber-level view: each one's data export (last sent, delivered, clicked).
        last: await Promise.all(
          subscribers.map(async ({ subscriberId }) => {
            const { subscriber } = await read(`/api/subscribers/${subscriberId}/export`);
            return [subscriber.last_sent_at, subscriber.last_delivered_at, subscriber.last_clicked_at];
          }),
        ),
      };
    }

    const atStart = await figures();
    // The figures are what the sends did (so a compaction that lost or doubled anything would show).
    expect(atStart.ab.counts).toMatchObject({ targeted: 8, sent: 6, failed: 1, expired: 1, delivered: 5, clicked: 2 });
    expect(atStart.ab.csv).toMatchObject({ 'sent//other': 6, 'failed/rejected/other': 1, 'expired/gone/other': 1, delivered: 5, clicked: 2 });
    const variants: Array<{ reach: number; delivered: number; clicked: number }> = atStart.ab.performance.variants;
    expect(variants).toHaveLength(2);
    const sum = (key: 'reach' | 'delivered' | 'clicked') => variants.reduce((total, v) => total + v[key], 0);
    expect([sum('reach'), sum('delivered'), sum('clicked')]).toEqual([6, 5, 2]);
    expect(atStart.plain.counts).toMatchObject({ targeted: 7, sent: 6, failed: 1, expired: 0, skipped: 0, delivered: 3, clicked: 1 });
    const rowsOf = (ids: string[]) => db.selectFrom('deliveries').select((eb) => eb.fn.countAll<number>().as('n')).where('run_seq', 'in', runSeqsOfNotification(ids)).executeTakeFirstOrThrow();
    expect(Number((await rowsOf([abId, plainId])).n)).toBe(15);
    // The export names the latest accepted push and click of each subscriber (the refused and the expired have none).
    const allRows = await db.selectFrom('deliveries').innerJoin('subscribers', 'subscribers.seq', 'deliveries.subscriber_seq').select(['subscribers.id as subscriber_id', 'sent_at', 'clicked_at']).execute();
    const latest = (id: string, key: 'sent_at' | 'clicked_at') => {
      const times = allRows.filter((row) => row.subscriber_id === id && row[key] !== null).map((row) => row[key]!);
      return times.length ? new Date(Math.max(...times)).toISOString() : null;
    };
    expect(atStart.last.map(([sent, , clicked]: Array<string | null>) => [sent, clicked])).toEqual(subscribers.map(({ subscriberId }) => [latest(subscriberId, 'sent_at'), latest(subscriberId, 'clicked_at')]));
    expect(atStart.last.filter(([sent]: Array<string | null>) => sent !== null)).toHaveLength(6);

    // 20 days on: within the retention, nothing is removed.
    await advance(20 * DAY);
    expect(await compactOldDeliveries(h.t.ctx, clock.now())).toBe(0);
    expect(Number((await rowsOf([abId, plainId])).n)).toBe(15);

    // 31 days on: the finished sends' rows go, a batch of 4 rows at a time; the live send keeps all of its rows.
    await advance(11 * DAY);
    const before = await figures();
    const removed = await compactOldDeliveries(h.t.ctx, clock.now(), { everyMs: 0, batchSize: 4, maxBatches: 100 });
    expect(removed).toBe(15);
    expect(Number((await rowsOf([abId, plainId])).n)).toBe(0);
    expect(await liveRows()).toHaveLength(8);
    expect((await db.selectFrom('notification_runs').select('status').where('notification_id', '=', liveId).executeTakeFirstOrThrow()).status).toBe('sending');
    expect(await compactOldDeliveries(h.t.ctx, clock.now())).toBe(0);
    const after = await figures();
    expect({ ...after, compacted: undefined }).toEqual({ ...before, compacted: undefined });
    // The list says which failed sends have nothing left to retry (the web disables Retry for them).
    expect([before.compacted[plainId], before.compacted[abId]]).toEqual([false, false]);
    expect([after.compacted[plainId], after.compacted[abId], after.compacted[liveId]]).toEqual([true, true, false]);
    // Kept per notification, not per run or delivery: one row per group (accepted, refused).
    expect(await db.selectFrom('compacted_deliveries').select(['status', 'reason', 'count']).where('notification_id', '=', plainId).orderBy('status').execute()).toEqual([
      { status: 'failed', reason: 'rejected', count: 1 },
      { status: 'sent', reason: '', count: 6 },
    ]);
    // The CSV still adds up to the counts, one line per group of removed deliveries.
    expect(after.ab.csv).toMatchObject({ 'sent//other': 6, 'failed/rejected/other': 1, 'expired/gone/other': 1, delivered: 5, clicked: 2 });
    const compactedRuns = await db.selectFrom('notification_runs').select(['notification_id', 'deliveries_compacted_at']).where('notification_id', 'in', [abId, plainId, liveId]).execute();
    expect(compactedRuns.map((run) => [run.notification_id, run.deliveries_compacted_at]).sort()).toEqual(
      [
        [abId, clock.now()],
        [plainId, clock.now()],
        [liveId, null],
      ].sort(),
    );

    // Each subscriber keeps its last sent and last clicked.
    const kept = await db.selectFrom('subscribers').select(['id', 'last_sent_at', 'last_clicked_at']).where('id', 'in', [...expectedLast.keys()]).execute();
    expect(kept).toHaveLength(expectedLast.size);
    for (const row of kept) expect({ sent: row.last_sent_at, clicked: row.last_clicked_at }, row.id).toEqual(expectedLast.get(row.id));

    // Nothing is left to send again of a compacted send: "Retry" says so and changes nothing.
    expect(after.plain.status).toBe('completed_with_errors');
    const retry = await api('POST', `/api/notifications/${plainId}/retry`);
    expect(retry.status).toBe(409);
    expect(retry.body.error.message).toBe("There is nothing to retry: deliveries are kept 30 days after a send finished, and this send's are now totals");

    // A beacon for a removed delivery is answered and counts nothing; the live send's still count.
    const old = await beacon('clicked', abTokens[3]!.token);
    expect(old.status).toBe(200);
    expect(old.body.data).toEqual({ counted: false });
    const liveToken = tokensOf((t) => t === 'Live').find((m) => m.subscriptionId !== stuck.subscription.id)!.token;
    expect((await beacon('delivered', liveToken)).body.data).toEqual({ counted: true });
    expect(await figures()).toMatchObject({ ab: before.ab, plain: before.plain });
  }, 90_000);

  it('removes a trigger’s one-subscriber runs once compacted, keeping its latest run; "fired N times" and every count stay', async () => {
    const clock = new ManualClock(Date.UTC(2026, 6, 1, 8));
    h = await createDeliveryHarness({ clock });
    const db = h.t.ctx.db;
    let token = h.owner.token;
    const buyers = [await h.subscribe(), await h.subscribe()];
    const key = (await h.t.request('POST', `/api/sites/${h.site.id}/api-keys`, { token, body: { name: 'Shop backend' } })).body.data.key as string;
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, {
      token,
      body: notificationInput({ type: 'TRIGGERED', title: 'Thanks', trigger: { event: 'purchase', delay_minutes: 0 } }),
    });
    const id = created.body.data.notification.id as string;
    const runsOf = () => db.selectFrom('notification_runs').select(['id', 'status', 'created_at']).where('notification_id', '=', id).orderBy('created_at').execute();

    /** One purchase: a run of one delivery, sent before the clock moves on a minute. */
    async function purchase(i: number) {
      const fired = await h.t.request('POST', `/api/v1/sites/${h.site.id}/events`, {
        body: { event: 'purchase', subscriber_id: buyers[i % 2]!.subscriberId },
        headers: { authorization: `Bearer ${key}` },
      });
      expect(fired.status, JSON.stringify(fired.body)).toBeLessThan(300);
      await h.engine.scheduler!.tick();
      await waitFor(async () => ((await runsOf()).every((run) => run.status === 'completed') ? true : undefined), { timeoutMs: 10_000 });
      clock.advance(60_000);
    }
    async function passDays(days: number) {
      clock.advance(days * DAY);
      token = (await h.t.request('POST', '/api/auth/login', { body: { email: h.owner.email, password: h.owner.password } })).body.data.token;
    }
    const notification = async () => (await h.t.request('GET', `/api/notifications/${id}`, { token })).body.data.notification;

    for (let i = 0; i < 5; i++) await purchase(i);
    await h.engine.scheduler!.stop();
    expect(await runsOf()).toHaveLength(5);
    await passDays(31);
    const before = await notification();
    expect(before).toMatchObject({ fire_count: 5, counts: { sent: 5 } });

    expect(await compactOldDeliveries(h.t.ctx, clock.now())).toBe(5);
    expect(await removeCompactedRuns(h.t.ctx)).toBe(4);
    // The latest firing stays (Retry and the "kept N days" answer read it); the four before it are counted, not kept.
    const [latest] = await runsOf();
    expect(await runsOf()).toHaveLength(1);
    expect(latest!.created_at).toBe(Date.UTC(2026, 6, 1, 8) + 4 * 60_000);
    expect(await notification()).toEqual(before);
    expect(await removeCompactedRuns(h.t.ctx)).toBe(0);

    // A later firing: the run kept before goes (the scheduler's own sweep may take it first); the new one, the latest, stays even once compacted.
    await h.engine.scheduler!.start();
    await purchase(5);
    await h.engine.scheduler!.stop();
    await removeCompactedRuns(h.t.ctx);
    const sixth = Date.UTC(2026, 6, 1, 8) + 5 * 60_000 + 31 * DAY;
    expect((await runsOf()).map((run) => run.created_at)).toEqual([sixth]);
    await passDays(31);
    expect(await compactOldDeliveries(h.t.ctx, clock.now())).toBe(1);
    expect(await removeCompactedRuns(h.t.ctx)).toBe(0);
    expect((await runsOf()).map((run) => run.created_at)).toEqual([sixth]);
    expect(await notification()).toMatchObject({ fire_count: 6, counts: { sent: 6 } });
  }, 60_000);
});
