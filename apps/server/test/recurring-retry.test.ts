import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from './support/delivery-harness';
import { waitFor } from './support/test-app';

// A recurring notification ends in the state of all its occurrences, so its
// Retry re-sends what failed in any of them (docs/product.md, "Notifications").
describe('retry of a recurring notification completed with errors', () => {
  let h: DeliveryHarness;
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 8, 0));
  beforeAll(async () => {
    h = await createDeliveryHarness({ clock });
  });
  afterAll(async () => h.close());

  it('Retry is offered for completed_with_errors: it re-sends the failed deliveries, not "nothing to retry", when the failure was in an earlier occurrence', async () => {
    const sub = await h.subscribe();
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, {
      token: h.owner.token,
      body: notificationInput({ type: 'RECURRING', title: 'Two days', recurring_schedule: { interval_type: 'DAILY', interval_value: 1, start_date: '2026-06-01T09:00Z', end_date: '2026-06-02T10:00Z' } }),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.data.notification.id;
    const runs = () => h.t.ctx.db.selectFrom('notification_runs').select(['status', 'due_at']).where('notification_id', '=', id).orderBy('due_at').execute();
    // Day 1: the push service refuses it for good.
    h.push.setAnswer({ status: 400 }, sub.subscription.id);
    clock.set(Date.UTC(2026, 5, 1, 9, 0));
    await h.engine.scheduler!.tick();
    await waitFor(async () => (await runs()).length === 1 && (await runs())[0]!.status === 'failed', { timeoutMs: 20_000 });
    // Day 2: accepted.
    h.push.setAnswer({ status: 201 }, sub.subscription.id);
    clock.set(Date.UTC(2026, 5, 2, 9, 0));
    await h.engine.scheduler!.tick();
    const done = await h.waitForStatus(id, ['completed', 'completed_with_errors', 'failed']);
    expect(done.status).toBe('completed_with_errors');
    const retry = await h.t.request('POST', `/api/notifications/${id}/retry`, { token: h.owner.token });
    expect({ status: retry.status, message: retry.body.error?.message }).toEqual({ status: 200, message: undefined });
  });
});
