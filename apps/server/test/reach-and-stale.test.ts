import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from './support/delivery-harness';

// Issue 11: reach before sending (GET /sites/{siteId}/audience), stale
// subscribers (active, no delivered beacon for 90+ days, spec §9 best practice)
// with their one-click clean-up, and the CSV report neutralising formula cells.
// Subscriptions, sends and beacons go through the real paths; the clock is moved.

const DAY = 86_400_000;
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

describe('reach and stale subscribers', () => {
  const clock = new ManualClock(Date.parse('2026-02-01T10:00:00Z'));
  let h: DeliveryHarness;
  const api = (method: string, url: string, body?: unknown) => h.t.request(method, url, { token: h.owner.token, ...(body === undefined ? {} : { body }) });

  async function sendAndCollectTokens(title: string): Promise<{ id: string; tokens: Map<string, string> }> {
    const created = await api('POST', `/api/sites/${h.site.id}/notifications`, notificationInput({ title }));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id: string = created.body.data.notification.id;
    expect((await api('POST', `/api/notifications/${id}/send`)).status).toBe(200);
    await h.waitForStatus(id, ['completed', 'completed_with_errors', 'failed']);
    const tokens = new Map<string, string>();
    for (const message of h.push.messages) {
      const payload = message.payload as { tag: string; token: string };
      if (payload.tag === `herald-${id}`) tokens.set(message.subscriptionId, payload.token);
    }
    return { id, tokens };
  }

  /** Moves the clock; sessions last 30 days, so the owner signs in again. */
  async function advance(ms: number): Promise<void> {
    clock.advance(ms);
    const login = await h.t.request('POST', '/api/auth/login', { body: { email: h.owner.email, password: h.owner.password } });
    expect(login.status).toBe(200);
    h.owner.token = login.body.data.token;
  }

  beforeAll(async () => {
    h = await createDeliveryHarness({ clock });
  });
  afterAll(async () => h?.close());

  it('counts the reach of all subscribers and of a segment, and refuses another site’s segment', async () => {
    await h.subscribe();
    await h.subscribe();
    await h.subscribe({ userAgent: CHROME });
    const segment = (await api('POST', `/api/sites/${h.site.id}/segments`, { name: 'Chrome', rules: { browser: 'Chrome' } })).body.data.segment;

    expect((await api('GET', `/api/sites/${h.site.id}/audience`)).body.data).toEqual({ count: 3, is_estimate: false, sample_size: null, segment_id: null });
    expect((await api('GET', `/api/sites/${h.site.id}/audience?segment_id=${segment.id}`)).body.data).toEqual({ count: 1, is_estimate: false, sample_size: null, segment_id: segment.id });

    const otherSite = await h.t.createSite(h.owner.token, { name: 'Other', url: 'https://other.example' });
    const otherSegment = (await api('POST', `/api/sites/${otherSite.id}/segments`, { name: 'Firefox', rules: { browser: 'Firefox' } })).body.data.segment;
    const refused = await api('GET', `/api/sites/${h.site.id}/audience?segment_id=${otherSegment.id}`);
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ success: false, error: { message: 'Segment not found', code: 'segment_not_found' } });
    expect((await api('GET', `/api/sites/${otherSite.id}/audience`)).body.data.count).toBe(0);
  });

  it('finds the active subscribers with nothing delivered for 90 days and deactivates them on request, with counts before and after', async () => {
    const subscribers = await h.t.ctx.db.selectFrom('subscribers').select(['id', 'endpoint']).where('site_id', '=', h.site.id).orderBy('subscribed_at').execute();
    expect(subscribers).toHaveLength(3);
    // Nobody subscribed 90 days ago yet: nobody is stale.
    expect((await api('GET', `/api/sites/${h.site.id}/subscribers/stale`)).body.data).toMatchObject({ days: 90, active: 3, stale: 0 });

    // 80 days later one browser shows a notification; 11 days after that, the other two have shown nothing for 91 days.
    await advance(80 * DAY);
    const { tokens } = await sendAndCollectTokens('Eighty days in');
    const keeper = h.push.messages.find((m) => (m.payload as { title: string }).title === 'Eighty days in')!;
    const delivered = await h.t.request('POST', '/api/public/events', { body: { type: 'delivered', token: tokens.get(keeper.subscriptionId) } });
    expect(delivered.body.data).toEqual({ counted: true });
    await advance(11 * DAY);
    const newcomer = await h.subscribe();

    const stale = (await api('GET', `/api/sites/${h.site.id}/subscribers/stale`)).body.data;
    expect(stale).toEqual({ days: 90, since: new Date(clock.now() - 90 * DAY).toISOString(), active: 4, stale: 2 });

    const cleaned = await api('POST', `/api/sites/${h.site.id}/subscribers/stale/deactivate`);
    expect(cleaned.status).toBe(200);
    expect(cleaned.body.data).toMatchObject({ deactivated: 2, before: { active: 4, stale: 2 }, after: { active: 2, stale: 0 } });
    const active = await h.t.ctx.db.selectFrom('subscribers').select('id').where('site_id', '=', h.site.id).where('is_active', '=', 1).execute();
    const keeperRow = subscribers.find((s) => s.endpoint.endsWith(`/push/${keeper.subscriptionId}`))!;
    expect(active.map((s) => s.id).sort()).toEqual([keeperRow.id, newcomer.subscriberId].sort());
    // The site's count and today's losses follow (in the same transactions).
    expect((await api('GET', `/api/sites/${h.site.id}`)).body.data.site.subscriber_count).toBe(2);
    const health = (await api('GET', `/api/sites/${h.site.id}/analytics/delivery?days=7`)).body.data;
    expect(health.churn.at(-1)).toMatchObject({ new: 1, lost: 2, lost_at_push_service: 0 });
    // Nothing left to clean.
    expect((await api('POST', `/api/sites/${h.site.id}/subscribers/stale/deactivate`)).body.data).toMatchObject({ deactivated: 0, after: { active: 2, stale: 0 } });

    // One of them comes back (its page posts the subscription again): it is active, and not stale the moment it returns.
    const returning = await h.t.ctx.db.selectFrom('subscribers').select(['endpoint', 'p256dh', 'auth']).where('site_id', '=', h.site.id).where('is_active', '=', 0).executeTakeFirstOrThrow();
    const back = await h.t.request('POST', `/api/public/sites/${h.site.id}/subscribers`, { body: { subscription: { endpoint: returning.endpoint, keys: { p256dh: returning.p256dh, auth: returning.auth } } } });
    expect(back.status).toBe(200);
    expect((await api('GET', `/api/sites/${h.site.id}/subscribers/stale`)).body.data).toMatchObject({ active: 3, stale: 0 });
  });

  it('neutralises CSV cells a spreadsheet would run as formulas', async () => {
    const [first] = await h.t.ctx.db.selectFrom('subscribers').select('id').where('site_id', '=', h.site.id).where('is_active', '=', 1).orderBy('id').execute();
    // A value stored by hand (the user-agent parser never yields these): it must reach the CSV as text.
    await h.t.ctx.db.updateTable('subscribers').set({ browser: '=HYPERLINK("https://evil.example","x")', os: '@SUM(1)', country: '+1' }).where('id', '=', first!.id).execute();
    const { id } = await sendAndCollectTokens('Formula check');
    const csv = await api('GET', `/api/notifications/${id}/report.csv`);
    const line = String(csv.body)
      .split('\r\n')
      .find((l) => l.includes(first!.id))!;
    expect(line).toContain(`,"'=HYPERLINK(""https://evil.example"",""x"")",'@SUM(1),'+1,`);
  });
});
