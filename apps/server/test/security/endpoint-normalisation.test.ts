import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalisePushEndpoint } from '../../src/delivery/push-endpoints';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from '../support/delivery-harness';
import { createTestApp, waitFor, type TestApp, type TestUser } from '../support/test-app';
import { identityHashFor, nextAddress, pushKeys } from './support/fixtures';

// Issue 10 item 7 (docs/security.md, "One device, one subscriber"): endpoints
// that differ only in a fragment, `:443`, host case or dot segments were
// stored as six subscribers, so one browser received every send six times and
// inflated delivered and clicked. Endpoints are normalised wherever they enter.

const TOKEN = 'fcm/send/dGVzdC1kZXZpY2U:APA91bH-x_y';

/** The six spellings of one FCM endpoint. */
function sixSpellings(token = TOKEN): string[] {
  return [
    `https://fcm.googleapis.com/${token}`,
    `https://fcm.googleapis.com/${token}#fragment`,
    `https://fcm.googleapis.com:443/${token}`,
    `https://FCM.GoogleAPIs.com/${token}`,
    `https://fcm.googleapis.com/fcm/./${token.slice('fcm/'.length)}`,
    `https://fcm.googleapis.com/fcm/extra/../${token.slice('fcm/'.length)}`,
  ];
}

describe('one device, one subscriber: endpoints are normalised before hashing and storing', () => {
  let t: TestApp;
  let owner: TestUser;

  const call = (path: string, body: unknown) => t.request('POST', path, { body, remoteAddress: nextAddress() });

  async function rowsOf(siteId: string) {
    return t.ctx.db.selectFrom('subscribers').select(['id', 'endpoint', 'is_active']).where('site_id', '=', siteId).execute();
  }

  async function activeCount(siteId: string): Promise<number> {
    return (await t.ctx.db.selectFrom('sites').select('active_subscriber_count').where('id', '=', siteId).executeTakeFirstOrThrow()).active_subscriber_count;
  }

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.createUser();
  });
  afterAll(async () => t.close());

  it('stores the six spellings of the issue as ONE subscriber, under the normal form', async () => {
    const site = await t.createSite(owner.token);
    const statuses: number[] = [];
    const ids = new Set<string>();
    for (const endpoint of sixSpellings()) {
      const response = await call(`/api/public/sites/${site.id}/subscribers`, { subscription: { endpoint, keys: pushKeys() } });
      statuses.push(response.status);
      ids.add(response.body.data.subscriber.id);
    }
    expect(statuses).toEqual([201, 200, 200, 200, 200, 200]);
    expect(ids.size).toBe(1);
    expect(await rowsOf(site.id)).toEqual([{ id: [...ids][0], endpoint: `https://fcm.googleapis.com/${TOKEN}`, is_active: 1 }]);
    expect(await activeCount(site.id)).toBe(1);
    expect((await t.request('GET', `/api/sites/${site.id}/subscribers`, { token: owner.token })).body.data.total).toBe(1);
  });

  it('finds that subscriber under any spelling: track, identify, tags, previous_endpoint and unsubscribe', async () => {
    const site = await t.createSite(owner.token, { settings: { identityVerification: false } });
    const [first, ...others] = sixSpellings('fcm/send/b3RoZXItZGV2aWNl:APA91bZ');
    const subscribed = await call(`/api/public/sites/${site.id}/subscribers`, { subscription: { endpoint: first, keys: pushKeys() } });
    const id: string = subscribed.body.data.subscriber.id;

    for (const endpoint of others) {
      expect((await call(`/api/public/sites/${site.id}/track`, { endpoint, event: 'viewed' })).status, endpoint).toBe(202);
      expect((await call(`/api/public/sites/${site.id}/tags`, { endpoint, add: ['seen'] })).body.data.subscriber.id, endpoint).toBe(id);
      expect((await call(`/api/public/sites/${site.id}/identify`, { endpoint, external_id: 'customer-1' })).body.data.subscriber.id, endpoint).toBe(id);
    }

    // pushsubscriptionchange with the old endpoint spelt differently: the same subscriber moves.
    const moved = await call(`/api/public/sites/${site.id}/subscribers`, {
      subscription: { endpoint: 'https://fcm.googleapis.com/fcm/send/bmV3LWVuZHBvaW50:APA91bN', keys: pushKeys() },
      previous_endpoint: others[3],
    });
    expect(moved.body.data.subscriber.id).toBe(id);
    expect(await rowsOf(site.id)).toEqual([{ id, endpoint: 'https://fcm.googleapis.com/fcm/send/bmV3LWVuZHBvaW50:APA91bN', is_active: 1 }]);

    const left = await call(`/api/public/sites/${site.id}/subscribers/unsubscribe`, { endpoint: 'HTTPS://FCM.googleapis.com:443/fcm/x/../send/bmV3LWVuZHBvaW50:APA91bN#gone' });
    expect(left.status).toBe(200);
    expect(left.body.data.subscriber).toEqual({ id, is_active: false });
    expect(await activeCount(site.id)).toBe(0);
  });

  it('normalises as RFC 3986 and WHATWG say, keeps what a push service could tell apart, and is idempotent', () => {
    const cases: Array<[string, string]> = [
      ['https://fcm.googleapis.com/fcm/send/%61bc%7e', 'https://fcm.googleapis.com/fcm/send/abc~'],
      ['https://fcm.googleapis.com/fcm/x/%2E%2e/send/abc', 'https://fcm.googleapis.com/fcm/send/abc'],
      ['https://fcm.googleapis.com/fcm/send/abc?', 'https://fcm.googleapis.com/fcm/send/abc'],
      // Reserved characters keep their escapes (upper-case hex): decoding them could change the URL.
      ['https://wns2-par02p.notify.windows.com/w/?token=AwYA%2bBc%3d%2f', 'https://wns2-par02p.notify.windows.com/w/?token=AwYA%2BBc%3D%2F'],
      ['https://fcm.googleapis.com/fcm/send/a%3ab', 'https://fcm.googleapis.com/fcm/send/a%3Ab'],
      ['  https://updates.push.services.mozilla.com/wpush/v2/gAAAA  ', 'https://updates.push.services.mozilla.com/wpush/v2/gAAAA'],
    ];
    for (const [input, expected] of cases) {
      expect(normalisePushEndpoint(input), input).toBe(expected);
      expect(normalisePushEndpoint(expected), expected).toBe(expected);
    }
    for (const spelling of sixSpellings()) expect(normalisePushEndpoint(spelling)).toBe(`https://fcm.googleapis.com/${TOKEN}`);
  });
});

describe('one device, one push: sends reach a browser once however often it subscribed', () => {
  let h: DeliveryHarness;

  beforeAll(async () => {
    h = await createDeliveryHarness();
  });
  afterAll(async () => h.close());

  it('sends one message to a browser that subscribed under five spellings of its endpoint', async () => {
    const browser = h.push.createSubscription({ applicationServerKey: h.site.vapid_public_key });
    const url = new URL(browser.endpoint);
    const spellings = [
      browser.endpoint,
      `${browser.endpoint}#again`,
      `${url.origin}/extra/..${url.pathname}`,
      `${url.origin}${url.pathname.replace('/push/', '/push/./')}`,
      `HTTP://${url.host}${url.pathname}?`,
    ];
    const ids = new Set<string>();
    for (const endpoint of spellings) {
      const response = await h.t.request('POST', `/api/public/sites/${h.site.id}/subscribers`, { body: { subscription: { endpoint, keys: browser.keys } }, remoteAddress: nextAddress() });
      expect(response.status).toBeLessThan(300);
      ids.add(response.body.data.subscriber.id);
    }
    expect(ids.size).toBe(1);

    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput({ title: 'Once' }) });
    const notificationId: string = created.body.data.notification.id;
    expect((await h.t.request('POST', `/api/notifications/${notificationId}/send`, { token: h.owner.token })).status).toBe(200);
    const done = await h.waitForStatus(notificationId, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    await waitFor(() => h.push.messages.some((m) => m.subscriptionId === browser.id));
    expect(h.push.messages.filter((m) => m.subscriptionId === browser.id)).toHaveLength(1);
    expect(done.stats).toMatchObject({ total: 1, sent: 1, failed: 0 });
  });

  it('signs identify claims against the normalised subscriber too', async () => {
    const browser = h.push.createSubscription({ applicationServerKey: h.site.vapid_public_key });
    await h.t.request('POST', `/api/public/sites/${h.site.id}/subscribers`, { body: { subscription: { endpoint: browser.endpoint, keys: browser.keys } }, remoteAddress: nextAddress() });
    const { secret } = (await h.t.request('GET', `/api/sites/${h.site.id}/identity-secret`, { token: h.owner.token })).body.data;
    const identified = await h.t.request('POST', `/api/public/sites/${h.site.id}/identify`, {
      body: { endpoint: `${browser.endpoint}#fragment`, external_id: 'customer-9', identity_hash: identityHashFor(secret, 'customer-9') },
      remoteAddress: nextAddress(),
    });
    expect(identified.status).toBe(200);
    expect(identified.body.data.subscriber.verified).toBe(true);
  });
});
