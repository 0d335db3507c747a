// Measurements for the benchmarks (bench/): the bare cost of RFC 8291
// encryption on one thread, and the whole sender (encryption, VAPID, HTTP)
// over the same kind of messages, so the two can be compared as a ratio.
import { encryptPayload, type EncodedSubscriberKeys, type SubscriberKeys } from './encryption';
import type { PushClient, PushMessage, SendAllSummary } from './push-client';

export interface ThroughputMeasurement {
  messages: number;
  elapsedMs: number;
  messagesPerSecond: number;
  /** CPU time this process spent per message, all threads together, in microseconds. */
  cpuMicrosPerMessage: number;
}

function measurement(messages: number, startedAt: number, cpuBefore: NodeJS.CpuUsage): ThroughputMeasurement {
  const elapsedMs = performance.now() - startedAt;
  const cpu = process.cpuUsage(cpuBefore);
  return {
    messages,
    elapsedMs,
    messagesPerSecond: elapsedMs > 0 ? (messages / elapsedMs) * 1000 : 0,
    cpuMicrosPerMessage: messages > 0 ? (cpu.user + cpu.system) / messages : 0,
  };
}

/** Encrypts `count` messages in a plain loop on this thread, cycling through `keys`. */
export function measureEncryption(
  plaintext: Uint8Array,
  keys: ReadonlyArray<EncodedSubscriberKeys | SubscriberKeys>,
  count: number,
): ThroughputMeasurement {
  if (keys.length === 0) throw new Error('measureEncryption needs at least one subscriber key');
  const cpuBefore = process.cpuUsage();
  const startedAt = performance.now();
  for (let i = 0; i < count; i++) encryptPayload(plaintext, keys[i % keys.length]!);
  return measurement(count, startedAt, cpuBefore);
}

/** Sends every message through `client.sendAll` and times it; the summary tells how many were accepted. */
export async function measureSending<Ref>(
  client: PushClient,
  messages: Iterable<PushMessage<Ref>> | AsyncIterable<PushMessage<Ref>>,
): Promise<ThroughputMeasurement & { summary: SendAllSummary }> {
  const cpuBefore = process.cpuUsage();
  const startedAt = performance.now();
  const summary = await client.sendAll(messages, () => {});
  return { ...measurement(summary.total, startedAt, cpuBefore), summary };
}
