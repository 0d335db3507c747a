import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSeqOf } from '../../src/db/run-seq';
import { writeOutcomes } from '../../src/delivery/record-outcomes';
import { createPushClient } from '../../src/roles';
import { recordBeaconsInOneStatement, type BeaconWrite } from '../../src/features/tracking/repository';
import { createTrackingService } from '../../src/features/tracking/service';
import { InProcessQueue } from '../../src/jobs/in-process-queue';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from '../support/delivery-harness';
import { sessionsWaitingOnLocks } from '../support/lock-waits';
import { waitFor } from '../support/test-app';

// Batches of beacons lock rows other writers lock too, and must take them in
// the same order (db/lock-order.ts; docs/delivery.md, "How beacons are
// counted"): a deadlock costs PostgreSQL's deadlock_timeout (1 s) and the
// batch is then written beacon by beacon, just when beacons peak. On
// PostgreSQL each test counts the deadlocks the database broke meanwhile; on
// SQLite, one writer at a time, the same steps must end the same way.

describe('beacon batches take shared rows in key order', () => {
  let h: DeliveryHarness;
  beforeAll(async () => {
    h = await createDeliveryHarness();
    for (let i = 0; i < 60; i++) await h.subscribe();
  }, 120_000);
  afterAll(async () => h?.close());

  const deadlocksSoFar = async (): Promise<number> =>
    h.t.ctx.dbKind === 'postgres' ? Number((await sql<{ n: string }>`select deadlocks as n from pg_stat_database where datname = current_database()`.execute(h.t.ctx.db)).rows[0]!.n) : 0;

  /** The beacon token of each delivery pushed so far, by delivery id. */
  const tokens = new Map<number, string>();

  /** Sends a notification to everyone; its deliveries' ids, from the pushes' tokens. */
  async function send(title: string): Promise<{ id: string; deliveryIds: number[] }> {
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput({ title }) });
    const id = created.body.data.notification.id as string;
    await h.t.request('POST', `/api/notifications/${id}/send`, { token: h.owner.token });
    await h.waitForStatus(id, ['completed']);
    const deliveryIds: number[] = [];
    for (const message of h.push.messages) {
      const payload = message.payload as { tag: string; token: string };
      if (payload.tag !== `herald-${id}`) continue;
      const deliveryId = Number(payload.token.split('.')[0]);
      tokens.set(deliveryId, payload.token);
      deliveryIds.push(deliveryId);
    }
    return { id, deliveryIds };
  }

  /** One batch of delivered beacons: PostgreSQL's one statement; on SQLite the service's group commit (one writer, no lock order to keep). */
  async function recordBatch(beacons: BeaconWrite[]): Promise<number> {
    if (h.t.ctx.dbKind === 'postgres') return (await recordBeaconsInOneStatement(h.t.ctx.db, beacons)).size;
    const tracking = createTrackingService(h.t.ctx);
    const answers = await Promise.all(beacons.map((beacon) => tracking.record('delivered', tokens.get(beacon.deliveryId)!)));
    return answers.filter((answer) => answer.counted).length;
  }

  it('two batches of two sends to the same subscribers, at once, never deadlock on the subscribers', async () => {
    const a = await send('Morning');
    const b = await send('Evening');
    const before = await deadlocksSoFar();
    const shuffled = <T>(items: T[]) => items.map((item) => [Math.random(), item] as const).sort((x, y) => x[0] - y[0]).map(([, item]) => item);
    // Each round: two batches, one per send, of random subsets, so each locks its subscribers in an order of its own unless they are sorted.
    for (let round = 0; round < 40; round++) {
      await h.t.ctx.db.updateTable('deliveries').set({ delivered_at: null, clicked_at: null }).where('id', 'in', [...a.deliveryIds, ...b.deliveryIds]).execute();
      await h.t.ctx.db.updateTable('subscribers').set({ last_delivered_at: null }).where('site_id', '=', h.site.id).execute();
      const at = Date.now();
      const batch = (ids: number[]) => shuffled(ids).slice(0, 10 + Math.floor(Math.random() * 50)).map((deliveryId) => ({ deliveryId, type: 'delivered' as const, at }));
      const [first, second] = [batch(a.deliveryIds), batch(b.deliveryIds)];
      expect(await Promise.all([recordBatch(first), recordBatch(second)])).toEqual([first.length, second.length]);
    }
    // Before the subscribers were locked in seq order: 2 deadlocks in 40 rounds.
    expect(await deadlocksSoFar()).toBe(before);
  }, 120_000);

  it('a send’s result transaction and a batch of beacons for the same deliveries never deadlock', async () => {
    const { deliveryIds } = await send('Results');
    const [low, high] = deliveryIds.sort((x, y) => x - y) as [number, number];
    const db = h.t.ctx.db;
    const run = await db.selectFrom('notification_runs').selectAll().where('seq', '=', (await db.selectFrom('deliveries').select('run_seq').where('id', '=', low).executeTakeFirstOrThrow()).run_seq).executeTakeFirstOrThrow();
    // Both waiting for their results again; the first push service's answer names the higher id, so its statement comes first.
    await db.updateTable('deliveries').set({ status: 'pending', sent_at: null }).where('id', 'in', [low, high]).execute();
    const sorted = { sent: [{ id: high, pushService: 'fcm' as const }, { id: low, pushService: 'mozilla' as const }], skipped: [], failed: [], expired: [], retries: [] };
    const deps = { ...h.t.ctx, queue: new InProcessQueue(h.t.ctx.log), pushClient: createPushClient(h.t.config, h.t.ctx.metrics) };
    const before = await deadlocksSoFar();

    // A batch of beacons, as the PostgreSQL statement takes them: the lower id first, then (a moment later) the higher.
    let takeHigher!: () => void;
    const later = new Promise<void>((resolve) => (takeHigher = resolve));
    let tookLower!: () => void;
    const lowerTaken = new Promise<void>((resolve) => (tookLower = resolve));
    const beacons = db.transaction().execute(async (trx) => {
      await trx.updateTable('deliveries').set({ delivered_at: 1 }).where('id', '=', low).execute();
      tookLower();
      await later;
      await trx.updateTable('deliveries').set({ delivered_at: 1 }).where('id', '=', high).execute();
    });
    await lowerTaken;
    const results = writeOutcomes(deps, run, Date.now(), sorted);
    if (h.t.ctx.dbKind === 'postgres') {
      // The result transaction is waiting for the lower id: before, it held the higher one by then, and the two waited on each other.
      await waitFor(async () => ((await sessionsWaitingOnLocks(db)) > 0 ? true : undefined), { timeoutMs: 5_000 });
    }
    takeHigher();
    await Promise.all([beacons, results]);
    await deps.pushClient.close();
    expect(await deadlocksSoFar()).toBe(before);
    const rows = await db.selectFrom('deliveries').select(['status']).where('run_seq', '=', runSeqOf(run.id)).where('id', 'in', [low, high]).execute();
    expect(rows.map((row) => row.status)).toEqual(['sent', 'sent']);
  }, 60_000);

  it('a send’s result transaction deactivating gone subscribers and a batch of beacons never deadlock on the subscribers', async () => {
    const { deliveryIds } = await send('Gone');
    const db = h.t.ctx.db;
    const rows = await db
      .selectFrom('deliveries')
      .innerJoin('subscribers', 'subscribers.seq', 'deliveries.subscriber_seq')
      .select(['deliveries.id', 'deliveries.run_seq', 'subscribers.seq', 'subscribers.id as subscriberId', 'subscribers.endpoint_hash'])
      .where('deliveries.id', 'in', deliveryIds)
      .orderBy('subscribers.seq')
      .limit(2)
      .execute();
    const [low, high] = rows as [(typeof rows)[0], (typeof rows)[0]];
    const run = await db.selectFrom('notification_runs').selectAll().where('seq', '=', low.run_seq).executeTakeFirstOrThrow();
    await db.updateTable('deliveries').set({ status: 'pending', sent_at: null }).where('id', 'in', [low.id, high.id]).execute();
    const gone = (row: typeof low) => ({
      claimed: { deliveryId: Number(row.id), subscriberSeq: Number(row.seq), sentTo: { subscriberId: row.subscriberId, endpointHash: row.endpoint_hash }, pushService: 'fcm' as const, attempts: 1 },
      status: 410,
      reason: 'gone',
    });
    // Both answered 410; the push service's answer for the higher-numbered subscriber came first.
    const sorted = { sent: [], skipped: [], failed: [], expired: [gone(high), gone(low)], retries: [] };
    const deps = { ...h.t.ctx, queue: new InProcessQueue(h.t.ctx.log), pushClient: createPushClient(h.t.config, h.t.ctx.metrics) };
    const before = await deadlocksSoFar();

    // A batch of beacons of another send to the same subscribers locks them in seq order: the lower, then (a moment later) the higher.
    let takeHigher!: () => void;
    const later = new Promise<void>((resolve) => (takeHigher = resolve));
    let tookLower!: () => void;
    const lowerTaken = new Promise<void>((resolve) => (tookLower = resolve));
    const beacons = db.transaction().execute(async (trx) => {
      await trx.updateTable('subscribers').set({ last_delivered_at: 1 }).where('id', '=', low.subscriberId).execute();
      tookLower();
      await later;
      await trx.updateTable('subscribers').set({ last_delivered_at: 1 }).where('id', '=', high.subscriberId).execute();
    });
    await lowerTaken;
    const results = writeOutcomes(deps, run, Date.now(), sorted);
    if (h.t.ctx.dbKind === 'postgres') {
      // The result transaction waits for the lower-numbered subscriber: before, it held the higher one by then.
      await waitFor(async () => ((await sessionsWaitingOnLocks(db)) > 0 ? true : undefined), { timeoutMs: 5_000 });
    }
    takeHigher();
    await Promise.all([beacons, results]);
    await deps.pushClient.close();
    expect(await deadlocksSoFar()).toBe(before);
    const inactive = await db.selectFrom('subscribers').select('is_active').where('id', 'in', [low.subscriberId, high.subscriberId]).execute();
    expect(inactive.map((row) => row.is_active)).toEqual([0, 0]);
  }, 60_000);
});
