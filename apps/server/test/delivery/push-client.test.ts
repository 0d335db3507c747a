// The push client against a real local push service (test/support/push-service.ts)
// that checks VAPID and decrypts every body.
import { execFile } from 'node:child_process';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { createEncryptionPool, type PushEncryptor } from '../../src/delivery/encryption-pool';
import { createPayloadTemplate } from '../../src/delivery/payload';
import { PushClient } from '../../src/delivery/push-client';
import type { PushClientOptions } from '../../src/delivery/push-client-options';
import type { PushMessage } from '../../src/delivery/push-message';
import { parseRetryAfter, type PushOutcome } from '../../src/delivery/push-outcome';
import { pushTopic } from '../../src/delivery/topic';
import { vapidSubject } from '../../src/delivery/vapid';
import { createPushClient } from '../../src/roles';
import { generateVapidKeys } from '../../src/delivery/vapid-keys';
import { PushService, type PushServiceOptions, type TestSubscription } from '../support/push-service';
import { createTestCertificate } from '../support/test-certificate';

const site = { ...generateVapidKeys(), subject: vapidSubject('https://shop.example', undefined) };
const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function pushService(options: PushServiceOptions = {}): Promise<PushService> {
  const service = await PushService.start(options);
  cleanups.push(() => service.close());
  return service;
}

function pushClient(options: PushClientOptions = {}): PushClient {
  const client = new PushClient({ encryptionThreads: 1, ...options });
  cleanups.push(() => client.close());
  return client;
}

function message(subscription: TestSubscription, ref: number, extra: Partial<PushMessage<number>> = {}): PushMessage<number> {
  return {
    ref,
    endpoint: subscription.endpoint,
    keys: subscription.keys,
    payload: Buffer.from(JSON.stringify({ ref })),
    vapid: site,
    ttl: 3600,
    ...extra,
  };
}

async function sendAll(client: PushClient, messages: Iterable<PushMessage<number>>): Promise<Map<number, PushOutcome>> {
  const outcomes = new Map<number, PushOutcome>();
  await client.sendAll(messages, (m, outcome) => {
    expect(outcomes.has(m.ref)).toBe(false);
    outcomes.set(m.ref, outcome);
  });
  return outcomes;
}

/** Polls a condition for at most `ms`. */
async function eventually(condition: () => boolean, ms = 2_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('push client: delivery', () => {
  it('delivers 1,000 messages that all decrypt to their payload, over a few kept-alive connections', async () => {
    const service = await pushService();
    const client = pushClient({ concurrency: 32, connectionsPerOrigin: 6 });
    const subscriptions = Array.from({ length: 1000 }, () => service.createSubscription());
    const template = createPayloadTemplate(
      { collapseKey: 'n1', title: 'Sale', body: 'Today only', url: 'https://shop.example/sale', icon: null },
      'https://herald.example',
    );
    const topic = pushTopic('n1');
    const messages = subscriptions.map((s, i) => ({ ...message(s, i), payload: template.render(`token-${i}`), topic, urgency: 'high' as const, ttl: 86_400 }));

    const outcomes = await sendAll(client, messages);

    expect([...outcomes.values()].every((o) => o.kind === 'sent' && o.status === 201)).toBe(true);
    expect(outcomes.size).toBe(1000);
    const stats = service.stats();
    expect(stats.accepted).toBe(1000);
    expect(stats.decryptionFailures).toBe(0);
    const byId = new Map(subscriptions.map((s, i) => [s.id, i]));
    for (const received of service.messages) {
      const i = byId.get(received.subscriptionId)!;
      expect(received.payload).toMatchObject({ title: 'Sale', tag: 'herald-n1', token: `token-${i}`, api: 'https://herald.example' });
      expect(received.headers).toMatchObject({
        ttl: '86400',
        urgency: 'high',
        topic,
        'content-encoding': 'aes128gcm',
        'content-type': 'application/octet-stream',
      });
    }
    expect(new Set(service.messages.map((m) => m.subscriptionId)).size).toBe(1000);
    // Keep-alive: a handful of connections for a thousand requests.
    expect(stats.connections.total).toBeLessThanOrEqual(6);
    // One VAPID token for the whole run.
    expect(new Set(service.messages.map((m) => m.headers.authorization)).size).toBe(1);
  });

  it('keeps to PUSH_CONNECTIONS per push service: one request per connection at a time, so that many at once', async () => {
    // HTTP/1.1 carries one request at a time per connection: a process sends at most PUSH_CONNECTIONS ÷ round trip (deploy/README.md, "Sizing").
    const service = await pushService();
    service.setAnswer({ status: 201, delayMs: 40 });
    const client = createPushClient(loadConfig({ PUSH_CONNECTIONS: '5', EXTRA_PUSH_ORIGINS: service.origin }));
    cleanups.push(() => client.close());
    const outcomes = await sendAll(client, Array.from({ length: 40 }, (_, i) => message(service.createSubscription(), i)));
    expect([...outcomes.values()].every((outcome) => outcome.kind === 'sent')).toBe(true);
    expect(service.stats().connections.total).toBe(5);
    expect(service.stats().maxInFlight).toBe(5);
  });

  it('sends a single message with send(), encrypting on the calling thread too', async () => {
    const service = await pushService();
    const client = pushClient({ encryptionThreads: 0 });
    const subscription = service.createSubscription({ applicationServerKey: site.publicKey });
    expect(await client.send(message(subscription, 7))).toEqual({ kind: 'sent', status: 201 });
    expect(service.messages[0]!.payload).toEqual({ ref: 7 });
  });

  it('speaks HTTPS/1.1 with keep-alive by default, trusting the CA it is given', async () => {
    const service = await pushService({ tls: true });
    const subscriptions = Array.from({ length: 60 }, () => service.createSubscription());
    const client = pushClient({ connect: { ca: createTestCertificate().ca }, connectionsPerOrigin: 4 });
    const outcomes = await sendAll(client, subscriptions.map((s, i) => message(s, i)));
    expect([...outcomes.values()].filter((o) => o.kind === 'sent')).toHaveLength(60);
    expect(service.stats().connections.total).toBeLessThanOrEqual(4);
    expect(service.messages).toHaveLength(60);
  });

  it('trusts a CA from NODE_EXTRA_CA_CERTS, with no option in the code', async () => {
    const service = await pushService({ tls: true });
    const subscription = service.createSubscription();
    const clientModule = new URL('../../src/delivery/push-client.ts', import.meta.url).href;
    const script = `
      import { PushClient } from ${JSON.stringify(clientModule)};
      const client = new PushClient({ encryptionThreads: 0 });
      const message = JSON.parse(process.env.HERALD_TEST_MESSAGE);
      message.payload = Buffer.from(message.payload);
      console.log(JSON.stringify(await client.send(message)));
      await client.close();`;
    const sendFromChild = (extraCa: string | undefined) =>
      new Promise<PushOutcome>((resolve, reject) => {
        const env: NodeJS.ProcessEnv = { ...process.env, HERALD_TEST_MESSAGE: JSON.stringify({ ...message(subscription, 1), payload: '{}' }) };
        delete env.NODE_EXTRA_CA_CERTS;
        if (extraCa) env.NODE_EXTRA_CA_CERTS = extraCa;
        execFile(process.execPath, ['--import', import.meta.resolve('tsx'), '--input-type=module', '-e', script], { env, timeout: 20_000 }, (error, stdout) =>
          error ? reject(error) : resolve(JSON.parse(stdout.trim().split('\n').pop()!)),
        );
      });
    expect(await sendFromChild(createTestCertificate().caFile)).toEqual({ kind: 'sent', status: 201 });
    expect(await sendFromChild(undefined)).toMatchObject({ kind: 'retryable', reason: expect.stringContaining('UNABLE_TO_VERIFY_LEAF_SIGNATURE') });
  });

  it('speaks HTTPS and HTTP/2 to a push service whose CA it is given, and refuses an unknown certificate', async () => {
    const service = await pushService({ tls: true, http2: true });
    const subscriptions = Array.from({ length: 40 }, () => service.createSubscription());
    const trusted = pushClient({ connect: { ca: createTestCertificate().ca }, allowH2: true });
    const outcomes = await sendAll(trusted, subscriptions.map((s, i) => message(s, i)));
    expect([...outcomes.values()].filter((o) => o.kind === 'sent')).toHaveLength(40);
    expect(service.stats().connections.total).toBe(1); // HTTP/2 multiplexes every request on one connection

    const untrusting = pushClient({ allowH2: true });
    const outcome = await untrusting.send(message(subscriptions[0]!, 99));
    expect(outcome).toMatchObject({ kind: 'retryable', reason: expect.stringMatching(/certificate/i) });
  });
});

describe('push client: outcomes', () => {
  it('classifies every kind of answer', async () => {
    const service = await pushService();
    const client = pushClient();
    const answers = [200, 201, 202, 400, 401, 403, 404, 410, 413, 500, 502, 503] as const;
    const subscriptions = answers.map((status) => {
      const subscription = service.createSubscription();
      service.setAnswer({ status, body: status >= 400 ? `{"reason":"answer ${status}"}` : undefined }, subscription.id);
      return subscription;
    });
    const expired = service.createSubscription();
    service.expire(expired.id);
    const offCurve = { p256dh: Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 1)]).toString('base64url'), auth: expired.keys.auth };
    const messages = [
      ...subscriptions.map((s, i) => message(s, i)),
      message(expired, 100),
      { ...message(expired, 101), endpoint: `${service.origin}/push/unknown1` },
      { ...message(expired, 102), keys: offCurve },
      { ...message(expired, 103), endpoint: 'ftp://example.com/push/1' },
      { ...message(expired, 104), topic: 'not-alphanumeric' },
      { ...message(expired, 105), payload: Buffer.alloc(4000) },
      { ...message(expired, 106), vapid: { ...site, publicKey: generateVapidKeys().publicKey, privateKey: 'broken' } },
    ];

    const outcomes = await sendAll(client, messages);

    const byStatus = (status: number) => outcomes.get(answers.indexOf(status as (typeof answers)[number]));
    expect(byStatus(200)).toEqual({ kind: 'sent', status: 200 });
    expect(byStatus(201)).toEqual({ kind: 'sent', status: 201 });
    expect(byStatus(202)).toEqual({ kind: 'sent', status: 202 });
    expect(byStatus(400)).toEqual({ kind: 'failed', status: 400, reason: '400 {"reason":"answer 400"}', code: 'rejected' });
    expect(byStatus(401)).toMatchObject({ kind: 'failed', status: 401, code: 'rejected', vapidRejected: true, reason: expect.stringContaining('answer 401') });
    expect(byStatus(403)).toMatchObject({ kind: 'failed', status: 403, code: 'rejected', vapidRejected: true });
    expect(byStatus(404)).toMatchObject({ kind: 'gone', status: 404 });
    expect(byStatus(410)).toMatchObject({ kind: 'gone', status: 410 });
    expect(byStatus(413)).toMatchObject({ kind: 'failed', status: 413, code: 'too_large' });
    expect(byStatus(500)).toMatchObject({ kind: 'retryable', status: 500, code: 'server_error', reason: expect.stringContaining('answer 500') });
    expect(byStatus(502)).toMatchObject({ kind: 'retryable', status: 502, code: 'server_error' });
    expect(byStatus(503)).toMatchObject({ kind: 'retryable', status: 503, code: 'server_error' });
    expect(byStatus(503)).not.toHaveProperty('retryAt');
    expect(outcomes.get(100)).toMatchObject({ kind: 'gone', status: 410 });
    expect(outcomes.get(101)).toMatchObject({ kind: 'gone', status: 404 });
    expect(outcomes.get(102)).toMatchObject({ kind: 'failed', code: 'invalid_subscription', reason: expect.stringContaining('not a point on the P-256 curve') });
    expect(outcomes.get(103)).toMatchObject({ kind: 'failed', code: 'invalid_subscription', reason: expect.stringContaining('https') });
    expect(outcomes.get(104)).toMatchObject({ kind: 'failed', code: 'rejected', reason: expect.stringContaining('Topic') });
    expect(outcomes.get(105)).toMatchObject({ kind: 'failed', code: 'too_large', reason: expect.stringContaining('at most 3993 bytes') });
    expect(outcomes.get(106)).toMatchObject({ kind: 'failed', code: 'rejected', reason: expect.stringMatching(/key/i) });
    // Nothing malformed reached the push service.
    expect(service.stats().requests).toBe(answers.length + 2);
  });

  it('reports requests the real VAPID checks refuse as failed, never as gone; a subscription of another key is a VAPID key mismatch', async () => {
    const service = await pushService();
    const client = pushClient();
    const locked = service.createSubscription({ applicationServerKey: generateVapidKeys().publicKey });
    const outcome = await client.send(message(locked, 1));
    expect(outcome).toMatchObject({ kind: 'failed', status: 403, code: 'rejected', vapidRejected: true, reason: expect.stringMatching(/^VAPID key mismatch.*does not match/) });
  });

  it('deactivates on bodies that name an invalid subscription (FCM, legacy GCM, Apple), and tells a VAPID key mismatch from other refusals', async () => {
    const service = await pushService();
    const client = pushClient();
    const answers: Array<{ status: number; body: string; code: string; mismatch?: boolean }> = [
      { status: 400, body: '{"error":{"code":400,"status":"INVALID_ARGUMENT","details":[{"errorCode":"UNREGISTERED"}]}}', code: 'invalid_subscription' },
      { status: 400, body: '{"error":{"message":"Invalid registration token"}}', code: 'invalid_subscription' },
      { status: 400, body: 'InvalidRegistration', code: 'invalid_subscription' },
      { status: 403, body: '{"reason":"BadDeviceToken"}', code: 'invalid_subscription' },
      { status: 403, body: 'the key in the authorization header does not correspond to the sender ID used to subscribe this user.', code: 'rejected', mismatch: true },
      { status: 400, body: '<HTML><TITLE>UnauthorizedRegistration</TITLE></HTML>', code: 'rejected', mismatch: true },
      { status: 403, body: '{"reason":"BadJwtToken"}', code: 'rejected' },
      { status: 400, body: '{"reason":"bad request"}', code: 'rejected' },
    ];
    const subscriptions = answers.map((answer) => {
      const subscription = service.createSubscription();
      service.setAnswer({ status: answer.status, body: answer.body }, subscription.id);
      return subscription;
    });
    const outcomes = await sendAll(client, subscriptions.map((s, i) => message(s, i)));
    answers.forEach((answer, i) => {
      const outcome = outcomes.get(i)!;
      expect(outcome, answer.body).toMatchObject({ kind: 'failed', status: answer.status, code: answer.code });
      expect((outcome as { reason: string }).reason.startsWith('VAPID key mismatch'), answer.body).toBe(answer.mismatch === true);
    });
  });

  it('reports a refused connection as retryable', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const client = pushClient();
    const outcome = await client.send({ ...message({ id: 'x', endpoint: `http://127.0.0.1:${port}/push/x`, keys: site2Keys() }, 1) });
    expect(outcome).toMatchObject({ kind: 'retryable', code: 'unreachable', reason: expect.stringContaining('ECONNREFUSED') });
  });

  it('reports a host that does not resolve as unreachable, like a refused connection', async () => {
    const client = pushClient();
    const outcome = await client.send({ ...message({ id: 'x', endpoint: 'http://no-such-host.herald-test.invalid-tld-xyz/push/x', keys: site2Keys() }, 1) });
    expect(outcome).toMatchObject({ kind: 'retryable', code: 'unreachable', reason: expect.stringMatching(/ENOTFOUND|EAI_AGAIN/) });
  });

  it('parses Retry-After as seconds or an HTTP date', () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter(new Date(now + 90_000).toUTCString(), now)).toBe(90_000);
    expect(parseRetryAfter(new Date(now - 90_000).toUTCString(), now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    // Neither delay-seconds nor an HTTP-date: as if absent (Date.parse reads them as dates long past, "retry at once").
    for (const odd of ['1.5', '-1', '2026-01-01', '1e3']) expect(parseRetryAfter(odd, now), odd).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

function site2Keys() {
  // Any valid subscriber keys will do for a request that never connects.
  return { p256dh: site.publicKey, auth: Buffer.alloc(16, 7).toString('base64url') };
}

describe('push client: back-pressure', () => {
  it('429 pauses only that origin: nothing reaches it before Retry-After, the other origin keeps flowing', async () => {
    const limited = await pushService();
    const other = await pushService();
    limited.scriptAnswers([{ status: 429, retryAfter: 1 }]);
    // The other origin answers slowly, one at a time, so its traffic spans the pause.
    other.setAnswer({ status: 201, delayMs: 60 });
    const pauses: Array<{ origin: string; at: number; until: number }> = [];
    const client = pushClient({
      concurrency: 8,
      maxInFlightPerOrigin: 1,
      maxPauseWaitMs: 5_000,
      onOriginPaused: (origin, until) => pauses.push({ origin, at: Date.now(), until }),
    });
    const a = Array.from({ length: 10 }, () => limited.createSubscription());
    const b = Array.from({ length: 25 }, () => other.createSubscription());
    const messages = [...a.map((s, i) => message(s, i)), ...b.map((s, i) => message(s, 100 + i))];
    // Interleave the two origins.
    messages.sort((x, y) => (x.ref % 100) - (y.ref % 100));

    const started = Date.now();
    const outcomes = await sendAll(client, messages);

    expect(pauses).toHaveLength(1);
    const pause = pauses[0]!;
    expect(pause.origin).toBe(limited.origin);
    expect(pause.until - pause.at).toBeGreaterThanOrEqual(990);
    const rateLimited = [...outcomes.values()].filter((o) => o.kind === 'rate-limited');
    expect(rateLimited).toEqual([{ kind: 'rate-limited', status: 429, retryAt: pause.until, reason: '429' }]);
    expect([...outcomes.values()].filter((o) => o.kind === 'sent')).toHaveLength(34);
    // Nothing reached the limited origin during its pause...
    expect(limited.requests.filter((r) => r.receivedAt > pause.at && r.receivedAt < pause.until)).toEqual([]);
    expect(limited.requests.filter((r) => r.receivedAt >= pause.until)).toHaveLength(9);
    // ...while the other origin kept receiving.
    expect(other.requests.filter((r) => r.receivedAt > pause.at && r.receivedAt < pause.until).length).toBeGreaterThan(5);
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  it('after a pause one request probes first; a second 429 pauses again', async () => {
    const service = await pushService();
    service.scriptAnswers([
      { status: 429, retryAfter: 0 },
      { status: 429, retryAfter: 0 },
    ]);
    service.setAnswer({ status: 201, delayMs: 20 });
    const pauses: number[] = [];
    const client = pushClient({ concurrency: 10, onOriginPaused: (_origin, until) => pauses.push(until) });
    const subscriptions = Array.from({ length: 6 }, () => service.createSubscription());
    // First message alone, so the script's order is the request order.
    expect(await client.send(message(subscriptions[0]!, 0))).toMatchObject({ kind: 'rate-limited' });
    const outcomes = await sendAll(client, subscriptions.slice(1).map((s, i) => message(s, i + 1)));
    const kinds = [...outcomes.values()].map((o) => o.kind).sort();
    expect(kinds).toEqual(['rate-limited', 'sent', 'sent', 'sent', 'sent']);
    expect(pauses).toHaveLength(2);
    const [, second, probe, ...rest] = [...service.requests].sort((x, y) => x.receivedAt - y.receivedAt);
    expect(second!.status).toBe(429);
    expect(probe!.status).toBe(201);
    // The probe went alone: the others arrived only once it was answered (20 ms later)...
    for (const request of rest) expect(request.receivedAt).toBeGreaterThanOrEqual(probe!.receivedAt + 19);
    // ...and then together.
    expect(service.stats().maxInFlight).toBe(3);
  });

  it('a long Retry-After is not waited out: later messages come back deferred with the time to retry', async () => {
    const limited = await pushService();
    const other = await pushService();
    limited.setAnswer({ status: 429, retryAfter: 120 });
    const client = pushClient({ concurrency: 4, maxInFlightPerOrigin: 1, maxPauseWaitMs: 100 });
    const a = Array.from({ length: 5 }, () => limited.createSubscription());
    const b = Array.from({ length: 5 }, () => other.createSubscription());
    const before = Date.now();
    const outcomes = await sendAll(client, [...a.map((s, i) => message(s, i)), ...b.map((s, i) => message(s, 10 + i))]);

    expect(outcomes.get(0)).toMatchObject({ kind: 'rate-limited', status: 429 });
    const retryAt = (outcomes.get(0) as { retryAt: number }).retryAt;
    expect(retryAt - before).toBeGreaterThanOrEqual(119_000);
    for (let i = 1; i < 5; i++) expect(outcomes.get(i)).toEqual({ kind: 'deferred', retryAt, reason: `${limited.origin} is paused`, code: 'rate_limited' });
    for (let i = 10; i < 15; i++) expect(outcomes.get(i)).toMatchObject({ kind: 'sent' });
    expect(limited.stats().requests).toBe(1);
  });

  it('429 pauses only the VAPID key it throttled: another site on the same push service keeps sending (issue 10)', async () => {
    const service = await pushService();
    const throttledSite = { ...generateVapidKeys(), subject: vapidSubject('https://throttled.example', undefined) };
    const otherSite = { ...generateVapidKeys(), subject: vapidSubject('https://other.example', undefined) };
    const throttledSubscriptions = Array.from({ length: 5 }, () => service.createSubscription({ applicationServerKey: throttledSite.publicKey }));
    const otherSubscriptions = Array.from({ length: 20 }, () => service.createSubscription({ applicationServerKey: otherSite.publicKey }));
    service.setAnswer({ status: 429, retryAfter: 120 }, throttledSubscriptions[0]!.id);
    const pauses: Array<{ origin: string; key: string }> = [];
    const client = pushClient({ concurrency: 4, maxPauseWaitMs: 100, onOriginPaused: (origin, _until, _reason, key) => pauses.push({ origin, key }) });

    // The throttled site's first message alone, so its 429 comes before anything else.
    expect(await client.send(message(throttledSubscriptions[0]!, 0, { vapid: throttledSite }))).toMatchObject({ kind: 'rate-limited' });
    const outcomes = await sendAll(client, [
      ...throttledSubscriptions.slice(1).map((s, i) => message(s, 1 + i, { vapid: throttledSite })),
      ...otherSubscriptions.map((s, i) => message(s, 100 + i, { vapid: otherSite })),
    ]);

    expect(pauses).toEqual([{ origin: service.origin, key: throttledSite.publicKey }]);
    for (let i = 1; i < 5; i++) expect(outcomes.get(i)).toMatchObject({ kind: 'deferred', code: 'rate_limited' });
    for (let i = 100; i < 120; i++) expect(outcomes.get(i)).toEqual({ kind: 'sent', status: 201 });
    // One request of the throttled sender reached the service; every one of the other.
    const throttledIds = new Set(throttledSubscriptions.map((s) => s.id));
    expect(service.requests.filter((r) => throttledIds.has(r.subscriptionId!))).toHaveLength(1);
    const lanes = client.stats().origins.find((o) => o.origin === service.origin)!.lanes;
    expect(lanes.find((lane) => lane.vapidKey === throttledSite.publicKey)).toMatchObject({ paused: true });
    expect(lanes.find((lane) => lane.vapidKey === otherSite.publicKey)).toMatchObject({ paused: false });
  });

  it('caps a Retry-After at the longest pause it honours: the messages are tried again then, not dropped', async () => {
    const service = await pushService();
    service.setAnswer({ status: 429, retryAfter: 7 * 24 * 3600 });
    const client = pushClient({ maxRetryAfterMs: 2_000, maxPauseWaitMs: 0 });
    const subscription = service.createSubscription();
    const before = Date.now();
    const outcome = await client.send(message(subscription, 1));
    expect(outcome).toMatchObject({ kind: 'rate-limited', status: 429 });
    const retryAt = (outcome as { retryAt: number }).retryAt;
    expect(retryAt - before).toBeGreaterThanOrEqual(1_900);
    expect(retryAt - before).toBeLessThan(3_000);
    // The default cap is an hour.
    const defaults = pushClient({ maxPauseWaitMs: 0 });
    const start = Date.now();
    const capped = (await defaults.send(message(subscription, 2))) as { kind: string; retryAt: number };
    expect(capped.kind).toBe('rate-limited');
    expect(capped.retryAt - start).toBeGreaterThanOrEqual(3_600_000 - 1_000);
    expect(capped.retryAt - start).toBeLessThanOrEqual(3_600_000 + 1_000);
  });

  it('503 with Retry-After is retryable at that time and also holds the origin back', async () => {
    const service = await pushService();
    service.scriptAnswers([{ status: 503, retryAfter: 60 }]);
    const client = pushClient({ maxPauseWaitMs: 0 });
    const subscription = service.createSubscription();
    const before = Date.now();
    const first = await client.send(message(subscription, 1));
    expect(first).toMatchObject({ kind: 'retryable', status: 503 });
    expect((first as { retryAt: number }).retryAt - before).toBeGreaterThanOrEqual(59_000);
    expect(await client.send(message(subscription, 2))).toMatchObject({ kind: 'deferred' });
    expect(service.stats().requests).toBe(1);
  });
});

describe('push client: deadlines and failures', () => {
  it('ends requests to a black-holed endpoint at the deadline, on a bounded number of sockets', async () => {
    const service = await pushService();
    service.setAnswer({ hang: true });
    const client = pushClient({ concurrency: 20, connectionsPerOrigin: 3, requestTimeoutMs: 300, transportFailuresBeforePause: 100 });
    const subscriptions = Array.from({ length: 12 }, () => service.createSubscription());
    const started = Date.now();
    const outcomes = await sendAll(client, subscriptions.map((s, i) => message(s, i)));
    const elapsed = Date.now() - started;

    expect(outcomes.size).toBe(12);
    for (const outcome of outcomes.values()) {
      expect(outcome).toMatchObject({ kind: 'retryable', code: 'timeout', reason: 'timeout: no complete answer within 300 ms' });
    }
    expect(elapsed).toBeLessThan(1_500);
    expect(service.stats().connections.maxOpen).toBeLessThanOrEqual(3);
    // The client closed its end: the hung requests free their sockets.
    await eventually(() => service.stats().connections.open === 0 && service.stats().inFlight === 0);
    expect(client.stats().inFlight).toBe(0);
  });

  it('waits for a slow answer inside the deadline and gives up on one beyond it', async () => {
    const service = await pushService();
    const client = pushClient({ requestTimeoutMs: 400 });
    const slow = service.createSubscription();
    const tooSlow = service.createSubscription();
    service.setAnswer({ status: 201, delayMs: 150 }, slow.id);
    service.setAnswer({ status: 201, delayMs: 1_500 }, tooSlow.id);
    const started = Date.now();
    const outcomes = await sendAll(client, [message(slow, 1), message(tooSlow, 2)]);
    expect(outcomes.get(1)).toEqual({ kind: 'sent', status: 201 });
    expect(outcomes.get(2)).toMatchObject({ kind: 'retryable', code: 'timeout', reason: expect.stringContaining('timeout') });
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('pauses an origin that keeps failing at the transport level, deferring the rest', async () => {
    const service = await pushService();
    service.setAnswer({ hang: true });
    const pauses: string[] = [];
    const client = pushClient({
      maxInFlightPerOrigin: 1,
      requestTimeoutMs: 150,
      transportFailuresBeforePause: 2,
      transportFailurePauseMs: 30_000,
      maxPauseWaitMs: 0,
      onOriginPaused: (_origin, _until, reason) => pauses.push(reason),
    });
    const subscriptions = Array.from({ length: 8 }, () => service.createSubscription());
    const outcomes = await sendAll(client, subscriptions.map((s, i) => message(s, i)));
    const kinds = [...outcomes.values()].map((o) => o.kind);
    expect(kinds.filter((k) => k === 'retryable')).toHaveLength(2);
    expect(kinds.filter((k) => k === 'deferred')).toHaveLength(6);
    // The requests timed out, and the origin's pause carries that reason to the messages it defers.
    expect([...outcomes.values()].map((o) => ('code' in o ? o.code : undefined))).toEqual(Array(8).fill('timeout'));
    expect(service.stats().requests).toBe(2);
    expect(pauses).toEqual([expect.stringContaining('2 failed requests in a row')]);
  });
});

describe('push client: batches and shutdown', () => {
  it('pulls from the source only as room frees up (bounded memory)', async () => {
    const service = await pushService();
    service.setAnswer({ status: 201, delayMs: 5 });
    const client = pushClient({ concurrency: 4, encryptAhead: 4, maxParked: 4 });
    const subscription = service.createSubscription();
    let pulled = 0;
    let reported = 0;
    let maxOutstanding = 0;
    function* source() {
      for (let i = 0; i < 150; i++) {
        pulled++;
        maxOutstanding = Math.max(maxOutstanding, pulled - reported);
        yield message(subscription, i);
      }
    }
    const summary = await client.sendAll(source(), () => {
      reported++;
    });
    expect(summary).toMatchObject({ total: 150, stopped: false, counts: { sent: 150 } });
    // Sent or awaiting their record (concurrency), being encrypted ahead of a slot, and held for a busy lane.
    expect(maxOutstanding).toBeLessThanOrEqual(4 + 4 + 4);
  });

  it('encrypts ahead while every slot waits for an answer, within its bounds, and never sends more than the concurrency', async () => {
    const service = await pushService();
    service.setAnswer({ status: 201, delayMs: 1_500 });
    const inner = createEncryptionPool({ threads: 0 });
    let encrypted = 0;
    const encryptor: PushEncryptor = {
      encrypt: (plaintext, keys) => {
        encrypted++;
        return inner.encrypt(plaintext, keys);
      },
      close: () => inner.close(),
    };
    const client = pushClient({ concurrency: 2, encryptAhead: 6, maxParked: 2, encryptor });
    const subscription = service.createSubscription();
    let answered = 0;
    const sending = client.sendAll(
      Array.from({ length: 20 }, (_, i) => message(subscription, i)),
      () => void answered++,
    );

    // Both slots hold a request the push service has not answered yet, and the
    // encryption went on meanwhile instead of waiting for them: nothing is sent
    // while it is encrypted, so it is not what the slots bound.
    await eventually(() => service.stats().inFlight === 2 && encrypted >= 2 + 2, 1_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(answered).toBe(0);
    expect(service.stats().inFlight).toBe(2);
    const stats = client.stats();
    expect(stats).toMatchObject({ inFlight: 2, encrypting: 0, awaitingResults: 0 });
    // Every message encrypted is either sent or waiting, with its body, for a slot.
    expect(stats.parked).toBeGreaterThanOrEqual(2);
    expect(encrypted).toBe(2 + stats.parked);
    // Bounded all the same: the slots, the messages encrypted ahead and those held for a busy lane.
    expect(encrypted).toBeLessThanOrEqual(2 + 6 + 2);

    const summary = await sending;
    expect(summary).toMatchObject({ total: 20, counts: { sent: 20 } });
    expect(encrypted).toBe(20);
    expect(service.stats().maxInFlight).toBe(2);
  });

  it('holds results that return a promise and stops on a failing one', async () => {
    const service = await pushService();
    const client = pushClient({ concurrency: 3 });
    const subscription = service.createSubscription();
    let pulled = 0;
    async function* source() {
      for (let i = 0; i < 1_000; i++) {
        pulled++;
        yield message(subscription, i);
      }
    }
    let results = 0;
    const run = client.sendAll(source(), async () => {
      await new Promise((resolve) => setTimeout(resolve, 2));
      if (++results === 10) throw new Error('database unavailable');
    });
    await expect(run).rejects.toThrow('database unavailable');
    expect(pulled).toBeLessThan(30);
    // Every message taken was reported; none is left in flight.
    expect(results).toBe(pulled);
    expect(client.stats().inFlight).toBe(0);
  });

  it('close() stops taking messages, finishes those in flight, and reports the rest', async () => {
    const service = await pushService();
    service.setAnswer({ status: 201, delayMs: 150 });
    const client = new PushClient({ concurrency: 3, encryptionThreads: 1 });
    const subscriptions = Array.from({ length: 30 }, () => service.createSubscription());
    const outcomes: PushOutcome[] = [];
    const run = client.sendAll(
      subscriptions.map((s, i) => message(s, i)),
      (_m, outcome) => void outcomes.push(outcome),
    );
    await eventually(() => service.stats().requests >= 3);
    await client.close();
    const summary = await run;

    expect(summary.stopped).toBe(true);
    expect(outcomes.length).toBe(summary.total);
    expect(outcomes.filter((o) => o.kind === 'sent').length).toBe(service.stats().accepted);
    expect(outcomes.every((o) => o.kind === 'sent' || o.kind === 'deferred')).toBe(true);
    expect(service.stats().requests).toBeLessThan(30);
    await expect(client.send(message(subscriptions[0]!, 99))).rejects.toThrow(/closed/);
  });
});
