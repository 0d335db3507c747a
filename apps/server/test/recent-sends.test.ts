import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from './support/delivery-harness';
import type { TestSubscription } from './support/push-service';
import { waitFor } from './support/test-app';

// Spec §2 Dashboard "Recent Notifications" lists sent notifications by their
// sent date. A one-time notification is sent once; a recurring or triggered
// one sends again and again — its sent_at is its latest send, so it appears
// (and moves up) in Recent Notifications and the list shows when it last went
// out. (Triggered ones were missing from the dashboard before.)

const iso = (millis: number) => new Date(millis).toISOString();

describe('sent_at of recurring and triggered notifications (dashboard Recent Notifications)', () => {
  let h: DeliveryHarness;
  const start = Date.UTC(2026, 4, 4, 8, 0);
  const clock = new ManualClock(start);
  let subscription: TestSubscription;

  const request = (method: string, path: string, body?: unknown) => h.t.request(method, path, { token: h.owner.token, body });
  const recent = async () => (await request('GET', `/api/sites/${h.site.id}/analytics/dashboard`)).body.data.recentNotifications as Array<{ id: string; sent_at: string; sent_count: number }>;
  const sentAt = async (id: string) => (await request('GET', `/api/notifications/${id}`)).body.data.notification.sent_at as string | null;

  /** Ticks the scheduler and waits until no run of the notification is being sent. */
  async function tickAndSettle(notificationId: string, runs: number): Promise<void> {
    await h.engine.scheduler!.tick();
    await waitFor(
      async () => {
        const rows = await h.t.ctx.db.selectFrom('notification_runs').select('status').where('notification_id', '=', notificationId).execute();
        return rows.length === runs && rows.every((row) => row.status === 'completed') ? true : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 20 },
    );
  }

  beforeAll(async () => {
    h = await createDeliveryHarness({ clock });
    subscription = (await h.subscribe()).subscription;
  });
  afterAll(async () => h.close());

  it('a one-time notification keeps the time its send began', async () => {
    const created = await request('POST', `/api/sites/${h.site.id}/notifications`, notificationInput({ title: 'Once' }));
    const id = created.body.data.notification.id as string;
    expect((await request('POST', `/api/notifications/${id}/send`)).status).toBe(200);
    await h.waitForStatus(id, ['completed']);
    expect(await sentAt(id)).toBe(iso(start));
    clock.advance(60_000);
    expect((await recent()).map((n) => n.id)).toEqual([id]);
  });

  it('a recurring notification shows its latest occurrence, and moves up Recent Notifications with each one', async () => {
    const firstAt = start + 60 * 60_000;
    const created = await request(
      'POST',
      `/api/sites/${h.site.id}/notifications`,
      notificationInput({ type: 'RECURRING', title: 'Daily digest', recurring_schedule: { interval_type: 'DAILY', interval_value: 1, start_date: '2026-05-04T09:00', end_date: null } }),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.data.notification.id as string;
    expect(await sentAt(id)).toBeNull();
    expect((await recent()).map((n) => n.id)).not.toContain(id);

    clock.set(firstAt);
    await tickAndSettle(id, 1);
    expect(await sentAt(id)).toBe(iso(firstAt));
    const afterFirst = await recent();
    expect(afterFirst[0]).toMatchObject({ id, sent_at: iso(firstAt), sent_count: 1 });

    clock.set(firstAt + 86_400_000);
    await tickAndSettle(id, 2);
    expect(await sentAt(id)).toBe(iso(firstAt + 86_400_000));
    expect((await recent())[0]).toMatchObject({ id, sent_at: iso(firstAt + 86_400_000), sent_count: 2 });
    // Still scheduled: the next occurrence is to come.
    expect((await request('GET', `/api/notifications/${id}`)).body.data.notification.status).toBe('scheduled');
    await request('POST', `/api/notifications/${id}/cancel`);
  });

  it('a triggered notification shows when its event last sent it', async () => {
    const created = await request('POST', `/api/sites/${h.site.id}/notifications`, notificationInput({ type: 'TRIGGERED', title: 'Cart reminder', trigger: { event: 'cart_abandoned', delay_minutes: 0 } }));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.data.notification.id as string;
    const eventAt = clock.now() + 3 * 60_000;
    clock.set(eventAt);
    const tracked = await h.t.request('POST', `/api/public/sites/${h.site.id}/track`, {
      body: { endpoint: subscription.endpoint, event: 'cart_abandoned' },
      headers: { origin: 'https://push-shop.example' },
    });
    expect(tracked.status, JSON.stringify(tracked.body)).toBe(202);
    await tickAndSettle(id, 1);
    expect(await sentAt(id)).toBe(iso(eventAt));
    expect((await recent())[0]).toMatchObject({ id, sent_at: iso(eventAt), sent_count: 1 });
  });
});
