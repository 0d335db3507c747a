import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from '../support/delivery-harness';

// Issue 14 §6: a notification's TTL, Urgency, topic and "require interaction"
// (docs/web-push.md, "TTL, Urgency and Topic") are saved, validated, copied
// by duplicate, and reach the push service as RFC 8030 headers and the
// browser as payload fields; the local push service checks the headers.
describe('delivery options of a notification', () => {
  let h: DeliveryHarness;
  beforeAll(async () => {
    h = await createDeliveryHarness();
  });
  afterAll(async () => h.close());

  const create = (overrides: Record<string, unknown>) => h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput(overrides) });

  async function sendAndCollect(id: string) {
    const before = h.push.messages.length;
    expect((await h.t.request('POST', `/api/notifications/${id}/send`, { token: h.owner.token })).status).toBe(200);
    const done = await h.waitForStatus(id, ['completed', 'completed_with_errors', 'failed'], 30_000);
    expect(done.status).toBe('completed');
    return h.push.messages.slice(before);
  }

  it('refuses options out of range with a message that names the field', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ttl_seconds: -1 }, 'ttl_seconds must be 0 or more'],
      [{ ttl_seconds: 28 * 86_400 + 1 }, 'ttl_seconds must be at most 2419200 (28 days)'],
      [{ ttl_seconds: 1.5 }, 'ttl_seconds must be a whole number of seconds'],
      [{ urgency: 'urgent' }, 'urgency must be very-low, low, normal or high'],
      [{ topic: '' }, 'topic must not be empty (send null for none)'],
      [{ topic: 'sale/2026' }, 'topic may use letters, digits, spaces, dots, dashes and underscores'],
      [{ topic: 'x'.repeat(65) }, 'topic must be at most 64 characters'],
      [{ require_interaction: 'yes' }, 'require_interaction must be true or false'],
    ];
    for (const [body, message] of cases) {
      const response = await create(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.message, JSON.stringify(body)).toContain(message);
    }
  });

  it('sends with a day of TTL and normal urgency unless told otherwise, each notification under its own Topic', async () => {
    await h.subscribe();
    const created = await create({});
    expect(created.status).toBe(201);
    expect(created.body.data.notification).toMatchObject({ ttl_seconds: 86_400, urgency: 'normal', topic: null, require_interaction: false });
    const messages = await sendAndCollect(created.body.data.notification.id);
    expect(messages.length).toBeGreaterThan(0);
    for (const message of messages) {
      expect(message.headers['ttl']).toBe('86400');
      expect(message.headers['urgency']).toBe('normal');
      expect(message.headers['topic']).toMatch(/^[A-Za-z0-9]{32}$/);
      expect(message.payload).not.toHaveProperty('requireInteraction');
      expect(message.payload).not.toHaveProperty('renotify');
    }
  });

  it('sends the chosen TTL, urgency and topic; two sends of one topic share Topic and tag and replace each other', async () => {
    const options = { ttl_seconds: 3600, urgency: 'high', topic: 'flash-sale', require_interaction: true };
    const first = await create({ ...options, title: 'Flash sale 1' });
    expect(first.status).toBe(201);
    expect(first.body.data.notification).toMatchObject(options);
    const second = await create({ ...options, title: 'Flash sale 2' });
    const other = await create({ ttl_seconds: 0, urgency: 'very-low', topic: 'weekly news' });

    const firstMessages = await sendAndCollect(first.body.data.notification.id);
    const secondMessages = await sendAndCollect(second.body.data.notification.id);
    const otherMessages = await sendAndCollect(other.body.data.notification.id);
    for (const message of [...firstMessages, ...secondMessages]) {
      expect(message.headers['ttl']).toBe('3600');
      expect(message.headers['urgency']).toBe('high');
      expect(message.payload).toMatchObject({ requireInteraction: true, renotify: true });
    }
    expect(firstMessages[0]!.headers['topic']).toBe(secondMessages[0]!.headers['topic']);
    expect((firstMessages[0]!.payload as { tag: string }).tag).toBe((secondMessages[0]!.payload as { tag: string }).tag);
    expect(otherMessages[0]!.headers).toMatchObject({ ttl: '0', urgency: 'very-low' });
    expect(otherMessages[0]!.headers['topic']).not.toBe(firstMessages[0]!.headers['topic']);
    expect(otherMessages[0]!.payload).not.toHaveProperty('requireInteraction');
  });

  it('edits the options of a draft, and a duplicate keeps them', async () => {
    const created = await create({});
    const id = created.body.data.notification.id;
    const patched = await h.t.request('PATCH', `/api/notifications/${id}`, { token: h.owner.token, body: { ttl_seconds: 600, urgency: 'low', topic: 'stock alerts', require_interaction: true } });
    expect(patched.status).toBe(200);
    expect(patched.body.data.notification).toMatchObject({ ttl_seconds: 600, urgency: 'low', topic: 'stock alerts', require_interaction: true });
    const cleared = await h.t.request('PATCH', `/api/notifications/${id}`, { token: h.owner.token, body: { topic: null } });
    expect(cleared.body.data.notification.topic).toBeNull();

    await sendAndCollect(id);
    const copy = await h.t.request('POST', `/api/notifications/${id}/duplicate`, { token: h.owner.token });
    expect(copy.status).toBe(201);
    expect(copy.body.data.notification).toMatchObject({ ttl_seconds: 600, urgency: 'low', topic: null, require_interaction: true });
  });
});
