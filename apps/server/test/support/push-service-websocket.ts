// The browser face of the test push service: Firefox's push protocol over a
// WebSocket (subprotocol `push-notification`), as Mozilla's autopush speaks it
// and as Firefox's PushServiceWebSocket.sys.mjs expects it
// (docs/real-browser-push.md). A real Firefox pointed at it with
// `dom.push.serverURL` says hello, registers channels, receives the
// aes128gcm bodies Herald POSTs to the HTTPS face, decrypts them itself and
// acknowledges each with a code: 100 delivered, 101 decryption failed,
// 102 not delivered. A 101 means the sender's encryption is wrong.
//
// JSON text frames:
//   browser → hello {uaid?, use_webpush, broadcasts}   ← hello {status 200, uaid, use_webpush, broadcasts}
//   browser → register {channelID, key?}                ← register {status, channelID, pushEndpoint}
//   browser → unregister {channelID, code}              ← unregister {status 200, channelID}
//   service → notification {channelID, version, data, headers}
//   browser → ack {updates: [{channelID, version, code}]}, nack {version, code}
//   browser → {} (ping)                                 ← {}
//
// Messages for a browser that is not connected are held (until their TTL runs
// out) and sent when it says hello again with its uaid; a message stays held
// until the browser acknowledges it, as autopush keeps unacknowledged ones.
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export const PUSH_WEBSOCKET_PROTOCOL = 'push-notification';

/** Firefox's ack codes (kACK_STATUS_TO_CODE in PushServiceWebSocket.sys.mjs). */
export const ACK_DELIVERED = 100;
const ACK_DECRYPTION_ERROR = 101;
const ACK_NOT_DELIVERED = 102;

const ACK_MEANINGS: Record<number, string> = {
  [ACK_DELIVERED]: 'delivered',
  [ACK_DECRYPTION_ERROR]: 'decryption failed: the sender’s RFC 8291 encryption is wrong',
  [ACK_NOT_DELIVERED]: 'not delivered (no service worker took it)',
};
/** nack codes: the service worker's push handler failed. */
const NACK_MEANINGS: Record<number, string> = {
  301: 'the service worker’s push handler threw',
  302: 'the service worker’s push handler rejected (waitUntil)',
  303: 'internal error delivering to the service worker',
};

const CHANNEL_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Firefox refuses a uaid longer than 128 characters (handleHelloReply). */
const UAID = /^[A-Za-z0-9-]{1,128}$/;

export type BrowserProtocolEvent =
  | { type: 'connect'; connection: number }
  | { type: 'hello'; connection: number; uaid: string; sentUaid: string | null; useWebpush: boolean }
  | { type: 'register'; uaid: string; channelID: string; key: string | null; status: number }
  | { type: 'unregister'; uaid: string; channelID: string; code: number | null }
  | { type: 'notification'; uaid: string; channelID: string; version: string; bytes: number }
  | { type: 'ack'; uaid: string; channelID: string; version: string; code: number }
  | { type: 'nack'; uaid: string; version: string; code: number }
  | { type: 'ping'; connection: number }
  | { type: 'expired'; uaid: string; channelID: string; version: string }
  | { type: 'disconnect'; connection: number; uaid: string | null }
  | { type: 'protocol-error'; connection: number; detail: string };

/** What the HTTPS face needs from a registration. */
export interface BrowserFaceHooks {
  /** A browser registered `channelID`; `key` is its VAPID public key (base64url, unpadded) if it gave one. Returns the endpoint. */
  register(channelID: string, key: string | undefined): string;
  /** The browser dropped the channel: pushes to it now get 410. */
  unregister(channelID: string): void;
}

interface HeldMessage {
  channelID: string;
  version: string;
  frame: string;
  expiresAt: number;
}

interface BrowserState {
  uaid: string;
  socket: WebSocket | undefined;
  /** Sent or waiting to be sent, until acknowledged; by version. */
  unacknowledged: Map<string, HeldMessage>;
}

interface Connection {
  id: number;
  socket: WebSocket;
  uaid: string | null;
}

export class BrowserPushFace {
  readonly events: BrowserProtocolEvent[] = [];
  /** channelID → uaid of the browser that registered it. */
  private readonly channels = new Map<string, string>();
  private readonly browsers = new Map<string, BrowserState>();
  /** uaids this service lost (forget()); a hello with one gets a new uaid. */
  private readonly forgotten = new Set<string>();
  private readonly waiters = new Set<() => void>();
  private connectionCount = 0;
  private refusing = false;
  url = '';

  private constructor(
    private readonly server: http.Server,
    private readonly sockets: WebSocketServer,
    private readonly hooks: BrowserFaceHooks,
    private readonly now: () => number,
  ) {}

  static async start(hooks: BrowserFaceHooks, options: { port?: number; now?: () => number } = {}): Promise<BrowserPushFace> {
    const server = http.createServer((_req, res) => {
      res.writeHead(426, { 'content-type': 'text/plain' });
      res.end(`Upgrade to a WebSocket with subprotocol ${PUSH_WEBSOCKET_PROTOCOL}`);
    });
    const sockets = new WebSocketServer({
      noServer: true,
      // Firefox asks for this subprotocol; refusing others catches a misconfigured client early.
      handleProtocols: (protocols) => (protocols.has(PUSH_WEBSOCKET_PROTOCOL) ? PUSH_WEBSOCKET_PROTOCOL : false),
    });
    const face = new BrowserPushFace(server, sockets, hooks, options.now ?? Date.now);
    server.on('upgrade', (req, socket, head) => {
      if (face.refusing) {
        socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      sockets.handleUpgrade(req, socket, head, (ws) => face.onConnection(ws));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
    });
    face.url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    return face;
  }

  /** Whether a browser that registered this channel is connected and has said hello. */
  isConnected(channelID: string): boolean {
    const uaid = this.channels.get(channelID);
    return !!uaid && !!this.browsers.get(uaid)?.socket;
  }

  /**
   * Hands an accepted push to the browser that owns the channel, now or when it
   * reconnects. Returns the message id (`version`) the browser will acknowledge.
   */
  deliver(channelID: string, body: Buffer, options: { encoding?: string; ttlSeconds: number }): string {
    const uaid = this.channels.get(channelID);
    const browser = uaid ? this.browsers.get(uaid) : undefined;
    if (!uaid || !browser) throw new Error(`no browser registered channel ${channelID}`);
    const version = crypto.randomBytes(12).toString('base64url');
    const frame: Record<string, unknown> = { messageType: 'notification', channelID, version };
    if (body.length > 0) {
      // Firefox decodes `data` as base64url and picks the decryption scheme from headers.encoding.
      frame.data = body.toString('base64url');
      frame.headers = { encoding: options.encoding ?? 'aes128gcm' };
    }
    const message: HeldMessage = { channelID, version, frame: JSON.stringify(frame), expiresAt: this.now() + options.ttlSeconds * 1000 };
    // RFC 8030 §5.2: a TTL of 0 means "deliver now or never"; anything else is held for a disconnected browser.
    if (options.ttlSeconds > 0 || browser.socket) browser.unacknowledged.set(version, message);
    if (browser.socket) this.send(browser, message);
    return version;
  }

  /** Waits for a protocol event matching `match`, seen already or to come. */
  async waitForEvent<T extends BrowserProtocolEvent['type']>(
    type: T,
    match: (event: Extract<BrowserProtocolEvent, { type: T }>) => boolean = () => true,
    timeoutMs = 10_000,
  ): Promise<Extract<BrowserProtocolEvent, { type: T }>> {
    const find = () =>
      this.events.find((event): event is Extract<BrowserProtocolEvent, { type: T }> => event.type === type && match(event as Extract<BrowserProtocolEvent, { type: T }>));
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = find();
      if (found) return found;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${type} from the browser within ${timeoutMs} ms; protocol so far: ${JSON.stringify(this.events)}`);
      await this.nextEvent(left);
    }
  }

  /** Resolves when the browser has acknowledged message `version` with 100; rejects on 101, 102 or a nack, naming the cause. */
  async waitForDelivered(version: string, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const ack = this.events.find(
        (event): event is Extract<BrowserProtocolEvent, { type: 'ack' | 'nack' }> =>
          (event.type === 'ack' || event.type === 'nack') && event.version === version,
      );
      if (ack && ack.type === 'ack' && ack.code === ACK_DELIVERED) return;
      if (ack) throw new Error(`browser answered message ${version} with ${ack.type} ${ack.code}: ${describeCode(ack.type, ack.code)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`browser did not acknowledge message ${version} within ${timeoutMs} ms; protocol so far: ${JSON.stringify(this.events)}`);
      await this.nextEvent(left);
    }
  }

  /** Acks other than 100 and nacks: each means a push the browser could not show. */
  failures(): Array<Extract<BrowserProtocolEvent, { type: 'ack' | 'nack' }>> {
    return this.events.filter(
      (event): event is Extract<BrowserProtocolEvent, { type: 'ack' | 'nack' }> =>
        (event.type === 'ack' && event.code !== ACK_DELIVERED) || event.type === 'nack',
    );
  }

  /**
   * The service goes away: every browser connection is dropped and new ones
   * are refused (503) until resume(). Pushes are still accepted on the HTTP
   * face and held, as autopush's endpoint keeps taking them while a
   * connection node is down.
   */
  suspend(): void {
    this.refusing = true;
    for (const socket of this.sockets.clients) socket.terminate();
  }

  /**
   * The service loses a browser's record, as autopush does for a uaid idle too
   * long or after its storage is reset: the connection drops, the browser's
   * channels are gone (pushes to them get 410), and its next hello is answered
   * with a new uaid — on which Firefox drops its subscriptions and fires
   * `pushsubscriptionchange` in each service worker.
   */
  forget(uaid: string): void {
    const browser = this.browsers.get(uaid);
    this.browsers.delete(uaid);
    this.forgotten.add(uaid);
    for (const [channelID, owner] of [...this.channels]) {
      if (owner !== uaid) continue;
      this.channels.delete(channelID);
      this.hooks.unregister(channelID);
    }
    browser?.socket?.terminate();
  }

  /** Browsers may connect again (they retry by themselves, with backoff). */
  resume(): void {
    this.refusing = false;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets.clients) socket.terminate();
    await new Promise<void>((resolve) => this.sockets.close(() => resolve()));
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private nextEvent(timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, timeoutMs);
      this.waiters.add(wake);
    });
  }

  private record(event: BrowserProtocolEvent): void {
    this.events.push(event);
    for (const wake of [...this.waiters]) wake();
  }

  private onConnection(socket: WebSocket): void {
    const connection: Connection = { id: ++this.connectionCount, socket, uaid: null };
    this.record({ type: 'connect', connection: connection.id });
    socket.on('message', (data, isBinary) => {
      if (isBinary) return this.protocolError(connection, 'binary frame (the protocol is JSON text)');
      let message: unknown;
      try {
        message = JSON.parse(data.toString());
      } catch {
        return this.protocolError(connection, `not JSON: ${data.toString().slice(0, 100)}`);
      }
      if (typeof message !== 'object' || message === null || Array.isArray(message)) {
        return this.protocolError(connection, 'frame is not a JSON object');
      }
      this.onMessage(connection, message as Record<string, unknown>);
    });
    socket.on('close', () => {
      const browser = connection.uaid ? this.browsers.get(connection.uaid) : undefined;
      if (browser?.socket === socket) browser.socket = undefined;
      this.record({ type: 'disconnect', connection: connection.id, uaid: connection.uaid });
    });
    socket.on('error', () => {
      // 'close' follows.
    });
  }

  private onMessage(connection: Connection, message: Record<string, unknown>): void {
    const type = message.messageType;
    // Firefox pings with `{}` and treats any reply without a messageType as the pong.
    if (type === undefined || type === 'ping') {
      this.record({ type: 'ping', connection: connection.id });
      connection.socket.send('{}');
      return;
    }
    if (type === 'hello') return this.onHello(connection, message);
    const uaid = connection.uaid;
    if (!uaid) return this.protocolError(connection, `${String(type)} before hello`);
    switch (type) {
      case 'register':
        return this.onRegister(connection, uaid, message);
      case 'unregister':
        return this.onUnregister(connection, uaid, message);
      case 'ack':
        return this.onAck(connection, uaid, message);
      case 'nack': {
        const version = String(message.version);
        this.browsers.get(uaid)?.unacknowledged.delete(version);
        this.record({ type: 'nack', uaid, version, code: Number(message.code) });
        return;
      }
      case 'broadcast_subscribe':
        // Remote Settings' broadcast channel; this service has no broadcasts.
        return;
      default:
        return this.protocolError(connection, `unknown messageType ${JSON.stringify(type)}`);
    }
  }

  private onHello(connection: Connection, message: Record<string, unknown>): void {
    if (connection.uaid) return this.protocolError(connection, 'second hello on one connection');
    const sent = typeof message.uaid === 'string' && UAID.test(message.uaid) ? message.uaid : null;
    // Echo a well-formed uaid this service has not lost: a different one makes Firefox drop all its subscriptions.
    const uaid = sent && !this.forgotten.has(sent) ? sent : crypto.randomUUID().replace(/-/g, '');
    let browser = this.browsers.get(uaid);
    if (!browser) {
      browser = { uaid, socket: undefined, unacknowledged: new Map() };
      this.browsers.set(uaid, browser);
    }
    // One connection per browser, as autopush: a newer one replaces the older.
    if (browser.socket && browser.socket !== connection.socket) browser.socket.terminate();
    browser.socket = connection.socket;
    connection.uaid = uaid;
    const useWebpush = message.use_webpush === true;
    this.record({ type: 'hello', connection: connection.id, uaid, sentUaid: sent, useWebpush });
    if (!useWebpush) this.protocolError(connection, 'hello without use_webpush: the browser would drop every payload');
    connection.socket.send(JSON.stringify({ messageType: 'hello', status: 200, uaid, use_webpush: true, broadcasts: {} }));
    // Held messages, oldest first; expired ones are dropped as a push service would.
    const now = this.now();
    for (const held of [...browser.unacknowledged.values()]) {
      if (held.expiresAt <= now) {
        browser.unacknowledged.delete(held.version);
        this.record({ type: 'expired', uaid, channelID: held.channelID, version: held.version });
      } else {
        this.send(browser, held);
      }
    }
  }

  private onRegister(connection: Connection, uaid: string, message: Record<string, unknown>): void {
    const channelID = typeof message.channelID === 'string' ? message.channelID : '';
    const answer = (status: number, extra: Record<string, unknown> = {}) => {
      connection.socket.send(JSON.stringify({ messageType: 'register', channelID, status, ...extra }));
    };
    let key: string | undefined;
    let status = 200;
    if (!CHANNEL_ID.test(channelID)) status = 400;
    else if (this.channels.has(channelID) && this.channels.get(channelID) !== uaid) status = 409;
    else if (message.key !== undefined) {
      // Firefox sends the applicationServerKey base64url *with* padding; Herald's `k=` has none: compare bytes.
      const bytes = typeof message.key === 'string' ? decodeBase64UrlStrict(message.key) : null;
      if (!bytes || bytes.length !== 65 || bytes[0] !== 0x04) status = 400;
      else key = bytes.toString('base64url');
    }
    this.record({ type: 'register', uaid, channelID, key: key ?? null, status });
    if (status !== 200) return answer(status);
    this.channels.set(channelID, uaid);
    answer(200, { pushEndpoint: this.hooks.register(channelID, key) });
  }

  private onUnregister(connection: Connection, uaid: string, message: Record<string, unknown>): void {
    const channelID = typeof message.channelID === 'string' ? message.channelID : '';
    this.record({ type: 'unregister', uaid, channelID, code: typeof message.code === 'number' ? message.code : null });
    if (this.channels.get(channelID) === uaid) {
      this.channels.delete(channelID);
      this.hooks.unregister(channelID);
      const browser = this.browsers.get(uaid);
      for (const held of [...(browser?.unacknowledged.values() ?? [])]) {
        if (held.channelID === channelID) browser!.unacknowledged.delete(held.version);
      }
    }
    // Unregistering an unknown channel succeeds too: the browser only wants it gone.
    connection.socket.send(JSON.stringify({ messageType: 'unregister', channelID, status: 200 }));
  }

  private onAck(connection: Connection, uaid: string, message: Record<string, unknown>): void {
    if (!Array.isArray(message.updates)) return this.protocolError(connection, 'ack without updates');
    const browser = this.browsers.get(uaid);
    for (const update of message.updates as Array<Record<string, unknown>>) {
      const version = String(update.version);
      browser?.unacknowledged.delete(version);
      this.record({ type: 'ack', uaid, channelID: String(update.channelID), version, code: Number(update.code) });
    }
  }

  private send(browser: BrowserState, message: HeldMessage): void {
    if (!browser.socket) return;
    browser.socket.send(message.frame);
    const bytes = Buffer.byteLength(message.frame);
    this.record({ type: 'notification', uaid: browser.uaid, channelID: message.channelID, version: message.version, bytes });
  }

  private protocolError(connection: Connection, detail: string): void {
    this.record({ type: 'protocol-error', connection: connection.id, detail });
  }
}

function describeCode(type: 'ack' | 'nack', code: number): string {
  return (type === 'ack' ? ACK_MEANINGS[code] : NACK_MEANINGS[code]) ?? 'unknown code';
}

/** base64url with optional padding; null for anything else (Buffer.from would skip bad characters silently). */
function decodeBase64UrlStrict(value: string): Buffer | null {
  const unpadded = value.replace(/=+$/, '');
  if (!/^[A-Za-z0-9_-]*$/.test(unpadded) || unpadded.length % 4 === 1) return null;
  return Buffer.from(unpadded, 'base64url');
}
