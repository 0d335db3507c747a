import { afterEach, describe, expect, it } from 'vitest';
import { PushClient } from '../../src/delivery/push-client';
import type { PushClientOptions } from '../../src/delivery/push-client-options';
import type { PushMessage } from '../../src/delivery/push-message';
import { generateVapidKeys } from '../../src/delivery/vapid-keys';
import { vapidSubject } from '../../src/delivery/vapid';
import { PushService, type TestSubscription } from '../support/push-service';

// A pause of the whole origin (a 503 with Retry-After, repeated connection
// failures) gives the answered message its own lane's pause as its retry
// time: never another site's longer 429 pause, which throttles only that site
// (docs/delivery.md, "Sending, retries and back-pressure").
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function message(subscription: TestSubscription, ref: number, vapid: PushMessage['vapid']): PushMessage<number> {
  return { ref, endpoint: subscription.endpoint, keys: subscription.keys, payload: Buffer.from(JSON.stringify({ ref })), vapid, ttl: 3600 };
}

describe('pauses of one site do not set another site’s retry time', () => {
  it('a 503 Retry-After: 2 for site A is retried in about 2 s, not when site B’s 429 pause (1 h) ends', async () => {
    const service = await PushService.start();
    cleanups.push(() => service.close());
    const options: PushClientOptions = { encryptionThreads: 1, maxPauseWaitMs: 100 };
    const client = new PushClient(options);
    cleanups.push(() => client.close());
    const siteA = { ...generateVapidKeys(), subject: vapidSubject('https://a.example', undefined) };
    const siteB = { ...generateVapidKeys(), subject: vapidSubject('https://b.example', undefined) };
    const subA = service.createSubscription({ applicationServerKey: siteA.publicKey });
    const subB = service.createSubscription({ applicationServerKey: siteB.publicKey });
    service.setAnswer({ status: 429, retryAfter: 3600 }, subB.id);
    service.setAnswer({ status: 503, retryAfter: 2 }, subA.id);

    expect(await client.send(message(subB, 1, siteB))).toMatchObject({ kind: 'rate-limited' });
    const before = Date.now();
    const outcome = (await client.send(message(subA, 2, siteA))) as { kind: string; retryAt?: number };
    expect(outcome.kind).toBe('retryable');
    expect(outcome.retryAt! - before).toBeLessThan(10_000);
  });

  it('ten connection failures for site A: its retry waits the 30 s origin pause, not site B’s 1 h 429 pause', async () => {
    const service = await PushService.start();
    cleanups.push(() => service.close());
    const client = new PushClient({ encryptionThreads: 1, maxPauseWaitMs: 100, transportFailuresBeforePause: 1, requestTimeoutMs: 500 });
    cleanups.push(() => client.close());
    const siteA = { ...generateVapidKeys(), subject: vapidSubject('https://a.example', undefined) };
    const siteB = { ...generateVapidKeys(), subject: vapidSubject('https://b.example', undefined) };
    const subA = service.createSubscription({ applicationServerKey: siteA.publicKey });
    const subB = service.createSubscription({ applicationServerKey: siteB.publicKey });
    service.setAnswer({ status: 429, retryAfter: 3600 }, subB.id);
    service.setAnswer({ hang: true }, subA.id);

    expect(await client.send(message(subB, 1, siteB))).toMatchObject({ kind: 'rate-limited' });
    const before = Date.now();
    const outcome = (await client.send(message(subA, 2, siteA))) as { kind: string; retryAt?: number };
    expect(outcome.kind).toBe('retryable');
    expect(outcome.retryAt! - before).toBeLessThan(60_000);
  });
});
