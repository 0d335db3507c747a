import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock';
import { createDeliveryHarness, type DeliveryHarness } from './support/delivery-harness';

// A test device whose push service answers 410 to "Send test" is lost at
// the push service, counted as a real send counts it (docs/delivery.md).

describe('a test device found gone by "Send test"', () => {
  let h: DeliveryHarness;
  const clock = new ManualClock(Date.now());
  const api = (method: string, url: string, body?: unknown) => h.t.request(method, url, { token: h.owner.token, body });

  beforeAll(async () => {
    h = await createDeliveryHarness({ clock, env: { VAPID_SUBJECT: 'mailto:push@herald.example' } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('counts the lost subscription as lost at the push service, as a real send does', async () => {
    const device = await h.subscribe();
    expect((await api('PATCH', `/api/subscribers/${device.subscriberId}/test-device`, { enabled: true })).status).toBe(200);
    h.push.expire(device.subscription.id);
    const { test } = (await api('POST', `/api/sites/${h.site.id}/notifications/test`, { title: 'Hi', message: 'Test', destination_url: 'https://push-shop.example/' })).body.data;
    expect(test).toMatchObject({ devices: 1, sent: 0, failed: 1 });

    const delivery = (await api('GET', `/api/sites/${h.site.id}/analytics/delivery?days=7`)).body.data;
    expect(delivery.churn_totals.lost).toBe(1);
    // Deactivated because its push service answered 410: the "lost at push service" figure must include it.
    expect(delivery.churn_totals.lost_at_push_service).toBe(1);
    // A test send is no send: a site that has only tested still shows the sample charts.
    expect((await api('GET', `/api/sites/${h.site.id}/analytics/dashboard`)).body.data.hasData).toBe(false);
  });
});
