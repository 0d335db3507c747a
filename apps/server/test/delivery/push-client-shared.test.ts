// One push client shared by several batches at once, as a worker process runs
// WORKER_CONCURRENCY send-batch jobs over a single client, each recording its
// results in the database before taking more.
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PushClient } from '../../src/delivery/push-client';
import type { PushMessage } from '../../src/delivery/push-message';
import { vapidSubject } from '../../src/delivery/vapid';
import { generateVapidKeys } from '../../src/delivery/vapid-keys';
import { PushService } from '../support/push-service';

const site = { ...generateVapidKeys(), subject: vapidSubject('https://shop.example', undefined) };
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('push client shared by concurrent batches', () => {
  it('finishes every batch when results are recorded slowly (no message is left parked)', async () => {
    // Found by the multi-process fault tests: batches woken together took more
    // messages than there were free slots; the extra ones were parked, and a
    // parked message was only started when a push service answered. Once
    // everything in flight had been answered while its results were still
    // being written, nothing would ever start the parked messages: the batches
    // waited forever, their heartbeat keeping the leases alive.
    const push = await PushService.start({ decrypt: false });
    cleanups.push(() => push.close());
    push.setAnswer({ status: 201, delayMs: 20 });
    const concurrency = 20;
    const client = new PushClient({ concurrency, encryptionThreads: 1 });
    cleanups.push(() => client.close());
    const subscriptions = Array.from({ length: 1000 }, () => push.createSubscription());

    // Results are written in groups, as send-batch's ResultWriter does: a
    // result's promise settles when the group holding it has been written.
    let group: Array<() => void> = [];
    const writer = setInterval(() => {
      const written = group;
      group = [];
      setTimeout(() => written.forEach((resolve) => resolve()), 10);
    }, 20);
    cleanups.push(async () => clearInterval(writer));
    const record = () => new Promise<void>((resolve) => group.push(resolve));

    const batch = (part: number) => {
      const messages: Array<PushMessage<number>> = subscriptions
        .filter((_, i) => i % 4 === part)
        .map((s, i) => ({ ref: i, endpoint: s.endpoint, keys: s.keys, payload: Buffer.from('{}'), vapid: site, ttl: 60 }));
      return client.sendAll(messages, record);
    };
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`batches stalled: ${JSON.stringify(client.stats())}`)), 15_000).unref());
    const summaries = await Promise.race([Promise.all([0, 1, 2, 3].map(batch)), timeout]);

    expect(summaries.map((s) => s.counts.sent)).toEqual([250, 250, 250, 250]);
    expect(push.stats().accepted).toBe(1000);
    expect(client.stats()).toMatchObject({ inFlight: 0, parked: 0 });
  });

  it('keeps pushes in flight plus outcomes not yet recorded within the concurrency, exactly, across batches', async () => {
    // Issue 17, 7a: every batch woken by one free slot passed the room check
    // before any of them admitted its message, so a process could hold up to
    // concurrency + batches − 1 pushes sent but not recorded (a crash re-sent
    // them all). Counted where it matters: at the push service, each request
    // received against the outcomes whose recording has finished.
    const concurrency = 10;
    let received = 0;
    let recorded = 0;
    let mostUnrecorded = 0;
    const server = http.createServer((req, res) => {
      received++;
      mostUnrecorded = Math.max(mostUnrecorded, received - recorded);
      req.resume();
      req.on('end', () => setTimeout(() => res.writeHead(201).end(), 2 + (received % 5)));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = new PushClient({ concurrency, encryptionThreads: 0 });
    cleanups.push(() => client.close());
    const browserKey = crypto.createECDH('prime256v1');
    const subscriberKeys = { p256dh: browserKey.generateKeys().toString('base64url'), auth: crypto.randomBytes(16).toString('base64url') };
    // Each result takes a while to record, in its own time, as a database write does.
    const record = () => new Promise<void>((resolve) => setTimeout(() => {
      recorded++;
      resolve();
    }, 1 + Math.floor(Math.random() * 15)));
    // Async sources, as send-batch's generator and a paging audience are: each pull yields.
    async function* source(batch: number): AsyncGenerator<PushMessage<number>> {
      for (let i = 0; i < 60; i++) {
        yield { ref: batch * 1000 + i, endpoint: `${origin}/push/${batch}-${i}`, keys: subscriberKeys, payload: Buffer.from('{}'), vapid: site, ttl: 60 };
      }
    }
    const batches = 6;
    const summaries = await Promise.all(Array.from({ length: batches }, (_, b) => client.sendAll(source(b), record)));

    expect(summaries.map((s) => s.counts.sent)).toEqual(Array(batches).fill(60));
    expect(received).toBe(batches * 60);
    expect(recorded).toBe(batches * 60);
    expect(mostUnrecorded).toBeLessThanOrEqual(concurrency);
    // The bound is reached, not merely respected by sending one at a time.
    expect(mostUnrecorded).toBeGreaterThanOrEqual(concurrency - 1);
  });
});
