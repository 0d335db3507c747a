import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock';
import { runSeqsOfNotification } from '../../src/db/run-seq';
import { createDeliveryHarness, notificationInput } from '../support/delivery-harness';
import { waitFor } from '../support/test-app';

// Issue 14 items 1 and 4: a send at 09:00 in each subscriber's zone goes zone
// by zone (DST-correct), cancel stops the zones not yet due; quiet hours hold
// exactly the subscribers inside the window until it ends, unless the
// notification is "send anyway", high urgency, or its TTL would run out first.
// docs/delivery.md, "Local-time delivery" and "Quiet hours".
const HOUR = 3_600_000;
const MINUTE = 60_000;

async function harness(clock: ManualClock) {
  const h = await createDeliveryHarness({ clock });
  /** A subscriber in `zone` (null: none given, the site's zone is used). */
  const subscribeIn = async (zone: string | null) => {
    const subscriber = await h.subscribe();
    await h.t.ctx.db.updateTable('subscribers').set({ timezone: zone }).where('id', '=', subscriber.subscriberId).execute();
    return subscriber.subscription.id;
  };
  const create = async (overrides: Record<string, unknown> = {}) => {
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput(overrides) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.data.notification.id as string;
  };
  const sendNow = async (id: string) => expect((await h.t.request('POST', `/api/notifications/${id}/send`, { token: h.owner.token })).status).toBe(200);
  const get = async (id: string) => (await h.t.request('GET', `/api/notifications/${id}`, { token: h.owner.token })).body.data.notification;
  const performance = async (id: string) => (await h.t.request('GET', `/api/notifications/${id}/performance`, { token: h.owner.token })).body.data;
  const runsOf = (id: string) => h.t.ctx.db.selectFrom('notification_runs').select(['due_at', 'status', 'zones']).where('notification_id', '=', id).orderBy('due_at').execute();
  /** The subscriptions that received a push of this notification's title so far. */
  const receivers = (title: string) => new Set(h.push.messages.filter((m) => (m.payload as { title: string }).title === title).map((m) => m.subscriptionId));
  const waitForReceivers = (title: string, expected: string[]) =>
    waitFor(() => receivers(title).size >= expected.length, { timeoutMs: 20_000 }).then(() => expect([...receivers(title)].sort()).toEqual([...expected].sort()));
  /**
   * Waits for `probe` while the manual clock moves on a second per poll: a
   * push that timed out on a loaded machine is retried after a backoff on
   * this clock (docs/delivery.md, "Retries"), which a clock standing still
   * would never reach. On timeout, says what the runs were waiting for.
   */
  const waitAsTimePasses = async <T>(clock: ManualClock, notificationId: string, probe: () => Promise<T | undefined>): Promise<T> => {
    try {
      return await waitFor(
        async () => {
          const value = await probe();
          if (!value) clock.advance(1_000);
          return value;
        },
        { timeoutMs: 20_000, intervalMs: 25 },
      );
    } catch (error) {
      const runs = await runsOf(notificationId);
      const deliveries = await h.t.ctx.db
        .selectFrom('deliveries')
        .select(['status', 'attempts', 'reason', 'next_attempt_at'])
        .where('run_seq', 'in', runSeqsOfNotification(notificationId))
        .execute();
      throw new Error(`${(error as Error).message} at ${new Date(clock.now()).toISOString()}; runs ${JSON.stringify(runs)}; deliveries ${JSON.stringify(deliveries)}`);
    }
  };
  return { h, subscribeIn, create, sendNow, get, performance, runsOf, receivers, waitForReceivers, waitAsTimePasses };
}

describe('delivery at each subscriber\u2019s local time', () => {
  // Saturday 28 March 2026, 22:00 UTC: that night Europe moves its clocks forward (01:00 UTC on the 29th).
  const start = Date.UTC(2026, 2, 28, 22);
  const clock = new ManualClock(start);
  let t: Awaited<ReturnType<typeof harness>>;
  const subs: Record<string, string> = {};
  beforeAll(async () => {
    t = await harness(clock);
    for (const zone of ['Asia/Tokyo', 'Europe/Paris', 'Europe/London', 'America/New_York', 'Pacific/Auckland']) subs[zone] = await t.subscribeIn(zone);
    subs.none = await t.subscribeIn(null); // the site's zone: UTC
  });
  afterAll(async () => t.h.close());

  // 09:00 local, the first at or after 22:00 UTC on the 28th.
  const expected: Array<[string, number]> = [
    ['Asia/Tokyo', Date.UTC(2026, 2, 29, 0)], // 09:00 JST (UTC+9)
    ['Europe/Paris', Date.UTC(2026, 2, 29, 7)], // 09:00 CEST: UTC+2 since 01:00 UTC, not the UTC+1 in force when the send started
    ['Europe/London', Date.UTC(2026, 2, 29, 8)], // 09:00 BST, also after the change
    ['none', Date.UTC(2026, 2, 29, 9)], // no zone: the site's (UTC)
    ['America/New_York', Date.UTC(2026, 2, 29, 13)], // 09:00 EDT
    ['Pacific/Auckland', Date.UTC(2026, 2, 29, 20)], // 11:00 in Auckland already: the 30th's 09:00 NZDT
  ];

  it('refuses a bad local time or an unknown mode with a message naming the field', async () => {
    for (const [delivery, message] of [
      [{ mode: 'subscriber_local_time', local_time: '25:00' }, 'delivery.local_time must be a time of day as HH:MM'],
      [{ mode: 'subscriber_local_time', local_time: '9:00' }, 'delivery.local_time must be a time of day as HH:MM'],
      [{ mode: 'subscriber_local_time' }, 'delivery.local_time is required for subscriber_local_time'],
      [{ mode: 'whenever' }, 'delivery.mode must be at_once or subscriber_local_time'],
    ] as const) {
      const response = await t.h.t.request('POST', `/api/sites/${t.h.site.id}/notifications`, { token: t.h.owner.token, body: notificationInput({ delivery }) });
      expect(response.status, JSON.stringify(delivery)).toBe(400);
      expect(response.body.error.message).toContain(message);
    }
    const triggered = await t.h.t.request('POST', `/api/sites/${t.h.site.id}/notifications`, {
      token: t.h.owner.token,
      body: notificationInput({ type: 'TRIGGERED', trigger: { event: 'cart', delay_minutes: 0 }, delivery: { mode: 'subscriber_local_time', local_time: '09:00' } }),
    });
    expect(triggered.status).toBe(400);
    const draft = await t.create({ title: 'Draft' });
    const patched = await t.h.t.request('PATCH', `/api/notifications/${draft}`, { token: t.h.owner.token, body: { delivery: { mode: 'subscriber_local_time', local_time: '7:5' } } });
    expect(patched.status).toBe(400);
    expect(patched.body.error.message).toContain('delivery.local_time must be a time of day as HH:MM');
  });

  it('the OpenAPI document carries the delivery mode, quiet hours and the deferred count', async () => {
    const doc = (await t.h.t.app.inject({ method: 'GET', url: '/api/docs/json' })).json();
    const create = doc.paths['/api/sites/{siteId}/notifications'].post.requestBody.content['application/json'].schema;
    expect(create.properties.delivery.properties.mode.enum).toEqual(['at_once', 'subscriber_local_time']);
    expect(create.properties.quiet_hours_exempt.type).toBe('boolean');
    const text = JSON.stringify(doc);
    for (const name of ['quietHours', 'quiet_hours_deferred', 'local_time_progress']) expect(text, name).toContain(`"${name}"`);
  });

  it('sends to each of six zones at its own 09:00, across a DST change, showing the zones sent so far', async () => {
    const id = await t.create({ title: 'Good morning', delivery: { mode: 'subscriber_local_time', local_time: '09:00' } });
    expect((await t.get(id)).delivery).toEqual({ mode: 'subscriber_local_time', local_time: '09:00' });
    await t.sendNow(id);
    // One run per zone instant, each due exactly then.
    const runs = await waitFor(async () => ((await t.runsOf(id)).length === 6 ? t.runsOf(id) : undefined), { timeoutMs: 20_000 });
    expect(runs.map((run) => run.due_at)).toEqual(expected.map(([, at]) => at));
    expect((await t.get(id)).local_time_progress).toEqual({ zones: 6, zones_sent: 0 });
    expect(t.receivers('Good morning').size).toBe(0);

    const sentTo: string[] = [];
    for (const [zone, at] of expected) {
      clock.set(at - MINUTE);
      // A minute before, that zone's run is still waiting.
      expect((await t.runsOf(id)).find((run) => run.due_at === at)!.status).toBe('pending');
      clock.set(at);
      sentTo.push(subs[zone]!);
      await t.waitForReceivers('Good morning', sentTo);
      await waitFor(async () => (await t.get(id)).local_time_progress.zones_sent === sentTo.length, { timeoutMs: 20_000 });
      if (sentTo.length < expected.length) expect((await t.get(id)).status).toBe('sending');
    }
    const done = await t.h.waitForStatus(id, ['completed', 'completed_with_errors', 'failed'], 20_000);
    expect(done.status).toBe('completed');
    expect(done.counts).toMatchObject({ targeted: 6, sent: 6, failed: 0, skipped: 0, pending: 0 });
    expect(done.local_time_progress).toEqual({ zones: 6, zones_sent: 6 });
    // Each subscriber got it once.
    expect(t.h.push.messages.filter((m) => (m.payload as { title: string }).title === 'Good morning')).toHaveLength(6);
  });

  it('cancel stops the zones not yet due; what was sent stays counted', async () => {
    clock.set(Date.UTC(2026, 3, 1, 22)); // 1 April, 22:00 UTC
    const id = await t.create({ title: 'Cancel me', delivery: { mode: 'subscriber_local_time', local_time: '09:00' } });
    await t.sendNow(id);
    await waitFor(async () => (await t.runsOf(id)).length === 6, { timeoutMs: 20_000 });
    clock.set(Date.UTC(2026, 3, 2, 7)); // Tokyo and Paris are due
    await t.waitForReceivers('Cancel me', [subs['Asia/Tokyo']!, subs['Europe/Paris']!]);
    await waitFor(async () => (await t.get(id)).local_time_progress.zones_sent === 2, { timeoutMs: 20_000 });

    const cancelled = await t.h.t.request('POST', `/api/notifications/${id}/cancel`, { token: t.h.owner.token });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data.notification.status).toBe('cancelled');
    expect((await t.runsOf(id)).map((run) => run.status)).toEqual(['completed', 'completed', 'cancelled', 'cancelled', 'cancelled', 'cancelled']);
    clock.set(Date.UTC(2026, 3, 3, 0)); // every zone's 09:00 has passed
    const later = await t.create({ title: 'After cancel' });
    await t.sendNow(later);
    await t.h.waitForStatus(later, ['completed'], 20_000); // the scheduler has ticked past all of them
    expect([...t.receivers('Cancel me')].sort()).toEqual([subs['Asia/Tokyo'], subs['Europe/Paris']].sort());
    const after = await t.get(id);
    expect(after.status).toBe('cancelled');
    expect(after.counts).toMatchObject({ targeted: 2, sent: 2 });
    expect(after.local_time_progress).toEqual({ zones: 6, zones_sent: 2 });
    // Nothing is left to cancel a second time.
    expect((await t.h.t.request('POST', `/api/notifications/${id}/cancel`, { token: t.h.owner.token })).status).toBe(409);
  });

  it('a recurring notification sends each occurrence zone by zone at the same local time', async () => {
    clock.set(Date.UTC(2026, 3, 3, 23)); // 3 April, 23:00 UTC
    const id = await t.create({
      type: 'RECURRING',
      title: 'Daily tip',
      scheduled_at: undefined,
      recurring_schedule: { interval_type: 'DAILY', interval_value: 1, start_date: '2026-04-04T00:00', end_date: null },
      delivery: { mode: 'subscriber_local_time', local_time: '09:00' },
    });
    clock.set(Date.UTC(2026, 3, 4, 0)); // the first occurrence: 00:00 UTC on 4 April
    const firstDay = [
      Date.UTC(2026, 3, 4, 0), // 09:00 JST
      Date.UTC(2026, 3, 4, 7), // 09:00 CEST
      Date.UTC(2026, 3, 4, 8), // 09:00 BST
      Date.UTC(2026, 3, 4, 9), // the site's zone (UTC)
      Date.UTC(2026, 3, 4, 13), // 09:00 EDT
      Date.UTC(2026, 3, 4, 21), // 09:00 on the 5th in Auckland, whose summer time ends at 03:00 that morning: UTC+12, not +13
    ];
    const runs = await waitFor(async () => ((await t.runsOf(id)).length >= 6 ? t.runsOf(id) : undefined), { timeoutMs: 20_000 });
    expect(runs.map((run) => run.due_at)).toEqual(firstDay);
    for (const at of firstDay) clock.set(at);
    await t.waitForReceivers('Daily tip', Object.values(subs));
    await waitFor(async () => (await t.get(id)).local_time_progress.zones_sent === 6, { timeoutMs: 20_000 });
    expect((await t.get(id)).local_time_progress).toEqual({ zones: 6, zones_sent: 6 });
    expect((await t.get(id)).status).toBe('scheduled'); // the next occurrence is tomorrow
  });

  it('a zone that failed makes the send completed with errors once every zone is done, and Retry sends it again', async () => {
    const refused = await t.h.subscribe();
    await t.h.t.ctx.db.updateTable('subscribers').set({ timezone: 'Asia/Tokyo' }).where('id', '=', refused.subscriberId).execute();
    t.h.push.setAnswer({ status: 400, body: 'bad request' }, refused.subscription.id);
    clock.set(Date.UTC(2026, 3, 5, 23)); // 5 April, 23:00 UTC: Tokyo's 09:00 is in an hour, the others later
    const id = await t.create({ title: 'Partly refused', delivery: { mode: 'subscriber_local_time', local_time: '09:00' } });
    await t.sendNow(id);
    await waitFor(async () => (await t.runsOf(id)).length === 6, { timeoutMs: 20_000 });
    clock.set(Date.UTC(2026, 3, 6, 0));
    // Tokyo's run failed one of its two, but the send goes on.
    await t.waitAsTimePasses(clock, id, async () => (await t.get(id)).local_time_progress.zones_sent === 1);
    expect(await t.get(id)).toMatchObject({ status: 'sending', counts: { targeted: 2, sent: 1, failed: 1 } });
    clock.set(Date.UTC(2026, 3, 6, 21)); // every zone is due
    const finished = ['completed', 'completed_with_errors', 'failed'];
    const finishedNotification = async () => {
      const notification = await t.get(id);
      return finished.includes(notification.status) ? notification : undefined;
    };
    const done = await t.waitAsTimePasses(clock, id, finishedNotification);
    expect(done.status).toBe('completed_with_errors');
    expect(done.counts).toMatchObject({ targeted: 7, sent: 6, failed: 1 });

    t.h.push.setAnswer({ status: 201 }, refused.subscription.id);
    const retried = await t.h.t.request('POST', `/api/notifications/${id}/retry`, { token: t.h.owner.token });
    expect(retried.status).toBe(200);
    const again = await t.waitAsTimePasses(clock, id, finishedNotification);
    expect(again.status).toBe('completed');
    expect(again.counts).toMatchObject({ targeted: 7, sent: 7, failed: 0 });
    expect(t.receivers('Partly refused').has(refused.subscription.id)).toBe(true);
  });
});

describe('quiet hours', () => {
  // 1 June 2026, 14:00 UTC: 23:00 in Tokyo and 02:00 in Auckland (inside 22:00–08:00); 16:00 in Paris, 10:00 in New York, 14:00 UTC.
  const start = Date.UTC(2026, 5, 1, 14);
  const clock = new ManualClock(start);
  let t: Awaited<ReturnType<typeof harness>>;
  const subs: Record<string, string> = {};
  beforeAll(async () => {
    t = await harness(clock);
    for (const zone of ['Asia/Tokyo', 'Pacific/Auckland', 'Europe/Paris', 'America/New_York']) subs[zone] = await t.subscribeIn(zone);
    subs.none = await t.subscribeIn(null);
  });
  afterAll(async () => t.h.close());

  const setQuietHours = (quietHours: unknown) => t.h.t.request('PATCH', `/api/sites/${t.h.site.id}`, { token: t.h.owner.token, body: { settings: { quietHours } } });
  const awake = () => [subs['Europe/Paris']!, subs['America/New_York']!, subs.none!];

  it('refuses a bad window with a message naming the field, and reads back what was saved', async () => {
    for (const [quietHours, message] of [
      [{ start: '22:00', end: '24:00' }, 'quietHours.end must be a time of day as HH:MM'],
      [{ start: '7pm', end: '08:00' }, 'quietHours.start must be a time of day as HH:MM'],
      [{ start: '22:00' }, 'quietHours.end must be a time such as 09:00'],
      [{ start: '08:00', end: '08:00' }, 'quietHours.start and quietHours.end must differ'],
    ] as const) {
      const response = await setQuietHours(quietHours);
      expect(response.status, JSON.stringify(quietHours)).toBe(400);
      expect(response.body.error.message).toContain(message);
    }
    const saved = await setQuietHours({ start: '22:00', end: '08:00' });
    expect(saved.status).toBe(200);
    expect(saved.body.data.site.settings.quietHours).toEqual({ start: '22:00', end: '08:00' });
  });

  it('holds exactly the subscribers inside the window, counts them as deferred, and sends them when it ends in their zone', async () => {
    const id = await t.create({ title: 'Flash sale' });
    await t.sendNow(id);
    await t.waitForReceivers('Flash sale', awake());
    await waitFor(async () => (await t.get(id)).counts.sent === 3, { timeoutMs: 20_000 });
    const during = await t.get(id);
    expect(during.status).toBe('sending');
    expect(during.quiet_hours_deferred).toBe(2);
    expect((await t.performance(id)).skipped).toEqual({ inactive: 0, frequency_cap: 0, quiet_hours_deferred: 2 });
    // 08:00 NZST (UTC+12) is 20:00 UTC; 08:00 JST is 23:00 UTC.
    expect((await t.runsOf(id)).map((run) => run.due_at)).toEqual([start, Date.UTC(2026, 5, 1, 20), Date.UTC(2026, 5, 1, 23)]);

    clock.set(Date.UTC(2026, 5, 1, 20));
    await t.waitForReceivers('Flash sale', [...awake(), subs['Pacific/Auckland']!]);
    clock.set(Date.UTC(2026, 5, 1, 23));
    await t.waitForReceivers('Flash sale', [...awake(), subs['Pacific/Auckland']!, subs['Asia/Tokyo']!]);
    const done = await t.h.waitForStatus(id, ['completed', 'completed_with_errors', 'failed'], 20_000);
    expect(done.status).toBe('completed');
    expect(done.counts).toMatchObject({ targeted: 5, sent: 5, skipped: 0 });
    expect((await t.performance(id)).skipped.quiet_hours_deferred).toBe(2);
    expect(done.local_time_progress).toBeNull();
  });

  it('send anyway, high urgency and a TTL shorter than the wait go to everyone at once', async () => {
    clock.set(start + 24 * HOUR); // the same hour the next day: Tokyo and Auckland are inside again
    for (const [title, overrides] of [
      ['Send anyway', { quiet_hours_exempt: true }],
      ['Urgent', { urgency: 'high' }],
      ['Short TTL', { ttl_seconds: 3600 }],
    ] as const) {
      const id = await t.create({ title, ...overrides });
      await t.sendNow(id);
      const done = await t.h.waitForStatus(id, ['completed', 'completed_with_errors', 'failed'], 20_000);
      expect(done.counts, title).toMatchObject({ targeted: 5, sent: 5 });
      expect((await t.performance(id)).skipped.quiet_hours_deferred, title).toBe(0);
      expect(t.receivers(title).size, title).toBe(5);
    }
  });

  it('a send holding some zones for quiet hours can be cancelled while they wait: the held zones are not sent, what was sent stays counted', async () => {
    clock.set(Date.UTC(2026, 5, 2, 15)); // Tokyo 00:00 and Auckland 03:00 are inside 22:00–08:00; the others are not
    const id = await t.create({ title: 'Held then cancelled' });
    await t.sendNow(id);
    await t.waitForReceivers('Held then cancelled', awake());
    await waitFor(async () => (await t.get(id)).counts.sent === 3, { timeoutMs: 20_000 });
    expect((await t.get(id)).status).toBe('sending');

    const cancelled = await t.h.t.request('POST', `/api/notifications/${id}/cancel`, { token: t.h.owner.token });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body.data.notification.status).toBe('cancelled');
    expect((await t.runsOf(id)).map((run) => run.status)).toEqual(['completed', 'cancelled', 'cancelled']);
    clock.set(Date.UTC(2026, 5, 3, 0)); // both windows ended (20:00 and 23:00 UTC)
    const later = await t.create({ title: 'After the window', quiet_hours_exempt: true });
    await t.sendNow(later);
    await t.h.waitForStatus(later, ['completed'], 20_000); // the scheduler has ticked past both held zones
    expect([...t.receivers('Held then cancelled')].sort()).toEqual(awake().sort());
    const after = await t.get(id);
    expect(after.status).toBe('cancelled');
    expect(after.counts).toMatchObject({ targeted: 3, sent: 3 });
    expect((await t.h.t.request('POST', `/api/notifications/${id}/cancel`, { token: t.h.owner.token })).status).toBe(409);
  });

  it('a window that does not wrap midnight holds only the zones inside it; a local-time send due inside waits for its end', async () => {
    // 12:00–15:00: at 14:00 UTC on 3 June only the UTC subscriber (14:00) is inside; Paris is at 16:00, New York 10:00.
    expect((await setQuietHours({ start: '12:00', end: '15:00' })).status).toBe(200);
    clock.set(Date.UTC(2026, 5, 3, 14));
    const id = await t.create({ title: 'Midday' });
    await t.sendNow(id);
    const others = [subs['Europe/Paris']!, subs['America/New_York']!, subs['Asia/Tokyo']!, subs['Pacific/Auckland']!];
    await t.waitForReceivers('Midday', others);
    expect((await t.performance(id)).skipped.quiet_hours_deferred).toBe(1);
    clock.set(Date.UTC(2026, 5, 3, 15));
    await t.waitForReceivers('Midday', [...others, subs.none!]);
    expect((await t.h.waitForStatus(id, ['completed'], 20_000)).counts).toMatchObject({ targeted: 5, sent: 5 });

    // 13:00 local is inside 12:00–15:00 in every zone: each zone's push waits for its own 15:00.
    clock.set(Date.UTC(2026, 5, 4, 0));
    const local = await t.create({ title: 'Lunch', delivery: { mode: 'subscriber_local_time', local_time: '13:00' } });
    await t.sendNow(local);
    const runs = await waitFor(async () => ((await t.runsOf(local)).length === 5 ? t.runsOf(local) : undefined), { timeoutMs: 20_000 });
    expect(runs.map((run) => run.due_at)).toEqual([
      Date.UTC(2026, 5, 4, 3), // 15:00 NZST (it is 12:00 there when the send starts)
      Date.UTC(2026, 5, 4, 6), // 15:00 JST
      Date.UTC(2026, 5, 4, 13), // 15:00 CEST
      Date.UTC(2026, 5, 4, 15), // 15:00 UTC
      Date.UTC(2026, 5, 4, 19), // 15:00 EDT
    ]);
    expect((await t.performance(local)).skipped.quiet_hours_deferred).toBe(5);
    expect((await setQuietHours(null)).body.data.site.settings.quietHours).toBeNull();
  });
});
