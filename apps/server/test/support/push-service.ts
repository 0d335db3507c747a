// A real push service for tests: it speaks RFC 8030 over HTTP (or HTTPS, and
// HTTP/2) on 127.0.0.1, checks every request the way FCM, autopush and Apple
// do (TTL, Content-Encoding, VAPID per RFC 8292), decrypts each body with the
// subscription's private key (RFC 8291) and records what arrived.
//
// Tests script its answers (per subscription or for everyone): 201, 404, 410,
// 413, 429 with Retry-After, 5xx, 401/403, never answering, answering late,
// and sequences such as "two 429s, then 201". It counts TCP connections, to
// prove keep-alive.
//
// With `webSocket: true` it also speaks Firefox's push protocol on a second
// port (push-service-websocket.ts): a real Firefox registers there, gets
// https://127.0.0.1:<port>/wpush/<channelID> endpoints, and receives what is
// POSTed to them, which it decrypts itself (the service cannot: the browser
// holds the private key).
//
// push-service-process.ts runs the same service in another process.
import crypto from 'node:crypto';
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { decryptPushBody, DecryptionError, generateReceiverKeys, type ReceiverKeys } from './push-crypto';
import { BrowserPushFace } from './push-service-websocket';
import { createTestCertificate } from './test-certificate';

/** How the service answers a (valid) push. */
export type PushAnswer =
  | {
      status: number;
      /** Retry-After header: seconds, or an HTTP-date string. */
      retryAfter?: number | string;
      /** Response body (for reasons such as Apple's `{"reason":"BadJwtToken"}`). */
      body?: string;
      /** Answer only after this many milliseconds. */
      delayMs?: number;
    }
  | { hang: true };

export interface PushServiceOptions {
  /** Serve HTTPS with a test certificate for 127.0.0.1 (true) or the given one. */
  tls?: boolean | { cert: string; key: string };
  /** With tls: speak HTTP/2 as well as HTTP/1.1 (ALPN), as FCM and Apple do. */
  http2?: boolean;
  /** Decrypt and parse every body (default true). Off, bodies are only size-checked: for benchmarks. */
  decrypt?: boolean;
  /** Keep a record of every request and message (default true). Off, only counts are kept. */
  keepRecords?: boolean;
  port?: number;
  /** Also serve Firefox's WebSocket push protocol (plain ws:// on another port, see `webSocketUrl`). */
  webSocket?: boolean;
}

export interface TestSubscription {
  id: string;
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

export interface CreateSubscriptionOptions {
  /** Like `applicationServerKey`: pushes must then be signed by this VAPID key (403 otherwise). */
  applicationServerKey?: string;
}

/** A push the service accepted. */
export interface ReceivedPush {
  subscriptionId: string;
  /** The decrypted body parsed as JSON (or the text when it is not JSON); null when decryption is off or a browser holds the key. */
  payload: unknown;
  /** For a browser's subscription: the message id (`version`) the browser acknowledges. */
  messageId?: string;
  headers: Record<string, string>;
  /** The VAPID public key (k=) the JWT was verified against: the subscription's applicationServerKey when it was made with one. */
  vapidKey: string;
  receivedAt: number;
}

/** Every request, whatever the answer. */
export interface PushRequestRecord {
  subscriptionId: string | null;
  /** The status answered, or 'hang'. */
  status: number | 'hang';
  reason: string;
  receivedAt: number;
  headers: Record<string, string>;
  /** Which TCP connection it came on (1, 2, …). */
  connection: number;
}

export interface PushServiceStats {
  requests: number;
  accepted: number;
  byStatus: Record<string, number>;
  decryptionFailures: number;
  connections: { total: number; open: number; maxOpen: number };
  /** Requests being handled at once, now and at most. */
  inFlight: number;
  maxInFlight: number;
}

type VapidCheck = { ok: true; publicKey: string; exp: number } | { ok: false; status: 401 | 403; reason: string };

/** RFC 8030 §5.2–5.4 and RFC 8292 §2–3 checks of one request's headers, plus the answer to give when they fail. */
export function verifyVapidAuthorization(header: string | undefined, audience: string, nowMs: number): VapidCheck {
  if (!header) return { ok: false, status: 401, reason: 'missing Authorization header' };
  const match = /^vapid\s+(.+)$/i.exec(header.trim());
  if (!match) return { ok: false, status: 401, reason: 'Authorization scheme must be vapid' };
  const params = new Map<string, string>();
  for (const part of match[1]!.split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) params.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).trim());
  }
  const token = params.get('t');
  const key = params.get('k');
  if (!token || !key) return { ok: false, status: 401, reason: 'vapid needs t= and k=' };
  const point = Buffer.from(key, 'base64url');
  if (point.length !== 65 || point[0] !== 0x04) return { ok: false, status: 401, reason: 'k is not an uncompressed P-256 point' };

  const parts = token.split('.');
  if (parts.length !== 3) return { ok: false, status: 401, reason: 't is not a JWT' };
  let jwtHeader: { typ?: unknown; alg?: unknown };
  let claims: { aud?: unknown; exp?: unknown; sub?: unknown };
  try {
    jwtHeader = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, status: 401, reason: 'JWT parts are not JSON' };
  }
  if (jwtHeader.alg !== 'ES256') return { ok: false, status: 403, reason: 'BadJwtToken: alg must be ES256' };
  if (jwtHeader.typ !== undefined && jwtHeader.typ !== 'JWT') return { ok: false, status: 403, reason: 'BadJwtToken: typ must be JWT' };

  let publicKey: crypto.KeyObject;
  try {
    publicKey = crypto.createPublicKey({
      key: { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') },
      format: 'jwk',
    });
  } catch {
    return { ok: false, status: 401, reason: 'k is not on the P-256 curve' };
  }
  const signature = Buffer.from(parts[2]!, 'base64url');
  const signed =
    signature.length === 64 &&
    crypto.verify('sha256', Buffer.from(`${parts[0]}.${parts[1]}`), { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature);
  if (!signed) return { ok: false, status: 403, reason: 'BadJwtToken: signature does not verify against k' };

  if (claims.aud !== audience) return { ok: false, status: 403, reason: `BadJwtToken: aud must be ${audience}` };
  if (typeof claims.exp !== 'number' || !Number.isInteger(claims.exp)) return { ok: false, status: 403, reason: 'BadJwtToken: exp missing' };
  const nowSeconds = Math.floor(nowMs / 1000);
  if (claims.exp <= nowSeconds) return { ok: false, status: 403, reason: 'BadJwtToken: expired' };
  if (claims.exp > nowSeconds + 24 * 60 * 60) return { ok: false, status: 403, reason: 'BadJwtToken: exp more than 24 hours ahead' };
  if (!isValidSubject(claims.sub)) return { ok: false, status: 403, reason: 'BadJwtToken: sub must be a mailto: or https: URI' };
  return { ok: true, publicKey: key, exp: claims.exp };
}

/** Apple's rules, the strictest: `mailto:` with an address at a real domain and no space, or an https URL. */
function isValidSubject(sub: unknown): boolean {
  if (typeof sub !== 'string') return false;
  if (sub.startsWith('mailto:')) {
    const match = /^mailto:[^\s@]+@([^\s@]+)$/.exec(sub);
    return !!match && match[1] !== 'localhost' && match[1]!.includes('.');
  }
  try {
    return new URL(sub).protocol === 'https:';
  } catch {
    return false;
  }
}

const URGENCIES = new Set(['very-low', 'low', 'normal', 'high']);
const MAX_BODY = 4096;

interface Subscription {
  id: string;
  /** The private side of the subscription; null when a real browser registered it and holds the keys. */
  receiver: ReceiverKeys | null;
  applicationServerKey: string | undefined;
  expired: boolean;
  answer: PushAnswer | undefined;
  script: PushAnswer[];
}

type AnyRequest = http.IncomingMessage | http2.Http2ServerRequest;
type AnyResponse = http.ServerResponse | http2.Http2ServerResponse;

export class PushService {
  readonly messages: ReceivedPush[] = [];
  readonly requests: PushRequestRecord[] = [];
  private readonly subscriptions = new Map<string, Subscription>();
  private defaultAnswer: PushAnswer = { status: 201 };
  private script: PushAnswer[] = [];
  private counts = { requests: 0, accepted: 0, byStatus: {} as Record<string, number>, decryptionFailures: 0 };
  /** Connection number by the client's port (an HTTP/2 request only exposes its socket through a proxy). */
  private readonly connectionIds = new Map<number, number>();
  private readonly sockets = new Set<Socket>();
  private connectionCount = 0;
  private maxOpen = 0;
  private inFlight = 0;
  private maxInFlight = 0;
  private readonly verifiedTokens = new Map<string, { publicKey: string; exp: number }>();
  private readonly waiters = new Set<() => void>();
  private nextId = 1;
  private nextMessageId = 1;
  private readonly decrypt: boolean;
  private readonly keepRecords: boolean;
  private browserFace: BrowserPushFace | undefined;
  origin = '';

  private constructor(
    private readonly server: http.Server | https.Server | http2.Http2SecureServer,
    options: PushServiceOptions,
  ) {
    this.decrypt = options.decrypt ?? true;
    this.keepRecords = options.keepRecords ?? true;
  }

  static async start(options: PushServiceOptions = {}): Promise<PushService> {
    let server: http.Server | https.Server | http2.Http2SecureServer;
    if (options.tls) {
      const { cert, key } = options.tls === true ? createTestCertificate() : options.tls;
      // With http2, ALPN offers h2 and HTTP/1.1 (allowHTTP1); without, HTTP/1.1 only.
      server = options.http2 ? http2.createSecureServer({ cert, key, allowHTTP1: true }) : https.createServer({ cert, key });
    } else {
      server = http.createServer();
    }
    const service = new PushService(server, options);
    server.on('request', (req: AnyRequest, res: AnyResponse) => service.handle(req, res));
    server.on(options.tls ? 'secureConnection' : 'connection', (socket: Socket) => service.onConnection(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    service.origin = `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
    if (options.webSocket) {
      service.browserFace = await BrowserPushFace.start({
        register: (channelID, key) => service.registerBrowserChannel(channelID, key),
        unregister: (channelID) => service.expire(channelID),
      });
    }
    return service;
  }

  /** `ws://127.0.0.1:<port>/`, Firefox's `dom.push.serverURL` (started with `webSocket: true`). */
  get webSocketUrl(): string {
    return this.browsers.url;
  }

  /** The WebSocket face: what connected browsers said and acknowledged. */
  get browsers(): BrowserPushFace {
    if (!this.browserFace) throw new Error('start the push service with { webSocket: true } to talk to browsers');
    return this.browserFace;
  }

  /** Mints a subscription the way a browser would; the service keeps its private key. */
  createSubscription(options: CreateSubscriptionOptions = {}): TestSubscription {
    const id = `s${this.nextId++}${crypto.randomBytes(4).toString('hex')}`;
    const receiver = generateReceiverKeys();
    this.subscriptions.set(id, { id, receiver, applicationServerKey: options.applicationServerKey, expired: false, answer: undefined, script: [] });
    return {
      id,
      endpoint: `${this.origin}/push/${id}`,
      keys: { p256dh: receiver.publicKey.toString('base64url'), auth: receiver.auth.toString('base64url') },
    };
  }

  /** A channel a browser registered over the WebSocket; its endpoint is on this service's HTTP(S) face. */
  private registerBrowserChannel(channelID: string, applicationServerKey: string | undefined): string {
    const existing = this.subscriptions.get(channelID);
    if (!existing || existing.expired) {
      this.subscriptions.set(channelID, { id: channelID, receiver: null, applicationServerKey, expired: false, answer: undefined, script: [] });
    }
    return `${this.origin}/wpush/${channelID}`;
  }

  /** The subscription is unsubscribed: pushes to it get 410 Gone. */
  expire(subscriptionId: string): void {
    const subscription = this.subscriptions.get(subscriptionId);
    if (subscription) subscription.expired = true;
  }

  /** Answer every later push (to one subscription, or to all) this way, after any script runs out. */
  setAnswer(answer: PushAnswer, subscriptionId?: string): void {
    if (subscriptionId === undefined) this.defaultAnswer = answer;
    else this.subscription(subscriptionId).answer = answer;
  }

  /** Answers the next pushes (to one subscription, or to all) with these, in order. */
  scriptAnswers(answers: PushAnswer[], subscriptionId?: string): void {
    if (subscriptionId === undefined) this.script.push(...answers);
    else this.subscription(subscriptionId).script.push(...answers);
  }

  stats(): PushServiceStats {
    return {
      ...this.counts,
      byStatus: { ...this.counts.byStatus },
      connections: { total: this.connectionCount, open: this.sockets.size, maxOpen: this.maxOpen },
      inFlight: this.inFlight,
      maxInFlight: this.maxInFlight,
    };
  }

  /** Forgets records, counts and answers (subscriptions stay). */
  reset(): void {
    this.messages.length = 0;
    this.requests.length = 0;
    this.counts = { requests: 0, accepted: 0, byStatus: {}, decryptionFailures: 0 };
    this.defaultAnswer = { status: 201 };
    this.script = [];
    for (const subscription of this.subscriptions.values()) {
      subscription.answer = undefined;
      subscription.script = [];
    }
    this.maxOpen = this.sockets.size;
    this.maxInFlight = this.inFlight;
  }

  /** Resolves once `count` pushes have been accepted in total; rejects after `timeoutMs`. */
  async waitForAccepted(count: number, timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.counts.accepted < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`push service accepted ${this.counts.accepted} of ${count} pushes in ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, left);
        this.waiters.add(wake);
      });
    }
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
    await this.browserFace?.close();
  }

  private subscription(id: string): Subscription {
    const subscription = this.subscriptions.get(id);
    if (!subscription) throw new Error(`no subscription ${id}`);
    return subscription;
  }

  private onConnection(socket: Socket): void {
    const port = socket.remotePort ?? 0;
    this.connectionIds.set(port, ++this.connectionCount);
    this.sockets.add(socket);
    this.maxOpen = Math.max(this.maxOpen, this.sockets.size);
    socket.once('close', () => {
      this.sockets.delete(socket);
      this.connectionIds.delete(port);
    });
  }

  private handle(req: AnyRequest, res: AnyResponse): void {
    const receivedAt = Date.now();
    this.counts.requests++;
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY + 1) chunks.push(chunk);
    });
    req.on('end', () => this.respond(req, res, Buffer.concat(chunks), size, receivedAt));
    req.on('error', () => this.inFlight--);
  }

  private respond(req: AnyRequest, res: AnyResponse, body: Buffer, size: number, receivedAt: number): void {
    const headers = flatHeaders(req.headers);
    const match = /^\/push\/([A-Za-z0-9]+)$/.exec(req.url ?? '') ?? /^\/wpush\/([0-9a-f-]{36})$/.exec(req.url ?? '');
    const subscription = match ? this.subscriptions.get(match[1]!) : undefined;
    const record = (status: number | 'hang', reason: string) => {
      this.counts.byStatus[status] = (this.counts.byStatus[status] ?? 0) + 1;
      if (this.keepRecords) {
        const connection = this.connectionIds.get(req.socket.remotePort ?? 0) ?? 0;
        this.requests.push({ subscriptionId: subscription?.id ?? null, status, reason, receivedAt, headers, connection });
      }
    };
    const reject = (status: number, reason: string) => {
      record(status, reason);
      this.send(res, { status, body: JSON.stringify({ reason }) });
    };

    if (req.method !== 'POST') return reject(405, 'push messages are POSTed');
    if (!subscription) return reject(404, 'no such subscription');
    if (subscription.expired) return reject(410, 'subscription expired');
    // RFC 8030 §5.2: TTL is mandatory.
    if (!/^\d+$/.test(headers.ttl ?? '')) return reject(400, 'TTL header missing or not a number');
    if (headers.urgency !== undefined && !URGENCIES.has(headers.urgency)) return reject(400, 'Urgency is not one of very-low, low, normal, high');
    // RFC 8030 §5.4 allows 32 base64url characters; autopush only [A-Za-z0-9].
    if (headers.topic !== undefined && !/^[A-Za-z0-9]{1,32}$/.test(headers.topic)) return reject(400, 'Topic must be 1-32 letters or digits');
    if (size > 0 && headers['content-encoding'] !== 'aes128gcm') return reject(400, 'Content-Encoding must be aes128gcm');

    const vapid = this.checkVapid(headers.authorization, receivedAt);
    if (!vapid.ok) return reject(vapid.status, vapid.reason);
    if (subscription.applicationServerKey && vapid.publicKey !== subscription.applicationServerKey) {
      return reject(403, 'VAPID key does not match the subscription');
    }
    if (size > MAX_BODY) return reject(413, `body is ${size} bytes, at most ${MAX_BODY}`);

    let payload: unknown = null;
    if (this.decrypt && subscription.receiver) {
      try {
        const plaintext = decryptPushBody(body, subscription.receiver).toString('utf8');
        try {
          payload = JSON.parse(plaintext);
        } catch {
          payload = plaintext;
        }
      } catch (error) {
        this.counts.decryptionFailures++;
        return reject(400, `decryption failed: ${error instanceof DecryptionError ? error.message : String(error)}`);
      }
    }

    const answer = subscription.script.shift() ?? subscription.answer ?? this.script.shift() ?? this.defaultAnswer;
    if ('hang' in answer) {
      record('hang', 'never answered');
      // The client's deadline is what ends it; closing the socket frees the slot.
      res.on('close', () => this.inFlight--);
      return;
    }
    record(answer.status, answer.body ?? '');
    if (answer.status >= 200 && answer.status < 300) {
      this.counts.accepted++;
      // Accepted for a real browser: forward the body untouched for it to decrypt.
      const messageId = subscription.receiver
        ? undefined
        : this.browsers.deliver(subscription.id, body, { encoding: headers['content-encoding'], ttlSeconds: Number(headers.ttl) });
      if (this.keepRecords) this.messages.push({ subscriptionId: subscription.id, payload, headers, vapidKey: vapid.publicKey, receivedAt, ...(messageId ? { messageId } : {}) });
      for (const wake of [...this.waiters]) wake();
    }
    if (answer.delayMs) setTimeout(() => this.send(res, answer), answer.delayMs);
    else this.send(res, answer);
  }

  private send(res: AnyResponse, answer: { status: number; retryAfter?: number | string; body?: string }): void {
    this.inFlight--;
    if (res.destroyed || res.writableEnded) return;
    const headers: Record<string, string> = {};
    if (answer.retryAfter !== undefined) headers['retry-after'] = String(answer.retryAfter);
    if (answer.status === 201) headers.location = `${this.origin}/message/${this.nextMessageId++}`;
    if (answer.body) headers['content-type'] = 'application/json';
    // Both response kinds have this shape; their overloads just do not unify.
    (res as http.ServerResponse).writeHead(answer.status, headers);
    res.end(answer.body ?? '');
  }

  private checkVapid(header: string | undefined, now: number): VapidCheck {
    // A sender reuses its token: verify each distinct one once, but check exp every time.
    const known = header ? this.verifiedTokens.get(header) : undefined;
    if (known) {
      const nowSeconds = Math.floor(now / 1000);
      if (known.exp > nowSeconds) return { ok: true, publicKey: known.publicKey, exp: known.exp };
      this.verifiedTokens.delete(header!);
    }
    const check = verifyVapidAuthorization(header, this.origin, now);
    if (check.ok && header) {
      if (this.verifiedTokens.size > 10_000) this.verifiedTokens.clear();
      this.verifiedTokens.set(header, { publicKey: check.publicKey, exp: check.exp });
    }
    return check;
  }
}

function flatHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || name.startsWith(':')) continue;
    flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}
