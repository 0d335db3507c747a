// What every fault test checks after a send: one terminal delivery row per
// subscriber, and what the push service received (per subscription, how many
// times, under which Topic).
import { expect } from 'vitest';
import type { RemotePushService } from '../support/push-service-process';
import type { TestSubscription } from '../support/push-service';
import { countBy, type Deployment } from './deployment';

export interface SendReport {
  /** Messages beyond the first per subscription (re-sends after a crash). */
  duplicates: number;
  topics: number;
}

/**
 * Asserts the invariants of docs/delivery.md for one finished send:
 * - every subscriber has exactly one delivery row, and it is `sent`;
 * - the push service accepted a message for every subscription;
 * - re-sends (if any) are at most `maxDuplicates` and carry the same Topic.
 */
export async function expectDeliveredOnce(
  d: Deployment,
  push: RemotePushService,
  notificationId: string,
  subscriptions: TestSubscription[],
  maxDuplicates: number,
): Promise<SendReport> {
  const rows = await d.deliveriesOf(notificationId);
  const rowsPerSubscriber = countBy(rows, (r) => r.subscriber_id);
  expect(rows).toHaveLength(subscriptions.length);
  expect(rowsPerSubscriber.size).toBe(subscriptions.length);
  const notSent = rows.filter((r) => r.status !== 'sent');
  expect(notSent, 'deliveries not sent').toEqual([]);

  const ids = new Set(subscriptions.map((s) => s.id));
  const messages = (await push.messages()).filter((m) => ids.has(m.subscriptionId));
  const perSubscription = countBy(messages, (m) => m.subscriptionId);
  expect(perSubscription.size).toBe(subscriptions.length);
  const duplicates = messages.length - perSubscription.size;
  expect(duplicates).toBeLessThanOrEqual(maxDuplicates);
  const topics = new Set(messages.map((m) => m.headers.topic)).size;
  // A re-sent push carries the same Topic, so the push service and the browser collapse it.
  expect(topics).toBe(1);
  return { duplicates, topics };
}
