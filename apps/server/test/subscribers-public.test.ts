import crypto from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config';
import { endpointHash } from '../src/delivery/push-endpoints';
import { ManualClock } from '../src/platform/clock';
import { createTestApp, type TestApp, type TestUser } from './support/test-app';

// The public subscribe API (issue 3 part 2): what the browser SDK on a
// customer's site calls, cross-origin, without credentials.

const HOUR = 3_600_000;

function browserKeys() {
  const ecdh = crypto.createECDH('prime256v1');
  return { p256dh: ecdh.generateKeys().toString('base64url'), auth: crypto.randomBytes(16).toString('base64url') };
}

function fcmEndpoint(): string {
  return `https://fcm.googleapis.com/fcm/send/${crypto.randomBytes(12).toString('base64url')}:APA91b${crypto.randomBytes(60).toString('base64url')}`;
}

function subscription(endpoint = fcmEndpoint(), keys = browserKeys()) {
  return { endpoint, expirationTime: null, keys };
}

const CHROME_WINDOWS =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

interface CallOptions {
  address?: string;
  userAgent?: string;
  headers?: Record<string, string>;
  contentType?: string;
}

describe('public subscribe API', () => {
  let t: TestApp;
  let owner: TestUser;
  let site: { id: string };
  const clock = new ManualClock(Date.UTC(2026, 2, 10, 9, 15));
  let addressCounter = 0;

  /** A fresh loopback address per call keeps the per-address limit out of tests that are not about it. */
  function nextAddress(): string {
    addressCounter += 1;
    return `127.0.${Math.floor(addressCounter / 250)}.${(addressCounter % 250) + 1}`;
  }

  async function post(path: string, body: unknown, options: CallOptions = {}) {
    const response = await t.app.inject({
      method: 'POST',
      url: path,
      remoteAddress: options.address ?? nextAddress(),
      headers: {
        'content-type': options.contentType ?? 'application/json',
        'user-agent': options.userAgent ?? CHROME_WINDOWS,
        origin: 'https://shop.example',
        ...options.headers,
      },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: response.statusCode, body: response.json(), headers: response.headers };
  }

  const subscribe = (siteId: string, body: unknown, options?: CallOptions) => post(`/api/public/sites/${siteId}/subscribers`, body, options);
  const unsubscribe = (siteId: string, endpoint: string, options?: CallOptions) =>
    post(`/api/public/sites/${siteId}/subscribers/unsubscribe`, { endpoint }, options);

  async function activeCount(siteId: string): Promise<number> {
    const row = await t.ctx.db.selectFrom('sites').select('active_subscriber_count').where('id', '=', siteId).executeTakeFirstOrThrow();
    return row.active_subscriber_count;
  }

  async function hourly(siteId: string): Promise<{ subscribed: number; unsubscribed: number }> {
    const rows = await t.ctx.db.selectFrom('stats_hourly').select(['subscribed', 'unsubscribed']).where('site_id', '=', siteId).execute();
    return { subscribed: rows.reduce((n, r) => n + r.subscribed, 0), unsubscribed: rows.reduce((n, r) => n + r.unsubscribed, 0) };
  }

  async function stored(siteId: string) {
    return t.ctx.db.selectFrom('subscribers').selectAll().where('site_id', '=', siteId).orderBy('subscribed_at').execute();
  }

  beforeAll(async () => {
    t = await createTestApp({ clock });
    owner = await t.createUser();
    site = await t.createSite(owner.token);
  });
  afterAll(async () => t.close());
  beforeEach(() => clock.advance(1000));

  it('stores a new subscriber (201), counts it and records the hour', async () => {
    const s = await t.createSite(owner.token);
    const sub = subscription();
    const response = await subscribe(s.id, { subscription: sub, timezone: 'Europe/Paris', language: 'fr-fr' });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({ success: true, data: { subscriber: { id: expect.any(String) } } });

    const [row] = await stored(s.id);
    expect(row).toMatchObject({
      id: response.body.data.subscriber.id,
      endpoint: sub.endpoint,
      endpoint_hash: endpointHash(sub.endpoint),
      p256dh: sub.keys.p256dh,
      auth: sub.keys.auth,
      browser: 'Chrome',
      os: 'Windows',
      country: 'Unknown',
      language: 'fr-FR',
      timezone: 'Europe/Paris',
      user_agent: CHROME_WINDOWS,
      is_active: 1,
      subscribed_at: clock.now(),
      last_seen_at: clock.now(),
      unsubscribed_at: null,
    });
    expect(await activeCount(s.id)).toBe(1);
    const site = await t.request('GET', `/api/sites/${s.id}`, { token: owner.token });
    expect(site.body.data.site.subscriber_count).toBe(1);
    const stats = await t.ctx.db.selectFrom('stats_hourly').selectAll().where('site_id', '=', s.id).execute();
    expect(stats).toEqual([
      { site_id: s.id, hour_start: Math.floor(clock.now() / HOUR) * HOUR, sent: 0, delivered: 0, clicked: 0, failed: 0, subscribed: 1, unsubscribed: 0, lost_at_push_service: 0 },
    ]);
  });

  it('updates the same subscriber for a known endpoint (200): new keys, last seen, no double count', async () => {
    const s = await t.createSite(owner.token);
    const sub = subscription();
    const first = await subscribe(s.id, { subscription: sub });
    const subscribedAt = clock.now();
    clock.advance(5 * 60_000);
    const newKeys = browserKeys();
    const second = await subscribe(s.id, { subscription: { ...sub, keys: newKeys }, timezone: 'Asia/Tokyo' }, { userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0' });
    expect(second.status).toBe(200);
    expect(second.body.data.subscriber.id).toBe(first.body.data.subscriber.id);
    const rows = await stored(s.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ p256dh: newKeys.p256dh, auth: newKeys.auth, timezone: 'Asia/Tokyo', browser: 'Firefox', os: 'Linux', subscribed_at: subscribedAt, last_seen_at: clock.now() });
    expect(await activeCount(s.id)).toBe(1);
    expect(await hourly(s.id)).toEqual({ subscribed: 1, unsubscribed: 0 });
  });

  it('unsubscribes by endpoint (200 also when already inactive), 404 for an unknown endpoint, and reactivates on a new subscribe', async () => {
    const s = await t.createSite(owner.token);
    const keep = subscription();
    const leave = subscription();
    await subscribe(s.id, { subscription: keep });
    const created = await subscribe(s.id, { subscription: leave });
    expect(await activeCount(s.id)).toBe(2);

    const first = await unsubscribe(s.id, leave.endpoint);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ success: true, data: { subscriber: { id: created.body.data.subscriber.id, is_active: false } } });
    const row = (await stored(s.id)).find((r) => r.endpoint === leave.endpoint)!;
    expect(row).toMatchObject({ is_active: 0, unsubscribed_at: clock.now() });
    expect(await activeCount(s.id)).toBe(1);
    expect(await hourly(s.id)).toEqual({ subscribed: 2, unsubscribed: 1 });

    const again = await unsubscribe(s.id, leave.endpoint);
    expect(again.status).toBe(200);
    expect(await activeCount(s.id)).toBe(1);
    expect(await hourly(s.id)).toEqual({ subscribed: 2, unsubscribed: 1 });

    const unknown = await unsubscribe(s.id, fcmEndpoint());
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ success: false, error: { message: 'Subscriber not found', code: 'not_found' } });
    // Another site's endpoint is unknown here.
    const other = await t.createSite(owner.token);
    expect((await unsubscribe(other.id, keep.endpoint)).status).toBe(404);
    expect(await activeCount(s.id)).toBe(1);

    const back = await subscribe(s.id, { subscription: leave });
    expect(back.status).toBe(200);
    expect(back.body.data.subscriber.id).toBe(created.body.data.subscriber.id);
    expect((await stored(s.id)).find((r) => r.endpoint === leave.endpoint)).toMatchObject({ is_active: 1, unsubscribed_at: null });
    expect(await activeCount(s.id)).toBe(2);
    expect(await hourly(s.id)).toEqual({ subscribed: 3, unsubscribed: 1 });
  });

  it('moves a subscriber to its new endpoint after pushsubscriptionchange, keeping its id', async () => {
    const s = await t.createSite(owner.token);
    const old = subscription();
    const created = await subscribe(s.id, { subscription: old });
    const renewed = subscription();
    const moved = await subscribe(s.id, { subscription: renewed, previous_endpoint: old.endpoint });
    expect(moved.status).toBe(200);
    expect(moved.body.data.subscriber.id).toBe(created.body.data.subscriber.id);
    const rows = await stored(s.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ endpoint: renewed.endpoint, endpoint_hash: endpointHash(renewed.endpoint), p256dh: renewed.keys.p256dh, is_active: 1 });
    expect(await activeCount(s.id)).toBe(1);
    expect(await hourly(s.id)).toEqual({ subscribed: 1, unsubscribed: 0 });
    // The old endpoint is no longer known.
    expect((await unsubscribe(s.id, old.endpoint)).status).toBe(404);

    // An inactive subscriber that moves comes back and is counted again.
    await unsubscribe(s.id, renewed.endpoint);
    expect(await activeCount(s.id)).toBe(0);
    const third = subscription();
    const back = await subscribe(s.id, { subscription: third, previous_endpoint: renewed.endpoint });
    expect(back.status).toBe(200);
    expect(back.body.data.subscriber.id).toBe(created.body.data.subscriber.id);
    expect(await activeCount(s.id)).toBe(1);
    expect(await hourly(s.id)).toEqual({ subscribed: 2, unsubscribed: 1 });
  });

  it('treats an unknown previous_endpoint as a plain subscribe, and retires the old row when both endpoints are stored', async () => {
    const s = await t.createSite(owner.token);
    const fresh = await subscribe(s.id, { subscription: subscription(), previous_endpoint: fcmEndpoint() });
    expect(fresh.status).toBe(201);
    expect(await activeCount(s.id)).toBe(1);

    const old = subscription();
    const renewed = subscription();
    const oldCreated = await subscribe(s.id, { subscription: old });
    const renewedCreated = await subscribe(s.id, { subscription: renewed });
    expect(await activeCount(s.id)).toBe(3);
    const report = await subscribe(s.id, { subscription: renewed, previous_endpoint: old.endpoint });
    expect(report.status).toBe(200);
    expect(report.body.data.subscriber.id).toBe(renewedCreated.body.data.subscriber.id);
    const rows = await stored(s.id);
    expect(rows.find((r) => r.id === oldCreated.body.data.subscriber.id)).toMatchObject({ is_active: 0 });
    expect(await activeCount(s.id)).toBe(2);
    expect(await hourly(s.id)).toEqual({ subscribed: 3, unsubscribed: 1 });
  });

  it('counts concurrent duplicate subscribes once (and concurrent reactivations once)', async () => {
    const s = await t.createSite(owner.token);
    const sub = subscription();
    const responses = await Promise.all(Array.from({ length: 12 }, () => subscribe(s.id, { subscription: sub })));
    expect(responses.map((r) => r.status).sort((a, b) => b - a)).toEqual([201, ...Array(11).fill(200)]);
    expect(new Set(responses.map((r) => r.body.data.subscriber.id)).size).toBe(1);
    expect(await stored(s.id)).toHaveLength(1);
    expect(await activeCount(s.id)).toBe(1);
    expect(await hourly(s.id)).toEqual({ subscribed: 1, unsubscribed: 0 });

    const offs = await Promise.all(Array.from({ length: 8 }, () => unsubscribe(s.id, sub.endpoint)));
    expect(offs.every((r) => r.status === 200)).toBe(true);
    expect(await activeCount(s.id)).toBe(0);
    const backs = await Promise.all(Array.from({ length: 8 }, () => subscribe(s.id, { subscription: sub })));
    expect(backs.every((r) => r.status === 200)).toBe(true);
    expect(await activeCount(s.id)).toBe(1);
    expect(await hourly(s.id)).toEqual({ subscribed: 2, unsubscribed: 1 });
  });

  it('answers 404 for an unknown site and stores nothing', async () => {
    const response = await subscribe('no-such-site', { subscription: subscription() });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ success: false, error: { message: 'Site not found', code: 'not_found' } });
    expect((await unsubscribe('no-such-site', fcmEndpoint())).status).toBe(404);
    const count = await t.ctx.db.selectFrom('subscribers').select((eb) => eb.fn.countAll<number>().as('n')).where('site_id', '=', 'no-such-site').executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(0);
  });

  describe('refuses keys that could never be encrypted to (RFC 8291)', () => {
    const valid = browserKeys();
    const point = Buffer.from(valid.p256dh, 'base64url');
    const offCurve = Buffer.from(point);
    offCurve[64] = offCurve[64]! ^ 0x01;
    const compressed = crypto.ECDH.convertKey(point, 'prime256v1', undefined, undefined, 'compressed') as Buffer;
    const wrongPrefix = Buffer.from(point);
    wrongPrefix[0] = 0x05;
    const cases: Array<[string, { p256dh: string; auth: string }, RegExp]> = [
      ['a point not on the curve', { ...valid, p256dh: offCurve.toString('base64url') }, /p256dh is not a point on the P-256 curve/],
      ['an all-zero point', { ...valid, p256dh: Buffer.concat([Buffer.from([4]), Buffer.alloc(64)]).toString('base64url') }, /not a point on the P-256 curve/],
      ['a 64-byte key', { ...valid, p256dh: point.subarray(0, 64).toString('base64url') }, /65-byte uncompressed P-256 public key \(got 64 bytes\)/],
      ['a compressed key', { ...valid, p256dh: compressed.toString('base64url') }, /65-byte uncompressed P-256 public key \(got 33 bytes\)/],
      ['a 65-byte key without the 0x04 prefix', { ...valid, p256dh: wrongPrefix.toString('base64url') }, /not starting with 0x04/],
      ['p256dh with characters outside base64url', { ...valid, p256dh: `${valid.p256dh.slice(0, 40)}!*${valid.p256dh.slice(42)}` }, /p256dh must be base64url-encoded/],
      ['an empty p256dh', { ...valid, p256dh: '' }, /got 0 bytes/],
      ['a 15-byte auth secret', { ...valid, auth: crypto.randomBytes(15).toString('base64url') }, /auth must be 16 bytes \(got 15\)/],
      ['a 17-byte auth secret', { ...valid, auth: crypto.randomBytes(17).toString('base64url') }, /auth must be 16 bytes \(got 17\)/],
      ['auth that is not base64url', { ...valid, auth: 'not base64 at all!!' }, /auth must be base64url-encoded/],
    ];
    for (const [name, keys, message] of cases) {
      it(`refuses ${name}`, async () => {
        const s = await t.createSite(owner.token);
        const response = await subscribe(s.id, { subscription: subscription(fcmEndpoint(), keys) });
        expect(response.status).toBe(400);
        expect(response.body.success).toBe(false);
        expect(response.body.error.message).toMatch(message);
        expect(await stored(s.id)).toHaveLength(0);
        expect(await activeCount(s.id)).toBe(0);
      });
    }

    it('accepts standard base64 with padding and stores base64url', async () => {
      const keys = browserKeys();
      const standard = { p256dh: Buffer.from(keys.p256dh, 'base64url').toString('base64'), auth: Buffer.from(keys.auth, 'base64url').toString('base64') };
      const response = await subscribe(site.id, { subscription: subscription(fcmEndpoint(), standard) });
      expect(response.status).toBe(201);
      const row = await t.ctx.db.selectFrom('subscribers').selectAll().where('id', '=', response.body.data.subscriber.id).executeTakeFirstOrThrow();
      expect(row.p256dh).toBe(keys.p256dh);
      expect(row.auth).toBe(keys.auth);
    });

    it('explains a missing or malformed body', async () => {
      const missingKeys = await subscribe(site.id, { subscription: { endpoint: fcmEndpoint() } });
      expect(missingKeys.status).toBe(400);
      expect(missingKeys.body.error.message).toMatch(/keys/);
      const noSubscription = await subscribe(site.id, {});
      expect(noSubscription.status).toBe(400);
      expect(noSubscription.body.error.message).toMatch(/subscription/);
      const notJson = await subscribe(site.id, '{"subscription":');
      expect(notJson.status).toBe(400);
      expect(notJson.body.success).toBe(false);
      const huge = await subscribe(site.id, { subscription: subscription(), language: 'x'.repeat(20_000) });
      expect(huge.status).toBe(413);
      expect(huge.body.success).toBe(false);
    });
  });

  describe('admits only push-service endpoints (SSRF guard)', () => {
    const refused: Array<[string, RegExp]> = [
      ['http://fcm.googleapis.com/fcm/send/abc', /must be an https:\/\/ URL/],
      ['https://evil.example/push/abc', /not on a known push service \(evil\.example\)/],
      ['https://fcm.googleapis.com.evil.example/fcm/send/abc', /not on a known push service/],
      ['https://evilpush.services.mozilla.com/wpush/v2/abc', /not on a known push service/],
      ['https://fcm.googleapis.com:8443/fcm/send/abc', /not on a known push service/],
      ['https://user:pass@fcm.googleapis.com/fcm/send/abc', /not on a known push service/],
      ['https://127.0.0.1/push', /not on a known push service/],
      ['https://[::1]/push', /not on a known push service/],
      ['http://127.0.0.1:9911/push/abc', /must be an https:\/\/ URL/],
      ['javascript:alert(1)', /must be an https:\/\/ URL/],
      ['not a url', /must be a URL/],
      ['https://fcm.googleapis.com\\@evil.example/x', /must be a URL/],
    ];
    for (const [endpoint, message] of refused) {
      it(`refuses ${endpoint}`, async () => {
        const response = await subscribe(site.id, { subscription: subscription(endpoint) });
        expect(response.status).toBe(400);
        expect(response.body.error.message).toMatch(message);
      });
    }

    const accepted = [
      'https://fcm.googleapis.com/fcm/send/dGVzdA:APA91bH',
      'https://android.googleapis.com/gcm/send/dGVzdA:APA91bH',
      'https://updates.push.services.mozilla.com/wpush/v2/gAAAAABk',
      'https://eu-west.push.services.mozilla.com/wpush/v2/gAAAA',
      'https://web.push.apple.com/QGx0rXQ9',
      'https://wns2-par02p.notify.windows.com/w/?token=BQYAAAD',
    ];
    for (const endpoint of accepted) {
      it(`accepts ${endpoint}`, async () => {
        const response = await subscribe(site.id, { subscription: subscription(`${endpoint}${crypto.randomBytes(4).toString('hex')}`) });
        expect(response.status).toBe(201);
      });
    }

    it('admits an origin listed in EXTRA_PUSH_ORIGINS, by exact origin', async () => {
      const local = await createTestApp({ env: { EXTRA_PUSH_ORIGINS: 'http://127.0.0.1:9911' } });
      try {
        const user = await local.createUser();
        const s = await local.createSite(user.token);
        const call = (endpoint: string) =>
          local.app.inject({
            method: 'POST',
            url: `/api/public/sites/${s.id}/subscribers`,
            payload: { subscription: subscription(endpoint) },
          });
        expect((await call('http://127.0.0.1:9911/push/abc')).statusCode).toBe(201);
        for (const endpoint of ['http://127.0.0.1:9912/push/abc', 'https://127.0.0.1:9911/push/abc', 'http://localhost:9911/push/abc']) {
          const response = await call(endpoint);
          expect(response.statusCode, endpoint).toBe(400);
        }
      } finally {
        await local.close();
      }
    });
  });

  describe('CORS: open to any origin, nothing secret, no credentials', () => {
    it('answers the preflight for both routes', async () => {
      for (const path of [`/api/public/sites/${site.id}/subscribers`, `/api/public/sites/${site.id}/subscribers/unsubscribe`]) {
        const response = await t.app.inject({
          method: 'OPTIONS',
          url: path,
          headers: { origin: 'https://any-customer.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
        });
        expect(response.statusCode).toBe(204);
        expect(response.headers['access-control-allow-origin']).toBe('*');
        expect(String(response.headers['access-control-allow-methods'])).toContain('POST');
        expect(String(response.headers['access-control-allow-headers']).toLowerCase()).toContain('content-type');
        expect(response.headers['access-control-allow-credentials']).toBeUndefined();
      }
    });

    it('lets any origin read successes and errors', async () => {
      const created = await subscribe(site.id, { subscription: subscription() }, { headers: { origin: 'https://another.example' } });
      expect(created.headers['access-control-allow-origin']).toBe('*');
      const invalid = await subscribe(site.id, { subscription: subscription('http://nope.example/') });
      expect(invalid.status).toBe(400);
      expect(invalid.headers['access-control-allow-origin']).toBe('*');
      const missing = await subscribe('no-such-site', { subscription: subscription() });
      expect(missing.headers['access-control-allow-origin']).toBe('*');
      expect(JSON.stringify(created.body)).not.toMatch(/vapid|p256dh|auth|endpoint/i);
    });

    it('does not open the dashboard API', async () => {
      const response = await t.app.inject({
        method: 'GET',
        url: `/api/sites/${site.id}/subscribers`,
        headers: { origin: 'https://evil.example', authorization: `Bearer ${owner.token}` },
      });
      expect(response.statusCode).toBe(200);
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
    });

    it('accepts JSON sent as text/plain (a CORS simple request, no preflight)', async () => {
      const response = await subscribe(site.id, JSON.stringify({ subscription: subscription() }), { contentType: 'text/plain;charset=UTF-8' });
      expect(response.status).toBe(201);
      const junk = await subscribe(site.id, 'hello', { contentType: 'text/plain' });
      expect(junk.status).toBe(400);
    });
  });

  describe('rate limits', () => {
    it('answers 429 with Retry-After after the per-address limit, per address, and lets it go after the window', async () => {
      const s = await t.createSite(owner.token);
      const address = '198.51.100.7';
      for (let i = 0; i < 60; i += 1) {
        const response = await subscribe(s.id, { subscription: subscription() }, { address });
        expect(response.status).toBe(201);
      }
      const limited = await subscribe(s.id, { subscription: subscription() }, { address });
      expect(limited.status).toBe(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
      expect(limited.body.error.message).toMatch(/Too many requests from your address\. Please try again in \d+ seconds\./);
      expect(limited.headers['access-control-allow-origin']).toBe('*');
      // Unsubscribe shares the budget; junk bodies count too.
      expect((await unsubscribe(s.id, fcmEndpoint(), { address })).status).toBe(429);
      expect((await subscribe(s.id, 'junk', { address })).status).toBe(429);
      // Another address is not affected.
      expect((await subscribe(s.id, { subscription: subscription() }, { address: '198.51.100.8' })).status).toBe(201);
      expect(await activeCount(s.id)).toBe(61);

      clock.advance(61_000);
      expect((await subscribe(s.id, { subscription: subscription() }, { address })).status).toBe(201);
    });

    it('counts an IPv6 client per /64, since it can pick any address in it', async () => {
      const s = await t.createSite(owner.token);
      for (let i = 0; i < 60; i += 1) {
        const response = await subscribe(s.id, {}, { address: `2001:db8:5:7:${(i + 1).toString(16)}::1` });
        expect(response.status).toBe(400);
      }
      expect((await subscribe(s.id, {}, { address: '2001:db8:5:7:ffff::2' })).status).toBe(429);
      expect((await subscribe(s.id, {}, { address: '2001:db8:5:8::1' })).status).toBe(400);
    });

    it('caps one site at 3000 calls a minute whatever the addresses', async () => {
      const s = await t.createSite(owner.token);
      let lastStatus = 0;
      for (let i = 0; i < 3000; i += 1) {
        const response = await t.app.inject({
          method: 'POST',
          url: `/api/public/sites/${s.id}/subscribers`,
          remoteAddress: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
          headers: { 'content-type': 'application/json' },
          payload: '{}',
        });
        lastStatus = response.statusCode;
      }
      expect(lastStatus).toBe(400);
      const limited = await subscribe(s.id, { subscription: subscription() }, { address: '203.0.113.99' });
      expect(limited.status).toBe(429);
      expect(limited.body.error.message).toMatch(/Too many subscription requests for this site/);
      // Other sites are not affected.
      expect((await subscribe(site.id, { subscription: subscription() }, { address: '203.0.113.99' })).status).toBe(201);
    });
  });

  describe('rate limits from the settings', () => {
    let small: TestApp;
    afterAll(async () => small?.close());

    it('takes the per-site limit from SUBSCRIBE_LIMIT_PER_SITE_PER_MINUTE, and the per-address one from SUBSCRIBE_LIMIT_PER_ADDRESS_PER_MINUTE', async () => {
      small = await createTestApp({ clock, env: { SUBSCRIBE_LIMIT_PER_SITE_PER_MINUTE: '5', SUBSCRIBE_LIMIT_PER_ADDRESS_PER_MINUTE: '2' } });
      const someone = await small.createUser();
      const shop = await small.createSite(someone.token);
      const call = (address: string) =>
        small.app.inject({ method: 'POST', url: `/api/public/sites/${shop.id}/subscribers`, remoteAddress: address, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ subscription: subscription() }) });
      expect((await call('198.51.100.1')).statusCode).toBe(201);
      expect((await call('198.51.100.1')).statusCode).toBe(201);
      const byAddress = await call('198.51.100.1');
      expect(byAddress.statusCode).toBe(429);
      expect(byAddress.json().error.message).toMatch(/^Too many requests from your address/);
      // The refused call counted against its address only: the site takes three more, its fifth.
      for (const address of ['198.51.100.2', '198.51.100.3', '198.51.100.4']) expect((await call(address)).statusCode).toBe(201);
      const bySite = await call('198.51.100.5');
      expect(bySite.statusCode).toBe(429);
      expect(bySite.json().error.message).toMatch(/^Too many subscription requests for this site/);
      expect(Number(bySite.headers['retry-after'])).toBeGreaterThan(0);
    });

    it('refuses a limit that is not a positive whole number at start', () => {
      expect(() => loadConfig({ DATA_DIR: '/tmp/unused', SUBSCRIBE_LIMIT_PER_SITE_PER_MINUTE: '0' })).toThrow(/SUBSCRIBE_LIMIT_PER_SITE_PER_MINUTE/);
    });
  });

  describe('browser, OS and country', () => {
    const agents: Array<[string, string, string]> = [
      [CHROME_WINDOWS, 'Chrome', 'Windows'],
      ['Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0', 'Firefox', 'Linux'],
      ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1', 'Safari', 'iOS'],
      // An iOS home-screen web app (the only place iOS allows web push) has no Safari token.
      ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148', 'Safari', 'iOS'],
      ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15', 'Safari', 'macOS'],
      [`${CHROME_WINDOWS} Edg/126.0.2592.87`, 'Edge', 'Windows'],
      [`${CHROME_WINDOWS} OPR/111.0.0.0`, 'Opera', 'Windows'],
      [
        'Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Mobile Safari/537.36',
        'Samsung Internet',
        'Android',
      ],
      ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36', 'Chrome', 'Android'],
      ['Mozilla/5.0 (Android 14; Mobile; rv:127.0) Gecko/127.0 Firefox/127.0', 'Firefox', 'Android'],
      ['totally unknown agent', 'Unknown', 'Unknown'],
      ['', 'Unknown', 'Unknown'],
    ];
    for (const [userAgent, browser, os] of agents) {
      it(`files "${userAgent.slice(0, 60)}…" as ${browser} on ${os}`, async () => {
        const response = await subscribe(site.id, { subscription: subscription() }, { userAgent });
        expect(response.status).toBe(201);
        const row = await t.ctx.db.selectFrom('subscribers').selectAll().where('id', '=', response.body.data.subscriber.id).executeTakeFirstOrThrow();
        expect({ browser: row.browser, os: row.os, user_agent: row.user_agent }).toEqual({ browser, os, user_agent: userAgent || null });
      });
    }

    const countries: Array<[string, string]> = [
      ['81.2.69.142', 'GB'],
      ['8.8.8.8', 'US'],
      ['2001:4860:4860::8888', 'US'],
      ['::ffff:81.2.69.142', 'GB'],
      ['127.0.0.1', 'Unknown'],
      ['::1', 'Unknown'],
      ['192.168.1.20', 'Unknown'],
    ];
    for (const [address, country] of countries) {
      it(`files a subscriber from ${address} under ${country}`, async () => {
        const response = await subscribe(site.id, { subscription: subscription() }, { address });
        expect(response.status).toBe(201);
        const row = await t.ctx.db.selectFrom('subscribers').select('country').where('id', '=', response.body.data.subscriber.id).executeTakeFirstOrThrow();
        expect(row.country).toBe(country);
      });
    }

    it('ignores X-Forwarded-For unless TRUST_PROXY is set', async () => {
      const spoofed = await subscribe(site.id, { subscription: subscription() }, { address: '127.0.0.1', headers: { 'x-forwarded-for': '81.2.69.142' } });
      const row = await t.ctx.db.selectFrom('subscribers').select('country').where('id', '=', spoofed.body.data.subscriber.id).executeTakeFirstOrThrow();
      expect(row.country).toBe('Unknown');

      const proxied = await createTestApp({ env: { TRUST_PROXY: 'true' } });
      try {
        const user = await proxied.createUser();
        const s = await proxied.createSite(user.token);
        const response = await proxied.app.inject({
          method: 'POST',
          url: `/api/public/sites/${s.id}/subscribers`,
          remoteAddress: '127.0.0.1',
          headers: { 'x-forwarded-for': '81.2.69.142' },
          payload: { subscription: subscription() },
        });
        expect(response.statusCode).toBe(201);
        const behindProxy = await proxied.ctx.db.selectFrom('subscribers').select('country').executeTakeFirstOrThrow();
        expect(behindProxy.country).toBe('GB');
      } finally {
        await proxied.close();
      }
    });

    it('stores an unknown timezone or malformed language as null rather than refusing the subscriber', async () => {
      const response = await subscribe(site.id, { subscription: subscription(), timezone: 'Mars/Olympus_Mons', language: '!!' });
      expect(response.status).toBe(201);
      const row = await t.ctx.db.selectFrom('subscribers').selectAll().where('id', '=', response.body.data.subscriber.id).executeTakeFirstOrThrow();
      expect(row.timezone).toBeNull();
      expect(row.language).toBeNull();
    });
  });

  describe('subscribers gone (the delivery engine’s ports, as a 404/410 result uses them)', () => {
    /** What the engine's result transaction does for a 404/410 (record-outcomes.ts writeOutcomes). */
    const markSubscriberGone = (siteId: string, subscriberId: string, endpointHashSentTo: string, now: number) =>
      t.ctx.db.transaction().execute(async (trx) => {
        const gone = await t.ctx.deliveryPorts.deactivateGoneSubscribers(trx, [{ subscriberId, endpointHashSentTo }], now);
        await t.ctx.deliveryPorts.addToSiteCounters(trx, siteId, now, { unsubscribed: gone });
        return gone === 1;
      });

    it('deactivates once, only while the stored endpoint is the one sent to', async () => {
      const s = await t.createSite(owner.token);
      const sub = subscription();
      const created = await subscribe(s.id, { subscription: sub });
      const id = created.body.data.subscriber.id;
      const now = clock.now();

      expect(await markSubscriberGone(s.id, id, endpointHash(sub.endpoint), now)).toBe(true);
      expect(await activeCount(s.id)).toBe(0);
      expect(await hourly(s.id)).toEqual({ subscribed: 1, unsubscribed: 1 });
      expect((await stored(s.id))[0]).toMatchObject({ is_active: 0, unsubscribed_at: now });
      // Twice: nothing more.
      expect(await markSubscriberGone(s.id, id, endpointHash(sub.endpoint), now)).toBe(false);
      expect(await activeCount(s.id)).toBe(0);

      // Re-subscribed with a new endpoint meanwhile: a 410 for the old endpoint must not remove it.
      const renewed = subscription();
      await subscribe(s.id, { subscription: renewed, previous_endpoint: sub.endpoint });
      expect(await activeCount(s.id)).toBe(1);
      expect(await markSubscriberGone(s.id, id, endpointHash(sub.endpoint), clock.now())).toBe(false);
      expect((await stored(s.id))[0]).toMatchObject({ is_active: 1 });
      expect(await activeCount(s.id)).toBe(1);

      expect(await markSubscriberGone(s.id, id, endpointHash(renewed.endpoint), clock.now())).toBe(true);
      expect(await activeCount(s.id)).toBe(0);
      expect(await hourly(s.id)).toEqual({ subscribed: 2, unsubscribed: 2 });
      expect(await markSubscriberGone(s.id, 'no-such-id', endpointHash(renewed.endpoint), clock.now())).toBe(false);
    });
  });

  describe('subscriber-created hooks (welcome campaigns enrol here)', () => {
    it('runs each hook once per new subscriber, after commit, and never fails the subscribe call', async () => {
      const s = await t.createSite(owner.token);
      const seen: Array<{ subscriberId: string; siteId: string; subscribedAt: number; visible: boolean }> = [];
      t.ctx.subscriberCreatedHooks = [
        {
          run: async (events) => {
            for (const event of events) {
              const row = await t.ctx.db.selectFrom('subscribers').select('id').where('id', '=', event.subscriberId).executeTakeFirst();
              seen.push({ ...event, visible: row !== undefined });
            }
          },
        },
        {
          run: async () => {
            throw new Error('campaign store unavailable');
          },
        },
      ];
      try {
        const sub = subscription();
        const created = await subscribe(s.id, { subscription: sub });
        expect(created.status).toBe(201);
        expect(seen).toEqual([{ subscriberId: created.body.data.subscriber.id, siteId: s.id, subscribedAt: clock.now(), visible: true }]);
        // Refresh, unsubscribe, reactivation and endpoint moves are not new subscribers.
        await subscribe(s.id, { subscription: sub });
        await unsubscribe(s.id, sub.endpoint);
        await subscribe(s.id, { subscription: sub });
        await subscribe(s.id, { subscription: subscription(), previous_endpoint: sub.endpoint });
        expect(seen).toHaveLength(1);
      } finally {
        t.ctx.subscriberCreatedHooks = undefined;
      }
    });

    it('calls a hook with `concerns` only for the sites it holds for, read with the subscribe', async () => {
      const wanted = await t.createSite(owner.token);
      const other = await t.createSite(owner.token);
      const concernedCalls: string[][] = [];
      const everyCalls: string[][] = [];
      t.ctx.subscriberCreatedHooks = [
        { concerns: (siteId) => sql<boolean>`${siteId} = ${wanted.id}`, run: async (events) => void concernedCalls.push(events.map((event) => event.siteId)) },
        { run: async (events) => void everyCalls.push(events.map((event) => event.siteId)) },
      ];
      try {
        const answers = await Promise.all([wanted, other, other, wanted, other].map((s) => subscribe(s.id, { subscription: subscription() })));
        expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201, 201, 201]);
        // The other site's subscribers never reach the hook that does not concern it; a call with none is not made.
        expect(concernedCalls.flat()).toEqual([wanted.id, wanted.id]);
        expect(concernedCalls.every((call) => call.length > 0)).toBe(true);
        expect(everyCalls.flat().sort()).toEqual([wanted.id, wanted.id, other.id, other.id, other.id].sort());

        await subscribe(other.id, { subscription: subscription() });
        expect(concernedCalls.flat()).toHaveLength(2);
        expect(everyCalls.flat()).toHaveLength(6);
      } finally {
        t.ctx.subscriberCreatedHooks = undefined;
      }
    });
  });

  it('documents the public routes in the OpenAPI document under the "public" tag, without bearer security', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/docs/json' });
    const doc = response.json();
    const subscribeDoc = doc.paths['/api/public/sites/{siteId}/subscribers'].post;
    const unsubscribeDoc = doc.paths['/api/public/sites/{siteId}/subscribers/unsubscribe'].post;
    for (const operation of [subscribeDoc, unsubscribeDoc]) {
      expect(operation.tags).toEqual(['public']);
      expect(operation.security).toEqual([]);
    }
    expect(Object.keys(subscribeDoc.responses)).toEqual(expect.arrayContaining(['200', '201']));
    expect(doc.paths['/api/sites/{siteId}/subscribers'].get.tags).toEqual(['subscribers']);
  });
});
