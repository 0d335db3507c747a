import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BullmqQueue } from '../../src/jobs/bullmq-queue';
import { startEngine } from '../../src/engine';
import { createPushClient } from '../../src/roles';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from '../support/delivery-harness';
import { startRedis, type RedisServer } from '../support/redis-server';

// The BullMQ adapter against a real redis-server: two engines (as two worker
// processes would) share one send through Redis, and each subscriber gets
// exactly one message.
describe('BullMQ queue over Redis', () => {
  let redis: RedisServer;
  let h: DeliveryHarness;
  beforeAll(async () => {
    redis = await startRedis();
    // The harness's 2 s lease makes crash tests quick; here nothing crashes, and
    // on a loaded machine a batch can outlive 2 s, after which a second
    // worker may rightly take it over (docs/delivery.md, "What can be lost or
    // doubled": a worker paused beyond its lease). 30 s keeps this test about
    // sharing, not about stalls.
    h = await createDeliveryHarness({ env: { REDIS_URL: redis.url, DELIVERY_LEASE_SECONDS: '30' } });
  });
  afterAll(async () => {
    await h?.close();
    await redis?.stop();
  });

  it('uses BullMQ when REDIS_URL is set', () => {
    expect(h.engine.queue).toBeInstanceOf(BullmqQueue);
  });

  it('shares a send between two worker engines, exactly once per subscriber', async () => {
    const second = startEngine(h.t.ctx, { scheduler: false, worker: true, pushClient: createPushClient(h.t.config) });
    try {
      const subscribers = [];
      for (let i = 0; i < 1500; i++) subscribers.push(await h.subscribe());
      const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput() });
      const id = created.body.data.notification.id;
      await h.t.request('POST', `/api/notifications/${id}/send`, { token: h.owner.token });
      const done = await h.waitForStatus(id, ['completed', 'failed'], 60_000);
      expect(done.stats).toMatchObject({ total: 1500, sent: 1500, failed: 0 });
      const counts = new Map<string, number>();
      for (const m of h.push.messages) counts.set(m.subscriptionId, (counts.get(m.subscriptionId) ?? 0) + 1);
      expect(counts.size).toBe(1500);
      expect([...counts.values()].every((n) => n === 1)).toBe(true);
    } finally {
      await second.close();
    }
  }, 120_000);
});
