import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from './support/delivery-harness';
import { waitFor } from './support/test-app';

// A recurring notification ends with its last occurrence (spec §4, docs/
// product.md "Notifications"): "sending" while that occurrence goes out, then
// the state its counters say: never a green "completed" before it was sent,
// or when part of it failed.

describe('a recurring notification\u2019s final status', () => {
  const clock = new ManualClock(Date.parse('2026-05-01T00:00:00Z'));
  let h: DeliveryHarness;
  beforeAll(async () => {
    h = await createDeliveryHarness({ clock, env: { DELIVERY_MAX_ATTEMPTS: '1' } });
  });
  afterAll(async () => h?.close());

  const api = (method: string, url: string, body?: unknown) => h.t.request(method, url, { token: h.owner.token, ...(body === undefined ? {} : { body }) });

  it('is not "completed" (green) when part of its last occurrence failed, nor before that occurrence was sent', async () => {
    expect((await api('PATCH', `/api/sites/${h.site.id}`, { settings: { timezone: 'UTC' } })).status).toBe(200);
    await h.subscribe();
    const broken = await h.subscribe();
    // Answered late, so the occurrence is still on its way when it is read right after the tick.
    h.push.setAnswer({ status: 500, body: 'internal error', delayMs: 1_500 }, broken.subscription.id);
    const created = await api(
      'POST',
      `/api/sites/${h.site.id}/notifications`,
      notificationInput({ type: 'RECURRING', title: 'Once only', recurring_schedule: { interval_type: 'DAILY', interval_value: 1, start_date: '2026-05-01T09:00', end_date: '2026-05-01T12:00' } }),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.data.notification.id;

    clock.set(Date.parse('2026-05-01T09:00:00Z'));
    await h.engine.scheduler!.tick();
    // Right after the tick the occurrence is on its way: the notification says so.
    const right = (await api('GET', `/api/notifications/${id}`)).body.data.notification;
    const runsRightAfter = await h.t.ctx.db.selectFrom('notification_runs').select(['status', 'sent_count', 'failed_count']).where('notification_id', '=', id).execute();

    const finished = await waitFor(
      async () => {
        const runs = await h.t.ctx.db.selectFrom('notification_runs').select(['status']).where('notification_id', '=', id).execute();
        return runs.length === 1 && ['completed', 'completed_with_errors', 'failed'].includes(runs[0]!.status) ? runs : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 20 },
    );
    expect(finished[0]!.status).toBe('completed_with_errors');
    const after = (await api('GET', `/api/notifications/${id}`)).body.data.notification;
    const dash = (await api('GET', `/api/sites/${h.site.id}/analytics/dashboard`)).body.data;
    const recent = dash.recentNotifications.find((n: any) => n.id === id);
    expect(after.counts).toMatchObject({ targeted: 2, sent: 1, failed: 1 });
    // Part of the audience failed: not "completed".
    expect(after.status).not.toBe('completed');
    expect(recent.status).not.toBe('completed');
    expect(after.status).toBe('completed_with_errors');
    expect(recent.status).toBe('completed_with_errors');
    // Before its only occurrence had been sent, it was "sending", not "completed".
    expect(right.status).toBe('sending');
    expect(runsRightAfter).toHaveLength(1);
  });
});
