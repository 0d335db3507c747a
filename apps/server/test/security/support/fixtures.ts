// Shared pieces of the security suite: two tenants with one of everything,
// a full database dump, the app's route list (from the OpenAPI document and
// from Fastify's own route tree), multipart bodies and hand-built images.
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { expect } from 'vitest';
import type { TestApp, TestUser } from '../../support/test-app';

// ---------------------------------------------------------------------------
// Browser push subscriptions

/** A browser's subscription keys: p256dh a real P-256 point, auth 16 random bytes (RFC 8291). */
export function pushKeys(): { p256dh: string; auth: string } {
  const ecdh = crypto.createECDH('prime256v1');
  return { p256dh: ecdh.generateKeys().toString('base64url'), auth: crypto.randomBytes(16).toString('base64url') };
}

/** An endpoint on a known push service (never contacted: these tests run no engine). */
export function fcmEndpoint(): string {
  return `https://fcm.googleapis.com/fcm/send/${crypto.randomBytes(18).toString('base64url')}`;
}

let addressCounter = 0;
/** A fresh client address for the public API (its flood limit is per address). */
export function nextAddress(): string {
  addressCounter += 1;
  return `198.18.${(addressCounter >> 8) & 0xff}.${addressCounter & 0xff}`;
}

// ---------------------------------------------------------------------------
// Images and multipart bodies

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A PNG of one pixel that claims `width`×`height` in its IHDR chunk. */
export function png(width = 1, height = 1): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', zlib.deflateSync(Buffer.from([0, 255, 0, 0]))),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A valid PNG grown to exactly `size` bytes with an ancillary (private, skippable) chunk before IEND. */
export function pngOfSize(size: number): Buffer {
  const base = png();
  const iend = base.subarray(base.length - 12);
  const head = base.subarray(0, base.length - 12);
  const paddingData = size - head.length - iend.length - 12;
  if (paddingData < 0) throw new Error('size too small');
  // "heRa": lower-case first letter = ancillary, so decoders skip it (PNG spec §5.4).
  return Buffer.concat([head, pngChunk('heRa', Buffer.alloc(paddingData, 0x61)), iend]);
}

/** A 1×1 GIF89a with a comment extension carrying `comment` (the classic HTML-in-GIF polyglot). */
export function gifWithComment(comment: string): Buffer {
  const screen = Buffer.alloc(7);
  screen.writeUInt16LE(1, 0);
  screen.writeUInt16LE(1, 2);
  screen.set([0x80, 0, 0], 4);
  const text = Buffer.from(comment, 'latin1');
  const blocks: Buffer[] = [];
  for (let i = 0; i < text.length; i += 255) {
    const piece = text.subarray(i, i + 255);
    blocks.push(Buffer.from([piece.length]), piece);
  }
  return Buffer.concat([
    Buffer.from('GIF89a', 'latin1'),
    screen,
    Buffer.from([0xff, 0xff, 0xff, 0, 0, 0]),
    Buffer.from([0x21, 0xfe]),
    ...blocks,
    Buffer.from([0]),
    Buffer.from([0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0]),
    Buffer.from([0x02, 0x02, 0x44, 0x01, 0x00]),
    Buffer.from([0x3b]),
  ]);
}

export interface MultipartPart {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer | string;
}

export function multipart(parts: MultipartPart[]): { payload: Buffer; contentType: string } {
  const boundary = `----herald-security-${crypto.randomBytes(8).toString('hex')}`;
  const pieces: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename !== undefined ? `; filename="${part.filename}"` : ''}`;
    const type = part.contentType ? `\r\nContent-Type: ${part.contentType}` : '';
    pieces.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}${type}\r\n\r\n`, 'latin1'));
    pieces.push(typeof part.data === 'string' ? Buffer.from(part.data) : part.data);
    pieces.push(Buffer.from('\r\n'));
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(pieces), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** POST /api/upload/image with one file part. */
export async function uploadImage(
  app: FastifyInstance,
  token: string | null,
  data: Buffer | string,
  options: { filename?: string; contentType?: string; headers?: Record<string, string> } = {},
) {
  const body = multipart([{ name: 'image', filename: options.filename ?? 'picture.png', contentType: options.contentType ?? 'image/png', data }]);
  const response = await app.inject({
    method: 'POST',
    url: '/api/upload/image',
    headers: { 'content-type': body.contentType, ...(token ? { authorization: `Bearer ${token}` } : {}), ...options.headers },
    payload: body.payload,
  });
  return { status: response.statusCode, body: response.json(), headers: response.headers };
}

// ---------------------------------------------------------------------------
// Database dump

/** Every row of every table, as sorted JSON lines: two dumps are equal exactly when nothing changed. */
export async function dumpDatabase(db: Kysely<any>): Promise<Record<string, string[]>> {
  const tables = (await db.introspection.getTables()).map((t) => t.name).sort();
  const dump: Record<string, string[]> = {};
  for (const table of tables) {
    const rows = await db.selectFrom(table).selectAll().execute();
    dump[table] = rows
      .map((row: Record<string, unknown>) =>
        JSON.stringify(
          Object.keys(row)
            .sort()
            .map((key) => [key, row[key]]),
        ),
      )
      .sort();
  }
  return dump;
}

// ---------------------------------------------------------------------------
// The app's routes

export interface RouteRef {
  method: string;
  /** As written in the OpenAPI document: `/api/sites/{id}`. */
  path: string;
}

/** Path parameters written the same way whatever their name: `/api/sites/{}`. */
export const shapeOf = (path: string) => path.replace(/\{[^}]+\}/g, '{}').replace(/:[^/]+/g, '{}');

/** Every operation of the OpenAPI document served at /api/docs/json. */
export async function documentedRoutes(app: FastifyInstance): Promise<{ routes: RouteRef[]; doc: any }> {
  const response = await app.inject({ method: 'GET', url: '/api/docs/json' });
  expect(response.statusCode).toBe(200);
  const doc = response.json();
  const routes: RouteRef[] = [];
  for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
    for (const method of Object.keys(operations)) routes.push({ method: method.toUpperCase(), path });
  }
  return { routes, doc };
}

/**
 * Every route Fastify serves, hidden ones included, read from
 * `printRoutes()`'s tree (each line: indentation, a path piece, its methods).
 */
export function registeredRoutes(app: FastifyInstance): RouteRef[] {
  const pieces: string[] = [];
  const routes: RouteRef[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^((?:│ {3}| {4})*)(?:├── |└── )(.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    pieces.length = depth;
    pieces[depth] = match[2]!;
    const path = pieces.join('').replace(/\/{2,}/g, '/');
    for (const method of (match[3] ?? '').split(',').map((m) => m.trim()).filter(Boolean)) routes.push({ method, path });
  }
  return routes;
}

// ---------------------------------------------------------------------------
// A tenant with one of everything

export interface Tenant {
  label: string;
  user: TestUser;
  site: any;
  segment: any;
  notification: any;
  campaign: any;
  /** The notification row a welcome-campaign step sends (source 'campaign'). */
  campaignStepNotificationId: string;
  feed: any;
  apiKey: { id: string; key: string };
  /** A webhook to a private address (refused by the outbound client: nothing is contacted). */
  webhook: { id: string };
  upload: { url: string; file: string; id: string };
  subscriber: { id: string; endpoint: string };
  eventIds: string[];
  /** The site's identity secret: its backend signs external ids with it (docs/security.md, "Identity verification"). */
  identitySecret: string;
  /** A second member of the site (a viewer, invited and joined through the API). */
  colleague: Member;
  /** A pending invitation to the site. */
  invitationId: string;
  /** The code of an unused one-time test-device link to the tenant's site. */
  testDeviceCode: string;
  /** The id of the site's (primary) VAPID key. */
  vapidKeyId: string;
  /** A subscriber import of the site (queued: these tests run no engine). */
  importId: string;
}

export interface Member {
  id: string;
  email: string;
  token: string;
}

/** The token of the last invitation mailed to `email` (the link's `token` parameter). */
export function invitationTokenFor(t: TestApp, email: string): string {
  const mail = t.outbox().filter((m) => m.to === email).at(-1);
  if (!mail) throw new Error(`no invitation mailed to ${email}`);
  const match = /\/invitation\?token=([A-Za-z0-9_%-]+)/.exec(mail.text);
  if (!match) throw new Error(`no invitation link in ${mail.text}`);
  return decodeURIComponent(match[1]!);
}

let memberCounter = 0;
/** Invites a new person to the tenant's site with `role` and lets them join by creating their account through the link. */
export async function addMember(t: TestApp, tenant: Pick<Tenant, 'site' | 'user'>, role: string): Promise<Member> {
  memberCounter += 1;
  const email = `member${memberCounter}-${crypto.randomBytes(4).toString('hex')}@example.com`;
  await ok(t.request('POST', `/api/sites/${tenant.site.id}/invitations`, { token: tenant.user.token, body: { email, role } }), 201);
  const joined = await ok<{ token: string; user: { id: string } }>(
    t.request('POST', '/api/invitations/accept-new', { body: { token: invitationTokenFor(t, email), name: `Member ${memberCounter}`, password: 'member-password-1' }, remoteAddress: nextAddress() }),
    201,
  );
  return { id: joined.user.id, email, token: joined.token };
}

/** What a site's backend computes for `herald.identify(id, hash)`. */
export function identityHashFor(secret: string, externalId: string): string {
  return crypto.createHmac('sha256', secret).update(externalId).digest('hex');
}

/** The ids of everything a tenant owns: another user must get 404 for each of them, on every id route. */
export function idsOf(tenant: Tenant): string[] {
  return [
    tenant.site.id,
    tenant.segment.id,
    tenant.notification.id,
    tenant.campaign.id,
    tenant.campaignStepNotificationId,
    tenant.feed.id,
    tenant.apiKey.id,
    tenant.webhook.id,
    tenant.upload.id,
    tenant.subscriber.id,
    ...tenant.eventIds,
    tenant.importId,
    tenant.user.id,
    tenant.colleague.id,
    tenant.invitationId,
    tenant.vapidKeyId,
  ];
}

async function ok<T = any>(promise: Promise<{ status: number; body: any }>, status: number): Promise<T> {
  const response = await promise;
  if (response.status !== status) throw new Error(`expected ${status}, got ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body.data as T;
}

/**
 * A user with a site holding a segment, a draft notification, an active
 * welcome campaign, an RSS feed, an API key, an upload, a subscriber with tags
 * and events from the browser and from the v1 API. Everything goes through the
 * API, as a real user and browser would.
 */
export async function seedTenant(t: TestApp, label: string): Promise<Tenant> {
  const user = await t.createUser({ name: `${label} Owner` });
  const as = (method: string, url: string, body?: unknown) => t.request(method, url, { token: user.token, ...(body !== undefined ? { body } : {}) });
  const site = await t.createSite(user.token, { name: `${label} Shop`, url: `https://${label.toLowerCase()}.example` });
  const segment = (await ok(as('POST', `/api/sites/${site.id}/segments`, { name: `${label} VIPs`, rules: { tags: ['vip'] } }), 201)).segment;
  const notification = (
    await ok(as('POST', `/api/sites/${site.id}/notifications`, { title: `${label} sale`, message: 'Everything must go', destination_url: `https://${label.toLowerCase()}.example/sale` }), 201)
  ).notification;
  const campaign = (
    await ok(
      as('POST', `/api/sites/${site.id}/welcome-campaigns`, {
        name: `${label} welcome`,
        is_active: true,
        steps: [{ sequence_order: 1, delay_minutes: 0, notification: { title: 'Welcome', message: 'Glad you are here', destination_url: `https://${label.toLowerCase()}.example/hi` } }],
      }),
      201,
    )
  ).campaign;
  const step = await t.ctx.db.selectFrom('welcome_campaign_steps').select('notification_id').where('campaign_id', '=', campaign.id).executeTakeFirstOrThrow();
  const feed = (
    await ok(
      as('POST', `/api/sites/${site.id}/rss-feeds`, {
        name: `${label} blog`,
        // A private address without OUTBOUND_ALLOW_HOSTS: a check is refused at once, nothing is contacted.
        url: `http://127.0.0.1:9/${label.toLowerCase()}.xml`,
        maxPushesPerDay: 2,
      }),
      201,
    )
  ).feed;
  const createdKey = await ok<{ api_key: { id: string }; key: string }>(as('POST', `/api/sites/${site.id}/api-keys`, { name: `${label} backend` }), 201);
  const webhook = (await ok<{ webhook: { id: string } }>(as('POST', `/api/sites/${site.id}/webhooks`, { url: `http://127.0.0.1:9/${label.toLowerCase()}-hook`, events: ['subscriber.created', 'notification.completed'] }), 201)).webhook;
  const uploaded = await uploadImage(t.app, user.token, png());
  if (uploaded.status !== 201) throw new Error(`upload failed: ${JSON.stringify(uploaded.body)}`);
  const uploadFile = String(uploaded.body.data.url).split('/uploads/')[1]!;
  const uploadRow = await t.ctx.db.selectFrom('uploads').select('id').where('file_name', '=', uploadFile).executeTakeFirstOrThrow();

  const endpoint = fcmEndpoint();
  const subscribed = await t.request('POST', `/api/public/sites/${site.id}/subscribers`, {
    body: { subscription: { endpoint, keys: pushKeys() }, timezone: 'Europe/Paris', language: 'fr-FR' },
    remoteAddress: nextAddress(),
  });
  if (subscribed.status !== 201) throw new Error(`subscribe failed: ${JSON.stringify(subscribed.body)}`);
  const subscriberId: string = subscribed.body.data.subscriber.id;
  await ok(as('PATCH', `/api/subscribers/${subscriberId}/tags`, { tags: ['vip'] }), 200);

  const tracked = await ok<{ event: { id: string } }>(
    t.request('POST', `/api/public/sites/${site.id}/track`, { body: { endpoint, event: 'viewed_product', data: { sku: 'A-1' } }, remoteAddress: nextAddress() }),
    202,
  );
  const fromApi = await ok<{ event: { id: string } }>(
    t.request('POST', `/api/v1/sites/${site.id}/events`, {
      headers: { authorization: `Bearer ${createdKey.key}` },
      body: { event: 'purchase', subscriber_id: subscriberId, idempotency_key: `${label}-order-1` },
    }),
    202,
  );

  const identitySecret = (await ok<{ secret: string }>(as('GET', `/api/sites/${site.id}/identity-secret`), 200)).secret;
  const colleague = await addMember(t, { site, user }, 'viewer');
  const invited = await ok<{ invitations: Array<{ id: string }> }>(as('POST', `/api/sites/${site.id}/invitations`, { email: `pending-${label.toLowerCase()}-${crypto.randomBytes(4).toString('hex')}@example.com`, role: 'editor' }), 201);
  const testDeviceLink = (await ok<{ link: { url: string } }>(as('POST', `/api/sites/${site.id}/test-devices/link`), 200)).link;
  const vapidKeys = (await ok<{ keys: Array<{ id: string }> }>(as('GET', `/api/sites/${site.id}/vapid-keys`), 200)).keys;
  const importFile = multipart([{ name: 'file', filename: 'import.csv', contentType: 'text/csv', data: `endpoint,p256dh,auth\n${fcmEndpoint()},${pushKeys().p256dh},${pushKeys().auth}\n` }]);
  const importCreated = await t.app.inject({ method: 'POST', url: `/api/sites/${site.id}/subscriber-imports`, headers: { 'content-type': importFile.contentType, authorization: `Bearer ${user.token}` }, payload: importFile.payload });
  if (importCreated.statusCode !== 201) throw new Error(`import failed: ${importCreated.body}`);

  return {
    label,
    user,
    site,
    segment,
    notification,
    campaign,
    campaignStepNotificationId: step.notification_id,
    feed,
    apiKey: { id: createdKey.api_key.id, key: createdKey.key },
    webhook: { id: webhook.id },
    upload: { url: uploaded.body.data.url, file: uploadFile, id: uploadRow.id },
    subscriber: { id: subscriberId, endpoint },
    eventIds: [tracked.event.id, fromApi.event.id],
    identitySecret,
    colleague,
    invitationId: invited.invitations[0]!.id,
    testDeviceCode: new URL(testDeviceLink.url).searchParams.get('herald_test')!,
    vapidKeyId: vapidKeys[0]!.id,
    importId: importCreated.json().data.import.id,
  };
}

/** Asserts the error envelope of spec §8. */
export function expectErrorBody(body: unknown, context: string): void {
  expect(body, context).toMatchObject({ success: false, error: { message: expect.any(String) } });
  expect(((body as { error: { message: string } }).error.message).length, context).toBeGreaterThan(0);
}

// ---------------------------------------------------------------------------
// A local HTTP server that records every request: a canary that must stay
// silent, or a scripted feed / redirect source.

export type CanaryHandler = (request: http.IncomingMessage, response: http.ServerResponse) => void;

export class Canary {
  readonly requests: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders }> = [];
  private readonly handlers = new Map<string, CanaryHandler>();

  private constructor(
    private readonly server: http.Server,
    readonly host: string,
    readonly port: number,
  ) {}

  static async start(host = '127.0.0.1'): Promise<Canary> {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    const canary = new Canary(server, host, (server.address() as AddressInfo).port);
    server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
      canary.requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers });
      const handler = canary.handlers.get((request.url ?? '/').split('?')[0]!);
      if (handler) handler(request, response);
      else {
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.end('canary');
      }
    });
    return canary;
  }

  get origin(): string {
    return `http://${this.host}:${this.port}`;
  }

  url(path: string): string {
    return `${this.origin}${path}`;
  }

  on(path: string, handler: CanaryHandler): void {
    this.handlers.set(path, handler);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
