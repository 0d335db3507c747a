import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { siteEventRetentionSource } from '../src/features/site-events/service';
import { ManualClock } from '../src/platform/clock';
import { createDeliveryHarness, type DeliveryHarness } from './support/delivery-harness';
import type { TestSubscription } from './support/push-service';

// Issue 4 §2: the browser SDK's public calls (track, identify, tags), as
// packages/sdk/src/page/herald.ts sends them, and the site's recent events.

const ORIGIN = 'https://push-shop.example';

describe('public SDK endpoints: track, identify, tags', () => {
  let h: DeliveryHarness;
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
  let subscriber: { subscriberId: string; subscription: TestSubscription };
  let address = 0;

  const post = (path: string, body: unknown, options: { contentType?: string; remoteAddress?: string } = {}) => {
    address += 1;
    return h.t.request('POST', `/api/public/sites/${h.site.id}/${path}`, {
      body: options.contentType === 'text/plain' ? JSON.stringify(body) : body,
      headers: { origin: ORIGIN, ...(options.contentType ? { 'content-type': options.contentType } : {}) },
      remoteAddress: options.remoteAddress ?? `192.0.2.${address % 250}`,
    });
  };

  /** What the site's backend computes (docs/security.md, "Identity verification"). */
  const identityHash = async (externalId: string) => {
    const { secret } = (await h.t.request('GET', `/api/sites/${h.site.id}/identity-secret`, { token: h.owner.token })).body.data;
    return crypto.createHmac('sha256', secret).update(externalId).digest('hex');
  };

  beforeAll(async () => {
    h = await createDeliveryHarness({ clock, engine: false });
    subscriber = await h.subscribe();
  });
  afterAll(async () => h.close());

  it('answers the CORS preflight and every answer (errors too) with an open origin', async () => {
    for (const path of ['track', 'identify', 'tags']) {
      const preflight = await h.t.app.inject({
        method: 'OPTIONS',
        url: `/api/public/sites/${h.site.id}/${path}`,
        headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
      expect(preflight.statusCode, path).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe('*');
      expect(preflight.headers['access-control-allow-methods']).toContain('POST');
      expect(preflight.headers['access-control-allow-headers']).toContain('content-type');
      const refused = await post(path, {});
      expect(refused.status).toBe(400);
      expect(refused.headers['access-control-allow-origin']).toBe('*');
    }
    // The dashboard and v1 APIs reflect no origin.
    const dashboard = await h.t.request('GET', `/api/sites/${h.site.id}/events`, { token: h.owner.token, headers: { origin: ORIGIN } });
    expect(dashboard.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('takes exactly what the SDK sends, as JSON or as text/plain', async () => {
    const { endpoint } = subscriber.subscription;
    const tracked = await post('track', { endpoint, event: 'purchase', data: { amount: 49.5, currency: 'EUR' }, idempotency_key: 'order-1001' });
    expect(tracked.status).toBe(202);
    expect(tracked.body).toEqual({ success: true, data: { event: { id: expect.any(String), event: 'purchase', duplicate: false, subscribers: 1, triggered: 0 } } });
    expect((await post('track', { endpoint, event: 'signup' }, { contentType: 'text/plain' })).status).toBe(202);

    const identified = await post('identify', { endpoint, external_id: 'customer-42', identity_hash: await identityHash('customer-42') });
    expect(identified.status).toBe(200);
    expect(identified.body.data).toEqual({ subscriber: { id: subscriber.subscriberId, external_id: 'customer-42', verified: true } });
    const stored = await h.t.ctx.db.selectFrom('subscribers').select('external_id').where('id', '=', subscriber.subscriberId).executeTakeFirstOrThrow();
    expect(stored.external_id).toBe('customer-42');

    const added = await post('tags', { endpoint, add: ['vip', 'newsletter', 'vip'] });
    expect(added.body.data).toEqual({ subscriber: { id: subscriber.subscriberId, tags: ['newsletter', 'vip'] } });
    const removed = await post('tags', { endpoint, remove: ['newsletter', 'never-had-it'] });
    expect(removed.body.data.subscriber.tags).toEqual(['vip']);
    // The dashboard shows the same tags.
    const shown = await h.t.request('GET', `/api/sites/${h.site.id}/subscribers/${subscriber.subscriberId}`, { token: h.owner.token });
    expect(shown.body.data.subscriber.tags).toEqual(['vip']);
  });

  it('answers 404 for an endpoint that is not an active subscriber of the site, and for an unknown site', async () => {
    const stranger = h.push.createSubscription({ applicationServerKey: h.site.vapid_public_key });
    for (const [path, body] of [
      ['track', { event: 'purchase' }],
      ['identify', { external_id: 'customer-42', identity_hash: await identityHash('customer-42') }],
      ['tags', { add: ['vip'] }],
    ] as const) {
      const response = await post(path, { endpoint: stranger.endpoint, ...body });
      expect(response.status, path).toBe(404);
      expect(response.body).toEqual({ success: false, error: { message: 'Subscriber not found', code: 'not_found' } });
    }
    const otherSite = await h.t.request('POST', `/api/public/sites/no-such-site/track`, { body: { endpoint: subscriber.subscription.endpoint, event: 'purchase' } });
    expect(otherSite.status).toBe(404);
    expect(otherSite.body.error.message).toBe('Site not found');

    const leaving = await h.subscribe();
    await h.t.request('POST', `/api/public/sites/${h.site.id}/subscribers/unsubscribe`, { body: { endpoint: leaving.subscription.endpoint } });
    expect((await post('track', { endpoint: leaving.subscription.endpoint, event: 'purchase' })).status).toBe(404);
  });

  it('refuses malformed calls with clear messages and stores nothing', async () => {
    const { endpoint } = subscriber.subscription;
    const before = await h.t.ctx.db.selectFrom('site_events').select('id').execute();
    const cases: Array<[string, unknown, RegExp]> = [
      ['track', { event: 'purchase' }, /endpoint is required/],
      ['track', { endpoint }, /Event name is required/],
      ['track', { endpoint, event: 'add to cart' }, /letters, digits/],
      ['track', { endpoint, event: 'e'.repeat(65) }, /at most 64/],
      ['track', { endpoint, event: 'purchase', data: 'text' }, /data/],
      ['track', { endpoint, event: 'purchase', data: { big: 'x'.repeat(4100) } }, /at most 4096 characters/],
      ['track', { endpoint, event: 'purchase', idempotency_key: 'k'.repeat(201) }, /idempotency_key must be at most 200/],
      ['identify', { endpoint, external_id: ' ' }, /external_id must not be empty/],
      ['identify', { endpoint, external_id: 'x'.repeat(201) }, /at most 200/],
      ['tags', { endpoint }, /add or remove must list at least one tag/],
      ['tags', { endpoint, add: [], remove: [] }, /add or remove must list at least one tag/],
      ['tags', { endpoint, add: ['t'.repeat(65)] }, /at most 64 characters/],
      ['tags', { endpoint, add: [''] }, /tags must not be empty/],
      ['tags', { endpoint, add: ['size|xl'] }, /a tag must not contain "\|"/],
    ];
    for (const [path, body, message] of cases) {
      const response = await post(path, body);
      expect(response.status, `${path} ${JSON.stringify(body).slice(0, 60)}`).toBe(400);
      expect(response.body.error.message).toMatch(message);
    }
    const malformed = await h.t.app.inject({ method: 'POST', url: `/api/public/sites/${h.site.id}/track`, headers: { 'content-type': 'application/json' }, payload: '{"endpoint":' });
    expect(malformed.statusCode).toBe(400);
    expect(await h.t.ctx.db.selectFrom('site_events').select('id').execute()).toHaveLength(before.length);

    // A subscriber has at most 50 tags: an addition beyond that changes nothing.
    const many = Array.from({ length: 50 }, (_, i) => `tag-${i}`);
    expect((await post('tags', { endpoint, add: many })).status).toBe(400);
    const shown = await h.t.request('GET', `/api/sites/${h.site.id}/subscribers/${subscriber.subscriberId}`, { token: h.owner.token });
    expect(shown.body.data.subscriber.tags).toEqual(['vip']);
  });

  it('limits each address to 120 calls a minute (429 with Retry-After)', async () => {
    const { endpoint } = subscriber.subscription;
    const statuses: number[] = [];
    for (let i = 0; i < 120; i++) statuses.push((await post('track', { endpoint, event: 'page_view' }, { remoteAddress: '198.18.0.7' })).status);
    expect(statuses.every((status) => status === 202)).toBe(true);
    const limited = await post('track', { endpoint, event: 'page_view' }, { remoteAddress: '198.18.0.7' });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.headers['access-control-allow-origin']).toBe('*');
    clock.advance(60_000);
    expect((await post('track', { endpoint, event: 'page_view' }, { remoteAddress: '198.18.0.7' })).status).toBe(202);
  });
});

describe('recent events of a site', () => {
  let h: DeliveryHarness;
  const clock = new ManualClock(Date.UTC(2026, 6, 1, 12));

  beforeAll(async () => {
    h = await createDeliveryHarness({ clock, engine: false });
  });
  afterAll(async () => h.close());

  it('lists events from the browser and the backend, newest first, with what they triggered', async () => {
    const { subscriberId, subscription } = await h.subscribe();
    await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, {
      token: h.owner.token,
      body: { type: 'TRIGGERED', title: 'Hi', message: 'Hello', destination_url: 'https://push-shop.example/', trigger: { event: 'signup', delay_minutes: 60 } },
    });
    await h.t.request('POST', `/api/public/sites/${h.site.id}/track`, { body: { endpoint: subscription.endpoint, event: 'signup', data: { plan: 'pro' } } });
    clock.advance(1000);
    const key = (await h.t.request('POST', `/api/sites/${h.site.id}/api-keys`, { token: h.owner.token, body: { name: 'Backend' } })).body.data.key;
    await h.t.request('POST', `/api/v1/sites/${h.site.id}/events`, {
      body: { event: 'invoice_paid', subscriber_id: subscriberId, idempotency_key: 'inv-7' },
      headers: { authorization: `Bearer ${key}` },
    });

    const list = await h.t.request('GET', `/api/sites/${h.site.id}/events`, { token: h.owner.token });
    expect(list.status).toBe(200);
    expect(list.body.data.events).toEqual([
      {
        id: expect.any(String),
        event: 'invoice_paid',
        source: 'api',
        subscriber_id: subscriberId,
        external_id: null,
        data: null,
        idempotency_key: 'inv-7',
        subscribers: 1,
        triggered: 0,
        received_at: new Date(clock.now()).toISOString(),
      },
      {
        id: expect.any(String),
        event: 'signup',
        source: 'browser',
        subscriber_id: subscriberId,
        external_id: null,
        data: { plan: 'pro' },
        idempotency_key: null,
        subscribers: 1,
        triggered: 1,
        received_at: new Date(clock.now() - 1000).toISOString(),
      },
    ]);
    const limited = await h.t.request('GET', `/api/sites/${h.site.id}/events?limit=1`, { token: h.owner.token });
    expect(limited.body.data.events).toHaveLength(1);
    expect((await h.t.request('GET', `/api/sites/${h.site.id}/events?limit=500`, { token: h.owner.token })).status).toBe(400);
  });

  it('keeps events for 30 days', async () => {
    const { subscription } = await h.subscribe();
    await h.t.request('POST', `/api/public/sites/${h.site.id}/track`, { body: { endpoint: subscription.endpoint, event: 'old_news' } });
    const source = siteEventRetentionSource(h.t.ctx);
    clock.advance(29 * 86_400_000);
    await source.runDue(clock.now());
    const names = async () =>
      (await h.t.request('GET', `/api/sites/${h.site.id}/events`, { token: h.owner.token })).body.data.events.map((e: { event: string }) => e.event);
    expect(await names()).toContain('old_news');
    clock.advance(2 * 86_400_000);
    await source.runDue(clock.now());
    const relog = await h.t.request('POST', '/api/auth/login', { body: { email: h.owner.email, password: h.owner.password } });
    h.owner.token = relog.body.data.token;
    expect(await names()).toEqual([]);
  });
});
