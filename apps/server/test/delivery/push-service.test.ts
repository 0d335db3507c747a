// The test push service itself: it must refuse what real push services refuse,
// or the push client's tests would prove nothing.
import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { encryptPayload } from '../../src/delivery/encryption';
import { PushClient } from '../../src/delivery/push-client';
import { signVapidJwt, vapidAuthorization } from '../../src/delivery/vapid';
import { generateVapidKeys, vapidPrivateKeyObject } from '../../src/delivery/vapid-keys';
import { PushService, type TestSubscription } from '../support/push-service';
import { startPushServiceProcess } from '../support/push-service-process';

const keys = generateVapidKeys();
const signingKey = vapidPrivateKeyObject(keys.publicKey, keys.privateKey);
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(): Promise<PushService> {
  const service = await PushService.start();
  cleanups.push(() => service.close());
  return service;
}

function token(claims: Partial<{ aud: string; exp: number; sub: string }>, aud: string): string {
  const exp = Math.floor(Date.now() / 1000) + 3600;
  return vapidAuthorization(signVapidJwt({ aud, exp, sub: 'mailto:ops@herald.example', ...claims }, signingKey), keys.publicKey);
}

async function post(service: PushService, subscription: TestSubscription, headers: Record<string, string | undefined>, body?: Buffer) {
  const defaults: Record<string, string> = {
    ttl: '60',
    'content-encoding': 'aes128gcm',
    'content-type': 'application/octet-stream',
    authorization: token({}, service.origin),
  };
  const merged = Object.fromEntries(Object.entries({ ...defaults, ...headers }).filter(([, v]) => v !== undefined)) as Record<string, string>;
  const res = await request(subscription.endpoint, {
    method: 'POST',
    headers: merged,
    body: body ?? encryptPayload(Buffer.from('{"title":"t"}'), subscription.keys),
  });
  return { status: res.statusCode, reason: await res.body.text() };
}

describe('test push service', () => {
  it('accepts a correct push, decrypts it and records it', async () => {
    const service = await start();
    const subscription = service.createSubscription();
    expect(subscription.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/push\/[A-Za-z0-9]+$/);
    expect(Buffer.from(subscription.keys.p256dh, 'base64url')).toHaveLength(65);
    expect(Buffer.from(subscription.keys.auth, 'base64url')).toHaveLength(16);
    expect((await post(service, subscription, {})).status).toBe(201);
    expect(service.messages).toEqual([expect.objectContaining({ subscriptionId: subscription.id, payload: { title: 't' } })]);
  });

  it('answers like a real push service when a request is wrong', async () => {
    const service = await start();
    const subscription = service.createSubscription();
    const now = Math.floor(Date.now() / 1000);
    const cases: Array<[string, Record<string, string | undefined>, number, RegExp]> = [
      ['no TTL', { ttl: undefined }, 400, /TTL/],
      ['another encoding', { 'content-encoding': 'aesgcm' }, 400, /aes128gcm/],
      ['bad urgency', { urgency: 'urgent' }, 400, /Urgency/],
      ['bad topic', { topic: 'has-dash' }, 400, /Topic/],
      ['no VAPID', { authorization: undefined }, 401, /missing/],
      ['another scheme', { authorization: 'Bearer abc' }, 401, /vapid/],
      ['wrong audience', { authorization: token({}, 'https://fcm.googleapis.com') }, 403, /aud/],
      ['another port', { authorization: token({}, service.origin.replace(/:\d+$/, ':1')) }, 403, /aud/],
      ['expired', { authorization: token({ exp: now - 10 }, service.origin) }, 403, /expired/],
      ['exp beyond 24 h', { authorization: token({ exp: now + 25 * 3600 }, service.origin) }, 403, /24 hours/],
      ['mailto localhost', { authorization: token({ sub: 'mailto:me@localhost' }, service.origin) }, 403, /sub/],
      ['mailto with a space', { authorization: token({ sub: 'mailto: ops@herald.example' }, service.origin) }, 403, /sub/],
      ['http subject', { authorization: token({ sub: 'http://shop.example' }, service.origin) }, 403, /sub/],
      ['key of someone else', { authorization: token({}, service.origin).replace(/k=.*$/, `k=${generateVapidKeys().publicKey}`) }, 403, /signature/],
    ];
    for (const [name, headers, status, reason] of cases) {
      const answer = await post(service, subscription, headers);
      expect({ name, status: answer.status }).toEqual({ name, status });
      expect(answer.reason).toMatch(reason);
    }
    expect((await post(service, subscription, {}, Buffer.alloc(4097))).status).toBe(413);
    expect((await post(service, subscription, {}, Buffer.alloc(200, 1))).status).toBe(400); // does not decrypt
    const other = service.createSubscription();
    expect((await post(service, subscription, {}, encryptPayload(Buffer.from('x'), other.keys))).status).toBe(400);
    expect(service.stats()).toMatchObject({ accepted: 0, decryptionFailures: 2 });
  });

  it('plays scripted answers per subscription, then the default', async () => {
    const service = await start();
    const scripted = service.createSubscription();
    const plain = service.createSubscription();
    service.scriptAnswers([{ status: 429, retryAfter: 1 }, { status: 503 }], scripted.id);
    expect((await post(service, scripted, {})).status).toBe(429);
    expect((await post(service, plain, {})).status).toBe(201);
    expect((await post(service, scripted, {})).status).toBe(503);
    expect((await post(service, scripted, {})).status).toBe(201);
    expect(service.requests.map((r) => r.status)).toEqual([429, 201, 503, 201]);
  });
});

describe('test push service in another process', () => {
  it('is driven over IPC, decrypts, and counts', async () => {
    const service = await startPushServiceProcess();
    cleanups.push(() => service.close());
    const client = new PushClient({ encryptionThreads: 0 });
    cleanups.push(() => client.close());
    const subscriptions = await service.createSubscriptions(20);
    const last = subscriptions[19]!;
    await service.setAnswer({ status: 410 }, last.id);
    const site = { ...keys, subject: 'https://shop.example' };
    const summary = await client.sendAll(
      subscriptions.map((s, i) => ({ ref: i, endpoint: s.endpoint, keys: s.keys, payload: Buffer.from(`{"n":${i}}`), vapid: site, ttl: 60 })),
      () => {},
    );
    expect(summary.counts).toMatchObject({ sent: 19, gone: 1 });
    const stats = await service.stats();
    expect(stats).toMatchObject({ requests: 20, accepted: 19, decryptionFailures: 0 });
    const messages = await service.messages();
    expect(messages.map((m) => (m.payload as { n: number }).n).sort((a, b) => a - b)).toEqual([...Array(19).keys()]);
  });

  it('can skip decryption and records for benchmarks, still counting', async () => {
    const service = await startPushServiceProcess({ decrypt: false, keepRecords: false });
    cleanups.push(() => service.close());
    const client = new PushClient({ encryptionThreads: 0 });
    cleanups.push(() => client.close());
    const [subscription] = await service.createSubscriptions(1);
    const site = { ...keys, subject: 'https://shop.example' };
    for (let i = 0; i < 5; i++) {
      await client.send({ ref: i, endpoint: subscription!.endpoint, keys: subscription!.keys, payload: Buffer.from('x'), vapid: site, ttl: 0 });
    }
    expect(await service.stats()).toMatchObject({ requests: 5, accepted: 5 });
    expect(await service.messages()).toEqual([]);
  });
});
