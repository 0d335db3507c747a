import http from 'node:http';
import zlib from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app';

// Webhooks, API keys and v1 events at their edges (docs/delivery.md,
// "Webhooks"; docs/security.md): a 2xx ends a delivery whatever its body;
// the per-site limits hold when creations arrive at once (PostgreSQL); an
// idempotency key's scope cannot be forged by ':' in its parts; a webhook
// address with credentials is refused.

/** An endpoint that answers 2xx with a scripted body / headers. */
async function startEndpoint(answer: (res: http.ServerResponse) => void) {
  let hits = 0;
  const server = http.createServer((req, res) => {
    req.on('data', () => undefined);
    req.on('end', () => {
      hits += 1;
      answer(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    hits: () => hits,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('webhooks, API keys and v1 events at their edges', () => {
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
  let t: TestApp;
  let owner: TestUser;
  let site: any;
  beforeAll(async () => {
    t = await createTestApp({ clock, env: { OUTBOUND_ALLOW_HOSTS: '127.0.0.1' } });
    owner = await t.createUser();
    site = await t.createSite(owner.token, { name: 'Edges', url: 'https://edges.example' });
  });
  afterAll(async () => t.close());

  const as = (method: string, url: string, body?: unknown) => t.request(method, url, { token: owner.token, ...(body !== undefined ? { body } : {}) });

  it('a 200 answer with a body over 64 KB ends the delivery (docs: "A 2xx answer ends the delivery")', async () => {
    const endpoint = await startEndpoint((res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<p>thanks</p>'.repeat(6000)));
    try {
      const webhook = (await as('POST', `/api/sites/${site.id}/webhooks`, { url: endpoint.url, events: ['subscriber.created'] })).body.data.webhook;
      const test = await as('POST', `/api/webhooks/${webhook.id}/test`);
      expect(test.status).toBe(200);
      expect(endpoint.hits()).toBe(1);
      // The endpoint answered 200: the log should say so and the event is delivered, not retried for 24 h.
      expect(test.body.data.delivery).toMatchObject({ status_code: 200, error: null, delivery_status: 'delivered' });
    } finally {
      await endpoint.close();
    }
  });

  it('a 200 answer with a Content-Encoding Herald cannot decode still ends the delivery', async () => {
    const endpoint = await startEndpoint((res) => res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'zstd' }).end('{"ok":true}'));
    try {
      const webhook = (await as('POST', `/api/sites/${site.id}/webhooks`, { url: endpoint.url, events: ['subscriber.created'] })).body.data.webhook;
      const test = await as('POST', `/api/webhooks/${webhook.id}/test`);
      expect(test.status).toBe(200);
      expect(test.body.data.delivery).toMatchObject({ status_code: 200, error: null, delivery_status: 'delivered' });
    } finally {
      await endpoint.close();
    }
  });

  it('a 200 answer with a broken gzip body still ends the delivery', async () => {
    const endpoint = await startEndpoint((res) => res.writeHead(200, { 'content-encoding': 'gzip' }).end(Buffer.concat([zlib.gzipSync('ok'), Buffer.from('garbage')]).subarray(3)));
    try {
      const webhook = (await as('POST', `/api/sites/${site.id}/webhooks`, { url: endpoint.url, events: ['subscriber.created'] })).body.data.webhook;
      const test = await as('POST', `/api/webhooks/${webhook.id}/test`);
      expect(test.status).toBe(200);
      expect(test.body.data.delivery).toMatchObject({ status_code: 200, error: null, delivery_status: 'delivered' });
    } finally {
      await endpoint.close();
    }
  });

  it('idempotency keys: two different events of one external id are not a duplicate of each other', async () => {
    const { key } = (await as('POST', `/api/sites/${site.id}/api-keys`, { name: 'idem' })).body.data;
    const send = (body: unknown) => t.request('POST', `/api/v1/sites/${site.id}/events`, { body, headers: { authorization: `Bearer ${key}` } });
    const first = await send({ event: 'signup', external_id: 'user-1', idempotency_key: 'step:2' });
    expect(first.status).toBe(202);
    expect(first.body.data.event.duplicate).toBe(false);
    // Another event name, another key: a different event (docs/product.md: a key is one event for the same id and the same event name).
    const second = await send({ event: 'signup:step', external_id: 'user-1', idempotency_key: '2' });
    expect(second.status).toBe(202);
    expect(second.body.data.event.duplicate).toBe(false);
    // Likewise two different external ids.
    const third = await send({ event: 'x', external_id: 'a', idempotency_key: 'x:k' });
    const fourth = await send({ event: 'x', external_id: 'a:x', idempotency_key: 'k' });
    expect(third.body.data.event.duplicate).toBe(false);
    expect(fourth.body.data.event.duplicate).toBe(false);
  });

  it('at most 25 active API keys per site, even when created at once', async () => {
    const other = await t.createSite(owner.token, { name: 'Keys race', url: 'https://keys.example' });
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => as('POST', `/api/sites/${other.id}/api-keys`, { name: `k${i}` })));
    const created = answers.filter((a) => a.status === 201).length;
    const listed = (await as('GET', `/api/sites/${other.id}/api-keys`)).body.data.api_keys.length;
    expect({ created, listed }).toEqual({ created: 25, listed: 25 });
  });

  it('at most 10 webhooks per site, even when created at once', async () => {
    const other = await t.createSite(owner.token, { name: 'Hooks race', url: 'https://hooks-race.example' });
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => as('POST', `/api/sites/${other.id}/webhooks`, { url: `https://hooks.example/${i}`, events: ['subscriber.created'] })));
    const created = answers.filter((a) => a.status === 201).length;
    const listed = (await as('GET', `/api/sites/${other.id}/webhooks`)).body.data.webhooks.length;
    expect({ created, listed }).toEqual({ created: 10, listed: 10 });
  });

  it('a webhook URL with a user name and password is refused at creation (every attempt would be refused)', async () => {
    const created = await as('POST', `/api/sites/${site.id}/webhooks`, { url: 'https://user:pass@hooks.example/in', events: ['subscriber.created'] });
    if (created.status === 201) {
      const test = await as('POST', `/api/webhooks/${created.body.data.webhook.id}/test`);
      // Documented as evidence: the attempt never leaves Herald.
      expect({ created: created.status, error: test.body.data.delivery.error }).toEqual({ created: 400, error: null });
    }
    expect(created.status).toBe(400);
  });
});
