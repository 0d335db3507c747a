import { z } from 'zod';

// The outcome model of a send (issue 11), shared by the server that counts it
// and the dashboard that shows it. Per notification and per run:
//
//   targeted = sent + failed + expired + skipped + pending
//
// - sent: accepted by the push service (RFC 8030 §5: 201), not yet shown;
// - failed: will not arrive, with a reason code (expired is counted apart);
// - expired: the push service answered 404/410, the subscriber was deactivated;
// - skipped: not sent at all, with its cause (the subscriber was inactive by then);
// - pending: still to be sent, or waiting for a retry;
// then delivered and clicked, from the service worker's beacons.

/**
 * Why a delivery failed (or is waiting for a retry). Stable codes: the API,
 * the database and the dashboard's plain-language lines all use these.
 */
export const FAILURE_REASONS = [
  /** DNS, connection refused or reset, TLS: Herald could not reach the push service. */
  'unreachable',
  /** No complete answer within PUSH_TIMEOUT_MS. */
  'timeout',
  /** 429: the push service asked Herald to slow down, for every attempt. */
  'rate_limited',
  /** 400/401/403 and other 4xx: the push service refused the request (often the VAPID signature, or a VAPID key mismatch). */
  'rejected',
  /** 413, or a payload over the RFC 8291 limit. */
  'too_large',
  /** 404/410: the subscription is gone (counted as expired, not failed). */
  'gone',
  /** 5xx, for every attempt. */
  'server_error',
  /** The push service said the subscription itself is invalid (e.g. FCM UNREGISTERED); the subscriber is deactivated. */
  'invalid_subscription',
] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

/** The push service of an endpoint, from its origin (docs/web-push.md, "How the big push services behave"). */
export const PUSH_SERVICES = ['fcm', 'mozilla', 'apple', 'microsoft', 'other'] as const;
export type PushServiceName = (typeof PUSH_SERVICES)[number];

/**
 * What a skipped delivery was skipped for: the subscriber unsubscribed (or
 * was removed) between fan-out and sending, or had already had the site's
 * frequency cap of pushes (docs/product.md, "Frequency cap").
 */
export const SKIP_CAUSES = ['inactive', 'frequency_cap'] as const;
export type SkipCause = (typeof SKIP_CAUSES)[number];

/** The counts of a notification or of one of its runs (GET /notifications/{id}/performance `data.counts`). */
export const outcomeCounts = z.object({
  targeted: z.number(),
  sent: z.number(),
  failed: z.number(),
  expired: z.number(),
  skipped: z.number(),
  pending: z.number(),
  delivered: z.number(),
  clicked: z.number(),
});
export type OutcomeCounts = z.infer<typeof outcomeCounts>;

/** One group of failed deliveries: how many failed for one reason at one push service, and one of their error texts. */
export const failureGroup = z.object({
  reason: z.enum(FAILURE_REASONS),
  push_service: z.enum(PUSH_SERVICES),
  count: z.number(),
  sample_error: z.string().nullable(),
});
export type FailureGroup = z.infer<typeof failureGroup>;

/** Deliveries waiting for another attempt, grouped like failures: shown live while a send retries. */
export const retryGroup = z.object({
  reason: z.enum(FAILURE_REASONS),
  push_service: z.enum(PUSH_SERVICES),
  count: z.number(),
  /** The highest attempt made so far among them (1-based) and how many there will be at most (DELIVERY_MAX_ATTEMPTS). */
  attempt: z.number(),
  max_attempts: z.number(),
  /** The earliest next try among them (ISO). */
  next_attempt_at: z.string().nullable(),
  sample_error: z.string().nullable(),
});
export type RetryGroup = z.infer<typeof retryGroup>;

/** targeted − (sent + failed + expired + skipped), never below 0. */
export function pendingOf(counts: Omit<OutcomeCounts, 'pending'>): number {
  return Math.max(0, counts.targeted - counts.sent - counts.failed - counts.expired - counts.skipped);
}
