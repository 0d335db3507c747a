// "Send test" (issue 12): the current content of a notification, pushed
// straight to the site's test devices through a short-lived PushClient. It
// goes around the engine on purpose: no run, no delivery rows, no counters,
// so a test never shows in the notification's figures, the hourly rollup or
// the dashboard, and never changes the notification's status. The payload is
// the one real sends use (payload.ts); only its token differs, and that token
// counts nowhere (delivery-token.ts, createTestPushToken). Nothing is retried:
// the owner sees each device's result and can send again.
import type { Config } from '../config';
import { createTestPushToken } from './delivery-token';
import type { NotificationContent } from './payload';
import { createPayloadTemplate } from './payload';
import { PushClient } from './push-client';
import { pushOriginPolicy } from './push-endpoints';
import type { PushMessage } from './push-message';
import type { PushOutcome } from './push-outcome';
import type { VapidCredentials } from './vapid';

/** A test that arrives much later would only confuse: the push service may hold it this long. */
export const TEST_PUSH_TTL_SECONDS = 10 * 60;
/** Test devices one test goes to at most; an owner has a handful. */
export const TEST_PUSH_MAX_DEVICES = 50;

export interface TestPushTarget {
  subscriberId: string;
  endpoint: string;
  keys: { p256dh: string; auth: string };
  /** The key pair the device subscribed with, and the subject. */
  vapid: VapidCredentials;
}

export interface TestPushOutcome {
  subscriberId: string;
  /** expired: the push service says the subscription is gone (404/410). */
  outcome: 'sent' | 'failed' | 'expired';
  error: string | null;
}

export interface TestPushInput {
  config: Pick<Config, 'publicUrl' | 'extraPushOrigins' | 'pushTimeoutMs'>;
  secret: Buffer;
  content: NotificationContent;
  targets: TestPushTarget[];
}

function describe(outcome: PushOutcome): Pick<TestPushOutcome, 'outcome' | 'error'> {
  switch (outcome.kind) {
    case 'sent':
      return { outcome: 'sent', error: null };
    case 'gone':
      return { outcome: 'expired', error: `The browser's subscription has ended (${outcome.reason})` };
    default:
      return { outcome: 'failed', error: outcome.reason };
  }
}

/**
 * Sends one test push to each target and answers what each push service said.
 * Throws PushPayloadError (bad URL, too large) before anything is sent.
 */
export async function sendTestPushes(input: TestPushInput): Promise<TestPushOutcome[]> {
  const template = createPayloadTemplate(input.content, input.config.publicUrl);
  const client = new PushClient({
    concurrency: 8,
    // A handful of messages: encrypting here is quicker than starting worker threads.
    encryptionThreads: 0,
    requestTimeoutMs: input.config.pushTimeoutMs,
    // A paused push service is reported, not waited for.
    maxPauseWaitMs: 0,
    allowOrigin: pushOriginPolicy(input.config.extraPushOrigins),
  });
  const outcomes = new Map<string, TestPushOutcome>();
  try {
    const messages: Array<PushMessage<string>> = input.targets.map((target) => ({
      ref: target.subscriberId,
      endpoint: target.endpoint,
      keys: target.keys,
      payload: template.render(createTestPushToken(input.secret)),
      vapid: target.vapid,
      ttl: TEST_PUSH_TTL_SECONDS,
      urgency: 'high',
    }));
    await client.sendAll(messages, (message, outcome) => {
      outcomes.set(message.ref, { subscriberId: message.ref, ...describe(outcome) });
    });
  } finally {
    await client.close();
  }
  return input.targets.map((target) => outcomes.get(target.subscriberId) ?? { subscriberId: target.subscriberId, outcome: 'failed', error: 'Not sent' });
}
