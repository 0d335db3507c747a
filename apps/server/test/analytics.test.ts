import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock';
import { foldBeacons } from './support/beacon-counts';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from './support/delivery-harness';
import type { TestUser } from './support/test-app';

// Issue 5 part 1 (spec §7 Analytics). Every figure is produced through the
// real paths — public subscribe, sending through the engine to the local push
// service, the service worker's beacons, removal — with the clock placed at
// chosen instants, then read back through the analytics API.

const at = (iso: string) => Date.parse(iso);

describe('analytics from real sends, beacons and subscriptions', () => {
  const clock = new ManualClock(at('2026-05-01T12:00:00Z'));
  let h: DeliveryHarness;
  let other: TestUser;
  const token = () => h.owner.token;

  async function patchSite(settings: Record<string, unknown>) {
    const response = await h.t.request('PATCH', `/api/sites/${h.site.id}`, { token: token(), body: { settings } });
    expect(response.status).toBe(200);
  }

  /** Creates and sends a notification now; waits until every push is answered. Returns its id and the beacon token per subscription. */
  async function sendNow(title: string): Promise<{ id: string; tokens: Map<string, string> }> {
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: token(), body: notificationInput({ title }) });
    expect(created.status).toBe(201);
    const id: string = created.body.data.notification.id;
    expect((await h.t.request('POST', `/api/notifications/${id}/send`, { token: token() })).status).toBe(200);
    await h.waitForStatus(id, ['completed', 'failed']);
    const tokens = new Map<string, string>();
    for (const message of h.push.messages) {
      const payload = message.payload as { tag: string; token: string };
      if (payload.tag === `herald-${id}`) tokens.set(message.subscriptionId, payload.token);
    }
    return { id, tokens };
  }

  async function beacon(type: 'delivered' | 'clicked', beaconToken: string | undefined) {
    expect(beaconToken).toBeDefined();
    const response = await h.t.request('POST', '/api/public/events', { body: { type, token: beaconToken } });
    expect(response.body.data).toEqual({ counted: true });
  }

  const dashboard = (query = '') => h.t.request('GET', `/api/sites/${h.site.id}/analytics/dashboard${query}`, { token: token() });

  let n1: string;
  let n2: string;

  beforeAll(async () => {
    h = await createDeliveryHarness({ clock });
    other = await h.t.createUser();
    await patchSite({ timezone: 'Asia/Tokyo', valueCurrency: 'EUR', valuePerSubscriber: 1.5, valuePerClick: 0.25 });

    // The previous period. 2026-05-01 12:00 UTC: five browsers subscribe, one
    // of which the push service no longer knows (410: expired + unsubscribed).
    const first = [];
    for (let i = 0; i < 5; i++) first.push(await h.subscribe());
    h.push.setAnswer({ status: 410 }, first[4]!.subscription.id);
    const sent1 = await sendNow('Previous week');
    n1 = sent1.id;
    await beacon('delivered', sent1.tokens.get(first[0]!.subscription.id));
    await beacon('delivered', sent1.tokens.get(first[1]!.subscription.id));
    await beacon('clicked', sent1.tokens.get(first[0]!.subscription.id));

    // This period. Fri 2026-05-08 09:00 UTC (18:00 in Tokyo): two more subscribe.
    clock.set(at('2026-05-08T09:00:00Z'));
    const later = [await h.subscribe(), await h.subscribe()];
    const everyone = [...first.slice(0, 4), ...later];

    // Sun 2026-05-10 14:30 UTC = 23:30 Sunday in Tokyo: send to the six active ones.
    clock.set(at('2026-05-10T14:30:00Z'));
    const sent2 = await sendNow('This week');
    n2 = sent2.id;
    expect(sent2.tokens.size).toBe(6);
    for (const s of everyone.slice(0, 3)) await beacon('delivered', sent2.tokens.get(s.subscription.id));
    await beacon('clicked', sent2.tokens.get(everyone[0]!.subscription.id));

    // 15:30 UTC = 00:30 Monday in Tokyo (still Sunday in UTC): two clicks without a delivered beacon.
    clock.set(at('2026-05-10T15:30:00Z'));
    await beacon('clicked', sent2.tokens.get(everyone[3]!.subscription.id));
    await beacon('clicked', sent2.tokens.get(everyone[4]!.subscription.id));

    // Tue 2026-05-12 03:00 UTC: the owner removes one subscriber.
    clock.set(at('2026-05-12T03:00:00Z'));
    expect((await h.t.request('DELETE', `/api/subscribers/${everyone[5]!.subscriberId}`, { token: token() })).status).toBe(200);

    // Now: Wed 2026-05-13 10:30 UTC, 19:30 in Tokyo. The beacons are counted (each in its own hour).
    clock.set(at('2026-05-13T10:30:00Z'));
    await foldBeacons(h.t.ctx);
  }, 120_000);
  afterAll(async () => h?.close());

  it('dashboard: metrics with their change against the previous period of the same length', async () => {
    const response = await dashboard();
    expect(response.status).toBe(200);
    const data = response.body.data;
    // Tokyo: the 7 local days 05-07…05-13 begin at 2026-05-06 15:00 UTC; 164 hours
    // have passed (through the running hour), so the previous period is the 164 hours before.
    expect(data.period).toEqual({
      days: 7,
      from: '2026-05-07',
      to: '2026-05-13',
      previousStart: '2026-04-29T19:00:00.000Z',
      previousEnd: '2026-05-06T15:00:00.000Z',
      timezone: 'Asia/Tokyo',
    });
    expect(data.metrics).toEqual({
      // 5 active now; 4 when the period began (5 subscribed, 1 gone before it).
      totalSubscribers: { value: 5, previous: 4, change: 25 },
      notificationsSent: { value: 6, previous: 4, change: 50 },
      // 3 clicks / 5 delivered against 1 / 2.
      clickRate: { value: 60, previous: 50, change: 20 },
      // 2 × 1.50 + 3 × 0.25 = 3.75 against 5 × 1.50 + 1 × 0.25 = 7.75.
      valueGenerated: { value: 3.75, previous: 7.75, change: -51.61, currency: 'EUR' },
    });
    expect(data.hasData).toBe(true);
  });

  it('dashboard: chart days and weekday engagement are days in the site timezone', async () => {
    const tokyo = (await dashboard()).body.data;
    expect(tokyo.chart).toEqual([
      { date: '2026-05-07', sent: 0, delivered: 0, clicked: 0 },
      { date: '2026-05-08', sent: 0, delivered: 0, clicked: 0 },
      { date: '2026-05-09', sent: 0, delivered: 0, clicked: 0 },
      { date: '2026-05-10', sent: 6, delivered: 3, clicked: 1 },
      { date: '2026-05-11', sent: 0, delivered: 2, clicked: 2 },
      { date: '2026-05-12', sent: 0, delivered: 0, clicked: 0 },
      { date: '2026-05-13', sent: 0, delivered: 0, clicked: 0 },
    ]);
    expect(tokyo.engagement).toEqual([
      { name: 'Mon', clicks: 2 },
      { name: 'Tue', clicks: 0 },
      { name: 'Wed', clicks: 0 },
      { name: 'Thu', clicks: 0 },
      { name: 'Fri', clicks: 0 },
      { name: 'Sat', clicks: 0 },
      { name: 'Sun', clicks: 1 },
    ]);

    // The same events seen from UTC: 23:30 and 00:30 Tokyo are both Sunday 05-10 there.
    await patchSite({ timezone: 'UTC' });
    try {
      const utc = (await dashboard()).body.data;
      expect(utc.chart.map((d: { date: string }) => d.date)).toEqual(['2026-05-07', '2026-05-08', '2026-05-09', '2026-05-10', '2026-05-11', '2026-05-12', '2026-05-13']);
      expect(utc.chart[3]).toEqual({ date: '2026-05-10', sent: 6, delivered: 5, clicked: 3 });
      expect(utc.chart.filter((d: { sent: number; delivered: number }) => d.sent || d.delivered)).toHaveLength(1);
      expect(utc.engagement.find((d: { name: string }) => d.name === 'Sun')).toEqual({ name: 'Sun', clicks: 3 });
      expect(utc.engagement.find((d: { name: string }) => d.name === 'Mon')).toEqual({ name: 'Mon', clicks: 0 });
      expect(utc.period).toMatchObject({ from: '2026-05-07', to: '2026-05-13', previousStart: '2026-04-30T13:00:00.000Z', previousEnd: '2026-05-07T00:00:00.000Z' });
      expect(utc.metrics.notificationsSent).toEqual({ value: 6, previous: 4, change: 50 });
    } finally {
      await patchSite({ timezone: 'Asia/Tokyo' });
    }
  });

  it('dashboard: the sum of the chart is the period figure, for any number of days', async () => {
    const month = (await dashboard('?days=30')).body.data;
    expect(month.chart).toHaveLength(30);
    expect(month.chart[0].date).toBe('2026-04-14');
    expect(month.chart.reduce((sum: number, d: { sent: number }) => sum + d.sent, 0)).toBe(month.metrics.notificationsSent.value);
    expect(month.metrics.notificationsSent.value).toBe(10);
    // Nothing was sent in the 30 days before: no percentage is invented.
    expect(month.metrics.notificationsSent).toEqual({ value: 10, previous: 0, change: null });
    expect(month.metrics.totalSubscribers).toEqual({ value: 5, previous: 0, change: null });
    expect(month.engagement.reduce((sum: number, d: { clicks: number }) => sum + d.clicks, 0)).toBe(4);
  });

  it('dashboard: recent notifications, newest first, with CTR and sent count', async () => {
    const data = (await dashboard()).body.data;
    expect(data.recentNotifications).toEqual([
      {
        id: n2,
        title: 'This week',
        message: 'Everything 20% off until Sunday',
        sent_at: '2026-05-10T14:30:00.000Z',
        finished_at: '2026-05-10T14:30:00.000Z',
        click_rate: 60,
        sent_count: 6,
        status: 'completed',
        failed_count: 0,
        counts: { targeted: 6, sent: 6, failed: 0, expired: 0, skipped: 0, pending: 0, delivered: 5, clicked: 3 },
      },
      {
        id: n1,
        title: 'Previous week',
        message: 'Everything 20% off until Sunday',
        sent_at: '2026-05-01T12:00:00.000Z',
        finished_at: '2026-05-01T12:00:00.000Z',
        click_rate: 50,
        sent_count: 4,
        status: 'completed',
        failed_count: 0,
        // The 410 is an expired subscription: counted apart, not a failure (issue 11).
        counts: { targeted: 5, sent: 4, failed: 0, expired: 1, skipped: 0, pending: 0, delivered: 2, clicked: 1 },
      },
    ]);
  });

  it('subscribers: daily and weekly growth with the active count at the end of each point', async () => {
    const daily = await h.t.request('GET', `/api/sites/${h.site.id}/analytics/subscribers?from=2026-04-29&to=2026-05-13&interval=day`, { token: token() });
    expect(daily.status).toBe(200);
    expect(daily.body.data).toMatchObject({ from: '2026-04-29', to: '2026-05-13', interval: 'day', timezone: 'Asia/Tokyo', totals: { new: 7, unsubscribed: 2, net: 5 } });
    const series = daily.body.data.series;
    expect(series).toHaveLength(15);
    expect(series.slice(0, 4)).toEqual([
      { date: '2026-04-29', new: 0, unsubscribed: 0, net: 0, active: 0 },
      { date: '2026-04-30', new: 0, unsubscribed: 0, net: 0, active: 0 },
      { date: '2026-05-01', new: 5, unsubscribed: 1, net: 4, active: 4 },
      { date: '2026-05-02', new: 0, unsubscribed: 0, net: 0, active: 4 },
    ]);
    expect(series.find((p: { date: string }) => p.date === '2026-05-08')).toEqual({ date: '2026-05-08', new: 2, unsubscribed: 0, net: 2, active: 6 });
    expect(series.find((p: { date: string }) => p.date === '2026-05-12')).toEqual({ date: '2026-05-12', new: 0, unsubscribed: 1, net: -1, active: 5 });
    expect(series.at(-1)).toEqual({ date: '2026-05-13', new: 0, unsubscribed: 0, net: 0, active: 5 });

    // Weeks start on Monday; the first point starts at `from` (a Friday).
    const weekly = await h.t.request('GET', `/api/sites/${h.site.id}/analytics/subscribers?from=2026-05-01&to=2026-05-13&interval=week`, { token: token() });
    expect(weekly.body.data.series).toEqual([
      { date: '2026-05-01', new: 5, unsubscribed: 1, net: 4, active: 4 },
      { date: '2026-05-04', new: 2, unsubscribed: 0, net: 2, active: 6 },
      { date: '2026-05-11', new: 0, unsubscribed: 1, net: -1, active: 5 },
    ]);

    // An earlier range: the active count is counted back from today's.
    const past = await h.t.request('GET', `/api/sites/${h.site.id}/analytics/subscribers?from=2026-05-01&to=2026-05-09`, { token: token() });
    expect(past.body.data.series.at(-1)).toEqual({ date: '2026-05-09', new: 0, unsubscribed: 0, net: 0, active: 6 });

    // Defaults: the last 30 days through today; a `to` after today is today.
    const defaults = await h.t.request('GET', `/api/sites/${h.site.id}/analytics/subscribers?to=2026-06-30`, { token: token() });
    expect(defaults.body.data).toMatchObject({ from: '2026-04-14', to: '2026-05-13', interval: 'day' });
    expect(defaults.body.data.series).toHaveLength(30);
  });

  it('engagement: totals with click and delivery rates, and a daily series', async () => {
    const response = await h.t.request('GET', `/api/sites/${h.site.id}/analytics/engagement?from=2026-05-01&to=2026-05-13`, { token: token() });
    expect(response.status).toBe(200);
    const data = response.body.data;
    expect(data).toMatchObject({ from: '2026-05-01', to: '2026-05-13', timezone: 'Asia/Tokyo', sent: 10, delivered: 7, clicked: 4, failed: 0, click_rate: 57.14, delivery_rate: 70 });
    expect(data.series).toHaveLength(13);
    // The 410 of that day expired a subscription; it is not counted as a failure.
    expect(data.series[0]).toEqual({ date: '2026-05-01', sent: 4, delivered: 2, clicked: 1, failed: 0 });
    expect(data.series.find((d: { date: string }) => d.date === '2026-05-11')).toEqual({ date: '2026-05-11', sent: 0, delivered: 2, clicked: 2, failed: 0 });
  });

  it('refuses bad ranges with a clear 400', async () => {
    const cases: Array<[string, RegExp]> = [
      ['dashboard?days=0', /days must be at least 1/],
      ['dashboard?days=366', /days must be at most 365/],
      ['dashboard?days=2.5', /whole number/],
      ['dashboard?days=abc', /days/],
      ['subscribers?from=2026-02-30', /YYYY-MM-DD/],
      ['subscribers?from=05/01/2026', /YYYY-MM-DD/],
      ['subscribers?interval=month', /interval must be day or week/],
      ['subscribers?from=2026-05-10&to=2026-05-01', /from must be on or before to/],
      ['engagement?from=2026-05-14', /from must not be later than today \(2026-05-13/],
      ['engagement?from=2025-01-01&to=2026-05-01', /at most 366 days/],
    ];
    for (const [path, message] of cases) {
      const response = await h.t.request('GET', `/api/sites/${h.site.id}/analytics/${path}`, { token: token() });
      expect(response.status, path).toBe(400);
      expect(response.body.success).toBe(false);
      expect(response.body.error.message, path).toMatch(message);
    }
  });

  it("answers 404 for another user's site and 401 without a session", async () => {
    for (const path of ['dashboard', 'subscribers', 'engagement']) {
      const foreign = await h.t.request('GET', `/api/sites/${h.site.id}/analytics/${path}`, { token: other.token });
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual({ success: false, error: { message: 'Site not found', code: 'not_found' } });
      expect((await h.t.request('GET', `/api/sites/no-such-site/analytics/${path}`, { token: token() })).status).toBe(404);
      expect((await h.t.request('GET', `/api/sites/${h.site.id}/analytics/${path}`)).status).toBe(401);
    }
  });
});

describe('analytics of a new site', () => {
  const clock = new ManualClock(at('2026-03-04T08:00:00Z'));
  let h: DeliveryHarness;
  beforeAll(async () => {
    h = await createDeliveryHarness({ clock });
  }, 60_000);
  afterAll(async () => h?.close());

  it('has no data: zeros everywhere, every day present, change 0 from a zero previous period', async () => {
    const response = await h.t.request('GET', `/api/sites/${h.site.id}/analytics/dashboard`, { token: h.owner.token });
    expect(response.status).toBe(200);
    const data = response.body.data;
    expect(data.hasData).toBe(false);
    expect(data.chart).toHaveLength(7);
    expect(data.chart.every((d: { sent: number; delivered: number; clicked: number }) => !d.sent && !d.delivered && !d.clicked)).toBe(true);
    expect(data.engagement.map((d: { name: string }) => d.name)).toEqual(['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun']);
    expect(data.recentNotifications).toEqual([]);
    expect(data.metrics).toEqual({
      totalSubscribers: { value: 0, previous: 0, change: 0 },
      notificationsSent: { value: 0, previous: 0, change: 0 },
      clickRate: { value: 0, previous: 0, change: 0 },
      valueGenerated: { value: 0, previous: 0, change: 0, currency: 'USD' },
    });
  });

  it('lists the five latest sent notifications, not drafts', async () => {
    await h.subscribe();
    const ids: string[] = [];
    for (let i = 1; i <= 6; i++) {
      clock.advance(3_600_000);
      const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput({ title: `Push ${i}` }) });
      const id = created.body.data.notification.id;
      await h.t.request('POST', `/api/notifications/${id}/send`, { token: h.owner.token });
      await h.waitForStatus(id, ['completed']);
      ids.push(id);
    }
    await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput({ title: 'Draft' }) });
    const data = (await h.t.request('GET', `/api/sites/${h.site.id}/analytics/dashboard`, { token: h.owner.token })).body.data;
    expect(data.recentNotifications.map((n: { title: string }) => n.title)).toEqual(['Push 6', 'Push 5', 'Push 4', 'Push 3', 'Push 2']);
    expect(data.recentNotifications[0]).toMatchObject({ id: ids[5], sent_count: 1, click_rate: 0 });
    expect(data.hasData).toBe(true);
    expect(data.metrics.notificationsSent).toEqual({ value: 6, previous: 0, change: null });
  }, 60_000);
});
