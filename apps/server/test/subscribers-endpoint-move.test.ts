import { afterEach, describe, expect, it } from 'vitest';
import { createDeliveryHarness, type DeliveryHarness } from './support/delivery-harness';

// previous_endpoint (pushsubscriptionchange) keeps the subscriber's tags
// (subscribe API: "moves that subscriber to the new endpoint keeping its id (and
// its tags and history)"), also when the page stored the new endpoint first.

describe('an endpoint move after the page re-subscribed first', () => {
  let h: DeliveryHarness;
  afterEach(async () => h?.close());

  it('a segment of a tag still reaches the browser once its endpoint moved', async () => {
    h = await createDeliveryHarness({ engine: false });
    const post = (body: Record<string, unknown>) =>
      h.t.request('POST', `/api/public/sites/${h.site.id}/subscribers`, {
        body,
        headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0' },
        remoteAddress: '198.51.100.7',
      });
    const old = h.push.createSubscription({ applicationServerKey: h.site.vapid_public_key });
    const renewed = h.push.createSubscription({ applicationServerKey: h.site.vapid_public_key });
    const first = await post({ subscription: { endpoint: old.endpoint, keys: old.keys } });
    expect(first.status).toBe(201);
    const subscriberId = first.body.data.subscriber.id;
    expect((await h.t.request('PATCH', `/api/subscribers/${subscriberId}/tags`, { token: h.owner.token, body: { tags: ['vip'] } })).status).toBe(200);
    const segment = await h.t.request('POST', `/api/sites/${h.site.id}/segments`, { token: h.owner.token, body: { name: 'VIP', rules: { tags: ['vip'] } } });
    expect(segment.body.data.segment.estimated_count).toBe(1);

    // The page sees the browser's new subscription and posts it; then the service worker reports the change.
    expect((await post({ subscription: { endpoint: renewed.endpoint, keys: renewed.keys } })).status).toBe(201);
    const moved = await post({ subscription: { endpoint: renewed.endpoint, keys: renewed.keys }, previous_endpoint: old.endpoint });
    expect(moved.status).toBe(200);

    const active = await h.t.request('GET', `/api/sites/${h.site.id}/subscribers?is_active=true`, { token: h.owner.token });
    expect(active.body.data.total).toBe(1);
    expect(active.body.data.subscribers[0].tags).toEqual(['vip']);
    const reach = await h.t.request('GET', `/api/sites/${h.site.id}/audience?segment_id=${segment.body.data.segment.id}`, { token: h.owner.token });
    expect(reach.body.data.count).toBe(1);
  });
});
