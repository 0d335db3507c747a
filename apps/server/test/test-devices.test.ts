import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from './support/delivery-harness';
import type { TestSubscription } from './support/push-service';
import { waitFor } from './support/test-app';

// Issue 12 §3: test devices (the owner's own browsers, marked from a one-time
// link the SDK claims, or from the Subscribers page) and "Send test", which
// reaches them and nobody else through the local push service (which checks
// VAPID and decrypts every payload), and counts nowhere.

const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const CHROME_MAC = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

function jwtClaims(authorization: string | undefined): { sub: string } {
  const jwt = /t=([^,]+)/.exec(authorization ?? '')?.[1] ?? '';
  return JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8'));
}

describe('test devices and Send test', () => {
  let h: DeliveryHarness;
  const clock = new ManualClock(Date.now());
  let phone: { subscriberId: string; subscription: TestSubscription };
  let laptop: { subscriberId: string; subscription: TestSubscription };
  let visitors: Array<{ subscriberId: string; subscription: TestSubscription }>;

  const api = (method: string, url: string, body?: unknown, token = h.owner.token) => h.t.request(method, url, { token, body });
  const claim = (siteId: string, endpoint: string, code: string) =>
    h.t.request('POST', `/api/public/sites/${siteId}/test-devices`, { body: { endpoint, code }, headers: { origin: 'https://push-shop.example' }, remoteAddress: '203.0.113.7' });
  const codeOf = (url: string) => new URL(url).searchParams.get('herald_test')!;
  const checklist = async () => (await api('GET', `/api/sites/${h.site.id}/checklist`)).body.data.checklist;

  beforeAll(async () => {
    h = await createDeliveryHarness({ clock, env: { VAPID_SUBJECT: 'mailto:push@herald.example' } });
    visitors = [await h.subscribe(), await h.subscribe({ userAgent: CHROME_MAC })];
    phone = await h.subscribe({ userAgent: FIREFOX_LINUX });
    laptop = await h.subscribe({ userAgent: CHROME_MAC });
  });

  afterAll(async () => {
    await h?.close();
  });

  it('starts with a checklist that knows the first subscriber and no test device', async () => {
    expect(await checklist()).toMatchObject({ dismissed: false, install_check: null, active_subscribers: 4, test_devices: 0, test_sent_at: null });
    expect((await checklist()).first_subscriber_at).toEqual(expect.any(String));
  });

  it('makes a one-time link to the site that the SDK claims for its subscription: "<Browser> on <OS>"', async () => {
    const response = await api('POST', `/api/sites/${h.site.id}/test-devices/link`);
    expect(response.status).toBe(200);
    const { url, expires_at } = response.body.data.link;
    expect(url).toMatch(/^https:\/\/push-shop\.example\/\?herald_test=[A-Za-z0-9_-]{32}$/);
    expect(Date.parse(expires_at) - clock.now()).toBe(60 * 60_000);

    const claimed = await claim(h.site.id, phone.subscription.endpoint, codeOf(url));
    expect(claimed.status).toBe(200);
    expect(claimed.headers['access-control-allow-origin']).toBe('*');
    expect(claimed.body.data.device).toEqual({ subscriber_id: phone.subscriberId, name: 'Firefox on Linux', browser: 'Firefox', os: 'Linux' });

    // Once only.
    const again = await claim(h.site.id, laptop.subscription.endpoint, codeOf(url));
    expect(again.status).toBe(410);
    expect(again.body.error.message).toBe('This test-device link was used already. Create a new one in Herald’s setup checklist.');

    expect((await api('GET', `/api/sites/${h.site.id}/test-devices`)).body.data.devices).toEqual([
      { subscriber_id: phone.subscriberId, name: 'Firefox on Linux', browser: 'Firefox', os: 'Linux' },
    ]);
    const listed = (await api('GET', `/api/sites/${h.site.id}/subscribers`)).body.data.subscribers;
    expect(listed.find((s: { id: string }) => s.id === phone.subscriberId)).toMatchObject({ test_device: true, test_device_name: 'Firefox on Linux' });
    expect(listed.find((s: { id: string }) => s.id === laptop.subscriberId)).toMatchObject({ test_device: false, test_device_name: null });
  });

  it('refuses unknown, foreign and expired codes, and endpoints the site does not know', async () => {
    expect((await claim(h.site.id, laptop.subscription.endpoint, 'no-such-code')).status).toBe(404);
    const link = (await api('POST', `/api/sites/${h.site.id}/test-devices/link`)).body.data.link;
    const otherSite = await h.t.createSite(h.owner.token, { name: 'Other', url: 'https://other.example' });
    expect((await claim(otherSite.id, laptop.subscription.endpoint, codeOf(link.url))).status).toBe(404);
    const unknownEndpoint = await claim(h.site.id, 'https://fcm.googleapis.com/fcm/send/unknown', codeOf(link.url));
    expect(unknownEndpoint.status).toBe(404);
    expect(unknownEndpoint.body.error.message).toBe('Subscriber not found');
    clock.advance(60 * 60_000);
    const expired = await claim(h.site.id, laptop.subscription.endpoint, codeOf(link.url));
    expect(expired.status).toBe(410);
    expect(expired.body.error.message).toBe('This test-device link has expired. Create a new one in Herald’s setup checklist.');
    expect((await api('GET', `/api/sites/${h.site.id}/test-devices`)).body.data.devices).toHaveLength(1);
  });

  it('marks, renames and unmarks subscribers from the dashboard (PATCH /subscribers/{id}/test-device)', async () => {
    const marked = await api('PATCH', `/api/subscribers/${laptop.subscriberId}/test-device`, { enabled: true });
    expect(marked.status).toBe(200);
    expect(marked.body.data.device).toEqual({ subscriber_id: laptop.subscriberId, name: 'Chrome on macOS', browser: 'Chrome', os: 'macOS' });

    const renamed = await api('PATCH', `/api/subscribers/${laptop.subscriberId}/test-device`, { enabled: true, name: '  Work laptop ' });
    expect(renamed.body.data.device.name).toBe('Work laptop');
    // Marked again without a name: it keeps the one it has.
    expect((await api('PATCH', `/api/subscribers/${laptop.subscriberId}/test-device`, { enabled: true })).body.data.device.name).toBe('Work laptop');

    expect((await api('PATCH', `/api/subscribers/${laptop.subscriberId}/test-device`, { enabled: false })).body.data).toEqual({ device: null });
    expect((await api('GET', `/api/sites/${h.site.id}/test-devices`)).body.data.devices.map((d: { name: string }) => d.name)).toEqual(['Firefox on Linux']);
    // Unmarked, the name is forgotten: marked again it is "<Browser> on <OS>".
    expect((await api('PATCH', `/api/subscribers/${laptop.subscriberId}/test-device`, { enabled: true })).body.data.device.name).toBe('Chrome on macOS');

    for (const body of [{}, { enabled: 'yes' }, { enabled: true, name: 'x'.repeat(61) }, { enabled: true, colour: 'red' }]) {
      const bad = await api('PATCH', `/api/subscribers/${laptop.subscriberId}/test-device`, body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body.error.message).toEqual(expect.any(String));
    }
    expect((await checklist()).test_devices).toBe(2);
  });

  it('answers 404 to another user on every test-device route, and changes nothing', async () => {
    const intruder = await h.t.createUser();
    const draft = (await api('POST', `/api/sites/${h.site.id}/notifications`, notificationInput())).body.data.notification;
    const attempts: Array<[string, string, unknown?]> = [
      ['GET', `/api/sites/${h.site.id}/test-devices`],
      ['POST', `/api/sites/${h.site.id}/test-devices/link`],
      ['PATCH', `/api/subscribers/${visitors[0]!.subscriberId}/test-device`, { enabled: true }],
      ['POST', `/api/notifications/${draft.id}/test`],
      ['POST', `/api/sites/${h.site.id}/notifications/test`, { title: 'x', message: 'y', destination_url: 'https://push-shop.example/' }],
    ];
    for (const [method, url, body] of attempts) {
      const response = await api(method, url, body, intruder.token);
      expect(response.status, `${method} ${url}`).toBe(404);
    }
    expect(h.push.messages).toEqual([]);
    expect((await api('GET', `/api/sites/${h.site.id}/test-devices`)).body.data.devices).toHaveLength(2);
    await api('DELETE', `/api/notifications/${draft.id}`);
  });

  it('sends a saved notification’s content to the test devices only; its status, counters, performance and the dashboard stay as they were', async () => {
    const draft = (await api('POST', `/api/sites/${h.site.id}/notifications`, notificationInput({ title: 'Summer sale', message: 'Everything 20% off' }))).body.data.notification;
    const dashboardBefore = (await api('GET', `/api/sites/${h.site.id}/analytics/dashboard`)).body.data;

    const response = await api('POST', `/api/notifications/${draft.id}/test`);
    expect(response.status).toBe(200);
    const { test } = response.body.data;
    expect(test).toMatchObject({ devices: 2, sent: 2, failed: 0 });
    expect(test.results).toEqual(
      expect.arrayContaining([
        { subscriber_id: phone.subscriberId, name: 'Firefox on Linux', outcome: 'sent', error: null },
        { subscriber_id: laptop.subscriberId, name: 'Chrome on macOS', outcome: 'sent', error: null },
      ]),
    );

    // The push service got exactly two pushes, to the two test devices, nobody else.
    expect(h.push.messages.map((m) => m.subscriptionId).sort()).toEqual([phone.subscription.id, laptop.subscription.id].sort());
    const received = h.push.messages[0]!;
    // The same payload format as a real send, with a test token of its own.
    expect(received.payload).toEqual({
      title: 'Summer sale',
      body: 'Everything 20% off',
      url: 'https://push-shop.example/sale',
      icon: 'https://push-shop.example/icon.png',
      image: null,
      tag: expect.stringMatching(/^herald-test-/),
      token: expect.stringMatching(/^t\.[\w-]{12}\.[\w-]{22}$/),
      api: 'http://herald.test',
    });
    expect(Number(received.headers.ttl)).toBe(600);
    expect(received.headers.urgency).toBe('high');
    // Signed with the operator's VAPID_SUBJECT.
    expect(jwtClaims(received.headers.authorization).sub).toBe('mailto:push@herald.example');

    // The device reports it delivered and clicked: accepted, counted nowhere.
    const token = (received.payload as { token: string }).token;
    for (const type of ['delivered', 'clicked']) {
      const beacon = await h.t.request('POST', '/api/public/events', { body: { type, token }, headers: { origin: 'https://push-shop.example' } });
      expect(beacon.status).toBe(200);
      expect(beacon.body.data).toEqual({ counted: false });
    }
    // One signature character changed for another (the last one is not changed: its low bits are base64 padding).
    const forged = await h.t.request('POST', '/api/public/events', { body: { type: 'clicked', token: `${token.slice(0, -2)}${token.at(-2) === 'A' ? 'B' : 'A'}${token.at(-1)}` } });
    expect(forged.status).toBe(400);

    const after = (await api('GET', `/api/notifications/${draft.id}`)).body.data.notification;
    expect(after.status).toBe('draft');
    expect(after.sent_at).toBeNull();
    expect(after.stats).toEqual({ total: 0, sent: 0, delivered: 0, clicked: 0, failed: 0 });
    expect((await api('GET', `/api/notifications/${draft.id}/performance`)).body.data).toMatchObject({ sent: 0, delivered: 0, clicked: 0, failed: 0 });
    const rollup = await h.t.ctx.db.selectFrom('stats_hourly').select(['sent', 'delivered', 'clicked', 'failed']).where('site_id', '=', h.site.id).execute();
    expect(rollup.every((row) => Number(row.sent) + Number(row.delivered) + Number(row.clicked) + Number(row.failed) === 0)).toBe(true);
    expect(await h.t.ctx.db.selectFrom('deliveries').select('id').execute()).toEqual([]);
    expect(await h.t.ctx.db.selectFrom('notification_runs').select('id').execute()).toEqual([]);
    const dashboardAfter = (await api('GET', `/api/sites/${h.site.id}/analytics/dashboard`)).body.data;
    expect(dashboardAfter.metrics).toEqual(dashboardBefore.metrics);
    expect(dashboardAfter.recentNotifications).toEqual(dashboardBefore.recentNotifications);

    expect((await checklist()).test_sent_at).toBe(new Date(clock.now()).toISOString());
  });

  it('sends the composer’s content before it is saved, and refuses bad content with a clear 400', async () => {
    h.push.reset();
    const response = await api('POST', `/api/sites/${h.site.id}/notifications/test`, {
      title: 'Draft in progress',
      message: 'Not saved yet',
      destination_url: 'https://push-shop.example/new',
      icon_url: '',
      actions: [{ title: 'Shop now', url: 'https://push-shop.example/shop' }],
    });
    expect(response.status).toBe(200);
    expect(response.body.data.test).toMatchObject({ devices: 2, sent: 2, failed: 0 });
    expect(h.push.messages).toHaveLength(2);
    expect(h.push.messages[0]!.payload).toMatchObject({
      title: 'Draft in progress',
      body: 'Not saved yet',
      url: 'https://push-shop.example/new',
      icon: null,
      actions: [{ action: 'action-1', title: 'Shop now', url: 'https://push-shop.example/shop' }],
    });
    expect((await api('GET', `/api/sites/${h.site.id}/notifications`)).body.data.notifications.map((n: { title: string }) => n.title)).not.toContain('Draft in progress');

    for (const [body, message] of [
      [{ message: 'x', destination_url: 'https://push-shop.example/' }, /Title is required/],
      [{ title: 'x', message: 'y', destination_url: 'javascript:alert(1)' }, /https:\/\//],
      [{ title: 'x'.repeat(51), message: 'y', destination_url: 'https://push-shop.example/' }, /at most 50/],
    ] as const) {
      const bad = await api('POST', `/api/sites/${h.site.id}/notifications/test`, body);
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toMatch(message);
    }
    expect(h.push.messages).toHaveLength(2);
  });

  it('reports a device whose subscription is gone as expired, and deactivates it as any send would', async () => {
    h.push.reset();
    h.push.expire(laptop.subscription.id);
    const activeBefore = (await api('GET', `/api/sites/${h.site.id}`)).body.data.site.subscriber_count;
    const { test } = (await api('POST', `/api/sites/${h.site.id}/notifications/test`, { title: 'Hi', message: 'Test', destination_url: 'https://push-shop.example/' })).body.data;
    expect(test).toMatchObject({ devices: 2, sent: 1, failed: 1 });
    expect(test.results.find((r: { subscriber_id: string }) => r.subscriber_id === laptop.subscriberId)).toMatchObject({
      outcome: 'expired',
      error: expect.stringMatching(/^The browser's subscription has ended/),
    });
    const laptopNow = (await api('GET', `/api/sites/${h.site.id}/subscribers/${laptop.subscriberId}`)).body.data.subscriber;
    expect(laptopNow.is_active).toBe(false);
    expect((await api('GET', `/api/sites/${h.site.id}`)).body.data.site.subscriber_count).toBe(activeBefore - 1);
    expect((await api('GET', `/api/sites/${h.site.id}/test-devices`)).body.data.devices.map((d: { subscriber_id: string }) => d.subscriber_id)).toEqual([phone.subscriberId]);
    // An inactive subscriber cannot be marked again.
    const refused = await api('PATCH', `/api/subscribers/${laptop.subscriberId}/test-device`, { enabled: true });
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toBe('This subscriber has unsubscribed: only active subscribers can be test devices.');
  });

  it('says so when the site has no test device, and sends nothing', async () => {
    h.push.reset();
    await api('PATCH', `/api/subscribers/${phone.subscriberId}/test-device`, { enabled: false });
    const draft = (await api('POST', `/api/sites/${h.site.id}/notifications`, notificationInput())).body.data.notification;
    const response = await api('POST', `/api/notifications/${draft.id}/test`);
    expect(response.status).toBe(409);
    expect(response.body.error.message).toMatch(/^This site has no test devices yet\. Open the test-device link/);
    expect(h.push.messages).toEqual([]);
  });

  it('signs real sends with VAPID_SUBJECT too', async () => {
    h.push.reset();
    const draft = (await api('POST', `/api/sites/${h.site.id}/notifications`, notificationInput())).body.data.notification;
    await api('POST', `/api/notifications/${draft.id}/send`);
    await waitFor(() => h.push.messages.length >= 2, { timeoutMs: 10_000 });
    expect(new Set(h.push.messages.map((m) => jwtClaims(m.headers.authorization).sub))).toEqual(new Set(['mailto:push@herald.example']));
  });

  it('hides the checklist when asked, and shows it again', async () => {
    expect((await api('PATCH', `/api/sites/${h.site.id}/checklist`, { dismissed: true })).body.data.checklist.dismissed).toBe(true);
    expect((await checklist()).dismissed).toBe(true);
    expect((await api('PATCH', `/api/sites/${h.site.id}/checklist`, { dismissed: false })).body.data.checklist.dismissed).toBe(false);
    expect((await api('PATCH', `/api/sites/${h.site.id}/checklist`, { dismissed: 'yes' })).status).toBe(400);
  });
});
