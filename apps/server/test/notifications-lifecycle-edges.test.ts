import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from './support/delivery-harness';
import { waitFor } from './support/test-app';

// The notification state machine at its edges (spec §4; docs/product.md,
// "Notifications" and "Recurring"): duplicate only of what ended, dates that
// do not exist refused with or without an offset, a paused schedule past its
// end ends, a schedule re-saved as read keeps its wall time (DST gap), and one
// occurrence split by zone goes out with one content.
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('notification lifecycle', () => {
  let h: DeliveryHarness;
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 8, 0));
  beforeAll(async () => {
    h = await createDeliveryHarness({ clock });
  });
  afterAll(async () => h.close());

  const create = async (body: Record<string, unknown>) => {
    const r = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput(body) });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body.data.notification;
  };
  const get = async (id: string) => (await h.t.request('GET', `/api/notifications/${id}`, { token: h.owner.token })).body.data.notification;
  const signIn = async () => {
    const r = await h.t.request('POST', '/api/auth/login', { body: { email: h.owner.email, password: h.owner.password } });
    expect(r.status).toBe(200);
    h.owner.token = r.body.data.token;
  };
  const setTz = async (timezone: string) => {
    await signIn();
    expect((await h.t.request('PATCH', `/api/sites/${h.site.id}`, { token: h.owner.token, body: { settings: { timezone } } })).status).toBe(200);
  };

  it('spec §4: duplicate is for completed, cancelled and failed notifications; a draft, a scheduled or a sending one is refused (409)', async () => {
    clock.set(Date.UTC(2026, 5, 1, 8, 0));
    await signIn();
    const draft = await create({ title: 'Dup draft' });
    const scheduled = await create({ title: 'Dup scheduled', scheduled_at: new Date(clock.now() + HOUR).toISOString() });
    const sending = await create({ title: 'Dup sending' });
    await h.t.ctx.db.updateTable('notifications').set({ status: 'sending' }).where('id', '=', sending.id).execute();
    const statuses: Record<string, number> = {};
    for (const n of [draft, scheduled, sending]) {
      const r = await h.t.request('POST', `/api/notifications/${n.id}/duplicate`, { token: h.owner.token });
      statuses[n.title] = r.status;
    }
    expect(statuses).toEqual({ 'Dup draft': 409, 'Dup scheduled': 409, 'Dup sending': 409 });
  });

  it('refuses scheduled_at for a day that does not exist when it carries an offset (2026-02-30T09:00Z), as it does without one', async () => {
    clock.set(Date.UTC(2026, 1, 25, 8, 0));
    await setTz('UTC');
    const local = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput({ scheduled_at: '2026-02-30T09:00' }) });
    expect(local.status).toBe(400);
    const withOffset = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput({ scheduled_at: '2026-02-30T09:00:00Z' }) });
    expect({ status: withOffset.status, scheduled_at: withOffset.body.data?.notification?.scheduled_at }).toEqual({ status: 400, scheduled_at: undefined });
  });

  it('a paused recurring notification whose end date has passed is not left "scheduled" forever', async () => {
    clock.set(Date.UTC(2026, 6, 1, 8, 0));
    await setTz('UTC');
    const n = await create({
      type: 'RECURRING',
      title: 'Paused then ended',
      recurring_schedule: { interval_type: 'DAILY', interval_value: 1, start_date: '2026-07-01T09:00', end_date: '2026-07-03T10:00' },
    });
    const paused = await h.t.request('PATCH', `/api/notifications/${n.id}`, { token: h.owner.token, body: { recurring_schedule: { is_active: false } } });
    expect(paused.status).toBe(200);
    clock.set(Date.UTC(2026, 6, 10, 8, 0));
    await signIn();
    await h.engine.scheduler!.tick();
    await h.engine.scheduler!.tick();
    const resumed = await h.t.request('PATCH', `/api/notifications/${n.id}`, { token: h.owner.token, body: { recurring_schedule: { is_active: true } } });
    const after = await get(n.id);
    // Ended: nothing left to resume, and a completed notification is not edited (409).
    expect({ resume: resumed.status, status: after.status }).toEqual({ resume: 409, status: 'completed' });
  });

  it('re-saving a recurring schedule exactly as GET returns it does not move its occurrences (start typed inside a DST gap)', async () => {
    clock.set(Date.UTC(2026, 2, 28, 12, 0));
    await setTz('Europe/Paris');
    const schedule = { interval_type: 'DAILY', interval_value: 1, start_date: '2026-03-29T02:30', end_date: null };
    const n = await create({ type: 'RECURRING', title: 'Gap start', recurring_schedule: schedule });
    const control = await create({ type: 'RECURRING', title: 'Gap control', recurring_schedule: schedule });
    // Past the first occurrence (01:30Z, 03:30 CEST: after the gap), which the scheduler fires: both wait for the 30th.
    clock.set(Date.UTC(2026, 2, 29, 12, 0));
    await h.engine.scheduler!.tick();
    await signIn();
    const read = (await get(n.id)).recurringSchedule;
    const asRead = await h.t.request('PATCH', `/api/notifications/${n.id}`, {
      token: h.owner.token,
      body: { title: 'Gap start edited', recurring_schedule: { interval_type: read.intervalType, interval_value: read.intervalValue, start_date: read.startDate, end_date: read.endDate } },
    });
    const asTyped = await h.t.request('PATCH', `/api/notifications/${control.id}`, { token: h.owner.token, body: { title: 'Gap control edited', recurring_schedule: schedule } });
    // 30 March 02:30 CEST is 00:30Z: the wall time the owner typed.
    expect(asTyped.body.data.notification.recurringSchedule.nextRunAt).toBe('2026-03-30T00:30:00.000Z');
    expect(asRead.body.data.notification.recurringSchedule.nextRunAt).toBe('2026-03-30T00:30:00.000Z');
  });

  it('an occurrence of a local-time recurring notification goes out with one content: no edit between its zones', async () => {
    clock.set(Date.UTC(2026, 7, 1, 8, 0));
    await setTz('UTC');
    const tokyo = await h.subscribe();
    const newYork = await h.subscribe();
    await h.t.ctx.db.updateTable('subscribers').set({ timezone: 'Asia/Tokyo' }).where('id', '=', tokyo.subscriberId).execute();
    await h.t.ctx.db.updateTable('subscribers').set({ timezone: 'America/New_York' }).where('id', '=', newYork.subscriberId).execute();
    // Other subscribers of earlier tests (Europe/Paris) are in the audience too; only these two are checked.
    const n = await create({
      type: 'RECURRING',
      title: 'Zone content before',
      recurring_schedule: { interval_type: 'DAILY', interval_value: 1, start_date: '2026-08-01T08:30', end_date: null },
      delivery: { mode: 'subscriber_local_time', local_time: '09:00' },
    });
    clock.set(Date.UTC(2026, 7, 1, 8, 30));
    await h.engine.scheduler!.tick();
    // 09:00 EDT = 13:00Z on 1 August; 09:00 JST = 00:00Z on 2 August.
    await waitFor(async () => (await h.t.ctx.db.selectFrom('notification_runs').select('id').where('notification_id', '=', n.id).execute()).length >= 2, { timeoutMs: 20_000 });
    clock.set(Date.UTC(2026, 7, 1, 13, 0));
    await h.engine.scheduler!.tick();
    // Only this notification's pushes: the recurring notifications of the tests above keep sending to everyone.
    const titleOf = (sub: { subscription: { id: string } }) =>
      h.push.messages
        .filter((m) => m.subscriptionId === sub.subscription.id)
        .map((m) => (m.payload as { title: string }).title)
        .filter((title) => title.startsWith('Zone content'));
    // The clock moves a second per poll: a push that timed out on a loaded machine is retried after a backoff on
    // this clock (docs/delivery.md, "Retries"), which a clock standing still would never reach.
    const received = (sub: { subscription: { id: string } }) =>
      waitFor(
        () => {
          if (titleOf(sub).length === 1) return true;
          clock.advance(1_000);
          return undefined;
        },
        { timeoutMs: 20_000, intervalMs: 25 },
      ).catch(async (error: Error) => {
        const runs = await h.t.ctx.db.selectFrom('notification_runs').select(['due_at', 'status', 'zones', 'total_count', 'sent_count', 'failed_count']).where('notification_id', '=', n.id).orderBy('due_at').execute();
        throw new Error(`${error.message} at ${new Date(clock.now()).toISOString()}; runs ${JSON.stringify(runs)}`);
      });
    await received(newYork);
    await waitFor(async () => (await h.t.ctx.db.selectFrom('notification_runs').select('id').where('notification_id', '=', n.id).where('status', '=', 'sending').execute()).length === 0, { timeoutMs: 20_000 });
    const edit = await h.t.request('PATCH', `/api/notifications/${n.id}`, { token: h.owner.token, body: { title: 'Zone content after' } });
    clock.set(Date.UTC(2026, 7, 2, 0, 0));
    await h.engine.scheduler!.tick();
    await received(tokyo);
    // One occurrence, one content: either the edit is refused, or it waits for the next occurrence.
    expect({ edit: edit.status, newYork: titleOf(newYork), tokyo: titleOf(tokyo) }).toEqual({ edit: 409, newYork: ['Zone content before'], tokyo: ['Zone content before'] });
  });
});
