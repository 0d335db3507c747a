import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, pushKeys } from '../security/support/fixtures';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app';
import { WebhookReceiver } from '../support/webhook-receiver';

// docs/product.md, "Webhooks": a site's admins and owners add endpoints with
// the events they want; the signing secret is answered once; the list never
// carries it; each change is in the audit log; "Send test event" answers the
// attempt with the endpoint's status code, and the delivery log keeps it.
describe('webhooks API', () => {
  let t: TestApp;
  let owner: TestUser;
  let site: any;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    t = await createTestApp({ env: { OUTBOUND_ALLOW_HOSTS: '127.0.0.1' } });
    owner = await t.createUser();
    site = await t.createSite(owner.token, { name: 'Hook Shop', url: 'https://hook-shop.example' });
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  const as = (token: string, method: string, url: string, body?: unknown) => t.request(method, url, { token, ...(body !== undefined ? { body } : {}) });

  it('creates a webhook with a whsec_ secret shown once, lists it without the secret, and deletes it; both are in the audit log', async () => {
    const created = await as(owner.token, 'POST', `/api/sites/${site.id}/webhooks`, { url: receiver.url, events: ['notification.completed', 'subscriber.created'] });
    expect(created.status).toBe(201);
    const webhook = created.body.data.webhook;
    expect(webhook).toMatchObject({ id: expect.any(String), url: receiver.url, events: ['subscriber.created', 'notification.completed'] });
    expect(webhook.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(webhook.secret.slice('whsec_'.length), 'base64').length).toBeGreaterThanOrEqual(24);
    expect(created.headers['cache-control']).toBe('no-store');

    const listed = await as(owner.token, 'GET', `/api/sites/${site.id}/webhooks`);
    expect(listed.status).toBe(200);
    expect(listed.body.data.webhooks).toEqual([{ id: webhook.id, url: receiver.url, events: ['subscriber.created', 'notification.completed'], created_at: expect.any(String) }]);
    expect(JSON.stringify(listed.body)).not.toContain(webhook.secret);
    expect(JSON.stringify(listed.body)).not.toContain('whsec_');

    const second = await as(owner.token, 'POST', `/api/sites/${site.id}/webhooks`, { url: 'https://hooks.example/other', events: ['notification.failed'] });
    expect(second.body.data.webhook.secret).not.toBe(webhook.secret);

    expect((await as(owner.token, 'DELETE', `/api/webhooks/${second.body.data.webhook.id}`)).body.data).toEqual({ deleted: true });
    expect((await as(owner.token, 'DELETE', `/api/webhooks/${second.body.data.webhook.id}`)).status).toBe(404);
    expect((await as(owner.token, 'GET', `/api/sites/${site.id}/webhooks`)).body.data.webhooks.map((w: any) => w.id)).toEqual([webhook.id]);

    const log = await as(owner.token, 'GET', `/api/sites/${site.id}/audit-log`);
    const entries = log.body.data.entries.filter((entry: any) => entry.subject.type === 'webhook');
    expect(entries.map((entry: any) => [entry.action, entry.subject.id, entry.actor.id])).toEqual([
      ['deleted', second.body.data.webhook.id, owner.id],
      ['created', second.body.data.webhook.id, owner.id],
      ['created', webhook.id, owner.id],
    ]);
    expect(JSON.stringify(log.body)).not.toContain('whsec_');
  });

  it('refuses a URL that is not http(s), an empty or unknown event list, and more than 10 webhooks per site', async () => {
    const other = await t.createSite(owner.token, { name: 'Limits', url: 'https://limits.example' });
    const refused = async (body: unknown) => {
      const response = await as(owner.token, 'POST', `/api/sites/${other.id}/webhooks`, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.message.length).toBeGreaterThan(0);
    };
    await refused({ url: 'javascript:alert(1)', events: ['subscriber.created'] });
    await refused({ url: 'ftp://files.example/hook', events: ['subscriber.created'] });
    await refused({ url: 'https://hooks.example/a', events: [] });
    await refused({ url: 'https://hooks.example/a', events: ['subscriber.exploded'] });
    for (let i = 0; i < 10; i++) expect((await as(owner.token, 'POST', `/api/sites/${other.id}/webhooks`, { url: `https://hooks.example/${i}`, events: ['subscriber.created'] })).status).toBe(201);
    const eleventh = await as(owner.token, 'POST', `/api/sites/${other.id}/webhooks`, { url: 'https://hooks.example/11', events: ['subscriber.created'] });
    expect(eleventh.status).toBe(409);
    expect(eleventh.body.error.message).toContain('at most 10 webhooks');
  });

  it('is the admin’s and the owner’s: an editor or viewer gets 403 naming the role, another user 404, and nothing changes', async () => {
    const webhook = (await as(owner.token, 'POST', `/api/sites/${site.id}/webhooks`, { url: 'https://hooks.example/roles', events: ['subscriber.removed'] })).body.data.webhook;
    const editor = await addMember(t, { site, user: owner }, 'editor');
    const viewer = await addMember(t, { site, user: owner }, 'viewer');
    const admin = await addMember(t, { site, user: owner }, 'admin');
    const stranger = await t.createUser();
    const calls = (id: string): Array<[string, string, unknown?]> => [
      ['POST', `/api/sites/${site.id}/webhooks`, { url: 'https://hooks.example/x', events: ['subscriber.created'] }],
      ['GET', `/api/sites/${site.id}/webhooks`],
      ['GET', `/api/webhooks/${id}/deliveries`],
      ['POST', `/api/webhooks/${id}/test`],
      ['DELETE', `/api/webhooks/${id}`],
    ];
    const before = await t.ctx.db.selectFrom('webhooks').select('id').orderBy('id').execute();
    for (const member of [editor, viewer]) {
      for (const [method, url, body] of calls(webhook.id)) {
        const response = await as(member.token, method, url, body);
        expect(response.status, `${method} ${url}`).toBe(403);
        expect(response.body.error.message).toBe('This needs the admin role or higher.');
      }
    }
    for (const [method, url, body] of calls(webhook.id)) expect((await as(stranger.token, method, url, body)).status, `${method} ${url}`).toBe(404);
    expect(await t.ctx.db.selectFrom('webhooks').select('id').orderBy('id').execute()).toEqual(before);
    expect(await t.ctx.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', webhook.id).execute()).toEqual([]);

    expect((await as(admin.token, 'GET', `/api/sites/${site.id}/webhooks`)).status).toBe(200);
    expect((await as(admin.token, 'DELETE', `/api/webhooks/${webhook.id}`)).status).toBe(200);
  });

  it('"Send test event" posts a signed webhook.test now and answers the attempt; the delivery log lists it with the status code', async () => {
    const webhook = (await as(owner.token, 'POST', `/api/sites/${site.id}/webhooks`, { url: receiver.url, events: ['notification.clicked'] })).body.data.webhook;
    receiver.useSecret(webhook.secret);
    receiver.answer(204);
    const tested = await as(owner.token, 'POST', `/api/webhooks/${webhook.id}/test`);
    expect(tested.status).toBe(200);
    expect(tested.body.data.delivery).toMatchObject({ event_type: 'webhook.test', attempt: 1, status_code: 204, error: null, delivery_status: 'delivered', next_attempt_at: null, message_id: expect.stringMatching(/^msg_/) });
    const got = receiver.of('webhook.test').at(-1)!;
    expect(got.verified).toBe(true);
    expect(got.id).toBe(tested.body.data.delivery.message_id);
    expect(got.payload).toMatchObject({ type: 'webhook.test', timestamp: expect.any(String), data: { site_id: site.id, webhook_id: webhook.id } });

    receiver.answer(500);
    const failing = await as(owner.token, 'POST', `/api/webhooks/${webhook.id}/test`);
    expect(failing.body.data.delivery).toMatchObject({ status_code: 500, error: 'The endpoint answered 500', delivery_status: 'pending', next_attempt_at: expect.any(String) });

    // No answer at all (nothing listens on the port): the attempt says so, with no status code, and is retried.
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const nobody = (await as(owner.token, 'POST', `/api/sites/${site.id}/webhooks`, { url: `http://127.0.0.1:${closedPort}/hook`, events: ['subscriber.created'] })).body.data.webhook;
    const unanswered = await as(owner.token, 'POST', `/api/webhooks/${nobody.id}/test`);
    expect(unanswered.body.data.delivery).toMatchObject({ status_code: null, error: expect.stringMatching(/^Webhook server could not be reached/), delivery_status: 'pending', next_attempt_at: expect.any(String) });

    const log = await as(owner.token, 'GET', `/api/webhooks/${webhook.id}/deliveries`);
    expect(log.status).toBe(200);
    expect(log.body.data.deliveries.map((d: any) => [d.event_type, d.status_code, d.attempt])).toEqual([
      ['webhook.test', 500, 1],
      ['webhook.test', 204, 1],
    ]);
    expect(log.body.data.deliveries[0]).toMatchObject({ attempted_at: expect.any(String), error: 'The endpoint answered 500' });
  });
});

// Events are written to the outbox of the site's own webhooks only, in the
// transaction of the change (no engine here: the rows are read directly).
describe('webhook events in the outbox', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  const subscribe = async (siteId: string, n: number) => {
    const response = await t.request('POST', `/api/public/sites/${siteId}/subscribers`, {
      body: { subscription: { endpoint: `https://fcm.googleapis.com/fcm/send/outbox-${siteId}-${n}`, keys: pushKeys() } },
      remoteAddress: `203.0.113.${n}`,
    });
    expect(response.status).toBe(201);
    return response.body.data.subscriber.id as string;
  };
  const outbox = async (webhookId: string) =>
    (await t.ctx.db.selectFrom('webhook_deliveries').select(['event_type', 'payload']).where('webhook_id', '=', webhookId).orderBy('created_at').orderBy('id').execute()).map((row) => ({ type: row.event_type, data: JSON.parse(row.payload).data }));

  it('tells only the webhooks of the site, and names the removal of a stale clean-up and of an erasure', async () => {
    const owner = await t.createUser();
    const mine = await t.createSite(owner.token, { name: 'Mine', url: 'https://mine.example' });
    const theirs = await t.createSite((await t.createUser()).token, { name: 'Theirs', url: 'https://theirs.example' });
    const hook = (await t.request('POST', `/api/sites/${mine.id}/webhooks`, { token: owner.token, body: { url: 'http://127.0.0.1:9/mine', events: ['subscriber.created', 'subscriber.removed'] } })).body.data.webhook;
    const mineOnlyCreated = (await t.request('POST', `/api/sites/${mine.id}/webhooks`, { token: owner.token, body: { url: 'http://127.0.0.1:9/created', events: ['subscriber.created'] } })).body.data.webhook;

    const first = await subscribe(mine.id, 1);
    const second = await subscribe(mine.id, 2);
    await subscribe(theirs.id, 3);
    // Stale: subscribed and last seen 100 days ago, and no delivery since (the row is moved back in time).
    const longAgo = Date.now() - 100 * 86_400_000;
    await t.ctx.db.updateTable('subscribers').set({ subscribed_at: longAgo, last_seen_at: longAgo }).where('id', '=', first).execute();
    expect((await t.request('POST', `/api/sites/${mine.id}/subscribers/stale/deactivate`, { token: owner.token })).status).toBe(200);
    expect((await t.request('DELETE', `/api/subscribers/${second}?erase=true`, { token: owner.token })).status).toBe(200);

    expect(await outbox(hook.id)).toEqual([
      { type: 'subscriber.created', data: { site_id: mine.id, subscriber: { id: first, subscribed_at: expect.any(String) } } },
      { type: 'subscriber.created', data: { site_id: mine.id, subscriber: { id: second, subscribed_at: expect.any(String) } } },
      { type: 'subscriber.removed', data: { site_id: mine.id, subscriber: { id: first }, cause: 'removed', removed_at: expect.any(String) } },
      { type: 'subscriber.removed', data: { site_id: mine.id, subscriber: { id: second }, cause: 'removed', erased: true, removed_at: expect.any(String) } },
    ]);
    expect((await outbox(mineOnlyCreated.id)).map((event) => event.type)).toEqual(['subscriber.created', 'subscriber.created']);
    const all = await t.ctx.db.selectFrom('webhook_deliveries').select('payload').execute();
    expect(all.filter((row) => row.payload.includes(theirs.id))).toEqual([]);
  });
});

// docs/security.md, "Outbound requests (SSRF)": a webhook's address goes
// through the outbound client; without OUTBOUND_ALLOW_HOSTS a private
// address is refused before any connection, and the log says why.
describe('webhooks to private addresses', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    t = await createTestApp();
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  it('refuses 127.0.0.1 and other private forms without OUTBOUND_ALLOW_HOSTS: nothing is contacted, the attempt says why', async () => {
    const owner = await t.createUser();
    const site = await t.createSite(owner.token, { name: 'Inside', url: 'https://inside.example' });
    const port = new URL(receiver.url).port;
    for (const url of [receiver.url, `http://localhost:${port}/hook`, `http://[::ffff:127.0.0.1]:${port}/hook`, `http://2130706433:${port}/hook`, 'http://169.254.169.254/latest/meta-data', 'http://10.0.0.7/hook']) {
      const created = await t.request('POST', `/api/sites/${site.id}/webhooks`, { token: owner.token, body: { url, events: ['subscriber.created'] } });
      expect(created.status).toBe(201);
      const tested = await t.request('POST', `/api/webhooks/${created.body.data.webhook.id}/test`, { token: owner.token });
      expect(tested.status, url).toBe(200);
      expect(tested.body.data.delivery, url).toMatchObject({ status_code: null, error: expect.stringMatching(/^Webhook address points to a (private|reserved) network address$/), delivery_status: 'pending' });
    }
    expect(receiver.received).toEqual([]);
  });
});
