// A send's final status is the truth about all of it (docs/delivery.md,
// "Outcomes"): never "completed" while part of its audience failed, and never
// "sending" once nothing is left to send. The races: the fan-out's finish and
// the last batch's result landing at once, and the last two zone runs of a
// local-time send finishing together. On PostgreSQL they are played out on two
// connections, held at the worst moment by a hook after a query; on SQLite (one
// writer at a time) the same steps run in turn. Then an A/B test whose sample
// failed and whose rest was accepted, and its Retry.
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/schema';
import { writeOutcomes, type SortedOutcomes } from '../src/delivery/record-outcomes';
import { completeRunIfFinished, insertPendingDeliveries, insertRun } from '../src/delivery/runs';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from './support/delivery-harness';
import { waitFor } from './support/test-app';

const none = (): SortedOutcomes => ({ sent: [], failed: [], expired: [], skipped: [], retries: [] });

/** The same database, with a hook after each query's result (the n-th query of this handle, and its kind). */
function hooked(db: Kysely<Database>, after: (n: number, kind: string) => Promise<void> | void): Kysely<Database> {
  let n = 0;
  const kinds = new Map<string, string>();
  return db.withPlugin({
    transformQuery(args) {
      kinds.set(args.queryId.queryId, args.node.kind);
      return args.node;
    },
    async transformResult(args) {
      n += 1;
      await after(n, kinds.get(args.queryId.queryId) ?? '');
      return args.result;
    },
  });
}

describe('a send’s final status when its last results and finishes land together', () => {
  let h: DeliveryHarness;
  beforeAll(async () => {
    h = await createDeliveryHarness({ engine: false });
  });
  afterAll(async () => h?.close());
  const api = (method: string, url: string, body?: unknown) => h.t.request(method, url, { token: h.owner.token, ...(body === undefined ? {} : { body }) });

  /** A one-time notification sent now, its run made `sending` with its fan-out done over these subscribers. */
  async function sendingRun(subscribers: number) {
    const seqs: number[] = [];
    for (let i = 0; i < subscribers; i++) {
      const { subscriberId } = await h.subscribe();
      seqs.push(Number((await h.t.ctx.db.selectFrom('subscribers').select('seq').where('id', '=', subscriberId).executeTakeFirstOrThrow()).seq));
    }
    const id = (await api('POST', `/api/sites/${h.site.id}/notifications`, notificationInput())).body.data.notification.id;
    expect((await api('POST', `/api/notifications/${id}/send`)).status).toBe(200);
    const db = h.t.ctx.db;
    const now = Date.now();
    await db.updateTable('notification_runs').set({ status: 'sending', started_at: now, fanout_done: 1, total_count: subscribers, lease_until: now + 60_000 }).where('notification_id', '=', id).execute();
    await db.updateTable('notifications').set((eb) => ({ total_count: eb('total_count', '+', subscribers) })).where('id', '=', id).execute();
    const run = await db.selectFrom('notification_runs').selectAll().where('notification_id', '=', id).executeTakeFirstOrThrow();
    const ids = await insertPendingDeliveries(db, h.t.ctx.dbKind, run, seqs.map((seq) => ({ seq, variant: null })), now);
    return { id, run, ids, seqs };
  }

  it('the fan-out finishes as the last batch’s result (a failure) is written: the send ends "completed with errors"', async () => {
    const { id, run, ids, seqs } = await sendingRun(2);
    const deps = h.t.ctx;
    const kind = h.t.ctx.dbKind;
    // Batch 1: its delivery accepted.
    await writeOutcomes(deps, run, Date.now(), { ...none(), sent: [{ id: ids[0]!, pushService: 'other' }] });
    const claimed = { deliveryId: ids[1]!, subscriberSeq: seqs[1]!, sentTo: null, pushService: 'other' as const, attempts: 5 };
    const lastResult = () => writeOutcomes(deps, run, Date.now(), { ...none(), failed: [{ id: ids[1]!, pushService: 'other', code: 'server_error', error: '500 (gave up after 5 attempts)', subscriber: claimed }] });
    if (kind === 'postgres') {
      // The fan-out's finish (fan-out.ts) has read the run row when the last batch's result transaction starts.
      let reached!: () => void;
      const atGate = new Promise<void>((resolve) => (reached = resolve));
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const fanOutFinish = completeRunIfFinished(
        hooked(h.t.ctx.db, async (n) => {
          if (n === 1) {
            reached();
            await gate;
          }
        }),
        kind,
        run.id,
        Date.now(),
        h.t.ctx.deliveryPorts.runFinished,
      );
      await atGate;
      const result = lastResult();
      release();
      // Before the run row was locked first, the finish took the counts from before the failure: "completed".
      await Promise.all([fanOutFinish, result]);
    } else {
      await completeRunIfFinished(h.t.ctx.db, kind, run.id, Date.now(), h.t.ctx.deliveryPorts.runFinished);
      await lastResult();
    }
    // The last batch's finish (send-batch.ts, finishBatch).
    await completeRunIfFinished(h.t.ctx.db, kind, run.id, Date.now(), h.t.ctx.deliveryPorts.runFinished);

    const notification = (await api('GET', `/api/notifications/${id}`)).body.data.notification;
    expect(notification.counts).toMatchObject({ targeted: 2, sent: 1, failed: 1, pending: 0 });
    const performance = (await api('GET', `/api/notifications/${id}/performance`)).body.data;
    expect({ notification: notification.status, run: performance.runs[0].status }).toEqual({ notification: 'completed_with_errors', run: 'completed_with_errors' });
  });

  it('the last two zone runs of a local-time send finish together: the send ends "completed", not "sending" for ever', async () => {
    const { id, run, ids } = await sendingRun(2);
    const db = h.t.ctx.db;
    // The send was split into two zone runs (as splitByZone does): the first keeps one zone, a second run has the other.
    const second = crypto.randomUUID();
    await db.updateTable('notifications').set({ delivery_mode: 'subscriber_local_time', local_time: '09:00' }).where('id', '=', id).execute();
    await db.updateTable('notification_runs').set({ zones: '["Europe/Paris"]', zone_send_id: run.id, total_count: 1 }).where('id', '=', run.id).execute();
    await insertRun(db, { id: second, notification_id: id, site_id: run.site_id, dedupe_key: `${run.dedupe_key}@1`, due_at: run.due_at, segment_id: null, subscriber_id: null, zones: '["Asia/Tokyo"]', zone_send_id: run.id, created_at: Date.now() });
    const secondRun = await db.selectFrom('notification_runs').selectAll().where('id', '=', second).executeTakeFirstOrThrow();
    await db.updateTable('notification_runs').set({ status: 'sending', started_at: Date.now(), fanout_done: 1, total_count: 1, lease_until: Date.now() + 60_000 }).where('id', '=', second).execute();
    // Move the second delivery to the second run (each zone run has one subscriber).
    await db.updateTable('deliveries').set({ run_seq: secondRun.seq }).where('id', '=', ids[1]!).execute();
    const deps = h.t.ctx;
    await writeOutcomes(deps, run, Date.now(), { ...none(), sent: [{ id: ids[0]!, pushService: 'other' }] });
    await writeOutcomes(deps, secondRun, Date.now(), { ...none(), sent: [{ id: ids[1]!, pushService: 'other' }] });

    // Both zone runs' last batches finish at the same moment: each marks its run finished, then looks for open runs of the send.
    let arrived = 0;
    let bothThere!: () => void;
    const barrier = new Promise<void>((resolve) => (bothThere = resolve));
    const afterRunUpdate = async (_n: number, kind: string) => {
      if (kind !== 'UpdateQueryNode') return;
      arrived += 1;
      if (arrived === 2) bothThere();
      await barrier;
    };
    const kind = h.t.ctx.dbKind;
    // On PostgreSQL both wait, after marking their own run, until the other has too (before, each then saw the other still sending).
    const finished =
      kind === 'postgres'
        ? await Promise.all([
            completeRunIfFinished(hooked(db, afterRunUpdate), kind, run.id, Date.now(), h.t.ctx.deliveryPorts.runFinished),
            completeRunIfFinished(hooked(db, afterRunUpdate), kind, second, Date.now(), h.t.ctx.deliveryPorts.runFinished),
          ])
        : [await completeRunIfFinished(db, kind, run.id, Date.now(), h.t.ctx.deliveryPorts.runFinished), await completeRunIfFinished(db, kind, second, Date.now(), h.t.ctx.deliveryPorts.runFinished)];
    expect(finished).toEqual([true, true]);
    const runs = await db.selectFrom('notification_runs').select('status').where('notification_id', '=', id).execute();
    expect(runs.map((r) => r.status)).toEqual(['completed', 'completed']);
    const notification = (await api('GET', `/api/notifications/${id}`)).body.data.notification;
    expect(notification.counts).toMatchObject({ targeted: 2, sent: 2, pending: 0 });
    expect(notification.local_time_progress).toEqual({ zones: 2, zones_sent: 2 });
    expect(notification.status).toBe('completed');
  });
});

describe('an A/B send’s final status', () => {
  let h: DeliveryHarness;
  beforeAll(async () => {
    h = await createDeliveryHarness();
  });
  afterAll(async () => h?.close());
  const api = (method: string, url: string, body?: unknown) => h.t.request(method, url, { token: h.owner.token, ...(body === undefined ? {} : { body }) });
  const variant = (letter: string) => ({ title: `Sale ${letter}`, message: `Offer ${letter}`, destination_url: `https://push-shop.example/${letter.toLowerCase()}`, image_url: null });

  it('the sample failed (403), the rest was accepted: the send ends "completed with errors", and Retry sends the sample’s failures again', async () => {
    for (let i = 0; i < 10; i++) await h.subscribe();
    const created = await api('POST', `/api/sites/${h.site.id}/notifications`, notificationInput({ variants: [variant('A'), variant('B')], ab_test: { sample_percent: 20, decide_after_minutes: 60, metric: 'click_rate' } }));
    const id = created.body.data.notification.id;
    h.push.setAnswer({ status: 403, body: 'forbidden' });
    expect((await api('POST', `/api/notifications/${id}/send`)).status).toBe(200);
    const sample = await h.waitForStatus(id, ['completed', 'completed_with_errors', 'failed']);
    expect(sample.status).toBe('failed');
    h.push.setAnswer({ status: 201 });
    expect((await api('POST', `/api/notifications/${id}/ab-test/winner`, { variant_index: 0 })).status).toBe(200);
    await waitFor(
      async () => {
        const runs = await h.t.ctx.db.selectFrom('notification_runs').select('status').where('notification_id', '=', id).execute();
        return runs.length === 2 && runs.every((run) => !['pending', 'sending'].includes(run.status));
      },
      { timeoutMs: 20_000 },
    );
    const done = (await api('GET', `/api/notifications/${id}`)).body.data.notification;
    expect(done.counts).toMatchObject({ targeted: 10, sent: 8, failed: 2, pending: 0 });
    const list = (await api('GET', `/api/sites/${h.site.id}/notifications`)).body.data;
    // Two of the ten failed: the product promise is completed_with_errors, not the green "completed".
    expect({ get: done.status, list: list.notifications.find((n: { id: string }) => n.id === id).status }).toEqual({ get: 'completed_with_errors', list: 'completed_with_errors' });
    // Retry sends what failed in the sample, though the rest is the latest run.
    const retried = await api('POST', `/api/notifications/${id}/retry`);
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    const after = await h.waitForStatus(id, ['completed', 'completed_with_errors', 'failed']);
    expect({ status: after.status, counts: after.counts }).toMatchObject({ status: 'completed', counts: { targeted: 10, sent: 10, failed: 0, pending: 0 } });
  });
});
