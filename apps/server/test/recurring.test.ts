import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/database';
import { featureDueWorkSources } from '../src/engine';
import { Scheduler } from '../src/jobs/scheduler';
import { ManualClock } from '../src/platform/clock';
import { foldBeacons } from './support/beacon-counts';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from './support/delivery-harness';
import type { ReceivedPush } from './support/push-service';
import { waitFor } from './support/test-app';

// Issue 4 §1: recurring notifications. Occurrence k = start + k × interval in
// the site's local wall time; each occurrence is its own run (own stats),
// created once however many schedulers tick.


interface RunView {
  dedupe_key: string;
  due_at: number;
  status: string;
  sent_count: number;
}

function recurringInput(schedule: Record<string, unknown>, overrides: Record<string, unknown> = {}) {
  return notificationInput({ type: 'RECURRING', recurring_schedule: schedule, ...overrides });
}

async function signIn(h: DeliveryHarness): Promise<void> {
  const response = await h.t.request('POST', '/api/auth/login', { body: { email: h.owner.email, password: h.owner.password } });
  expect(response.status).toBe(200);
  h.owner.token = response.body.data.token;
}

async function setSiteTimezone(h: DeliveryHarness, timezone: string): Promise<void> {
  const response = await h.t.request('PATCH', `/api/sites/${h.site.id}`, { token: h.owner.token, body: { settings: { timezone } } });
  expect(response.status).toBe(200);
}

function runsOf(h: DeliveryHarness, notificationId: string): Promise<RunView[]> {
  return h.t.ctx.db
    .selectFrom('notification_runs')
    .select(['dedupe_key', 'due_at', 'status', 'sent_count'])
    .where('notification_id', '=', notificationId)
    .orderBy('due_at')
    .execute();
}

/** Waits until the notification has `count` runs, all finished. */
async function waitForFinishedRuns(h: DeliveryHarness, notificationId: string, count: number): Promise<RunView[]> {
  return waitFor(
    async () => {
      const runs = await runsOf(h, notificationId);
      return runs.length === count && runs.every((run) => run.status === 'completed' || run.status === 'failed') ? runs : undefined;
    },
    { timeoutMs: 15_000, intervalMs: 20 },
  );
}

async function getNotification(h: DeliveryHarness, id: string) {
  const response = await h.t.request('GET', `/api/notifications/${id}`, { token: h.owner.token });
  expect(response.status).toBe(200);
  return response.body.data.notification;
}

const iso = (millis: number) => new Date(millis).toISOString();
const payloadOf = (message: ReceivedPush) => message.payload as { title: string; token: string };

describe('recurring notifications', () => {
  let h: DeliveryHarness;
  const clock = new ManualClock(Date.UTC(2026, 0, 10, 12));
  let subscriberIds: string[] = [];

  beforeAll(async () => {
    h = await createDeliveryHarness({ clock });
    subscriberIds = [(await h.subscribe()).subscriberId, (await h.subscribe()).subscriberId];
  });
  afterAll(async () => h.close());

  /**
   * Creates the notification with the clock before its start, then for each
   * expected instant: one millisecond before, a tick creates nothing; at the
   * instant, a tick creates exactly one run due then, sent to everyone.
   */
  async function expectOccurrences(
    name: string,
    timezone: string,
    createdAt: number,
    schedule: Record<string, unknown>,
    expected: string[],
  ): Promise<string> {
    clock.set(createdAt);
    await signIn(h);
    await setSiteTimezone(h, timezone);
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: recurringInput(schedule, { title: name }) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const notification = created.body.data.notification;
    expect(notification.status).toBe('scheduled');
    expect(notification.recurringSchedule).toMatchObject({ intervalType: schedule.interval_type, intervalValue: schedule.interval_value, isActive: true, nextRunAt: expected[0] });

    for (const [index, instant] of expected.entries()) {
      const at = Date.parse(instant);
      clock.set(at - 1);
      await h.engine.scheduler!.tick();
      expect(await runsOf(h, notification.id), `${name}: nothing before ${instant}`).toHaveLength(index);
      clock.set(at);
      await h.engine.scheduler!.tick();
      const runs = await waitForFinishedRuns(h, notification.id, index + 1);
      expect(iso(runs[index]!.due_at), name).toBe(instant);
      expect(runs[index]!.sent_count).toBe(subscriberIds.length);
    }
    const messages = h.push.messages.filter((message) => payloadOf(message).title === name);
    expect(messages).toHaveLength(expected.length * subscriberIds.length);
    await signIn(h);
    expect((await h.t.request('POST', `/api/notifications/${notification.id}/cancel`, { token: h.owner.token })).status).toBe(200);
    return notification.id;
  }

  it('keeps the local clock time across both daylight-saving changes in Europe/Paris and America/New_York', async () => {
    const cases: Array<[string, string, string, Record<string, unknown>, string[]]> = [
      ['Paris daily, spring', 'Europe/Paris', '2026-03-27T06:00:00Z', { interval_type: 'DAILY', interval_value: 1, start_date: '2026-03-27T09:00', end_date: null }, [
        '2026-03-27T08:00:00.000Z',
        '2026-03-28T08:00:00.000Z',
        '2026-03-29T07:00:00.000Z',
        '2026-03-30T07:00:00.000Z',
      ]],
      ['Paris daily, autumn', 'Europe/Paris', '2026-10-24T00:00:00Z', { interval_type: 'DAILY', interval_value: 1, start_date: '2026-10-24T09:00', end_date: null }, [
        '2026-10-24T07:00:00.000Z',
        '2026-10-25T08:00:00.000Z',
      ]],
      ['Paris weekly, autumn', 'Europe/Paris', '2026-10-19T00:00:00Z', { interval_type: 'WEEKLY', interval_value: 1, start_date: '2026-10-19T18:30', end_date: null }, [
        '2026-10-19T16:30:00.000Z',
        '2026-10-26T17:30:00.000Z',
      ]],
      ['Paris monthly, spring', 'Europe/Paris', '2026-02-15T00:00:00Z', { interval_type: 'MONTHLY', interval_value: 1, start_date: '2026-02-15T09:00', end_date: null }, [
        '2026-02-15T08:00:00.000Z',
        '2026-03-15T08:00:00.000Z',
        '2026-04-15T07:00:00.000Z',
      ]],
      ['New York daily, autumn', 'America/New_York', '2026-10-31T00:00:00Z', { interval_type: 'DAILY', interval_value: 1, start_date: '2026-10-31T09:00', end_date: null }, [
        '2026-10-31T13:00:00.000Z',
        '2026-11-01T14:00:00.000Z',
        '2026-11-02T14:00:00.000Z',
      ]],
      ['New York weekly, spring', 'America/New_York', '2026-03-02T00:00:00Z', { interval_type: 'WEEKLY', interval_value: 1, start_date: '2026-03-02T09:00', end_date: null }, [
        '2026-03-02T14:00:00.000Z',
        '2026-03-09T13:00:00.000Z',
      ]],
      ['New York monthly, autumn', 'America/New_York', '2026-10-15T00:00:00Z', { interval_type: 'MONTHLY', interval_value: 1, start_date: '2026-10-15T09:00', end_date: null }, [
        '2026-10-15T13:00:00.000Z',
        '2026-11-15T14:00:00.000Z',
      ]],
    ];
    for (const [name, zone, createdAt, schedule, expected] of cases) await expectOccurrences(name, zone, Date.parse(createdAt), schedule, expected);
  }, 120_000);

  it('monthly from January 31 lands on February 28 (29 in a leap year) and returns to March 31', async () => {
    await expectOccurrences('Monthly 31st', 'Europe/Paris', Date.parse('2026-01-30T00:00:00Z'), { interval_type: 'MONTHLY', interval_value: 1, start_date: '2026-01-31T10:00' }, [
      '2026-01-31T09:00:00.000Z',
      '2026-02-28T09:00:00.000Z',
      '2026-03-31T08:00:00.000Z',
    ]);
    await expectOccurrences('Monthly 31st, leap', 'America/New_York', Date.parse('2028-01-30T00:00:00Z'), { interval_type: 'MONTHLY', interval_value: 1, start_date: '2028-01-31T09:00' }, [
      '2028-01-31T14:00:00.000Z',
      '2028-02-29T14:00:00.000Z',
      '2028-03-31T13:00:00.000Z',
    ]);
  }, 60_000);

  it('repeats every N intervals and stops after the end date (the notification is then completed)', async () => {
    clock.set(Date.parse('2026-05-01T00:00:00Z'));
    await signIn(h);
    await setSiteTimezone(h, 'UTC');
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, {
      token: h.owner.token,
      body: recurringInput({ interval_type: 'DAILY', interval_value: '2', start_date: '2026-05-01T09:00', end_date: '2026-05-05T09:00' }, { title: 'Every other day' }),
    });
    expect(created.status).toBe(201);
    const id = created.body.data.notification.id;
    expect(created.body.data.notification.recurringSchedule).toEqual({
      intervalType: 'DAILY',
      intervalValue: 2,
      startDate: '2026-05-01T09:00:00.000Z',
      endDate: '2026-05-05T09:00:00.000Z',
      isActive: true,
      nextRunAt: '2026-05-01T09:00:00.000Z',
    });

    for (const [count, day] of [[1, '01'], [1, '02'], [2, '03'], [2, '04'], [3, '05']] as const) {
      clock.set(Date.parse(`2026-05-${day}T09:00:00Z`));
      await h.engine.scheduler!.tick();
      const runs = await waitForFinishedRuns(h, id, count);
      expect(runs.map((run) => iso(run.due_at))).toEqual(['2026-05-01T09:00:00.000Z', '2026-05-03T09:00:00.000Z', '2026-05-05T09:00:00.000Z'].slice(0, count));
    }
    const finished = await getNotification(h, id);
    expect(finished.status).toBe('completed');
    expect(finished.recurringSchedule).toMatchObject({ isActive: false, nextRunAt: null });
    // Its "sent" date is the latest occurrence.
    expect(finished.sent_at).toBe('2026-05-05T09:00:00.000Z');

    clock.set(Date.parse('2026-05-09T09:00:00Z'));
    await h.engine.scheduler!.tick();
    expect(await runsOf(h, id)).toHaveLength(3);
    // Spec §4: a completed notification is view-only.
    expect((await h.t.request('PATCH', `/api/notifications/${id}`, { token: h.owner.token, body: { title: 'Again' } })).status).toBe(409);
  });

  it('gives every run its own stats, listed by the performance route', async () => {
    clock.set(Date.parse('2026-06-01T08:00:00Z'));
    await signIn(h);
    await setSiteTimezone(h, 'UTC');
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, {
      token: h.owner.token,
      body: recurringInput({ interval_type: 'DAILY', interval_value: 1, start_date: '2026-06-01T09:00' }, { title: 'Daily stats' }),
    });
    const id = created.body.data.notification.id;
    for (const day of ['01', '02']) {
      clock.set(Date.parse(`2026-06-${day}T09:00:00Z`));
      await h.engine.scheduler!.tick();
    }
    await waitForFinishedRuns(h, id, 2);

    // One click on the first occurrence only: it counts for that run.
    const first = h.push.messages.find((message) => payloadOf(message).title === 'Daily stats')!;
    const clicked = await h.t.request('POST', '/api/public/events', { body: { type: 'clicked', token: payloadOf(first).token } });
    expect(clicked.body.data).toEqual({ counted: true });
    await foldBeacons(h.t.ctx);

    const performance = await h.t.request('GET', `/api/notifications/${id}/performance`, { token: h.owner.token });
    expect(performance.status).toBe(200);
    expect(performance.body.data).toMatchObject({ sent: 4, delivered: 1, clicked: 1 });
    const runs = performance.body.data.runs;
    expect(runs.map((run: { due_at: string }) => run.due_at)).toEqual(['2026-06-02T09:00:00.000Z', '2026-06-01T09:00:00.000Z']);
    expect(runs[0].stats).toMatchObject({ total: 2, sent: 2, clicked: 0 });
    expect(runs[1].stats).toMatchObject({ total: 2, sent: 2, clicked: 1, delivered: 1 });
    await h.t.request('POST', `/api/notifications/${id}/cancel`, { token: h.owner.token });
  });

  it('pauses and resumes with PATCH recurring_schedule.is_active; occurrences that fell while paused are not sent', async () => {
    clock.set(Date.parse('2026-07-01T08:00:00Z'));
    await signIn(h);
    await setSiteTimezone(h, 'UTC');
    const schedule = { interval_type: 'DAILY', interval_value: 1, start_date: '2026-07-01T09:00', end_date: null };
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: recurringInput(schedule, { title: 'Pausable' }) });
    const id = created.body.data.notification.id;
    clock.set(Date.parse('2026-07-01T09:00:00Z'));
    await h.engine.scheduler!.tick();
    await waitForFinishedRuns(h, id, 1);

    const paused = await h.t.request('PATCH', `/api/notifications/${id}`, { token: h.owner.token, body: { recurring_schedule: { is_active: false } } });
    expect(paused.status).toBe(200);
    expect(paused.body.data.notification).toMatchObject({ status: 'scheduled', recurringSchedule: { isActive: false, nextRunAt: null } });

    // The edit form resends the whole schedule without is_active: it stays paused.
    const edited = await h.t.request('PATCH', `/api/notifications/${id}`, { token: h.owner.token, body: recurringInput(schedule, { title: 'Pausable', scheduled_at: null }) });
    expect(edited.status).toBe(200);
    expect(edited.body.data.notification.recurringSchedule).toMatchObject({ isActive: false, nextRunAt: null });

    for (const day of ['02', '03', '04']) {
      clock.set(Date.parse(`2026-07-${day}T09:00:00Z`));
      await h.engine.scheduler!.tick();
    }
    expect(await runsOf(h, id)).toHaveLength(1);

    clock.set(Date.parse('2026-07-04T12:00:00Z'));
    const resumed = await h.t.request('PATCH', `/api/notifications/${id}`, { token: h.owner.token, body: { recurring_schedule: { is_active: true } } });
    expect(resumed.body.data.notification.recurringSchedule).toMatchObject({ isActive: true, nextRunAt: '2026-07-05T09:00:00.000Z' });
    await h.engine.scheduler!.tick();
    expect(await runsOf(h, id)).toHaveLength(1);

    clock.set(Date.parse('2026-07-05T09:00:00Z'));
    await h.engine.scheduler!.tick();
    const runs = await waitForFinishedRuns(h, id, 2);
    expect(runs.map((run) => iso(run.due_at))).toEqual(['2026-07-01T09:00:00.000Z', '2026-07-05T09:00:00.000Z']);
    await h.t.request('POST', `/api/notifications/${id}/cancel`, { token: h.owner.token });
  });

  it('after a clock jump across several occurrences, sends only the latest missed one, once', async () => {
    clock.set(Date.parse('2026-08-01T08:00:00Z'));
    await signIn(h);
    await setSiteTimezone(h, 'Europe/Paris');
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, {
      token: h.owner.token,
      body: recurringInput({ interval_type: 'DAILY', interval_value: 1, start_date: '2026-08-01T11:00' }, { title: 'Jumpy' }),
    });
    const id = created.body.data.notification.id;
    clock.set(Date.parse('2026-08-01T09:00:00Z'));
    await h.engine.scheduler!.tick();
    await waitForFinishedRuns(h, id, 1);

    // Down for five days: Aug 2..6 at 09:00Z were all missed.
    clock.set(Date.parse('2026-08-06T15:00:00Z'));
    await Promise.all([h.engine.scheduler!.tick(), h.engine.scheduler!.tick()]);
    await h.engine.scheduler!.tick();
    const runs = await waitForFinishedRuns(h, id, 2);
    expect(runs.map((run) => iso(run.due_at))).toEqual(['2026-08-01T09:00:00.000Z', '2026-08-06T09:00:00.000Z']);
    expect(h.push.messages.filter((message) => payloadOf(message).title === 'Jumpy')).toHaveLength(2 * subscriberIds.length);
    expect((await getNotification(h, id)).recurringSchedule.nextRunAt).toBe('2026-08-07T09:00:00.000Z');
    await h.t.request('POST', `/api/notifications/${id}/cancel`, { token: h.owner.token });
  });

  it('applies edits from the next occurrence: new content, and a new timing that never repeats a sent occurrence', async () => {
    clock.set(Date.parse('2026-09-01T08:00:00Z'));
    await signIn(h);
    await setSiteTimezone(h, 'UTC');
    const schedule = { interval_type: 'DAILY', interval_value: 1, start_date: '2026-09-01T09:00', end_date: null };
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: recurringInput(schedule, { title: 'Before edit' }) });
    const id = created.body.data.notification.id;
    clock.set(Date.parse('2026-09-01T09:00:00Z'));
    await h.engine.scheduler!.tick();
    await waitForFinishedRuns(h, id, 1);

    clock.set(Date.parse('2026-09-01T09:00:30Z'));
    const renamed = await h.t.request('PATCH', `/api/notifications/${id}`, { token: h.owner.token, body: recurringInput(schedule, { title: 'After edit', scheduled_at: null }) });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.notification.recurringSchedule.nextRunAt).toBe('2026-09-02T09:00:00.000Z');

    // Every 2 days from the same start: Sep 1 was sent already, so the next is Sep 3 (not Sep 1 again).
    const retimed = await h.t.request('PATCH', `/api/notifications/${id}`, {
      token: h.owner.token,
      body: { recurring_schedule: { ...schedule, interval_value: 2 } },
    });
    expect(retimed.body.data.notification.recurringSchedule).toMatchObject({ intervalValue: 2, nextRunAt: '2026-09-03T09:00:00.000Z' });
    await h.engine.scheduler!.tick();
    clock.set(Date.parse('2026-09-02T09:00:00Z'));
    await h.engine.scheduler!.tick();
    expect(await runsOf(h, id)).toHaveLength(1);
    clock.set(Date.parse('2026-09-03T09:00:00Z'));
    await h.engine.scheduler!.tick();
    await waitForFinishedRuns(h, id, 2);
    const titles = h.push.messages.filter((message) => ['Before edit', 'After edit'].includes(payloadOf(message).title)).map((message) => payloadOf(message).title);
    expect(titles).toEqual([...Array(subscriberIds.length).fill('Before edit'), ...Array(subscriberIds.length).fill('After edit')]);

    // While an occurrence is being sent, its content and the notification itself stay as they are.
    const inFlight = await h.t.ctx.db.updateTable('notification_runs').set({ status: 'sending' }).where('notification_id', '=', id).where('due_at', '=', Date.parse('2026-09-03T09:00:00Z')).executeTakeFirst();
    expect(Number(inFlight.numUpdatedRows)).toBe(1);
    const blocked = await h.t.request('PATCH', `/api/notifications/${id}`, { token: h.owner.token, body: { title: 'Mid-send edit' } });
    expect(blocked.status).toBe(409);
    expect(blocked.body.error.message).toMatch(/being sent right now/);
    expect((await h.t.request('DELETE', `/api/notifications/${id}`, { token: h.owner.token })).status).toBe(409);
    // Pausing touches no content, so it is allowed.
    expect((await h.t.request('PATCH', `/api/notifications/${id}`, { token: h.owner.token, body: { recurring_schedule: { is_active: false } } })).status).toBe(200);
    await h.t.ctx.db.updateTable('notification_runs').set({ status: 'completed' }).where('notification_id', '=', id).execute();
    await h.t.request('POST', `/api/notifications/${id}/cancel`, { token: h.owner.token });
  });

  it('cancel stops the schedule; delete is allowed while scheduled; the list filters by type with schedules filled in', async () => {
    clock.set(Date.parse('2026-12-01T08:00:00Z'));
    await signIn(h);
    await setSiteTimezone(h, 'UTC');
    const ids: string[] = [];
    for (const type of ['DAILY', 'WEEKLY', 'MONTHLY']) {
      const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, {
        token: h.owner.token,
        body: recurringInput({ interval_type: type, interval_value: 1, start_date: '2026-12-01T09:00' }, { title: `List ${type}` }),
      });
      ids.push(created.body.data.notification.id);
    }
    await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput({ title: 'One-time' }) });

    const list = await h.t.request('GET', `/api/sites/${h.site.id}/notifications?type=RECURRING&status=scheduled`, { token: h.owner.token });
    expect(list.status).toBe(200);
    const listed = list.body.data.notifications;
    expect(listed.map((n: { id: string }) => n.id).sort()).toEqual([...ids].sort());
    for (const n of listed) expect(n.recurringSchedule).toMatchObject({ intervalValue: 1, startDate: '2026-12-01T09:00:00.000Z', nextRunAt: '2026-12-01T09:00:00.000Z', isActive: true });

    const cancelled = await h.t.request('POST', `/api/notifications/${ids[0]}/cancel`, { token: h.owner.token });
    expect(cancelled.body.data.notification).toMatchObject({ status: 'cancelled', recurringSchedule: { isActive: false, nextRunAt: null } });
    const deleted = await h.t.request('DELETE', `/api/notifications/${ids[1]}`, { token: h.owner.token });
    expect(deleted.status).toBe(200);
    expect(await h.t.ctx.db.selectFrom('recurring_schedules').select('id').where('notification_id', '=', ids[1]!).execute()).toEqual([]);

    clock.set(Date.parse('2026-12-01T09:00:00Z'));
    await h.engine.scheduler!.tick();
    await waitForFinishedRuns(h, ids[2]!, 1);
    expect(await runsOf(h, ids[0]!)).toEqual([]);

    // A cancelled recurring notification can be duplicated into a draft that keeps its schedule settings, and scheduled again.
    clock.set(Date.parse('2026-12-01T09:05:00Z'));
    const copy = await h.t.request('POST', `/api/notifications/${ids[0]}/duplicate`, { token: h.owner.token });
    expect(copy.body.data.notification).toMatchObject({ status: 'draft', type: 'RECURRING', recurringSchedule: { intervalType: 'DAILY', nextRunAt: null } });
    const rescheduled = await h.t.request('PATCH', `/api/notifications/${copy.body.data.notification.id}`, {
      token: h.owner.token,
      body: { recurring_schedule: { interval_type: 'DAILY', interval_value: 1, start_date: '2026-12-01T09:00' } },
    });
    expect(rescheduled.body.data.notification).toMatchObject({ status: 'scheduled', recurringSchedule: { isActive: true, nextRunAt: '2026-12-02T09:00:00.000Z' } });
    await h.t.request('POST', `/api/notifications/${ids[2]}/cancel`, { token: h.owner.token });
    await h.t.request('POST', `/api/notifications/${copy.body.data.notification.id}/cancel`, { token: h.owner.token });
  });

  it('refuses recurring notifications without a valid schedule, with clear messages', async () => {
    clock.set(Date.parse('2026-12-10T08:00:00Z'));
    await signIn(h);
    const post = (body: unknown) => h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body });
    const cases: Array<[unknown, RegExp]> = [
      [notificationInput({ type: 'RECURRING' }), /Start date is required/],
      [recurringInput({ interval_type: 'DAILY', interval_value: 1 }), /Start date is required/],
      [recurringInput({ interval_type: 'DAILY', interval_value: 0, start_date: '2026-12-11T09:00' }), /Repeat every must be at least 1/],
      [recurringInput({ interval_type: 'DAILY', interval_value: 1.5, start_date: '2026-12-11T09:00' }), /whole number/],
      [recurringInput({ interval_type: 'HOURLY', interval_value: 1, start_date: '2026-12-11T09:00' }), /DAILY, WEEKLY or MONTHLY/],
      [recurringInput({ interval_type: 'DAILY', interval_value: 1, start_date: 'next monday' }), /Start date: must be a date and time/],
      [recurringInput({ interval_type: 'DAILY', interval_value: 1, start_date: '2026-12-11T09:00', end_date: '2026-12-11T08:00' }), /End date must be after the start date/],
      [recurringInput({ interval_type: 'DAILY', interval_value: 1, start_date: '2026-12-01T09:00', end_date: '2026-12-05T09:00' }), /no occurrence left/],
      [recurringInput({ interval_type: 'DAILY', interval_value: 1, start_date: '2026-12-11T09:00' }, { scheduled_at: '2026-12-11T09:00' }), /scheduled_at is for one-time/],
      [notificationInput({ recurring_schedule: { interval_type: 'DAILY', interval_value: 1, start_date: '2026-12-11T09:00' } }), /only for RECURRING/],
    ];
    const before = await h.t.ctx.db.selectFrom('notifications').select('id').execute();
    for (const [body, message] of cases) {
      const response = await post(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.success).toBe(false);
      expect(response.body.error.message).toMatch(message);
    }
    expect(await h.t.ctx.db.selectFrom('notifications').select('id').execute()).toHaveLength(before.length);
  });

  it('another user cannot read, pause, resume, cancel or delete a recurring notification (404, nothing changed)', async () => {
    clock.set(Date.parse('2026-12-20T08:00:00Z'));
    await signIn(h);
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, {
      token: h.owner.token,
      body: recurringInput({ interval_type: 'WEEKLY', interval_value: 1, start_date: '2026-12-21T09:00' }, { title: 'Mine' }),
    });
    const id = created.body.data.notification.id;
    const other = await h.t.createUser();
    const snapshot = async () => ({
      notification: await h.t.ctx.db.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirst(),
      schedule: await h.t.ctx.db.selectFrom('recurring_schedules').selectAll().where('notification_id', '=', id).executeTakeFirst(),
    });
    const before = await snapshot();
    const attempts: Array<[string, string, unknown?]> = [
      ['GET', `/api/notifications/${id}`],
      ['PATCH', `/api/notifications/${id}`, { recurring_schedule: { is_active: false } }],
      ['PATCH', `/api/notifications/${id}`, { recurring_schedule: { interval_type: 'DAILY', interval_value: 1, start_date: '2026-12-21T09:00' } }],
      ['POST', `/api/notifications/${id}/cancel`],
      ['POST', `/api/notifications/${id}/duplicate`],
      ['GET', `/api/notifications/${id}/performance`],
      ['DELETE', `/api/notifications/${id}`],
      ['GET', `/api/sites/${h.site.id}/notifications?type=RECURRING`],
    ];
    for (const [method, url, body] of attempts) {
      const response = await h.t.request(method, url, { token: other.token, body });
      expect(response.status, `${method} ${url}`).toBe(404);
    }
    expect(await snapshot()).toEqual(before);
    await h.t.request('POST', `/api/notifications/${id}/cancel`, { token: h.owner.token });
  });
});

describe('two schedulers on one database', () => {
  let h: DeliveryHarness;
  const clock = new ManualClock(Date.UTC(2026, 3, 1, 8));

  beforeAll(async () => {
    h = await createDeliveryHarness({ clock });
  });
  afterAll(async () => h.close());

  it('create each occurrence run once, however they interleave', async () => {
    const subscribers = [await h.subscribe(), await h.subscribe(), await h.subscribe()];
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, {
        token: h.owner.token,
        body: recurringInput({ interval_type: 'DAILY', interval_value: 1, start_date: '2026-04-01T09:00' }, { title: `Concurrent ${i}` }),
      });
      expect(created.status).toBe(201);
      ids.push(created.body.data.notification.id);
    }

    // The second scheduler has its own connection pool on PostgreSQL (a separate process in
    // production). On SQLite, one process shares one connection: two connections writing from
    // one event loop would wait on each other's locks synchronously.
    const second = h.t.ctx.dbKind === 'postgres' ? openDatabase(h.t.config.database, { poolSize: 4 }) : undefined;
    try {
      const otherCtx = { ...h.t.ctx, db: second?.db ?? h.t.ctx.db };
      const other = new Scheduler(otherCtx, h.engine.queue, featureDueWorkSources(otherCtx, h.engine.queue));
      const third = new Scheduler(h.t.ctx, h.engine.queue, featureDueWorkSources(h.t.ctx, h.engine.queue));
      for (let day = 1; day <= 3; day++) {
        clock.set(Date.UTC(2026, 3, day, 9) + 5_000);
        await Promise.all([h.engine.scheduler!.tick(), other.tick(), third.tick(), other.tick(), h.engine.scheduler!.tick()]);
        for (const id of ids) await waitForFinishedRuns(h, id, day);
      }
    } finally {
      await second?.close();
    }

    const runs = await h.t.ctx.db.selectFrom('notification_runs').select(['dedupe_key', 'notification_id']).where('notification_id', 'in', ids).execute();
    expect(runs).toHaveLength(ids.length * 3);
    expect(new Set(runs.map((run) => run.dedupe_key)).size).toBe(runs.length);
    // Each subscriber got each occurrence of each notification exactly once.
    for (const { subscription } of subscribers) {
      const received = h.push.messages.filter((message) => message.subscriptionId === subscription.id);
      expect(received).toHaveLength(ids.length * 3);
    }
    const deliveries = await h.t.ctx.db
      .selectFrom('deliveries')
      .innerJoin('notification_runs', 'notification_runs.seq', 'deliveries.run_seq')
      .select(['notification_runs.id as run_id', 'deliveries.subscriber_seq'])
      .where('notification_runs.notification_id', 'in', ids)
      .execute();
    expect(deliveries).toHaveLength(ids.length * 3 * subscribers.length);
  }, 60_000);
});
