// One push client shared by several batches at once, as a worker process runs
// WORKER_CONCURRENCY send-batch jobs over a single client, each recording its
// results in the database before taking more.
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
});
