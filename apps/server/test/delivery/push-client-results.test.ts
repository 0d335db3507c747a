import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PushClient, type PushMessage } from '../../src/delivery/push-client';
import { generateVapidKeys } from '../../src/delivery/vapid-keys';
import { PushService } from '../support/push-service';

// The push client counts an outcome whose onResult has not settled (the
// caller is still recording it) against its concurrency. When such results
// settle, messages parked for lack of room must start: otherwise a batch
// waits forever with nothing in flight.
describe('push client with slow result recording', () => {
  let push: PushService;
  beforeAll(async () => {
    push = await PushService.start();
  });
  afterAll(async () => push.close());

  it('finishes every message when onResult holds the only free slots', async () => {
    const keys = generateVapidKeys();
    const vapid = { ...keys, subject: 'https://results.example' };
    const client = new PushClient({ concurrency: 1, encryptionThreads: 0 });
    try {
      const messages: Array<PushMessage<number>> = Array.from({ length: 2 }, (_, i) => {
        const subscription = push.createSubscription({ applicationServerKey: keys.publicKey });
        return { ref: i, endpoint: subscription.endpoint, keys: subscription.keys, payload: Buffer.from(`{"n":${i}}`), vapid, ttl: 60 };
      });
      // Two batches at once, as two send-batch jobs would, each recording slowly.
      const outcomes: string[] = [];
      const record = (_message: PushMessage<number>, outcome: { kind: string }) =>
        new Promise<void>((resolve) => setTimeout(() => {
          outcomes.push(outcome.kind);
          resolve();
        }, 20));
      const summaries = await Promise.race([
        Promise.all([client.sendAll(messages.slice(0, 1), record), client.sendAll(messages.slice(1), record)]),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('sendAll never finished')), 3_000)),
      ]);
      expect(summaries.map((s) => s.total)).toEqual([1, 1]);
      expect(outcomes).toHaveLength(2);
      expect(outcomes.every((kind) => kind === 'sent')).toBe(true);
      expect(client.stats()).toMatchObject({ inFlight: 0, parked: 0 });
    } finally {
      await client.close();
    }
  });
});
