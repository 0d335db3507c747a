import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/context';
import { featureDueWorkSources, startEngine, type Engine } from '../../src/engine';
import { FOLD_BATCH, foldAllBeaconCounts, foldBeaconCounts } from '../../src/features/tracking/fold';
import { createTrackingService } from '../../src/features/tracking/service';
import type { NotificationClickedHook } from '../../src/features/tracking/hooks';
import { Scheduler } from '../../src/jobs/scheduler';
import { ManualClock } from '../../src/platform/clock';
import { createPushClient } from '../../src/roles';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from '../support/delivery-harness';
import type { ReceivedPush } from '../support/push-service';
import { runSeqsOfNotification } from '../../src/db/run-seq';

// Beacons at push speed (issue 15, part 2; docs/delivery.md, "How beacons are
// counted"): a beacon marks its delivery and appends a row to
// uncounted_beacons; the fold adds batches of them to the run's, the
// notification's and the hourly counters and tells the click hooks, deleting
// the rows in the same transaction. These tests fold by hand (the scheduler
// below has no due-work sources), so they know what is folded when, and
// fail if a beacon is counted twice or lost: by a replay, a fold that fails
// half-way, two folders at once, or beacons racing the folds.
describe('beacons counted by the fold', () => {
  const clock = new ManualClock(Date.parse('2026-06-01T10:00:00Z'));
  let h: DeliveryHarness;
  let engine: Engine;
  let scheduler: Scheduler;
  /** First clicks the notification-clicked hooks were told of, per notification. */
  const hookClicks = new Map<string, number>();
  const countingHook: NotificationClickedHook = async (_trx, event) => {
    hookClicks.set(event.notificationId, (hookClicks.get(event.notificationId) ?? 0) + event.clicks);
  };
  let ctx: AppContext;

  const beacon = (type: 'delivered' | 'clicked', token: string) => h.t.request('POST', '/api/public/events', { body: { type, token } });
  const tokenOf = (message: ReceivedPush) => (message.payload as { token: string }).token;

  /** Sends a notification to every subscriber and returns its id and each push's beacon token. */
  async function send(title: string): Promise<{ id: string; tokens: string[] }> {
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput({ title }) });
    const id: string = created.body.data.notification.id;
    expect((await h.t.request('POST', `/api/notifications/${id}/send`, { token: h.owner.token })).status).toBe(200);
    await scheduler.tick();
    await h.waitForStatus(id, ['completed']);
    const tokens = h.push.messages.filter((message) => (message.payload as { tag: string }).tag === `herald-${id}`).map(tokenOf);
    return { id, tokens };
  }

  /** What the owner sees: the notification's figures, its run's, and the site's hourly rollup. */
  async function figures(id: string) {
    const performance = (await h.t.request('GET', `/api/notifications/${id}/performance`, { token: h.owner.token })).body.data;
    const hourly = await h.t.ctx.db
      .selectFrom('stats_hourly')
      .select(['hour_start', 'delivered', 'clicked'])
      .where('site_id', '=', h.site.id)
      .where((eb) => eb.or([eb('delivered', '>', 0), eb('clicked', '>', 0)]))
      .orderBy('hour_start')
      .execute();
    return {
      notification: { delivered: performance.delivered, clicked: performance.clicked },
      run: { delivered: performance.runs[0].stats.delivered, clicked: performance.runs[0].stats.clicked },
      hourly: hourly.map((row) => ({ hour: new Date(Number(row.hour_start)).toISOString(), delivered: Number(row.delivered), clicked: Number(row.clicked) })),
    };
  }

  /** What the delivery rows say was delivered and clicked: what the counters must equal once folded. */
  async function rowsOf(id: string) {
    const row = await h.t.ctx.db
      .selectFrom('deliveries')
      .select((eb) => [eb.fn.count<number>('delivered_at').as('delivered'), eb.fn.count<number>('clicked_at').as('clicked')])
      .where('run_seq', 'in', runSeqsOfNotification(id))
      .executeTakeFirstOrThrow();
    return { delivered: Number(row.delivered), clicked: Number(row.clicked) };
  }

  const waiting = async () => Number((await h.t.ctx.db.selectFrom('uncounted_beacons').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  beforeAll(async () => {
    h = await createDeliveryHarness({ clock, engine: false });
    engine = startEngine(h.t.ctx, { scheduler: false, worker: true, pushClient: createPushClient(h.t.config, h.t.ctx.metrics) });
    // Claims due runs only: no due-work source, so nothing folds unless a test does.
    scheduler = new Scheduler(h.t.ctx, engine.queue);
    h.t.ctx.notificationClickedHooks = [...(h.t.ctx.notificationClickedHooks ?? []), countingHook];
    ctx = h.t.ctx;
    for (let i = 0; i < 30; i++) await h.subscribe();
  }, 120_000);
  afterAll(async () => {
    await engine?.close();
    await h?.close();
  });

  it('counts each beacon once, in the hour it came, when folded; replays count nothing; the click hooks hear each first click once', async () => {
    const { id, tokens } = await send('Hourly');
    expect(tokens).toHaveLength(30);

    // 10:20: 20 delivered beacons, and 5 of them again.
    clock.set(Date.parse('2026-06-01T10:20:00Z'));
    for (const token of tokens.slice(0, 20)) expect((await beacon('delivered', token)).body.data).toEqual({ counted: true });
    for (const token of tokens.slice(0, 5)) expect((await beacon('delivered', token)).body.data).toEqual({ counted: false });
    // 11:05: 8 clicks of delivered pushes, 4 of pushes whose delivered beacon never came (a delivery too), 3 replays.
    clock.set(Date.parse('2026-06-01T11:05:00Z'));
    for (const token of [...tokens.slice(0, 8), ...tokens.slice(20, 24)]) expect((await beacon('clicked', token)).body.data).toEqual({ counted: true });
    for (const token of [...tokens.slice(0, 2), tokens[20]!]) expect((await beacon('clicked', token)).body.data).toEqual({ counted: false });
    // A delivered beacon after the click counts nothing either.
    expect((await beacon('delivered', tokens[21]!)).body.data).toEqual({ counted: false });

    // Before the fold the figures are those of the last fold (none yet): a second behind, never wrong.
    expect(await rowsOf(id)).toEqual({ delivered: 24, clicked: 12 });
    expect(await figures(id)).toEqual({ notification: { delivered: 0, clicked: 0 }, run: { delivered: 0, clicked: 0 }, hourly: [] });
    expect(await waiting()).toBe(32);

    expect(await foldAllBeaconCounts(ctx)).toBe(32);
    const folded = {
      notification: { delivered: 24, clicked: 12 },
      run: { delivered: 24, clicked: 12 },
      hourly: [
        { hour: '2026-06-01T10:00:00.000Z', delivered: 20, clicked: 0 },
        { hour: '2026-06-01T11:00:00.000Z', delivered: 4, clicked: 12 },
      ],
    };
    expect(await figures(id)).toEqual(folded);
    expect(hookClicks.get(id)).toBe(12);
    expect(await waiting()).toBe(0);

    // Folding again adds nothing.
    expect(await foldAllBeaconCounts(ctx)).toBe(0);
    expect(await figures(id)).toEqual(folded);
    expect(hookClicks.get(id)).toBe(12);
  }, 60_000);

  it('a fold that fails half-way counts nothing; the next one counts every beacon once', async () => {
    const { id, tokens } = await send('Interrupted');
    clock.set(Date.parse('2026-06-01T12:10:00Z'));
    for (const token of tokens.slice(0, 10)) await beacon('delivered', token);
    for (const token of tokens.slice(5, 15)) await beacon('clicked', token);
    const before = (await figures(id)).hourly;

    // The fold has added to the run, the notification and the rollup when a hook fails (before the
    // test's counting hook, which writes outside the database): its transaction is rolled back, beacons and all.
    const failing = { ...ctx, notificationClickedHooks: [() => Promise.reject(new Error('the process died here')), ...ctx.notificationClickedHooks!] };
    await expect(foldBeaconCounts(failing)).rejects.toThrow('the process died here');
    expect(await figures(id)).toMatchObject({ notification: { delivered: 0, clicked: 0 }, run: { delivered: 0, clicked: 0 }, hourly: before });
    expect(hookClicks.get(id)).toBeUndefined();
    expect(await waiting()).toBe(20);

    expect(await foldAllBeaconCounts(ctx)).toBe(20);
    expect(await rowsOf(id)).toEqual({ delivered: 15, clicked: 10 });
    const after = await figures(id);
    expect(after.notification).toEqual({ delivered: 15, clicked: 10 });
    expect(after.run).toEqual({ delivered: 15, clicked: 10 });
    expect(after.hourly.find((row) => row.hour === '2026-06-01T12:00:00.000Z')).toEqual({ hour: '2026-06-01T12:00:00.000Z', delivered: 15, clicked: 10 });
    expect(hookClicks.get(id)).toBe(10);
  }, 60_000);

  it('two folders at once: each beacon is taken by one of them, counted once', async () => {
    const { id, tokens } = await send('Two folders');
    clock.set(Date.parse('2026-06-01T13:10:00Z'));
    for (const token of tokens) await beacon('delivered', token);

    // Folder A takes 10 beacons and stops inside its transaction (after adding to the run and the
    // notification, before the rollup); folder B starts meanwhile. On PostgreSQL B takes the 20 A
    // does not hold (SKIP LOCKED), then waits for A's row locks on the counters; on SQLite B's
    // transaction waits for A's. Either way: 10 + 20, never a beacon twice.
    let reached!: () => void;
    const atGate = new Promise<void>((resolve) => (reached = resolve));
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const held = {
      ...ctx,
      deliveryPorts: {
        ...ctx.deliveryPorts,
        addToSiteCounters: async (...args: Parameters<AppContext['deliveryPorts']['addToSiteCounters']>) => {
          reached();
          await gate;
          await ctx.deliveryPorts.addToSiteCounters(...args);
        },
      },
    };
    const a = foldBeaconCounts(held, 10);
    await atGate;
    const b = foldAllBeaconCounts(ctx);
    open();
    expect(await a).toBe(10);
    expect(await b).toBe(20);
    expect(await waiting()).toBe(0);
    const after = await figures(id);
    expect(after.notification).toEqual({ delivered: 30, clicked: 0 });
    expect(after.run).toEqual({ delivered: 30, clicked: 0 });
    expect(after.hourly.find((row) => row.hour === '2026-06-01T13:00:00.000Z')).toEqual({ hour: '2026-06-01T13:00:00.000Z', delivered: 30, clicked: 0 });
  }, 60_000);

  it('beacons racing each other and the folds: the counters end equal to the delivery rows, the hooks to the clicks', async () => {
    const { id, tokens } = await send('Racing');
    clock.set(Date.parse('2026-06-01T14:10:00Z'));
    // Each push: delivered and clicked at once, twice over; three folders run all the while.
    let sending = true;
    const folder = async () => {
      let folded = 0;
      while (sending) {
        folded += await foldBeaconCounts(ctx, 7);
        // SQLite answers synchronously: let the beacons' requests run between folds.
        await new Promise((resolve) => setImmediate(resolve));
      }
      return folded;
    };
    const folders = [folder(), folder(), folder()];
    const answers = await Promise.all(tokens.flatMap((token) => [beacon('delivered', token), beacon('clicked', token), beacon('clicked', token), beacon('delivered', token)]));
    sending = false;
    const foldedMeanwhile = (await Promise.all(folders)).reduce((sum, n) => sum + n, 0);
    const foldedAfter = await foldAllBeaconCounts(ctx);

    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    const counted = answers.filter((answer) => answer.body.data.counted).length;
    // Per push, one or two beacons count: a click alone (delivered with it), or delivered then click.
    expect(counted).toBeGreaterThanOrEqual(30);
    expect(counted).toBeLessThanOrEqual(60);
    expect(foldedMeanwhile + foldedAfter).toBe(counted);
    expect(await rowsOf(id)).toEqual({ delivered: 30, clicked: 30 });
    const after = await figures(id);
    expect(after.notification).toEqual({ delivered: 30, clicked: 30 });
    expect(after.run).toEqual({ delivered: 30, clicked: 30 });
    expect(after.hourly.find((row) => row.hour === '2026-06-01T14:00:00.000Z')).toEqual({ hour: '2026-06-01T14:00:00.000Z', delivered: 30, clicked: 30 });
    expect(hookClicks.get(id)).toBe(30);
  }, 60_000);

  it('a beacon of a site deleted before the fold is dropped, and does not hold up the others', async () => {
    const { id, tokens } = await send('Site gone');
    clock.set(Date.parse('2026-06-01T15:10:00Z'));
    await beacon('clicked', tokens[0]!);
    await h.t.ctx.db
      .insertInto('uncounted_beacons')
      .values({ site_id: 'a-deleted-site', notification_id: 'its-notification', run_id: 'its-run', at: clock.now(), delivered: 1, clicked: 1 })
      .execute();
    expect(await foldAllBeaconCounts(ctx)).toBe(2);
    expect(await waiting()).toBe(0);
    expect((await figures(id)).notification).toEqual({ delivered: 1, clicked: 1 });
    expect(hookClicks.get('its-notification')).toBeUndefined();
  }, 60_000);

  it('the scheduler folds on every tick (due-work source "beacon-counts"), more than one batch if need be', async () => {
    const { id, tokens } = await send('Scheduled fold');
    clock.set(Date.parse('2026-06-01T16:10:00Z'));
    for (const token of tokens.slice(0, 6)) await beacon('clicked', token);
    // More waiting than one fold takes (rows of the run the fold adds to as any other).
    const run = await h.t.ctx.db.selectFrom('notification_runs').select('id').where('notification_id', '=', id).executeTakeFirstOrThrow();
    const extra = FOLD_BATCH + 5;
    for (let from = 0; from < extra; from += 500) {
      const values = Array.from({ length: Math.min(500, extra - from) }, () => ({ site_id: h.site.id, notification_id: id, run_id: run.id, at: clock.now(), delivered: 1, clicked: 0 }));
      await h.t.ctx.db.insertInto('uncounted_beacons').values(values).execute();
    }
    const sources = featureDueWorkSources(h.t.ctx, engine.queue).filter((source) => source.name === 'beacon-counts');
    expect(sources).toHaveLength(1);
    await new Scheduler(h.t.ctx, engine.queue, sources).tick();
    expect(await waiting()).toBe(0);
    const after = await figures(id);
    expect(after.notification).toEqual({ delivered: 6 + extra, clicked: 6 });
    expect(after.run).toEqual({ delivered: 6 + extra, clicked: 6 });
    expect(hookClicks.get(id)).toBe(6);
  }, 60_000);
  it('beacons arriving together (one batch) are answered and counted as if each came alone, in the hour it came', async () => {
    const { id, tokens } = await send('Together');
    const tracking = createTrackingService(ctx);
    const lastDeliveredOf = async (token: string) => {
      const deliveryId = Number(token.split('.')[0]);
      const row = await ctx.db
        .selectFrom('deliveries')
        .innerJoin('subscribers', 'subscribers.seq', 'deliveries.subscriber_seq')
        .select('subscribers.last_delivered_at')
        .where('deliveries.id', '=', deliveryId)
        .executeTakeFirstOrThrow();
      return row.last_delivered_at === null ? null : Number(row.last_delivered_at);
    };
    const t = tokens as [string, string, string, string, string, string, string, string, string, string];
    const hourlyBefore = Object.fromEntries((await figures(id)).hourly.map((row) => [row.hour, row]));

    // Called in one turn of the event loop, so they wait for one batch. The
    // clock moves between calls: each beacon keeps the time it came.
    const at1659 = Date.parse('2026-06-01T16:59:00Z');
    const at1701 = Date.parse('2026-06-01T17:01:00Z');
    clock.set(at1659);
    const together = [
      tracking.record('delivered', t[0]),
      // Behind its delivered beacon in the same batch: the click counts, the delivery once.
      tracking.record('clicked', t[0]),
      tracking.record('delivered', t[1]),
      // A replay in the same batch counts nothing.
      tracking.record('delivered', t[1]),
    ];
    clock.set(at1701);
    together.push(
      // A click whose delivered beacon never came counts the delivery too.
      tracking.record('clicked', t[2]),
      tracking.record('delivered', t[3]),
    );
    expect((await Promise.all(together)).map((answer) => answer.counted)).toEqual([true, true, true, false, true, true]);
    // A batch of distinct deliveries only: replays of the batch before, and the click of a push delivered in it.
    const second = await Promise.all([
      ...t.slice(4, 10).map((token) => tracking.record('delivered', token)),
      tracking.record('clicked', t[0]),
      tracking.record('delivered', t[3]),
      tracking.record('clicked', t[1]),
    ]);
    expect(second.map((answer) => answer.counted)).toEqual([true, true, true, true, true, true, false, false, true]);

    expect(await rowsOf(id)).toEqual({ delivered: 10, clicked: 3 });
    expect(await lastDeliveredOf(t[0])).toBe(at1659);
    expect(await lastDeliveredOf(t[2])).toBe(at1701);
    await foldAllBeaconCounts(ctx);
    const after = await figures(id);
    expect(after.notification).toEqual({ delivered: 10, clicked: 3 });
    expect(after.run).toEqual({ delivered: 10, clicked: 3 });
    const hourlyAfter = Object.fromEntries(after.hourly.map((row) => [row.hour, row]));
    const added = (hour: string) => ({
      delivered: (hourlyAfter[hour]?.delivered ?? 0) - (hourlyBefore[hour]?.delivered ?? 0),
      clicked: (hourlyAfter[hour]?.clicked ?? 0) - (hourlyBefore[hour]?.clicked ?? 0),
    });
    expect(added('2026-06-01T16:00:00.000Z')).toEqual({ delivered: 2, clicked: 1 });
    expect(added('2026-06-01T17:00:00.000Z')).toEqual({ delivered: 2 + 6, clicked: 1 + 1 });
  }, 60_000);
});
