import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from './support/delivery-harness';
import type { ReceivedPush } from './support/push-service';
import { waitFor } from './support/test-app';

// Issue 6 §2, clock jumps: the machine's clock moves across a due time, in
// either direction (a suspended VM resumed, an NTP correction, a wrong clock
// set right). Whatever was due is sent once; nothing already sent is sent
// again when the clock goes back; nothing is sent early. The forward jump of
// a one-time send and of a recurring schedule is covered in
// notifications-api.test.ts and recurring.test.ts; these are the backward
// jumps and the welcome drip.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const titleOf = (message: ReceivedPush) => (message.payload as { title: string }).title;

describe('clock jumps', () => {
  const clock = new ManualClock(Date.UTC(2026, 6, 1, 8, 0));
  let h: DeliveryHarness;
  const subscriptions: string[] = [];

  beforeAll(async () => {
    h = await createDeliveryHarness({ clock });
    for (let i = 0; i < 3; i++) subscriptions.push((await h.subscribe()).subscription.id);
  });
  afterAll(async () => h.close());

  /** Signs in again (a jump may pass the session's expiry). */
  async function signIn() {
    const response = await h.t.request('POST', '/api/auth/login', { body: { email: h.owner.email, password: h.owner.password } });
    expect(response.status).toBe(200);
    h.owner.token = response.body.data.token;
  }

  const runsSending = async () => (await h.t.ctx.db.selectFrom('notification_runs').select('id').where('status', '=', 'sending').executeTakeFirst()) !== undefined;

  /** Scheduler passes until nothing is being sent (and no due drip step waits for the one before it). */
  async function settle() {
    for (let pass = 0; pass < 25; pass++) {
      await h.engine.scheduler!.tick();
      await waitFor(async () => !(await runsSending()), { timeoutMs: 15_000 });
      const waiting = await h.t.ctx.db
        .selectFrom('notification_runs')
        .select('id')
        .where('status', '=', 'pending')
        .where('due_at', '<=', clock.now())
        .executeTakeFirst();
      if (!waiting) return;
    }
    throw new Error('runs kept waiting');
  }

  const messagesTitled = (title: string) => h.push.messages.filter((m) => titleOf(m) === title);

  it('a recurring notification: the clock going back after an occurrence does not send it again; the next one comes once, at its time', async () => {
    clock.set(Date.UTC(2026, 6, 1, 8, 0));
    await signIn();
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, {
      token: h.owner.token,
      body: notificationInput({ type: 'RECURRING', title: 'Daily digest', recurring_schedule: { interval_type: 'DAILY', interval_value: 1, start_date: '2026-07-01T09:00:00Z' } }),
    });
    expect(created.status).toBe(201);
    const id = created.body.data.notification.id;

    clock.set(Date.UTC(2026, 6, 1, 9, 0, 30));
    await settle();
    expect(messagesTitled('Daily digest')).toHaveLength(subscriptions.length);

    // An NTP correction puts the clock back 90 minutes, before the occurrence just sent.
    clock.set(Date.UTC(2026, 6, 1, 7, 30));
    await settle();
    clock.set(Date.UTC(2026, 6, 1, 9, 0, 30));
    await settle();
    expect(messagesTitled('Daily digest')).toHaveLength(subscriptions.length);

    // Not early: a minute before the next occurrence, still nothing.
    clock.set(Date.UTC(2026, 6, 2, 8, 59));
    await settle();
    expect(messagesTitled('Daily digest')).toHaveLength(subscriptions.length);
    clock.set(Date.UTC(2026, 6, 2, 9, 0));
    await settle();
    expect(messagesTitled('Daily digest')).toHaveLength(2 * subscriptions.length);

    const runs = await h.t.ctx.db.selectFrom('notification_runs').select(['dedupe_key', 'due_at']).where('notification_id', '=', id).orderBy('due_at').execute();
    expect(runs.map((r) => new Date(r.due_at).toISOString())).toEqual(['2026-07-01T09:00:00.000Z', '2026-07-02T09:00:00.000Z']);
    await h.t.request('POST', `/api/notifications/${id}/cancel`, { token: h.owner.token });
  });

  it('a one-time send: the clock going back past its time after it was sent does not send it again', async () => {
    clock.set(Date.UTC(2026, 7, 1, 8, 0));
    await signIn();
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, {
      token: h.owner.token,
      body: notificationInput({ title: 'Flash sale', scheduled_at: '2026-08-01T10:00:00Z' }),
    });
    const id = created.body.data.notification.id;
    clock.set(Date.UTC(2026, 7, 1, 10, 1));
    await settle();
    expect(messagesTitled('Flash sale')).toHaveLength(subscriptions.length);

    clock.set(Date.UTC(2026, 7, 1, 9, 0));
    await settle();
    clock.set(Date.UTC(2026, 7, 1, 10, 30));
    await settle();
    expect(messagesTitled('Flash sale')).toHaveLength(subscriptions.length);
    const notification = (await h.t.request('GET', `/api/notifications/${id}`, { token: h.owner.token })).body.data.notification;
    expect(notification.status).toBe('completed');
  });

  it('a welcome drip: a jump forward over every step sends each once, in order; a jump back sends nothing again', async () => {
    clock.set(Date.UTC(2026, 8, 1, 8, 0));
    await signIn();
    const step = (sequence_order: number, delay_minutes: number, title: string) => ({
      sequence_order,
      delay_minutes,
      notification: { title, message: `${title} message`, destination_url: `https://push-shop.example/${sequence_order}`, icon_url: null, image_url: null },
    });
    const campaign = await h.t.request('POST', `/api/sites/${h.site.id}/welcome-campaigns`, {
      token: h.owner.token,
      body: { name: 'Jumpy welcome', is_active: true, steps: [step(1, 0, 'Hello'), step(2, 60, 'An hour later'), step(3, 1440, 'A day later')] },
    });
    expect(campaign.status).toBe(201);
    const newcomer = (await h.subscribe()).subscription.id;
    await settle();
    const titles = () => h.push.messages.filter((m) => m.subscriptionId === newcomer).map(titleOf);
    expect(titles()).toEqual(['Hello']);

    // The machine sleeps three days: both later steps are overdue at once.
    clock.advance(3 * DAY);
    await settle();
    expect(titles()).toEqual(['Hello', 'An hour later', 'A day later']);

    // Then the clock is set back two days: nothing is sent again.
    clock.advance(-2 * DAY);
    await settle();
    clock.advance(2 * DAY + HOUR);
    await settle();
    expect(titles()).toEqual(['Hello', 'An hour later', 'A day later']);
    // Only the newcomer was enrolled; earlier subscribers got none of it.
    for (const id of subscriptions) expect(h.push.messages.filter((m) => m.subscriptionId === id && titleOf(m) === 'Hello')).toEqual([]);
  });
});
