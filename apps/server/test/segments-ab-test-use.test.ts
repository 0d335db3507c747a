import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from './support/delivery-harness';
import { waitFor } from './support/test-app';

// A segment that an A/B test's rest will still be sent to (the test
// waits for its winner) may not be deleted (docs/product.md, "Segments":
// deleting a segment that anything still sends to is refused with 409).

const variant = (letter: string) => ({ title: `Sale ${letter}`, message: `Offer ${letter}`, destination_url: `https://push-shop.example/${letter.toLowerCase()}`, image_url: null });

describe('a segment an A/B test waiting for its winner still sends to', () => {
  let h: DeliveryHarness;
  afterEach(async () => h?.close());

  it('refuses to delete the segment while the A/B test still has its rest to send', async () => {
    const clock = new ManualClock(Date.UTC(2026, 5, 1, 8));
    h = await createDeliveryHarness({ clock });
    for (let i = 0; i < 20; i++) await h.subscribe();
    const segment = await h.t.request('POST', `/api/sites/${h.site.id}/segments`, { token: h.owner.token, body: { name: 'Firefox', rules: { browser: 'Firefox' } } });
    expect(segment.status).toBe(201);
    const segmentId = segment.body.data.segment.id;
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, {
      token: h.owner.token,
      body: notificationInput({ segment_id: segmentId, variants: [variant('A'), variant('B')], ab_test: { sample_percent: 50, decide_after_minutes: 60, metric: 'click_rate', decide: 'manual' } }),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.data.notification.id;
    expect((await h.t.request('POST', `/api/notifications/${id}/send`, { token: h.owner.token })).status).toBe(200);
    await h.waitForStatus(id, ['completed']);
    const runsOf = () => h.t.ctx.db.selectFrom('notification_runs').select(['status']).where('notification_id', '=', id).execute();
    await waitFor(async () => (await runsOf()).every((run) => !['pending', 'sending'].includes(run.status)), { timeoutMs: 20_000 });
    expect(h.push.messages).toHaveLength(10);

    const removed = await h.t.request('DELETE', `/api/segments/${segmentId}`, { token: h.owner.token });
    // What happens if it is let through: the winner is sent to nobody.
    if (removed.status === 200) {
      const picked = await h.t.request('POST', `/api/notifications/${id}/ab-test/winner`, { token: h.owner.token, body: { variant_index: 0 } });
      expect(picked.status).toBe(200);
      await h.engine.scheduler!.tick();
      await waitFor(async () => (await runsOf()).every((run) => !['pending', 'sending'].includes(run.status)), { timeoutMs: 20_000 });
      const rest = await h.t.ctx.db.selectFrom('notification_runs').select(['dedupe_key', 'status', 'total_count', 'last_error']).where('notification_id', '=', id).execute();
      console.log('rest after deletion', JSON.stringify(rest), 'pushes', h.push.messages.length);
    }
    expect(removed.status, JSON.stringify(removed.body)).toBe(409);
  });
});
