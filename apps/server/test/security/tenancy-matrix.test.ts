import crypto from 'node:crypto';
import { roleAllows, roleNeededMessage, SITE_ROLES, type SiteRole } from '@herald/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/test-app';
import {
  documentedRoutes,
  addMember,
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

// docs/security.md, "Tenancy": every route that takes an id answers 404
// unless the id belongs to a site the caller is a member of, nested mixes
// included; a member whose role is below the one the route needs gets 403
// naming that role; a refused call changes nothing. The matrix below lists
// EVERY route with a path parameter and the role it needs; the first test
// derives the routes from the running app (its OpenAPI document and
// Fastify's own route tree), so a route added without an entry here fails
// the suite, and the role matrix below calls every route as every role.

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

/**
 * What a route needs: a role on the site its ids belong to (the role its
 * service passes to requireSiteRole / checkSiteRole), or
 * - 'account': the caller's own thing, not a site's (uploads): every other member gets 404;
 * - 'public' / 'api-key': no dashboard session at all (proven in the tenancy sweep).
 */
type Needs = SiteRole | 'account' | 'public' | 'api-key';

interface RouteCase {
  /** The role matrix calls every route as a member of each role: allowed at or above this, 403 below. */
  needs: Needs;
  /** The call made by the tenant that owns the ids: must reach them (anything but 404, never 500). */
  own: (x: Tenant) => Probe;
  /** What user B tries against user A; B's session (or B's key) is used where `auth` says so. */
  attacks: (a: Tenant, b: Tenant) => Array<Sweep | Single>;
  /** Public by design: stated, and proven in its own test below. */
  publicByDesign?: string;
  /** The owner's run goes phase by phase: deleting comes last, the site itself at the very end. */
  phase?: number;
  /** The call ends or changes the caller's own membership (leave, transfer): the role matrix makes it as a second member of the role. */
  selfChanging?: true;
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
/** A VAPID key pair as web-push libraries export it (base64url raw keys). */
function generatedVapidPair(): { public_key: string; private_key: string } {
  const ecdh = crypto.createECDH('prime256v1');
  ecdh.generateKeys();
  return { public_key: ecdh.getPublicKey().toString('base64url'), private_key: ecdh.getPrivateKey().toString('base64url') };
}
const IMPORTED_VAPID_PAIR = generatedVapidPair();

const MATRIX: Record<string, RouteCase> = {
  // ---- Sites
  'GET /api/sites/{id}': {
    needs: 'viewer',
    own: (x) => get(`/api/sites/${x.site.id}`),
    attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}`))],
  },
  'PATCH /api/sites/{id}': {
    needs: 'admin',
    own: (x) => patch(`/api/sites/${x.site.id}`, { name: `${x.label} renamed` }),
    attacks: (a) => [sweep(a, (id) => patch(`/api/sites/${id}`, { name: 'Taken over', url: 'https://attacker.example' }))],
  },
  'DELETE /api/sites/{id}': {
    needs: 'owner',
    own: (x) => del(`/api/sites/${x.site.id}`),
    attacks: (a) => [sweep(a, (id) => del(`/api/sites/${id}`))],
    phase: 10,
  },
  'GET /api/sites/{id}/identity-secret': {
    needs: 'owner',
    own: (x) => get(`/api/sites/${x.site.id}/identity-secret`),
    attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/identity-secret`))],
  },
  // After the identify call of phase 1, which signs with the secret seeded before.
  'POST /api/sites/{id}/identity-secret/rotate': {
    needs: 'owner',
    own: (x) => post(`/api/sites/${x.site.id}/identity-secret/rotate`),
    attacks: (a) => [sweep(a, (id) => post(`/api/sites/${id}/identity-secret/rotate`))],
    phase: 2,
  },
  'GET /api/sites/{id}/install-code': {
    needs: 'viewer',
    own: (x) => get(`/api/sites/${x.site.id}/install-code`),
    attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/install-code`))],
  },
  // The owner's check fetches https://<tenant>.example, a name that never resolves: nothing leaves the machine.
  'POST /api/sites/{id}/install-check': { needs: 'editor', own: (x) => post(`/api/sites/${x.site.id}/install-check`), attacks: (a) => [sweep(a, (id) => post(`/api/sites/${id}/install-check`))] },
  'GET /api/sites/{id}/checklist': { needs: 'viewer', own: (x) => get(`/api/sites/${x.site.id}/checklist`), attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/checklist`))] },
  'PATCH /api/sites/{id}/checklist': {
    needs: 'editor',
    own: (x) => patch(`/api/sites/${x.site.id}/checklist`, { dismissed: true }),
    attacks: (a) => [sweep(a, (id) => patch(`/api/sites/${id}/checklist`, { dismissed: true }))],
  },
  'GET /api/sites/{id}/prompt-settings': { needs: 'viewer', own: (x) => get(`/api/sites/${x.site.id}/prompt-settings`), attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/prompt-settings`))] },
  'PUT /api/sites/{id}/prompt-settings': {
    needs: 'admin',
    own: (x) => ({ method: 'PUT', url: `/api/sites/${x.site.id}/prompt-settings`, body: { type: 'bell' }, auth: session }),
    attacks: (a) => [sweep(a, (id) => ({ method: 'PUT', url: `/api/sites/${id}/prompt-settings`, body: { type: 'native', headline: 'Taken over' }, auth: session }))],
  },
  'GET /api/public/sites/{siteId}/prompt-settings': {
    needs: 'public',
    own: (x) => ({ method: 'GET', url: `/api/public/sites/${x.site.id}/prompt-settings`, auth: 'none' }),
    attacks: () => [],
    publicByDesign: 'the SDK on the site’s pages reads how to ask its visitors; it holds nothing secret (labels, colours, timing)',
  },
  'POST /api/public/sites/{siteId}/prompt-events': {
    needs: 'public',
    own: (x) => post(`/api/public/sites/${x.site.id}/prompt-events`, { prompt: 'slide', event: 'shown' }, 'none'),
    attacks: () => [],
    publicByDesign: 'any visitor’s browser reports the prompts it showed on the site in its path; it only ever adds to that site’s prompt counts',
  },

  // ---- Subscribers
  'POST /api/public/sites/{siteId}/subscribers': {
    needs: 'public',
    own: (x) => post(`/api/public/sites/${x.site.id}/subscribers`, { subscription: { endpoint: fcmEndpoint(), keys: pushKeys() } }, 'none'),
    attacks: () => [],
    publicByDesign: 'any browser may subscribe to any site (that is the product); it only ever writes to the site in its path — see "public subscribe" below',
  },
  'POST /api/public/sites/{siteId}/subscribers/unsubscribe': {
    needs: 'public',
    own: (x) => post(`/api/public/sites/${x.site.id}/subscribers/unsubscribe`, { endpoint: x.subscriber.endpoint }, 'none'),
    attacks: (a, b) => [
      single(post(`/api/public/sites/${a.site.id}/subscribers/unsubscribe`, { endpoint: b.subscriber.endpoint }, 'none'), 404, "A's site with B's endpoint"),
      single(post(`/api/public/sites/${b.site.id}/subscribers/unsubscribe`, { endpoint: a.subscriber.endpoint }, 'none'), 404, "B's site with A's endpoint"),
    ],
    phase: 8,
  },
  'GET /api/sites/{siteId}/subscribers': {
    needs: 'viewer',
    own: (x) => get(`/api/sites/${x.site.id}/subscribers?limit=10`),
    attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/subscribers?limit=10`))],
  },
  'GET /api/sites/{siteId}/subscribers/{id}': {
    needs: 'viewer',
    own: (x) => get(`/api/sites/${x.site.id}/subscribers/${x.subscriber.id}`),
    attacks: (a, b) => [
      sweep(a, (id) => get(`/api/sites/${id}/subscribers/${a.subscriber.id}`)),
      sweep(a, (id) => get(`/api/sites/${b.site.id}/subscribers/${id}`)),
      single(get(`/api/sites/${a.site.id}/subscribers/${b.subscriber.id}`), 404, "A's site with B's own subscriber"),
    ],
  },
  'GET /api/sites/{siteId}/subscribers/stale': {
    needs: 'viewer',
    own: (x) => get(`/api/sites/${x.site.id}/subscribers/stale`),
    attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/subscribers/stale`))],
  },
  'POST /api/sites/{siteId}/subscribers/stale/deactivate': {
    needs: 'admin',
    own: (x) => post(`/api/sites/${x.site.id}/subscribers/stale/deactivate`),
    attacks: (a) => [sweep(a, (id) => post(`/api/sites/${id}/subscribers/stale/deactivate`))],
    phase: 8,
  },
  'DELETE /api/subscribers/{id}': {
    needs: 'admin',
    own: (x) => del(`/api/subscribers/${x.subscriber.id}`),
    attacks: (a) => [sweep(a, (id) => del(`/api/subscribers/${id}`))],
    phase: 8,
  },
  // Erasing is the same route as removing, with ?erase=true: after removing (phase 8), before the site goes.
  'DELETE /api/subscribers/{id}?erase=true': {
    needs: 'admin',
    own: (x) => del(`/api/subscribers/${x.subscriber.id}?erase=true`),
    attacks: (a) => [sweep(a, (id) => del(`/api/subscribers/${id}?erase=true`))],
    phase: 8.5,
  },
  'GET /api/subscribers/{id}/export': {
    needs: 'admin',
    own: (x) => get(`/api/subscribers/${x.subscriber.id}/export`),
    attacks: (a) => [sweep(a, (id) => get(`/api/subscribers/${id}/export`))],
  },
  'GET /api/sites/{siteId}/subscribers/export': {
    needs: 'admin',
    own: (x) => get(`/api/sites/${x.site.id}/subscribers/export?include_keys=true`),
    attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/subscribers/export?include_keys=true`))],
  },
  'PATCH /api/subscribers/{id}/test-device': {
    needs: 'editor',
    own: (x) => patch(`/api/subscribers/${x.subscriber.id}/test-device`, { enabled: false }),
    attacks: (a) => [sweep(a, (id) => patch(`/api/subscribers/${id}/test-device`, { enabled: true, name: 'Planted' }))],
  },
  'GET /api/sites/{siteId}/test-devices': { needs: 'viewer', own: (x) => get(`/api/sites/${x.site.id}/test-devices`), attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/test-devices`))] },
  'POST /api/sites/{siteId}/test-devices/link': {
    needs: 'editor',
    own: (x) => post(`/api/sites/${x.site.id}/test-devices/link`),
    attacks: (a) => [sweep(a, (id) => post(`/api/sites/${id}/test-devices/link`))],
  },
  // After the test sends (phase 1), so they find no test device and push nothing to the tenants' real-looking endpoints.
  'POST /api/public/sites/{siteId}/test-devices': {
    needs: 'public',
    own: (x) => post(`/api/public/sites/${x.site.id}/test-devices`, { endpoint: x.subscriber.endpoint, code: x.testDeviceCode }, 'none'),
    attacks: (a, b) => [
      single(post(`/api/public/sites/${a.site.id}/test-devices`, { endpoint: b.subscriber.endpoint, code: a.testDeviceCode }, 'none'), 404, "A's site and code with B's endpoint"),
      single(post(`/api/public/sites/${b.site.id}/test-devices`, { endpoint: b.subscriber.endpoint, code: a.testDeviceCode }, 'none'), 404, "B's site and endpoint with A's code"),
      single(post(`/api/public/sites/${a.site.id}/test-devices`, { endpoint: a.subscriber.endpoint, code: b.testDeviceCode }, 'none'), 404, "A's site and endpoint with B's code"),
    ],
    phase: 3,
  },
  'POST /api/notifications/{id}/test': { needs: 'editor', own: (x) => post(`/api/notifications/${x.notification.id}/test`), attacks: (a) => [sweep(a, (id) => post(`/api/notifications/${id}/test`))] },
  'POST /api/sites/{siteId}/notifications/test': {
    needs: 'editor',
    own: (x) => post(`/api/sites/${x.site.id}/notifications/test`, notificationBody(x)),
    attacks: (a, b) => [sweep(a, (id) => post(`/api/sites/${id}/notifications/test`, notificationBody(b)))],
  },
  'PATCH /api/subscribers/{id}/tags': {
    needs: 'editor',
    own: (x) => patch(`/api/subscribers/${x.subscriber.id}/tags`, { tags: ['vip', 'owner-edit'] }),
    attacks: (a) => [sweep(a, (id) => patch(`/api/subscribers/${id}/tags`, { tags: ['pwned'] }))],
  },

  // ---- Notifications
  'POST /api/sites/{siteId}/notifications': {
    needs: 'editor',
    own: (x) => post(`/api/sites/${x.site.id}/notifications`, notificationBody(x)),
    attacks: (a, b) => [
      sweep(a, (id) => post(`/api/sites/${id}/notifications`, notificationBody(b))),
      single(post(`/api/sites/${b.site.id}/notifications`, { ...notificationBody(b), segment_id: a.segment.id }), 400, "B's site targeting A's segment"),
    ],
  },
  'GET /api/sites/{siteId}/notifications': {
    needs: 'viewer',
    own: (x) => get(`/api/sites/${x.site.id}/notifications`),
    attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/notifications`))],
  },
  'GET /api/notifications/{id}': {
    needs: 'viewer',
    own: (x) => get(`/api/notifications/${x.notification.id}`),
    attacks: (a) => [sweep(a, (id) => get(`/api/notifications/${id}`))],
  },
  'PATCH /api/notifications/{id}': {
    needs: 'editor',
    own: (x) => patch(`/api/notifications/${x.notification.id}`, { title: 'Edited by owner' }),
    attacks: (a, b) => [
      sweep(a, (id) => patch(`/api/notifications/${id}`, { title: 'Edited by B' })),
      single(patch(`/api/notifications/${b.notification.id}`, { segment_id: a.segment.id }), 400, "B's notification targeting A's segment"),
    ],
  },
  'DELETE /api/notifications/{id}': {
    needs: 'editor',
    own: (x) => del(`/api/notifications/${x.notification.id}`),
    attacks: (a) => [sweep(a, (id) => del(`/api/notifications/${id}`))],
    phase: 8,
  },
  'POST /api/notifications/{id}/send': {
    needs: 'editor',
    own: (x) => post(`/api/notifications/${x.notification.id}/send`),
    attacks: (a) => [sweep(a, (id) => post(`/api/notifications/${id}/send`))],
    phase: 2,
  },
  'POST /api/notifications/{id}/cancel': {
    needs: 'editor',
    own: (x) => post(`/api/notifications/${x.notification.id}/cancel`),
    attacks: (a) => [sweep(a, (id) => post(`/api/notifications/${id}/cancel`))],
    phase: 2,
  },
  'POST /api/notifications/{id}/duplicate': {
    needs: 'editor',
    own: (x) => post(`/api/notifications/${x.notification.id}/duplicate`),
    attacks: (a) => [sweep(a, (id) => post(`/api/notifications/${id}/duplicate`))],
  },
  'POST /api/notifications/{id}/retry': {
    needs: 'editor',
    own: (x) => post(`/api/notifications/${x.notification.id}/retry`),
    attacks: (a) => [sweep(a, (id) => post(`/api/notifications/${id}/retry`))],
    phase: 2,
  },
  'POST /api/notifications/{id}/ab-test/winner': {
    needs: 'editor',
    own: (x) => post(`/api/notifications/${x.notification.id}/ab-test/winner`, { variant_index: 0 }),
    attacks: (a) => [sweep(a, (id) => post(`/api/notifications/${id}/ab-test/winner`, { variant_index: 0 }))],
  },
  'GET /api/notifications/{id}/performance': {
    needs: 'viewer',
    own: (x) => get(`/api/notifications/${x.notification.id}/performance`),
    attacks: (a) => [sweep(a, (id) => get(`/api/notifications/${id}/performance`))],
  },
  'GET /api/notifications/{id}/report.csv': {
    needs: 'viewer',
    own: (x) => get(`/api/notifications/${x.notification.id}/report.csv`),
    attacks: (a) => [sweep(a, (id) => get(`/api/notifications/${id}/report.csv`))],
  },

  // ---- Segments
  'POST /api/sites/{siteId}/segments': {
    needs: 'editor',
    own: (x) => post(`/api/sites/${x.site.id}/segments`, { name: 'Owner segment', rules: { browser: 'Chrome' } }),
    attacks: (a) => [sweep(a, (id) => post(`/api/sites/${id}/segments`, { name: 'B segment' }))],
  },
  'GET /api/sites/{siteId}/segments': {
    needs: 'viewer',
    own: (x) => get(`/api/sites/${x.site.id}/segments`),
    attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/segments`))],
  },
  'GET /api/segments/{id}': {
    needs: 'viewer',
    own: (x) => get(`/api/segments/${x.segment.id}`),
    attacks: (a) => [sweep(a, (id) => get(`/api/segments/${id}`))],
  },
  'PATCH /api/segments/{id}': {
    needs: 'editor',
    own: (x) => patch(`/api/segments/${x.segment.id}`, { name: 'Owner renamed' }),
    attacks: (a) => [sweep(a, (id) => patch(`/api/segments/${id}`, { name: 'B renamed', rules: {} }))],
  },
  'DELETE /api/segments/{id}': {
    needs: 'editor',
    own: (x) => del(`/api/segments/${x.segment.id}`),
    attacks: (a) => [sweep(a, (id) => del(`/api/segments/${id}`))],
    phase: 8,
  },
  'POST /api/segments/{id}/estimate': {
    needs: 'viewer',
    own: (x) => post(`/api/segments/${x.segment.id}/estimate`),
    attacks: (a) => [sweep(a, (id) => post(`/api/segments/${id}/estimate`))],
  },
  'GET /api/sites/{siteId}/audience': {
    needs: 'viewer',
    own: (x) => get(`/api/sites/${x.site.id}/audience?segment_id=${x.segment.id}`),
    attacks: (a, b) => [
      sweep(a, (id) => get(`/api/sites/${id}/audience`)),
      single(get(`/api/sites/${b.site.id}/audience?segment_id=${a.segment.id}`), 400, "B's site counting A's segment"),
    ],
  },

  // ---- VAPID keys (admin, like API keys: the site's settings; docs/product.md §6)
  'GET /api/sites/{siteId}/vapid-keys': {
    needs: 'admin',
    own: (x) => get(`/api/sites/${x.site.id}/vapid-keys`),
    attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/vapid-keys`))],
  },
  'POST /api/sites/{siteId}/vapid-keys': {
    needs: 'admin',
    // The same pair every time: the first call imports it, the next ones are 409 (already on the site).
    own: (x) => post(`/api/sites/${x.site.id}/vapid-keys`, IMPORTED_VAPID_PAIR),
    attacks: (a) => [sweep(a, (id) => post(`/api/sites/${id}/vapid-keys`, generatedVapidPair()))],
  },
  'POST /api/sites/{siteId}/vapid-keys/{keyId}/primary': {
    needs: 'admin',
    own: (x) => post(`/api/sites/${x.site.id}/vapid-keys/${x.vapidKeyId}/primary`),
    attacks: (a, b) => [
      sweep(a, (id) => post(`/api/sites/${id}/vapid-keys/${id}/primary`)),
      sweep(a, (id) => post(`/api/sites/${b.site.id}/vapid-keys/${id}/primary`)),
      single(post(`/api/sites/${a.site.id}/vapid-keys/${b.vapidKeyId}/primary`), 404, "A's site with B's key"),
    ],
  },
  'DELETE /api/sites/{siteId}/vapid-keys/{keyId}': {
    needs: 'admin',
    // The primary key: reached, and refused with 409 (a primary key is never retired).
    own: (x) => del(`/api/sites/${x.site.id}/vapid-keys/${x.vapidKeyId}`),
    attacks: (a, b) => [sweep(a, (id) => del(`/api/sites/${id}/vapid-keys/${id}`)), sweep(a, (id) => del(`/api/sites/${b.site.id}/vapid-keys/${id}`))],
  },

  // ---- Subscriber imports (admin: the audience's push keys; docs/product.md, "Importing subscribers")
  'POST /api/sites/{siteId}/subscriber-imports': {
    needs: 'admin',
    // No file: reached, and answered 400 (the role is checked before the upload is read).
    own: (x) => post(`/api/sites/${x.site.id}/subscriber-imports`),
    attacks: (a) => [sweep(a, (id) => post(`/api/sites/${id}/subscriber-imports`))],
  },
  'GET /api/sites/{siteId}/subscriber-imports': {
    needs: 'admin',
    own: (x) => get(`/api/sites/${x.site.id}/subscriber-imports`),
    attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/subscriber-imports`))],
  },
  'GET /api/subscriber-imports/{importId}': {
    needs: 'admin',
    own: (x) => get(`/api/subscriber-imports/${x.importId}`),
    attacks: (a) => [sweep(a, (id) => get(`/api/subscriber-imports/${id}`))],
  },
  'GET /api/subscriber-imports/{importId}/report': {
    needs: 'admin',
    own: (x) => get(`/api/subscriber-imports/${x.importId}/report`),
    attacks: (a) => [sweep(a, (id) => get(`/api/subscriber-imports/${id}/report`))],
  },

  // ---- API keys and events
  'POST /api/sites/{siteId}/api-keys': {
    needs: 'admin',
    own: (x) => post(`/api/sites/${x.site.id}/api-keys`, { name: 'Owner key' }),
    attacks: (a) => [sweep(a, (id) => post(`/api/sites/${id}/api-keys`, { name: 'B key' }))],
  },
  'GET /api/sites/{siteId}/api-keys': {
    needs: 'admin',
    own: (x) => get(`/api/sites/${x.site.id}/api-keys`),
    attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/api-keys`))],
  },
  'DELETE /api/api-keys/{id}': {
    needs: 'admin',
    own: (x) => del(`/api/api-keys/${x.apiKey.id}`),
    attacks: (a) => [sweep(a, (id) => del(`/api/api-keys/${id}`))],
    phase: 8,
  },
  // ---- Webhooks (admin, like API keys: docs/product.md, "Webhooks")
  'POST /api/sites/{siteId}/webhooks': {
    needs: 'admin',
    own: (x) => post(`/api/sites/${x.site.id}/webhooks`, { url: 'http://127.0.0.1:9/owner-hook', events: ['subscriber.removed'] }),
    attacks: (a) => [sweep(a, (id) => post(`/api/sites/${id}/webhooks`, { url: 'https://hooks.example/b', events: ['subscriber.created'] }))],
  },
  'GET /api/sites/{siteId}/webhooks': {
    needs: 'admin',
    own: (x) => get(`/api/sites/${x.site.id}/webhooks`),
    attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/webhooks`))],
  },
  'GET /api/webhooks/{id}/deliveries': {
    needs: 'admin',
    own: (x) => get(`/api/webhooks/${x.webhook.id}/deliveries`),
    attacks: (a) => [sweep(a, (id) => get(`/api/webhooks/${id}/deliveries`))],
  },
  'POST /api/webhooks/{id}/test': {
    needs: 'admin',
    own: (x) => post(`/api/webhooks/${x.webhook.id}/test`),
    attacks: (a) => [sweep(a, (id) => post(`/api/webhooks/${id}/test`))],
  },
  'DELETE /api/webhooks/{id}': {
    needs: 'admin',
    own: (x) => del(`/api/webhooks/${x.webhook.id}`),
    attacks: (a) => [sweep(a, (id) => del(`/api/webhooks/${id}`))],
    phase: 8,
  },
  'POST /api/public/sites/{siteId}/track': {
    needs: 'public',
    own: (x) => post(`/api/public/sites/${x.site.id}/track`, { endpoint: x.subscriber.endpoint, event: 'owner_event' }, 'none'),
    attacks: (a, b) => [
      single(post(`/api/public/sites/${a.site.id}/track`, { endpoint: b.subscriber.endpoint, event: 'forged' }, 'none'), 404, "A's site with B's endpoint"),
      single(post(`/api/public/sites/${b.site.id}/track`, { endpoint: a.subscriber.endpoint, event: 'forged' }, 'none'), 404, "B's site with A's endpoint"),
    ],
  },
  'POST /api/public/sites/{siteId}/identify': {
    needs: 'public',
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
    needs: 'public',
    own: (x) => post(`/api/public/sites/${x.site.id}/tags`, { endpoint: x.subscriber.endpoint, add: ['owner'] }, 'none'),
    attacks: (a, b) => [
      single(post(`/api/public/sites/${a.site.id}/tags`, { endpoint: b.subscriber.endpoint, add: ['forged'] }, 'none'), 404, "A's site with B's endpoint"),
      single(post(`/api/public/sites/${b.site.id}/tags`, { endpoint: a.subscriber.endpoint, remove: ['vip'] }, 'none'), 404, "B's site with A's endpoint"),
    ],
  },
  'POST /api/v1/sites/{siteId}/events': {
    needs: 'api-key',
    own: (x) => post(`/api/v1/sites/${x.site.id}/events`, { event: 'owner_api_event', subscriber_id: x.subscriber.id }, { apiKey: x.apiKey.key }),
    attacks: (a, b) => [
      single(post(`/api/v1/sites/${a.site.id}/events`, { event: 'forged', subscriber_id: a.subscriber.id }, { apiKey: b.apiKey.key }), 401, "B's key on A's site"),
      single(post(`/api/v1/sites/${b.site.id}/events`, { event: 'forged', subscriber_id: a.subscriber.id }, { apiKey: b.apiKey.key }), 404, "B's site and key, A's subscriber"),
      single(post(`/api/v1/sites/${a.site.id}/events`, { event: 'forged', subscriber_id: a.subscriber.id }, session), 401, "B's dashboard session is not a site key"),
    ],
  },
  'POST /api/v1/sites/{siteId}/subscribers/tags': {
    needs: 'api-key',
    own: (x) => post(`/api/v1/sites/${x.site.id}/subscribers/tags`, { subscriber_id: x.subscriber.id, add: ['owner-api-tag'] }, { apiKey: x.apiKey.key }),
    attacks: (a, b) => [
      single(post(`/api/v1/sites/${a.site.id}/subscribers/tags`, { subscriber_id: a.subscriber.id, add: ['forged'] }, { apiKey: b.apiKey.key }), 401, "B's key on A's site"),
      single(post(`/api/v1/sites/${b.site.id}/subscribers/tags`, { subscriber_id: a.subscriber.id, remove: ['vip'] }, { apiKey: b.apiKey.key }), 404, "B's site and key, A's subscriber"),
      single(post(`/api/v1/sites/${a.site.id}/subscribers/tags`, { subscriber_id: a.subscriber.id, add: ['forged'] }, session), 401, "B's dashboard session is not a site key"),
    ],
  },
  // After the identify of phase 1 (external id owner-user-1) and the erase by id of phase 8.5.
  'DELETE /api/v1/sites/{siteId}/subscribers': {
    needs: 'api-key',
    own: (x) => ({ method: 'DELETE', url: `/api/v1/sites/${x.site.id}/subscribers?external_id=owner-user-1`, auth: { apiKey: x.apiKey.key } }),
    attacks: (a, b) => [
      single({ method: 'DELETE', url: `/api/v1/sites/${a.site.id}/subscribers?external_id=owner-user-1`, auth: { apiKey: b.apiKey.key } }, 401, "B's key on A's site"),
      single({ method: 'DELETE', url: `/api/v1/sites/${a.site.id}/subscribers?external_id=owner-user-1`, auth: session }, 401, "B's dashboard session is not a site key"),
    ],
    phase: 8.6,
  },
  'GET /api/sites/{siteId}/events': {
    needs: 'viewer',
    own: (x) => get(`/api/sites/${x.site.id}/events?limit=5`),
    attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/events?limit=5`))],
  },

  // ---- Welcome campaigns
  'POST /api/sites/{siteId}/welcome-campaigns': {
    needs: 'editor',
    own: (x) => post(`/api/sites/${x.site.id}/welcome-campaigns`, campaignBody()),
    attacks: (a, b) => [
      sweep(a, (id) => post(`/api/sites/${id}/welcome-campaigns`, campaignBody())),
      single(post(`/api/sites/${b.site.id}/welcome-campaigns`, { ...campaignBody(), segment_id: a.segment.id }), 400, "B's campaign targeting A's segment"),
    ],
  },
  'GET /api/sites/{siteId}/welcome-campaigns': {
    needs: 'viewer',
    own: (x) => get(`/api/sites/${x.site.id}/welcome-campaigns`),
    attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/welcome-campaigns`))],
  },
  'GET /api/welcome-campaigns/{id}': {
    needs: 'viewer',
    own: (x) => get(`/api/welcome-campaigns/${x.campaign.id}`),
    attacks: (a) => [sweep(a, (id) => get(`/api/welcome-campaigns/${id}`))],
  },
  'PATCH /api/welcome-campaigns/{id}': {
    needs: 'editor',
    own: (x) => patch(`/api/welcome-campaigns/${x.campaign.id}`, { name: 'Owner renamed' }),
    attacks: (a, b) => [
      sweep(a, (id) => patch(`/api/welcome-campaigns/${id}`, { is_active: false })),
      single(patch(`/api/welcome-campaigns/${b.campaign.id}`, { segment_id: a.segment.id }), 400, "B's campaign targeting A's segment"),
    ],
  },
  'DELETE /api/welcome-campaigns/{id}': {
    needs: 'editor',
    own: (x) => del(`/api/welcome-campaigns/${x.campaign.id}`),
    attacks: (a) => [sweep(a, (id) => del(`/api/welcome-campaigns/${id}`))],
    phase: 8,
  },

  // ---- RSS feeds
  'POST /api/sites/{siteId}/rss-feeds': {
    needs: 'editor',
    own: (x) => post(`/api/sites/${x.site.id}/rss-feeds`, feedBody()),
    attacks: (a, b) => [
      sweep(a, (id) => post(`/api/sites/${id}/rss-feeds`, feedBody())),
      single(post(`/api/sites/${b.site.id}/rss-feeds`, { ...feedBody(), segmentId: a.segment.id }), 400, "B's feed targeting A's segment"),
    ],
  },
  'GET /api/sites/{siteId}/rss-feeds': {
    needs: 'viewer',
    own: (x) => get(`/api/sites/${x.site.id}/rss-feeds`),
    attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/rss-feeds`))],
  },
  'GET /api/rss-feeds/{id}': {
    needs: 'viewer',
    own: (x) => get(`/api/rss-feeds/${x.feed.id}`),
    attacks: (a) => [sweep(a, (id) => get(`/api/rss-feeds/${id}`))],
  },
  'PATCH /api/rss-feeds/{id}': {
    needs: 'editor',
    own: (x) => patch(`/api/rss-feeds/${x.feed.id}`, { name: 'Owner renamed' }),
    attacks: (a, b) => [
      sweep(a, (id) => patch(`/api/rss-feeds/${id}`, { url: 'http://127.0.0.1:9/b.xml', is_active: false })),
      single(patch(`/api/rss-feeds/${b.feed.id}`, { segmentId: a.segment.id }), 400, "B's feed targeting A's segment"),
    ],
  },
  'DELETE /api/rss-feeds/{id}': {
    needs: 'editor',
    own: (x) => del(`/api/rss-feeds/${x.feed.id}`),
    attacks: (a) => [sweep(a, (id) => del(`/api/rss-feeds/${id}`))],
    phase: 8,
  },
  'POST /api/rss-feeds/{id}/check': {
    needs: 'editor',
    own: (x) => post(`/api/rss-feeds/${x.feed.id}/check`),
    attacks: (a) => [sweep(a, (id) => post(`/api/rss-feeds/${id}/check`))],
  },

  // ---- Analytics
  'GET /api/sites/{siteId}/analytics/dashboard': {
    needs: 'viewer',
    own: (x) => get(`/api/sites/${x.site.id}/analytics/dashboard`),
    attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/analytics/dashboard`))],
  },
  'GET /api/sites/{siteId}/analytics/subscribers': {
    needs: 'viewer',
    own: (x) => get(`/api/sites/${x.site.id}/analytics/subscribers`),
    attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/analytics/subscribers`))],
  },
  'GET /api/sites/{siteId}/analytics/engagement': {
    needs: 'viewer',
    own: (x) => get(`/api/sites/${x.site.id}/analytics/engagement`),
    attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/analytics/engagement`))],
  },
  'GET /api/sites/{siteId}/analytics/delivery': {
    needs: 'viewer',
    own: (x) => get(`/api/sites/${x.site.id}/analytics/delivery?days=30`),
    attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/analytics/delivery`))],
  },

  // ---- Uploads
  'DELETE /api/uploads/{id}': {
    needs: 'account',
    own: (x) => del(`/api/uploads/${x.upload.id}`),
    attacks: (a) => [sweep(a, (id) => del(`/api/uploads/${id}`))],
    phase: 8,
  },

  // ---- Members and invitations
  'GET /api/sites/{siteId}/members': {
    needs: 'viewer',
    own: (x) => get(`/api/sites/${x.site.id}/members`),
    attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/members`))],
  },
  'POST /api/sites/{siteId}/invitations': {
    needs: 'owner',
    own: (x) => post(`/api/sites/${x.site.id}/invitations`, { email: `invitee-${crypto.randomUUID()}@example.com`, role: 'viewer' }),
    attacks: (a, b) => [
      sweep(a, (id) => post(`/api/sites/${id}/invitations`, { email: 'planted@example.com', role: 'owner' })),
      sweep(a, (id) => post(`/api/sites/${b.site.id}/invitations`, { email: 'planted@example.com', role: 'owner', also_site_ids: [id] })),
    ],
  },
  'DELETE /api/sites/{siteId}/invitations/{id}': {
    needs: 'owner',
    own: (x) => del(`/api/sites/${x.site.id}/invitations/${x.invitationId}`),
    attacks: (a, b) => [sweep(a, (id) => del(`/api/sites/${id}/invitations/${a.invitationId}`)), sweep(a, (id) => del(`/api/sites/${b.site.id}/invitations/${id}`))],
    phase: 8,
  },
  'PATCH /api/sites/{siteId}/members/{userId}': {
    needs: 'owner',
    own: (x) => patch(`/api/sites/${x.site.id}/members/${x.colleague.id}`, { role: 'editor' }),
    attacks: (a, b) => [
      sweep(a, (id) => patch(`/api/sites/${id}/members/${a.colleague.id}`, { role: 'owner' })),
      sweep(a, (id) => patch(`/api/sites/${b.site.id}/members/${id}`, { role: 'owner' })),
    ],
  },
  'DELETE /api/sites/{siteId}/members/{userId}': {
    needs: 'owner',
    own: (x) => del(`/api/sites/${x.site.id}/members/${x.colleague.id}`),
    attacks: (a, b) => [sweep(a, (id) => del(`/api/sites/${id}/members/${a.colleague.id}`)), sweep(a, (id) => del(`/api/sites/${b.site.id}/members/${id}`))],
    phase: 8,
  },
  'POST /api/sites/{siteId}/transfer-ownership': {
    needs: 'owner',
    own: (x) => post(`/api/sites/${x.site.id}/transfer-ownership`, { user_id: x.colleague.id }),
    attacks: (a, b) => [
      sweep(a, (id) => post(`/api/sites/${id}/transfer-ownership`, { user_id: b.user.id })),
      sweep(a, (id) => post(`/api/sites/${b.site.id}/transfer-ownership`, { user_id: id })),
    ],
    phase: 7,
    selfChanging: true,
  },
  'POST /api/sites/{siteId}/leave': {
    needs: 'viewer',
    own: (x) => post(`/api/sites/${x.site.id}/leave`),
    attacks: (a) => [sweep(a, (id) => post(`/api/sites/${id}/leave`))],
    phase: 9,
    selfChanging: true,
  },

  // ---- Audit log
  'GET /api/sites/{siteId}/audit-log': {
    needs: 'admin',
    own: (x) => get(`/api/sites/${x.site.id}/audit-log?limit=5`),
    attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/audit-log?limit=5`))],
  },
  'GET /api/sites/{siteId}/audit-log/export': {
    needs: 'admin',
    own: (x) => get(`/api/sites/${x.site.id}/audit-log/export`),
    attacks: (a) => [sweep(a, (id) => get(`/api/sites/${id}/audit-log/export`))],
  },

  // ---- Uploaded files (outside /api, hidden from the OpenAPI document)
  'GET /uploads/{file}': {
    needs: 'public',
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
        // A query string names a variant of a route (DELETE …?erase=true): the same route, probed again.
        return `${method} ${shapeOf(path.split('?')[0]!)}`;
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
    expect(
      missing,
      [
        'Routes with a path parameter but no entry in the tenancy matrix. For each, add an entry to MATRIX in',
        'apps/server/test/security/tenancy-matrix.test.ts with `needs:` the role its service checks',
        "(requireSiteRole(ctx, userId, siteId, 'viewer' | 'editor' | 'admin' | 'owner') or checkSiteRole on an \"of user\" lookup),",
        '`own:` a call its owner can make and `attacks:` what another tenant tries, and add its row to the role table in',
        'docs/security.md ("Tenancy") and the help article on roles (apps/web/src/features/help/articles).',
      ].join(' '),
    ).toEqual([]);
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
    // Leaving and transferring are made by a second owner, so A stays on to delete the site at the end.
    const secondOwner = await addMember(t, a, 'owner');
    for (const [route, routeCase] of owned) {
      const probe = routeCase.own(a);
      const response = routeCase.selfChanging ? await call(probe, { ...a, user: { ...a.user, token: secondOwner.token } }) : await call(probe, a);
      if (response.status === 404 || response.status >= 500) failures.push(`${route}: ${probe.method} ${probe.url} → ${response.status} ${JSON.stringify(response.body)}`);
      if (routeCase.publicByDesign) expect(response.status, route).toBeLessThan(300);
    }
    expect(failures).toEqual([]);
  });
});

describe('role matrix: every route × every role of a member (allowed, 403 naming the role, or 404)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  async function callAs(probe: Probe, token: string) {
    const headers: Record<string, string> = {};
    if (probe.auth === 'session') headers.authorization = `Bearer ${token}`;
    else if (typeof probe.auth === 'object') headers.authorization = `Bearer ${probe.auth.apiKey}`;
    return t.request(probe.method, probe.url, { headers, remoteAddress: nextAddress(), ...(probe.body !== undefined ? { body: probe.body } : {}) });
  }

  const sessionRoutes = () =>
    Object.entries(MATRIX).filter((entry): entry is [string, RouteCase & { needs: SiteRole | 'account' }] => entry[1].needs !== 'public' && entry[1].needs !== 'api-key');

  it('gives every route that a session can call a role (or says it is the account’s own)', () => {
    for (const [route, routeCase] of Object.entries(MATRIX)) {
      expect([...SITE_ROLES, 'account', 'public', 'api-key'], route).toContain(routeCase.needs);
    }
    expect(sessionRoutes().length).toBeGreaterThan(50);
  });

  for (const role of SITE_ROLES) {
    it(`as ${role}: refused calls answer 403 with the role needed (404 for another member's own things) and change nothing; allowed ones reach the site`, async () => {
      const tenant = await seedTenant(t, `Role${role}`);
      const member = await addMember(t, tenant, role);
      // Calls that end the caller's membership are made by a second member of the same role.
      const second = await addMember(t, tenant, role);
      const failures: string[] = [];
      let refusedCalls = 0;

      // 1. Everything this role may not do, in any order: nothing changes.
      const before = await dumpDatabase(t.ctx.db);
      for (const [route, routeCase] of sessionRoutes()) {
        const allowed = routeCase.needs !== 'account' && roleAllows(role, routeCase.needs);
        if (allowed) continue;
        const probe = routeCase.own(tenant);
        const response = await callAs(probe, member.token);
        refusedCalls += 1;
        const expected = routeCase.needs === 'account' ? 404 : 403;
        if (response.status !== expected) {
          failures.push(`${route} as ${role}: ${probe.method} ${probe.url} → ${response.status} ${JSON.stringify(response.body)} (expected ${expected})`);
          continue;
        }
        expectErrorBody(response.body, route);
        if (expected === 403 && response.body.error.message !== roleNeededMessage(routeCase.needs as SiteRole)) {
          failures.push(`${route} as ${role}: 403 says ${JSON.stringify(response.body.error.message)}, expected ${JSON.stringify(roleNeededMessage(routeCase.needs as SiteRole))}`);
        }
        if (probe.method === 'GET') {
          const head = await t.app.inject({ method: 'HEAD', url: probe.url, headers: { authorization: `Bearer ${member.token}` } });
          if (head.statusCode !== expected) failures.push(`HEAD ${probe.url} as ${role} → ${head.statusCode} (expected ${expected})`);
        }
      }
      const after = await dumpDatabase(t.ctx.db);
      for (const table of Object.keys(before)) expect(after[table], `table ${table} changed by a refused call as ${role}`).toEqual(before[table]);

      // 2. Everything this role may do, phase by phase (deleting last): reached, never refused.
      const allowedRoutes = sessionRoutes()
        .filter(([, routeCase]) => routeCase.needs !== 'account' && roleAllows(role, routeCase.needs))
        .sort(([, x], [, y]) => (x.phase ?? 1) - (y.phase ?? 1));
      for (const [route, routeCase] of allowedRoutes) {
        const probe = routeCase.own(tenant);
        const response = await callAs(probe, routeCase.selfChanging ? second.token : member.token);
        if (response.status === 403 || response.status === 404 || response.status >= 500) {
          failures.push(`${route} as ${role} (allowed): ${probe.method} ${probe.url} → ${response.status} ${JSON.stringify(response.body)}`);
        }
      }
      expect(failures).toEqual([]);
      // Viewers are refused the most; owners only the account-level routes of someone else.
      if (role === 'owner') expect(refusedCalls).toBe(sessionRoutes().filter(([, c]) => c.needs === 'account').length);
      else expect(refusedCalls).toBeGreaterThan(0);
    });
  }
});
