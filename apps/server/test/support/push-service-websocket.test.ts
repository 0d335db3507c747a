// The WebSocket face of the test push service, driven by a scripted browser
// that speaks Firefox's protocol frame for frame (PushServiceWebSocket.sys.mjs)
// and decrypts with its own keys. e2e/firefox proves the same against the real
// Firefox; this proves each rule of the service quickly and without one.
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import WebSocket from 'ws';
import { PushClient } from '../../src/delivery/push-client';
import type { PushMessage } from '../../src/delivery/push-message';
import { signVapidJwt, vapidAuthorization, vapidSubject } from '../../src/delivery/vapid';
import { generateVapidKeys, vapidPrivateKeyObject } from '../../src/delivery/vapid-keys';
import { decryptPushBody, generateReceiverKeys, type ReceiverKeys } from './push-crypto';
import { PushService } from './push-service';
import { PUSH_WEBSOCKET_PROTOCOL } from './push-service-websocket';
import { createTestCertificate } from './test-certificate';

const site = { ...generateVapidKeys(), subject: vapidSubject('https://shop.example', undefined) };
const otherSite = generateVapidKeys();
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startService(): Promise<PushService> {
  const service = await PushService.start({ tls: true, webSocket: true });
  cleanups.push(() => service.close());
  return service;
}

function pushClient(): PushClient {
  const client = new PushClient({ encryptionThreads: 0, connect: { ca: createTestCertificate().ca } });
  cleanups.push(() => client.close());
  return client;
}

/** A browser as Firefox behaves on the wire: JSON frames, padded key, its own receiver keys. */
class ScriptedFirefox {
  readonly frames: Array<Record<string, any>> = [];
  private socket!: WebSocket;
  private readonly waiters = new Set<() => void>();
  uaid: string | undefined;
  readonly receivers = new Map<string, ReceiverKeys>();

  constructor(private readonly url: string) {}

  async connect(): Promise<void> {
    this.socket = new WebSocket(this.url, PUSH_WEBSOCKET_PROTOCOL);
    this.socket.on('message', (data) => {
      this.frames.push(JSON.parse(data.toString()));
      for (const wake of [...this.waiters]) wake();
    });
    await new Promise<void>((resolve, reject) => {
      this.socket.once('open', () => resolve());
      this.socket.once('error', reject);
    });
    cleanups.push(async () => this.socket.terminate());
  }

  send(frame: Record<string, unknown>): void {
    this.socket.send(JSON.stringify(frame));
  }

  async next(match: (frame: Record<string, any>) => boolean, timeoutMs = 3_000): Promise<Record<string, any>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.frames.findIndex(match);
      if (index >= 0) return this.frames.splice(index, 1)[0]!;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching frame in ${timeoutMs} ms; got ${JSON.stringify(this.frames)}`);
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

  async hello(): Promise<Record<string, any>> {
    // Firefox sends its uaid only once it has subscriptions (bug 1617136).
    this.send({ messageType: 'hello', broadcasts: {}, use_webpush: true, ...(this.uaid ? { uaid: this.uaid } : {}) });
    const reply = await this.next((frame) => frame.messageType === 'hello');
    this.uaid = reply.uaid;
    return reply;
  }

  /** Registers like PushManager.subscribe({ applicationServerKey }); returns the subscription Herald would get. */
  async register(applicationServerKey: string) {
    const channelID = crypto.randomUUID();
    // ChromeUtils.base64URLEncode(key, { pad: true }): Firefox pads the key.
    const padded = Buffer.from(applicationServerKey, 'base64url').toString('base64url') + '=';
    this.send({ channelID, messageType: 'register', key: padded });
    const reply = await this.next((frame) => frame.messageType === 'register' && frame.channelID === channelID);
    const receiver = generateReceiverKeys();
    this.receivers.set(channelID, receiver);
    return {
      channelID,
      reply,
      endpoint: reply.pushEndpoint as string,
      keys: { p256dh: receiver.publicKey.toString('base64url'), auth: receiver.auth.toString('base64url') },
    };
  }

  /** Decrypts a notification frame as Firefox does and returns the plaintext. */
  decrypt(frame: Record<string, any>): string {
    expect(frame.headers).toEqual({ encoding: 'aes128gcm' });
    expect(frame.data).toMatch(/^[A-Za-z0-9_-]+$/);
    return decryptPushBody(Buffer.from(frame.data, 'base64url'), this.receivers.get(frame.channelID)!).toString('utf8');
  }

  ack(frame: Record<string, any>, code: number): void {
    this.send({ messageType: 'ack', updates: [{ channelID: frame.channelID, version: frame.version, code }] });
  }

  close(): void {
    this.socket.close();
  }
}

function message(subscription: { endpoint: string; keys: { p256dh: string; auth: string } }, payload: unknown, ttl = 3600): PushMessage<number> {
  return { ref: 1, endpoint: subscription.endpoint, keys: subscription.keys, payload: Buffer.from(JSON.stringify(payload)), vapid: site, ttl };
}

describe('test push service, WebSocket face (Firefox protocol)', () => {
  it('says hello, registers with the padded key, forwards an encrypted push and records the ack', async () => {
    const service = await startService();
    expect(service.webSocketUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/$/);
    const browser = new ScriptedFirefox(service.webSocketUrl);
    await browser.connect();
    const hello = await browser.hello();
    expect(hello).toEqual({ messageType: 'hello', status: 200, uaid: expect.stringMatching(/^[0-9a-f]{32}$/), use_webpush: true, broadcasts: {} });

    const subscription = await browser.register(site.publicKey);
    expect(subscription.reply).toEqual({
      messageType: 'register',
      channelID: subscription.channelID,
      status: 200,
      pushEndpoint: `${service.origin}/wpush/${subscription.channelID}`,
    });
    expect(service.origin).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    // The key is remembered unpadded, as VAPID's k= carries it.
    await expect(service.browsers.waitForEvent('register')).resolves.toMatchObject({ key: site.publicKey, status: 200 });

    expect(await pushClient().send(message(subscription, { title: 'Hi' }))).toEqual({ kind: 'sent', status: 201 });
    const frame = await browser.next((f) => f.messageType === 'notification');
    expect(frame).toEqual({
      messageType: 'notification',
      channelID: subscription.channelID,
      version: service.messages[0]!.messageId,
      data: expect.any(String),
      headers: { encoding: 'aes128gcm' },
    });
    expect(JSON.parse(browser.decrypt(frame))).toEqual({ title: 'Hi' });
    expect(service.messages[0]).toMatchObject({ subscriptionId: subscription.channelID, payload: null });

    browser.ack(frame, 100);
    await service.browsers.waitForDelivered(frame.version, 2_000);
    expect(service.browsers.failures()).toEqual([]);

    // Firefox's keep-alive: `{}` is answered with `{}`.
    browser.send({});
    await expect(browser.next((f) => Object.keys(f).length === 0)).resolves.toEqual({});
  });

  it('refuses pushes not signed by the registered key, or with a bad aud, exp or sub', async () => {
    const service = await startService();
    const browser = new ScriptedFirefox(service.webSocketUrl);
    await browser.connect();
    await browser.hello();
    const subscription = await browser.register(site.publicKey);
    const dispatcher = new Agent({ connect: { ca: createTestCertificate().ca } });
    cleanups.push(() => dispatcher.close());
    const now = Math.floor(Date.now() / 1000);
    const post = async (keys: { publicKey: string; privateKey: string }, claims: Partial<{ aud: string; exp: number; sub: string }>) => {
      const jwt = signVapidJwt({ aud: service.origin, exp: now + 3600, sub: 'mailto:ops@shop.example', ...claims }, vapidPrivateKeyObject(keys.publicKey, keys.privateKey));
      const response = await request(subscription.endpoint, {
        method: 'POST',
        dispatcher,
        headers: { ttl: '60', authorization: vapidAuthorization(jwt, keys.publicKey) },
      });
      return { status: response.statusCode, reason: await response.body.text() };
    };
    expect(await post(otherSite, {})).toEqual({ status: 403, reason: expect.stringContaining('does not match the subscription') });
    expect(await post(site, { aud: 'https://127.0.0.1:1' })).toEqual({ status: 403, reason: expect.stringContaining('aud') });
    expect(await post(site, { exp: now + 25 * 3600 })).toEqual({ status: 403, reason: expect.stringContaining('24 hours') });
    expect(await post(site, { exp: now - 1 })).toEqual({ status: 403, reason: expect.stringContaining('expired') });
    expect(await post(site, { sub: 'mailto:me@localhost' })).toEqual({ status: 403, reason: expect.stringContaining('sub') });
    // A push without a body is a "tickle": Firefox gets a frame without data.
    expect(await post(site, {})).toEqual({ status: 201, reason: '' });
    const tickle = await browser.next((f) => f.messageType === 'notification');
    expect(tickle.data).toBeUndefined();
    expect(service.browsers.events.filter((event) => event.type === 'notification')).toHaveLength(1);
  });

  it('holds messages for a disconnected browser and delivers them when it says hello with its uaid', async () => {
    const service = await startService();
    const browser = new ScriptedFirefox(service.webSocketUrl);
    await browser.connect();
    await browser.hello();
    const subscription = await browser.register(site.publicKey);
    browser.close();
    await service.browsers.waitForEvent('disconnect');

    const client = pushClient();
    expect(await client.send(message(subscription, { n: 1 }))).toEqual({ kind: 'sent', status: 201 });
    // TTL 0 means now or never (RFC 8030 §5.2): not held for a browser that is away.
    expect(await client.send(message(subscription, { n: 2 }, 0))).toEqual({ kind: 'sent', status: 201 });
    expect(service.browsers.events.filter((event) => event.type === 'notification')).toEqual([]);

    const uaid = browser.uaid;
    await browser.connect();
    expect((await browser.hello()).uaid).toBe(uaid);
    const frame = await browser.next((f) => f.messageType === 'notification');
    expect(JSON.parse(browser.decrypt(frame))).toEqual({ n: 1 });
    await expect(browser.next((f) => f.messageType === 'notification', 300)).rejects.toThrow(/no matching frame/);

    // Not acknowledged before the connection dropped: sent again on the next hello.
    browser.close();
    await service.browsers.waitForEvent('disconnect', (event) => event.connection === 2);
    await browser.connect();
    await browser.hello();
    const again = await browser.next((f) => f.messageType === 'notification');
    expect(again.version).toBe(frame.version);
    browser.ack(again, 100);
    await service.browsers.waitForDelivered(frame.version, 2_000);
  });

  it('while suspended drops browsers and refuses them (503) but keeps accepting pushes, then delivers after resume', async () => {
    const service = await startService();
    const browser = new ScriptedFirefox(service.webSocketUrl);
    await browser.connect();
    await browser.hello();
    const subscription = await browser.register(site.publicKey);

    service.browsers.suspend();
    await service.browsers.waitForEvent('disconnect');
    await expect(browser.connect()).rejects.toThrow(/503/);
    expect(await pushClient().send(message(subscription, { n: 1 }))).toEqual({ kind: 'sent', status: 201 });
    expect(service.browsers.isConnected(subscription.channelID)).toBe(false);

    service.browsers.resume();
    await browser.connect();
    await browser.hello();
    const frame = await browser.next((f) => f.messageType === 'notification');
    expect(JSON.parse(browser.decrypt(frame))).toEqual({ n: 1 });
  });

  it('after forgetting a browser answers its old uaid with a new one and its old endpoints with 410', async () => {
    const service = await startService();
    const browser = new ScriptedFirefox(service.webSocketUrl);
    await browser.connect();
    const { uaid } = await browser.hello();
    const subscription = await browser.register(site.publicKey);

    service.browsers.forget(uaid);
    await service.browsers.waitForEvent('disconnect');
    expect(await pushClient().send(message(subscription, { n: 1 }))).toMatchObject({ kind: 'gone', status: 410 });
    await browser.connect();
    const hello = await browser.hello();
    expect(hello.uaid).not.toBe(uaid);
    await expect(service.browsers.waitForEvent('hello', (event) => event.sentUaid === uaid)).resolves.toMatchObject({ uaid: hello.uaid });
  });

  it('fails a waiter on ack 101 (decryption failed) and answers 410 after unregister', async () => {
    const service = await startService();
    const browser = new ScriptedFirefox(service.webSocketUrl);
    await browser.connect();
    await browser.hello();
    const subscription = await browser.register(site.publicKey);
    const client = pushClient();
    expect(await client.send(message(subscription, { n: 1 }))).toEqual({ kind: 'sent', status: 201 });
    const frame = await browser.next((f) => f.messageType === 'notification');
    browser.ack(frame, 101);
    await expect(service.browsers.waitForDelivered(frame.version, 2_000)).rejects.toThrow(/ack 101: decryption failed/);
    expect(service.browsers.failures()).toEqual([expect.objectContaining({ type: 'ack', code: 101 })]);

    browser.send({ messageType: 'unregister', channelID: subscription.channelID, code: 200 });
    expect(await browser.next((f) => f.messageType === 'unregister')).toEqual({ messageType: 'unregister', channelID: subscription.channelID, status: 200 });
    expect(await client.send(message(subscription, { n: 2 }))).toMatchObject({ kind: 'gone', status: 410 });
  });

  it('refuses frames before hello, malformed keys and channel ids', async () => {
    const service = await startService();
    const browser = new ScriptedFirefox(service.webSocketUrl);
    await browser.connect();
    browser.send({ messageType: 'register', channelID: crypto.randomUUID() });
    await service.browsers.waitForEvent('protocol-error', (event) => event.detail === 'register before hello');
    await browser.hello();
    browser.send({ messageType: 'register', channelID: 'not-a-uuid' });
    expect(await browser.next((f) => f.messageType === 'register')).toMatchObject({ status: 400 });
    browser.send({ messageType: 'register', channelID: crypto.randomUUID(), key: 'AAAA' });
    expect(await browser.next((f) => f.messageType === 'register')).toMatchObject({ status: 400 });
    // A connection without the subprotocol is refused at the handshake.
    const wrong = new WebSocket(service.webSocketUrl, 'chat');
    await expect(new Promise((resolve, reject) => (wrong.once('open', resolve), wrong.once('error', reject)))).rejects.toThrow();
  });
});
