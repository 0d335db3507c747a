import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from './support/delivery-harness';

const longUrl = (path: string) => `https://push-shop.example/${path}?${'q'.repeat(1900)}`;
const variant = (letter: string, url = `https://push-shop.example/${letter.toLowerCase()}`) => ({ title: `Sale ${letter}`, message: `Offer ${letter}`, destination_url: url, image_url: null });

// Every variant of an A/B test must fit in one push after an edit of the
// shared fields, as on create (docs/product.md, "A/B tests").
describe('payload size of A/B variants on edit', () => {
  let h: DeliveryHarness;
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 8, 0));
  beforeAll(async () => {
    h = await createDeliveryHarness({ clock, engine: false });
  });
  afterAll(async () => h.close());
  const create = (body: Record<string, unknown>) => h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput(body) });

  it('an edit of the shared fields (icon) is refused when it makes variant B too large for one push, as creating it would be', async () => {
    // The same content is refused when created with that icon: variant B would not fit.
    const refusedOnCreate = await create({ icon_url: longUrl('icon'), variants: [variant('A'), variant('B', longUrl('b'))], ab_test: null });
    expect(refusedOnCreate.status).toBe(400);
    expect(refusedOnCreate.body.error.code).toBe('payload_too_large');
    // Variant A alone with that icon fits.
    expect((await create({ icon_url: longUrl('icon') })).status).toBe(201);

    const created = await create({ variants: [variant('A'), variant('B', longUrl('b'))], ab_test: null });
    expect(created.status).toBe(201);
    const id = created.body.data.notification.id;
    const edit = await h.t.request('PATCH', `/api/notifications/${id}`, { token: h.owner.token, body: { icon_url: longUrl('icon') } });
    expect({ status: edit.status, code: edit.body.error?.code }).toEqual({ status: 400, code: 'payload_too_large' });
  });
});
