import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/test-app';
import {
  documentedRoutes,
  dumpDatabase,
  expectErrorBody,
  fcmEndpoint,
  identityHashFor,
  idsOf,
  nextAddress,
  pushKeys,
  registeredRoutes,
  seedTenant,
  shapeOf,
  type Tenant,
} from './support/fixtures';

// Security guide, "Tenancy": every route that takes an id answers 404 unless
// the id belongs to one of the caller's sites, nested mixes included, and a
// refused call changes nothing. The matrix below lists EVERY route with a
// path parameter; the first test derives the routes from the running app
// (its OpenAPI document and Fastify's own route tree), so a route added
// without an entry here fails the suite.

type Auth = 'session' | 'none' | { apiKey: string };

interface Probe {
  method: string;
  url: string;
  body?: unknown;
  auth: Auth;
}

/** The same call with each of the other tenant's ids, and with an id nobody has (the reference answer). */
interface Sweep {
  kind: 'sweep';
  build: (id: string) => Probe;
  ids: string[];
  status: number;
}

interface Single {
  kind: 'single';
  probe: Probe;
  status: number;
  why: string;
}

interface RouteCase {
  /** The call made by the tenant that owns the ids: must reach them (anything but 404, never 500). */
  own: (x: Tenant) => Probe;
  /** What user B tries against user A; B's session (or B's key) is used where `auth` says so. */
  attacks: (a: Tenant, b: Tenant) => Array<Sweep | Single>;
  /** Public by design: stated, and proven in its own test below. */
  publicByDesign?: string;
  /** The owner's run goes phase by phase: deleting comes last, the site itself at the very end. */
  phase?: number;
}

const session = 'session' as const;
const get = (url: string): Probe => ({ method: 'GET', url, auth: session });
const post = (url: string, body?: unknown, auth: Auth = session): Probe => ({ method: 'POST', url, auth, ...(body !== undefined ? { body } : {}) });
const patch = (url: string, body: unknown): Probe => ({ method: 'PATCH', url, body, auth: session });
const del = (url: string): Probe => ({ method: 'DELETE', url, auth: session });
const sweep = (a: Tenant, build: (id: string) => Probe): Sweep => ({ kind: 'sweep', build, ids: idsOf(a), status: 404 });
const single = (probe: Probe, status: number, why: string): Single => ({ kind: 'single', probe, status, why });

const notificationBody = (x: Tenant) => ({ title: 'Hello', message: 'A message', destination_url: `${x.site.url}/landing` });
const campaignBody = () => ({
  name: 'Another welcome',
  is_active: false,
  steps: [{ sequence_order: 1, delay_minutes: 0, notification: { title: 'Hi', message: 'Welcome', destination_url: 'https://example.com/' } }],
});
const feedBody = () => ({ name: 'Another blog', url: 'http://127.0.0.1:9/other.xml' });

const MATRIX: Record<string, RouteCase> = {
  // ---- Sites
  'GET /api/sites/{id}': { own: (x) => get(`/api/sites/${x.site.id}`), attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}`))] },
  'PATCH /api/sites/{id}': {
    own: (x) => patch(`/api/sites/${x.site.id}`, { name: `${x.label} renamed` }),
    attacks: (a) => [sweep(a, (id) => patch(`/api/sites/${id}`, { name: 'Taken over', url: 'https://attacker.example' }))],
  },
  'DELETE /api/sites/{id}': { own: (x) => del(`/api/sites/${x.site.id}`), attacks: (a) => [sweep(a, (id) => del(`/api/sites/${id}`))], phase: 9 },
  'GET /api/sites/{id}/identity-secret': { own: (x) => get(`/api/sites/${x.site.id}/identity-secret`), attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/identity-secret`))] },
  // After the identify call of phase 1, which signs with the secret seeded before.
  'POST /api/sites/{id}/identity-secret/rotate': {
    own: (x) => post(`/api/sites/${x.site.id}/identity-secret/rotate`),
    attacks: (a) => [sweep(a, (id) => post(`/api/sites/${id}/identity-secret/rotate`))],
    phase: 2,
  },
  'GET /api/sites/{id}/install-code': { own: (x) => get(`/api/sites/${x.site.id}/install-code`), attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/install-code`))] },

  // ---- Subscribers
  'POST /api/public/sites/{siteId}/subscribers': {
    own: (x) => post(`/api/public/sites/${x.site.id}/subscribers`, { subscription: { endpoint: fcmEndpoint(), keys: pushKeys() } }, 'none'),
    attacks: () => [],
    publicByDesign: 'any browser may subscribe to any site (that is the product); it only ever writes to the site in its path — see "public subscribe" below',
  },
  'POST /api/public/sites/{siteId}/subscribers/unsubscribe': {
    own: (x) => post(`/api/public/sites/${x.site.id}/subscribers/unsubscribe`, { endpoint: x.subscriber.endpoint }, 'none'),
    attacks: (a, b) => [
      single(post(`/api/public/sites/${a.site.id}/subscribers/unsubscribe`, { endpoint: b.subscriber.endpoint }, 'none'), 404, "A's site with B's endpoint"),
      single(post(`/api/public/sites/${b.site.id}/subscribers/unsubscribe`, { endpoint: a.subscriber.endpoint }, 'none'), 404, "B's site with A's endpoint"),
    ],
    phase: 8,
  },
  'GET /api/sites/{siteId}/subscribers': {
    own: (x) => get(`/api/sites/${x.site.id}/subscribers?limit=10`),
    attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/subscribers?limit=10`))],
  },
  'GET /api/sites/{siteId}/subscribers/{id}': {
    own: (x) => get(`/api/sites/${x.site.id}/subscribers/${x.subscriber.id}`),
    attacks: (a, b) => [
      sweep(a, (id) => get(`/api/sites/${id}/subscribers/${a.subscriber.id}`)),
      sweep(a, (id) => get(`/api/sites/${b.site.id}/subscribers/${id}`)),
      single(get(`/api/sites/${a.site.id}/subscribers/${b.subscriber.id}`), 404, "A's site with B's own subscriber"),
    ],
  },
  'GET /api/sites/{siteId}/subscribers/stale': {
    own: (x) => get(`/api/sites/${x.site.id}/subscribers/stale`),
    attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/subscribers/stale`))],
  },
  'POST /api/sites/{siteId}/subscribers/stale/deactivate': {
    own: (x) => post(`/api/sites/${x.site.id}/subscribers/stale/deactivate`),
    attacks: (a) => [sweep(a, (id) => post(`/api/sites/${id}/subscribers/stale/deactivate`))],
    phase: 8,
  },
  'DELETE /api/subscribers/{id}': { own: (x) => del(`/api/subscribers/${x.subscriber.id}`), attacks: (a) => [sweep(a, (id) => del(`/api/subscribers/${id}`))], phase: 8 },
  'PATCH /api/subscribers/{id}/tags': {
    own: (x) => patch(`/api/subscribers/${x.subscriber.id}/tags`, { tags: ['vip', 'owner-edit'] }),
    attacks: (a) => [sweep(a, (id) => patch(`/api/subscribers/${id}/tags`, { tags: ['pwned'] }))],
  },

  // ---- Notifications
  'POST /api/sites/{siteId}/notifications': {
    own: (x) => post(`/api/sites/${x.site.id}/notifications`, notificationBody(x)),
    attacks: (a, b) => [
      sweep(a, (id) => post(`/api/sites/${id}/notifications`, notificationBody(b))),
      single(post(`/api/sites/${b.site.id}/notifications`, { ...notificationBody(b), segment_id: a.segment.id }), 400, "B's site targeting A's segment"),
    ],
  },
  'GET /api/sites/{siteId}/notifications': { own: (x) => get(`/api/sites/${x.site.id}/notifications`), attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/notifications`))] },
  'GET /api/notifications/{id}': { own: (x) => get(`/api/notifications/${x.notification.id}`), attacks: (a) => [sweep(a, (id) => get(`/api/notifications/${id}`))] },
  'PATCH /api/notifications/{id}': {
    own: (x) => patch(`/api/notifications/${x.notification.id}`, { title: 'Edited by owner' }),
    attacks: (a, b) => [
      sweep(a, (id) => patch(`/api/notifications/${id}`, { title: 'Edited by B' })),
      single(patch(`/api/notifications/${b.notification.id}`, { segment_id: a.segment.id }), 400, "B's notification targeting A's segment"),
    ],
  },
  'DELETE /api/notifications/{id}': { own: (x) => del(`/api/notifications/${x.notification.id}`), attacks: (a) => [sweep(a, (id) => del(`/api/notifications/${id}`))], phase: 8 },
  'POST /api/notifications/{id}/send': { own: (x) => post(`/api/notifications/${x.notification.id}/send`), attacks: (a) => [sweep(a, (id) => post(`/api/notifications/${id}/send`))], phase: 2 },
  'POST /api/notifications/{id}/cancel': { own: (x) => post(`/api/notifications/${x.notification.id}/cancel`), attacks: (a) => [sweep(a, (id) => post(`/api/notifications/${id}/cancel`))], phase: 2 },
  'POST /api/notifications/{id}/duplicate': { own: (x) => post(`/api/notifications/${x.notification.id}/duplicate`), attacks: (a) => [sweep(a, (id) => post(`/api/notifications/${id}/duplicate`))] },
  'POST /api/notifications/{id}/retry': { own: (x) => post(`/api/notifications/${x.notification.id}/retry`), attacks: (a) => [sweep(a, (id) => post(`/api/notifications/${id}/retry`))], phase: 2 },
  'GET /api/notifications/{id}/performance': { own: (x) => get(`/api/notifications/${x.notification.id}/performance`), attacks: (a) => [sweep(a, (id) => get(`/api/notifications/${id}/performance`))] },
  'GET /api/notifications/{id}/report.csv': { own: (x) => get(`/api/notifications/${x.notification.id}/report.csv`), attacks: (a) => [sweep(a, (id) => get(`/api/notifications/${id}/report.csv`))] },

  // ---- Segments
  'POST /api/sites/{siteId}/segments': {
    own: (x) => post(`/api/sites/${x.site.id}/segments`, { name: 'Owner segment', rules: { browser: 'Chrome' } }),
    attacks: (a) => [sweep(a, (id) => post(`/api/sites/${id}/segments`, { name: 'B segment' }))],
  },
  'GET /api/sites/{siteId}/segments': { own: (x) => get(`/api/sites/${x.site.id}/segments`), attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/segments`))] },
  'GET /api/segments/{id}': { own: (x) => get(`/api/segments/${x.segment.id}`), attacks: (a) => [sweep(a, (id) => get(`/api/segments/${id}`))] },
  'PATCH /api/segments/{id}': {
    own: (x) => patch(`/api/segments/${x.segment.id}`, { name: 'Owner renamed' }),
    attacks: (a) => [sweep(a, (id) => patch(`/api/segments/${id}`, { name: 'B renamed', rules: {} }))],
  },
  'DELETE /api/segments/{id}': { own: (x) => del(`/api/segments/${x.segment.id}`), attacks: (a) => [sweep(a, (id) => del(`/api/segments/${id}`))], phase: 8 },
  'GET /api/sites/{siteId}/audience': {
    own: (x) => get(`/api/sites/${x.site.id}/audience?segment_id=${x.segment.id}`),
    attacks: (a, b) => [
      sweep(a, (id) => get(`/api/sites/${id}/audience`)),
      single(get(`/api/sites/${b.site.id}/audience?segment_id=${a.segment.id}`), 400, "B's site counting A's segment"),
    ],
  },
  'POST /api/segments/{id}/estimate': { own: (x) => post(`/api/segments/${x.segment.id}/estimate`), attacks: (a) => [sweep(a, (id) => post(`/api/segments/${id}/estimate`))] },

  // ---- API keys and events
  'POST /api/sites/{siteId}/api-keys': { own: (x) => post(`/api/sites/${x.site.id}/api-keys`, { name: 'Owner key' }), attacks: (a) => [sweep(a, (id) => post(`/api/sites/${id}/api-keys`, { name: 'B key' }))] },
  'GET /api/sites/{siteId}/api-keys': { own: (x) => get(`/api/sites/${x.site.id}/api-keys`), attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/api-keys`))] },
  'DELETE /api/api-keys/{id}': { own: (x) => del(`/api/api-keys/${x.apiKey.id}`), attacks: (a) => [sweep(a, (id) => del(`/api/api-keys/${id}`))], phase: 8 },
  'POST /api/public/sites/{siteId}/track': {
    own: (x) => post(`/api/public/sites/${x.site.id}/track`, { endpoint: x.subscriber.endpoint, event: 'owner_event' }, 'none'),
    attacks: (a, b) => [
      single(post(`/api/public/sites/${a.site.id}/track`, { endpoint: b.subscriber.endpoint, event: 'forged' }, 'none'), 404, "A's site with B's endpoint"),
      single(post(`/api/public/sites/${b.site.id}/track`, { endpoint: a.subscriber.endpoint, event: 'forged' }, 'none'), 404, "B's site with A's endpoint"),
    ],
  },
  'POST /api/public/sites/{siteId}/identify': {
    own: (x) =>
      post(`/api/public/sites/${x.site.id}/identify`, { endpoint: x.subscriber.endpoint, external_id: 'owner-user-1', identity_hash: identityHashFor(x.identitySecret, 'owner-user-1') }, 'none'),
    attacks: (a, b) => [
      // B can sign only with B's own secret: on A's site that is a wrong hash, refused before any lookup.
      single(post(`/api/public/sites/${a.site.id}/identify`, { endpoint: b.subscriber.endpoint, external_id: 'forged', identity_hash: identityHashFor(b.identitySecret, 'forged') }, 'none'), 403, "A's site with B's endpoint, signed by B"),
      single(post(`/api/public/sites/${a.site.id}/identify`, { endpoint: a.subscriber.endpoint, external_id: 'forged' }, 'none'), 401, "A's site and endpoint, unsigned"),
      single(post(`/api/public/sites/${b.site.id}/identify`, { endpoint: a.subscriber.endpoint, external_id: 'forged', identity_hash: identityHashFor(b.identitySecret, 'forged') }, 'none'), 404, "B's site with A's endpoint"),
    ],
  },
  'POST /api/public/sites/{siteId}/tags': {
    own: (x) => post(`/api/public/sites/${x.site.id}/tags`, { endpoint: x.subscriber.endpoint, add: ['owner'] }, 'none'),
    attacks: (a, b) => [
      single(post(`/api/public/sites/${a.site.id}/tags`, { endpoint: b.subscriber.endpoint, add: ['forged'] }, 'none'), 404, "A's site with B's endpoint"),
      single(post(`/api/public/sites/${b.site.id}/tags`, { endpoint: a.subscriber.endpoint, remove: ['vip'] }, 'none'), 404, "B's site with A's endpoint"),
    ],
  },
  'POST /api/v1/sites/{siteId}/events': {
    own: (x) => post(`/api/v1/sites/${x.site.id}/events`, { event: 'owner_api_event', subscriber_id: x.subscriber.id }, { apiKey: x.apiKey.key }),
    attacks: (a, b) => [
      single(post(`/api/v1/sites/${a.site.id}/events`, { event: 'forged', subscriber_id: a.subscriber.id }, { apiKey: b.apiKey.key }), 401, "B's key on A's site"),
      single(post(`/api/v1/sites/${b.site.id}/events`, { event: 'forged', subscriber_id: a.subscriber.id }, { apiKey: b.apiKey.key }), 404, "B's site and key, A's subscriber"),
      single(post(`/api/v1/sites/${a.site.id}/events`, { event: 'forged', subscriber_id: a.subscriber.id }, session), 401, "B's dashboard session is not a site key"),
    ],
  },
  'POST /api/v1/sites/{siteId}/subscribers/tags': {
    own: (x) => post(`/api/v1/sites/${x.site.id}/subscribers/tags`, { subscriber_id: x.subscriber.id, add: ['owner-api-tag'] }, { apiKey: x.apiKey.key }),
    attacks: (a, b) => [
      single(post(`/api/v1/sites/${a.site.id}/subscribers/tags`, { subscriber_id: a.subscriber.id, add: ['forged'] }, { apiKey: b.apiKey.key }), 401, "B's key on A's site"),
      single(post(`/api/v1/sites/${b.site.id}/subscribers/tags`, { subscriber_id: a.subscriber.id, remove: ['vip'] }, { apiKey: b.apiKey.key }), 404, "B's site and key, A's subscriber"),
      single(post(`/api/v1/sites/${a.site.id}/subscribers/tags`, { subscriber_id: a.subscriber.id, add: ['forged'] }, session), 401, "B's dashboard session is not a site key"),
    ],
  },
  'GET /api/sites/{siteId}/events': { own: (x) => get(`/api/sites/${x.site.id}/events?limit=5`), attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/events?limit=5`))] },

  // ---- Welcome campaigns
  'POST /api/sites/{siteId}/welcome-campaigns': {
    own: (x) => post(`/api/sites/${x.site.id}/welcome-campaigns`, campaignBody()),
    attacks: (a, b) => [
      sweep(a, (id) => post(`/api/sites/${id}/welcome-campaigns`, campaignBody())),
      single(post(`/api/sites/${b.site.id}/welcome-campaigns`, { ...campaignBody(), segment_id: a.segment.id }), 400, "B's campaign targeting A's segment"),
    ],
  },
  'GET /api/sites/{siteId}/welcome-campaigns': { own: (x) => get(`/api/sites/${x.site.id}/welcome-campaigns`), attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/welcome-campaigns`))] },
  'GET /api/welcome-campaigns/{id}': { own: (x) => get(`/api/welcome-campaigns/${x.campaign.id}`), attacks: (a) => [sweep(a, (id) => get(`/api/welcome-campaigns/${id}`))] },
  'PATCH /api/welcome-campaigns/{id}': {
    own: (x) => patch(`/api/welcome-campaigns/${x.campaign.id}`, { name: 'Owner renamed' }),
    attacks: (a, b) => [
      sweep(a, (id) => patch(`/api/welcome-campaigns/${id}`, { is_active: false })),
      single(patch(`/api/welcome-campaigns/${b.campaign.id}`, { segment_id: a.segment.id }), 400, "B's campaign targeting A's segment"),
    ],
  },
  'DELETE /api/welcome-campaigns/{id}': { own: (x) => del(`/api/welcome-campaigns/${x.campaign.id}`), attacks: (a) => [sweep(a, (id) => del(`/api/welcome-campaigns/${id}`))], phase: 8 },

  // ---- RSS feeds
  'POST /api/sites/{siteId}/rss-feeds': {
    own: (x) => post(`/api/sites/${x.site.id}/rss-feeds`, feedBody()),
    attacks: (a, b) => [
      sweep(a, (id) => post(`/api/sites/${id}/rss-feeds`, feedBody())),
      single(post(`/api/sites/${b.site.id}/rss-feeds`, { ...feedBody(), segmentId: a.segment.id }), 400, "B's feed targeting A's segment"),
    ],
  },
  'GET /api/sites/{siteId}/rss-feeds': { own: (x) => get(`/api/sites/${x.site.id}/rss-feeds`), attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/rss-feeds`))] },
  'GET /api/rss-feeds/{id}': { own: (x) => get(`/api/rss-feeds/${x.feed.id}`), attacks: (a) => [sweep(a, (id) => get(`/api/rss-feeds/${id}`))] },
  'PATCH /api/rss-feeds/{id}': {
    own: (x) => patch(`/api/rss-feeds/${x.feed.id}`, { name: 'Owner renamed' }),
    attacks: (a, b) => [
      sweep(a, (id) => patch(`/api/rss-feeds/${id}`, { url: 'http://127.0.0.1:9/b.xml', is_active: false })),
      single(patch(`/api/rss-feeds/${b.feed.id}`, { segmentId: a.segment.id }), 400, "B's feed targeting A's segment"),
    ],
  },
  'DELETE /api/rss-feeds/{id}': { own: (x) => del(`/api/rss-feeds/${x.feed.id}`), attacks: (a) => [sweep(a, (id) => del(`/api/rss-feeds/${id}`))], phase: 8 },
  'POST /api/rss-feeds/{id}/check': { own: (x) => post(`/api/rss-feeds/${x.feed.id}/check`), attacks: (a) => [sweep(a, (id) => post(`/api/rss-feeds/${id}/check`))] },

  // ---- Analytics
  'GET /api/sites/{siteId}/analytics/dashboard': { own: (x) => get(`/api/sites/${x.site.id}/analytics/dashboard`), attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/analytics/dashboard`))] },
  'GET /api/sites/{siteId}/analytics/delivery': { own: (x) => get(`/api/sites/${x.site.id}/analytics/delivery?days=30`), attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/analytics/delivery`))] },
  'GET /api/sites/{siteId}/analytics/subscribers': { own: (x) => get(`/api/sites/${x.site.id}/analytics/subscribers`), attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/analytics/subscribers`))] },
  'GET /api/sites/{siteId}/analytics/engagement': { own: (x) => get(`/api/sites/${x.site.id}/analytics/engagement`), attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/analytics/engagement`))] },

  // ---- Uploads
  'DELETE /api/uploads/{id}': { own: (x) => del(`/api/uploads/${x.upload.id}`), attacks: (a) => [sweep(a, (id) => del(`/api/uploads/${id}`))], phase: 8 },

  // ---- Uploaded files (outside /api, hidden from the OpenAPI document)
  'GET /uploads/{file}': {
    own: (x) => ({ method: 'GET', url: `/uploads/${x.upload.file}`, auth: 'none' }),
    attacks: () => [],
    publicByDesign: "subscribers' browsers load notification images without credentials; names are random UUIDs, and no route lists, changes or deletes another user's upload",
  },
};

describe('tenancy matrix: user B against everything user A owns', () => {
  let t: TestApp;
  let a: Tenant;
  let b: Tenant;

  beforeAll(async () => {
    t = await createTestApp();
    a = await seedTenant(t, 'Alice');
    b = await seedTenant(t, 'Bob');
  });
  afterAll(async () => t?.close());

  async function call(probe: Probe, caller: Tenant) {
    const headers: Record<string, string> = {};
    if (probe.auth === 'session') headers.authorization = `Bearer ${caller.user.token}`;
    else if (typeof probe.auth === 'object') headers.authorization = `Bearer ${probe.auth.apiKey}`;
    return t.request(probe.method, probe.url, { headers, remoteAddress: nextAddress(), ...(probe.body !== undefined ? { body: probe.body } : {}) });
  }

  /** Param routes of the running app, by shape (`GET /api/sites/{}`). */
  async function paramRoutes() {
    const { routes } = await documentedRoutes(t.app);
    // `{*}` is the dashboard's history fallback (a wildcard, not an id).
    const documented = routes.filter((r) => r.path.includes('{') && !r.path.includes('{*}')).map((r) => `${r.method} ${shapeOf(r.path)}`);
    const registered = registeredRoutes(t.app)
      .filter((r) => r.path.includes(':'))
      .map((r) => `${r.method} ${shapeOf(r.path)}`);
    return { documented: new Set(documented), registered: new Set(registered) };
  }

  it('covers every route that takes an id (derived from the running app)', async () => {
    const { documented, registered } = await paramRoutes();
    const matrixShapes = new Set(
      Object.keys(MATRIX).map((key) => {
        const [method, path] = key.split(' ') as [string, string];
        return `${method} ${shapeOf(path)}`;
      }),
    );
    // Sanity: the derivation found the routes we know about (the tree parser and the document agree).
    expect(documented.size).toBeGreaterThan(40);
    for (const route of documented) expect(registered.has(route), `${route} is documented but not in Fastify's route tree`).toBe(true);

    const missing: string[] = [];
    for (const route of registered) {
      const [method, shape] = route.split(' ') as [string, string];
      if (method === 'HEAD') {
        // Fastify answers HEAD with the GET handler; the GET entry is probed with HEAD too.
        if (!matrixShapes.has(`GET ${shape}`)) missing.push(route);
      } else if (method === 'OPTIONS') {
        // CORS preflights of public routes: probed below with A's site id (they must answer without reading anything).
        if (!matrixShapes.has(`POST ${shape}`)) missing.push(route);
      } else if (!matrixShapes.has(route)) {
        missing.push(route);
      }
    }
    expect(missing, 'routes with a path parameter but no entry in the tenancy matrix').toEqual([]);
    for (const shape of matrixShapes) expect(registered.has(shape), `matrix entry ${shape} matches no route`).toBe(true);
  });

  it("answers 404 to every one of B's calls with A's ids, with the same answer as for an id nobody has, and changes nothing", async () => {
    const before = await dumpDatabase(t.ctx.db);
    const failures: string[] = [];
    let calls = 0;

    const check = async (probe: Probe, status: number, label: string, reference?: { status: number; body: unknown }) => {
      const response = await call(probe, b);
      calls += 1;
      const context = `${label}: ${probe.method} ${probe.url} ${probe.body ? JSON.stringify(probe.body) : ''}`;
      if (response.status !== status) {
        failures.push(`${context} → ${response.status} ${JSON.stringify(response.body)} (expected ${status})`);
        return;
      }
      expectErrorBody(response.body, context);
      if (reference && JSON.stringify(response.body) !== JSON.stringify(reference.body)) {
        failures.push(`${context} answers ${JSON.stringify(response.body)}, an unknown id answers ${JSON.stringify(reference.body)}: the difference reveals that the id exists`);
      }
      if (probe.method === 'GET') {
        const head = await t.app.inject({ method: 'HEAD', url: probe.url, headers: { authorization: `Bearer ${b.user.token}` } });
        calls += 1;
        if (head.statusCode !== status) failures.push(`HEAD ${probe.url} → ${head.statusCode} (expected ${status})`);
      }
    };

    for (const [route, routeCase] of Object.entries(MATRIX)) {
      for (const attack of routeCase.attacks(a, b)) {
        if (attack.kind === 'single') {
          await check(attack.probe, attack.status, `${route} (${attack.why})`);
          continue;
        }
        const unknown = attack.build(crypto.randomUUID());
        const reference = await call(unknown, b);
        calls += 1;
        if (reference.status !== attack.status) failures.push(`${route} with an unknown id → ${reference.status} (expected ${attack.status})`);
        for (const id of attack.ids) await check(attack.build(id), attack.status, route, reference);
      }
    }

    // CORS preflights of the public routes with A's site id: a fixed answer, nothing read or written.
    for (const route of registeredRoutes(t.app).filter((r) => r.method === 'OPTIONS' && r.path.includes(':'))) {
      const url = route.path.replace(/:[^/]+/g, a.site.id);
      const response = await t.request('OPTIONS', url, { headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
      calls += 1;
      if (response.status !== 204) failures.push(`OPTIONS ${url} → ${response.status}`);
    }

    expect(failures).toEqual([]);
    expect(calls).toBeGreaterThan(400);
    const after = await dumpDatabase(t.ctx.db);
    for (const table of Object.keys(before)) expect(after[table], `table ${table} changed`).toEqual(before[table]);
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
  });

  it('does not let a body move a resource to another site or user (site_id and friends are refused or ignored)', async () => {
    const foreign = { site_id: a.site.id, siteId: a.site.id, user_id: a.user.id };
    const attempts: Array<{ probe: Probe; table: 'sites' | 'notifications' | 'segments' | 'welcome_campaigns' | 'rss_feeds' | 'subscribers'; id: string }> = [
      { probe: patch(`/api/sites/${b.site.id}`, { name: 'Bob Shop', ...foreign }), table: 'sites', id: b.site.id },
      { probe: patch(`/api/notifications/${b.notification.id}`, { title: 'Moved?', ...foreign }), table: 'notifications', id: b.notification.id },
      { probe: patch(`/api/segments/${b.segment.id}`, { name: 'Moved?', ...foreign }), table: 'segments', id: b.segment.id },
      { probe: patch(`/api/welcome-campaigns/${b.campaign.id}`, { name: 'Moved?', ...foreign }), table: 'welcome_campaigns', id: b.campaign.id },
      { probe: patch(`/api/rss-feeds/${b.feed.id}`, { name: 'Moved?', ...foreign }), table: 'rss_feeds', id: b.feed.id },
      { probe: patch(`/api/subscribers/${b.subscriber.id}/tags`, { tags: ['moved'], ...foreign }), table: 'subscribers', id: b.subscriber.id },
    ];
    for (const { probe, table, id } of attempts) {
      const response = await call(probe, b);
      expect([200, 400], `${probe.method} ${probe.url} → ${response.status} ${JSON.stringify(response.body)}`).toContain(response.status);
      if (response.status === 400) expectErrorBody(response.body, probe.url);
      const row = (await t.ctx.db.selectFrom(table).selectAll().where('id', '=', id).executeTakeFirstOrThrow()) as Record<string, unknown>;
      if (table === 'sites') expect(row.user_id).toBe(b.user.id);
      else expect(row.site_id, `${table} ${id}`).toBe(b.site.id);
    }

    // Creating under B's site with A's site id in the body creates under B's site (or is refused), never A's.
    const creates: Array<{ probe: Probe; table: 'notifications' | 'segments' | 'welcome_campaigns' | 'rss_feeds'; key: string }> = [
      { probe: post(`/api/sites/${b.site.id}/notifications`, { ...notificationBody(b), ...foreign }), table: 'notifications', key: 'notification' },
      { probe: post(`/api/sites/${b.site.id}/segments`, { name: 'Planted', ...foreign }), table: 'segments', key: 'segment' },
      { probe: post(`/api/sites/${b.site.id}/welcome-campaigns`, { ...campaignBody(), ...foreign }), table: 'welcome_campaigns', key: 'campaign' },
      { probe: post(`/api/sites/${b.site.id}/rss-feeds`, { ...feedBody(), ...foreign }), table: 'rss_feeds', key: 'feed' },
    ];
    for (const { probe, table, key } of creates) {
      const response = await call(probe, b);
      expect([201, 400], `${probe.url} → ${response.status} ${JSON.stringify(response.body)}`).toContain(response.status);
      if (response.status === 201) {
        const row = (await t.ctx.db.selectFrom(table).selectAll().where('id', '=', response.body.data[key].id).executeTakeFirstOrThrow()) as Record<string, unknown>;
        expect(row.site_id).toBe(b.site.id);
      }
    }
    const onA = await t.ctx.db.selectFrom('notifications').select('id').where('site_id', '=', a.site.id).where('title', '=', 'Moved?').execute();
    expect(onA).toEqual([]);
  });

  it("public subscribe only ever writes to the site in its path: A's site cannot take over or move B's subscriber", async () => {
    const bRowBefore = await t.ctx.db.selectFrom('subscribers').selectAll().where('id', '=', b.subscriber.id).executeTakeFirstOrThrow();
    const newEndpoint = fcmEndpoint();
    // pushsubscriptionchange through A's site naming B's endpoint as the previous one.
    const moved = await t.request('POST', `/api/public/sites/${a.site.id}/subscribers`, {
      body: { subscription: { endpoint: newEndpoint, keys: pushKeys() }, previous_endpoint: b.subscriber.endpoint },
      remoteAddress: nextAddress(),
    });
    expect(moved.status).toBe(201);
    expect(moved.body.data.subscriber.id).not.toBe(b.subscriber.id);
    // The same browser endpoint subscribing to A's site is a separate subscriber of A's site.
    const sameBrowser = await t.request('POST', `/api/public/sites/${a.site.id}/subscribers`, {
      body: { subscription: { endpoint: b.subscriber.endpoint, keys: pushKeys() } },
      remoteAddress: nextAddress(),
    });
    expect(sameBrowser.status).toBe(201);
    expect(sameBrowser.body.data.subscriber.id).not.toBe(b.subscriber.id);
    const bRowAfter = await t.ctx.db.selectFrom('subscribers').selectAll().where('id', '=', b.subscriber.id).executeTakeFirstOrThrow();
    expect(bRowAfter).toEqual(bRowBefore);
    const created = await t.ctx.db.selectFrom('subscribers').select('site_id').where('id', 'in', [moved.body.data.subscriber.id, sameBrowser.body.data.subscriber.id]).execute();
    expect(created.map((r) => r.site_id)).toEqual([a.site.id, a.site.id]);
    // An uploaded file is public by design, a listed route for it is not: B has no way to enumerate or change A's uploads.
    const file = await t.request('GET', `/uploads/${a.upload.file}`);
    expect(file.status).toBe(200);
  });

  it("reaches its own resources on every route (the matrix's ids are live, so its 404s mean something)", async () => {
    const owned = Object.entries(MATRIX).sort(([, x], [, y]) => (x.phase ?? 1) - (y.phase ?? 1));
    const failures: string[] = [];
    for (const [route, routeCase] of owned) {
      const probe = routeCase.own(a);
      const response = await call(probe, a);
      if (response.status === 404 || response.status >= 500) failures.push(`${route}: ${probe.method} ${probe.url} → ${response.status} ${JSON.stringify(response.body)}`);
      if (routeCase.publicByDesign) expect(response.status, route).toBeLessThan(300);
    }
    expect(failures).toEqual([]);
  });
});
