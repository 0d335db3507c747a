import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runSeqsOfNotification } from '../../src/db/run-seq';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from '../support/delivery-harness';

// No push goes out after its lifetime (docs/delivery.md, "Sending, retries and
// back-pressure"): a retry whose time (backoff, Retry-After, a pause) would
// fall after the TTL since the run's start is not made; the delivery fails
// "not accepted within the message lifetime" instead.
describe('TTL and retries', () => {
  let h: DeliveryHarness;
  beforeAll(async () => {
    h = await createDeliveryHarness();
  });
  afterAll(async () => h?.close());
  beforeEach(() => h.push.reset());

  async function sendWithTtl(ttl: number): Promise<string> {
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput({ ttl_seconds: ttl }) });
    expect(created.status).toBe(201);
    const id = created.body.data.notification.id as string;
    expect((await h.t.request('POST', `/api/notifications/${id}/send`, { token: h.owner.token })).status).toBe(200);
    return id;
  }

  it('a 429 whose Retry-After ends after the TTL: the push is not sent after its TTL (it fails rate_limited)', async () => {
    const { subscription } = await h.subscribe();
    // First push: 429 with Retry-After 4 s; the TTL is 2 s. Every later push is accepted.
    h.push.scriptAnswers([{ status: 429, retryAfter: 4 }], subscription.id);
    const id = await sendWithTtl(2);
    const run = await h.t.ctx.db.selectFrom('notification_runs').select(['started_at']).where('notification_id', '=', id).executeTakeFirstOrThrow();
    const done = await h.waitForStatus(id, ['completed', 'completed_with_errors', 'failed'], 20_000);
    const accepted = h.push.messages.filter((m) => m.subscriptionId === subscription.id);
    const acceptedLate = accepted.filter((m) => m.receivedAt > run.started_at! + 2_000);
    const rows = await h.t.ctx.db.selectFrom('deliveries').select(['status', 'reason', 'attempts']).where('run_seq', 'in', runSeqsOfNotification(id)).execute();
    // What the docs promise: no push goes out once the TTL since the run's start has passed.
    expect({ acceptedLate: acceptedLate.length, status: done.status, rows }).toEqual({ acceptedLate: 0, status: 'failed', rows: [{ status: 'failed', reason: 'rate_limited', attempts: 1 }] });
  });

  it('a 500 whose backoff ends after the TTL: the push is not sent after its TTL', async () => {
    const { subscription } = await h.subscribe();
    // 500 with Retry-After 4 s (a waitMs, not an origin pause); TTL 2 s.
    h.push.scriptAnswers([{ status: 500, retryAfter: 4 }], subscription.id);
    const id = await sendWithTtl(2);
    const run = await h.t.ctx.db.selectFrom('notification_runs').select(['started_at']).where('notification_id', '=', id).executeTakeFirstOrThrow();
    await h.waitForStatus(id, ['completed', 'completed_with_errors', 'failed'], 20_000);
    const acceptedLate = h.push.messages.filter((m) => m.subscriptionId === subscription.id && m.receivedAt > run.started_at! + 2_000);
    expect(acceptedLate.length).toBe(0);
  });
});
