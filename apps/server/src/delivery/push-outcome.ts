// What became of one push message, decided from the push service's answer
// (RFC 8030 §5, §7.3; docs/web-push.md) or from a failure to get one. Pure
// rules: the PushClient applies the pauses they ask for. Every outcome that is
// not a success carries a stable reason code (contracts FAILURE_REASONS), so
// the dashboard can group failures and say what to do about them.
import type { FailureReason } from '@herald/contracts';
import { PushEncryptionError } from './encryption';

/**
 * What became of one message.
 * - sent: the push service accepted it (201/200/202; not "shown").
 * - gone: 404/410, the subscription no longer exists; deactivate it (if its
 *   endpoint is still the one sent to). Counted as expired, not failed.
 * - rate-limited: 429; try again at `retryAt` (the origin is paused till then
 *   for this VAPID key). It counts as an attempt.
 * - deferred: not sent at all, because its push service is paused past what
 *   the client waits for; try again at `retryAt`. `code` is why the push
 *   service is paused; it counts as an attempt (otherwise a push service that
 *   keeps pausing would hold a send for a day). `code: null` when the client
 *   is shutting down: not an attempt.
 * - retryable: 5xx, timeout or connection failure; retry with backoff (or at
 *   `retryAt` when the service sent Retry-After). A timed-out request may have
 *   been accepted: the Topic makes the re-send collapse.
 * - failed: will not succeed as is. `code` says why; `invalid_subscription`
 *   deactivates the subscriber. 401/403 are Herald's VAPID fault (never a
 *   reason to delete a subscriber, `vapidRejected`).
 */
export type PushOutcome =
  | { kind: 'sent'; status: number }
  | { kind: 'gone'; status: number; reason: string }
  | { kind: 'rate-limited'; status: 429; retryAt: number; reason: string }
  | { kind: 'deferred'; retryAt: number; reason: string; code: RetryableReason | null }
  | { kind: 'retryable'; status?: number; retryAt?: number; reason: string; code: RetryableReason }
  | { kind: 'failed'; status?: number; reason: string; code: FailureReason; vapidRejected?: boolean };

export type PushOutcomeKind = PushOutcome['kind'];

/** The reasons a message is tried again for; after DELIVERY_MAX_ATTEMPTS it fails with the same code. */
export type RetryableReason = Extract<FailureReason, 'unreachable' | 'timeout' | 'rate_limited' | 'server_error'>;

/** Statuses a push service accepts a message with (RFC 8030 §5: 201; some answer 200 or 202). */
export const SUCCESS_STATUSES = new Set([200, 201, 202]);

/** Parses Retry-After (RFC 9110 §10.2.3: delay-seconds or an HTTP-date) into milliseconds from now. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // RFC 9110 §10.2.3: delay-seconds or an HTTP-date, which names its day and month. Anything else ("1.5", "-1",
  // which Date.parse would read as dates long past, so "retry at once") is as if absent.
  if (!/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(text)) return undefined;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** How long to wait before the next try, and whether the whole origin should wait that long. */
export interface RetryPolicy {
  /** Wait after a 429 without Retry-After. */
  defaultRetryAfterMs: number;
  /** Longest wait honoured from a Retry-After: a longer one is capped, and the messages are tried again then. */
  maxRetryAfterMs: number;
}

/**
 * Bodies that say the subscription itself is invalid, whatever the status:
 * FCM's v1 error codes (`UNREGISTERED`, "Invalid registration token"), the
 * legacy GCM/FCM names (`NotRegistered`, `InvalidRegistration`,
 * `InvalidTokenFormat`), the Firebase Admin names, and Apple's
 * (`BadDeviceToken`, `DeviceTokenNotForTopic`). Such a subscriber will never
 * receive anything: it is deactivated like a 410.
 */
const INVALID_SUBSCRIPTION_BODY =
  /\bUNREGISTERED\b|\bNotRegistered\b|\bInvalidRegistration\b|invalid registration token|\bInvalidTokenFormat\b|registration-token-not-registered|invalid-registration-token|\bBadDeviceToken\b|\bDeviceTokenNotForTopic\b/i;

/**
 * Bodies that say the subscription belongs to another VAPID key: FCM's 403
 * "the key in the authorization header does not correspond to the sender ID
 * used to subscribe this user", its older `MismatchSenderId` and 400
 * `UnauthorizedRegistration`, autopush's and the test service's wording. The
 * subscriber subscribed with a key this site no longer signs with; nothing is
 * deleted (it is Herald's side that changed), but it is shown as such.
 */
const VAPID_MISMATCH_BODY = /does not correspond to the sender ID|\bMismatchSenderId\b|\bUnauthorizedRegistration\b|VAPID key does not match|key mismatch/i;

/**
 * The verdict on an answer with a status line. `pauseMs` asks the client to
 * stop sending to that push service for a while: for a 429 only with this
 * VAPID key (`scope: 'key'`: the push service throttles a sender, not every
 * sender on it), for a 503 with Retry-After the whole origin (RFC 9110
 * §15.6.4: the service is unavailable).
 */
export type AnswerVerdict =
  | { kind: 'sent'; status: number }
  | { kind: 'gone'; status: number; reason: string }
  | { kind: 'rate-limited'; status: 429; reason: string; pauseMs: number }
  | { kind: 'retryable'; status: number; reason: string; code: 'server_error'; waitMs?: number; pauseOriginMs?: number }
  | { kind: 'failed'; status: number; reason: string; code: FailureReason; vapidRejected?: boolean };

/** Classifies a push service's answer: its status, the start of its body and its Retry-After header. */
export function classifyAnswer(status: number, body: string, retryAfter: string | undefined, now: number, policy: RetryPolicy): AnswerVerdict {
  if (SUCCESS_STATUSES.has(status)) return { kind: 'sent', status };
  const reason = body ? `${status} ${body}` : String(status);
  if (status === 404 || status === 410) return { kind: 'gone', status, reason };
  const waitMs = (() => {
    const delay = parseRetryAfter(retryAfter, now);
    return delay === undefined ? undefined : Math.min(delay, policy.maxRetryAfterMs);
  })();
  if (status === 429) return { kind: 'rate-limited', status: 429, reason, pauseMs: waitMs ?? policy.defaultRetryAfterMs };
  if (status >= 500) {
    if (waitMs === undefined) return { kind: 'retryable', status, reason, code: 'server_error' };
    return status === 503
      ? { kind: 'retryable', status, reason, code: 'server_error', pauseOriginMs: waitMs }
      : { kind: 'retryable', status, reason, code: 'server_error', waitMs };
  }
  if (status === 413) return { kind: 'failed', status, reason, code: 'too_large' };
  if (INVALID_SUBSCRIPTION_BODY.test(body)) return { kind: 'failed', status, reason: `Invalid subscription: ${reason}`, code: 'invalid_subscription' };
  if (VAPID_MISMATCH_BODY.test(body)) {
    return { kind: 'failed', status, reason: `VAPID key mismatch (the subscription belongs to another key): ${reason}`, code: 'rejected', vapidRejected: true };
  }
  if (status === 401 || status === 403) return { kind: 'failed', status, reason: `VAPID rejected: ${reason}`, code: 'rejected', vapidRejected: true };
  return { kind: 'failed', status, reason, code: 'rejected' };
}

/** undici's codes for a request that connected but got no complete answer in time. */
const ANSWER_TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * A request that got no status line: `timeout` when the deadline (or undici's
 * answer timers) ran out, else `unreachable` — DNS failures, refused or reset
 * connections, connect timeouts and TLS errors all mean Herald could not reach
 * the push service.
 */
export function classifyTransportError(error: Error, isDeadline: boolean): 'timeout' | 'unreachable' {
  if (isDeadline) return 'timeout';
  for (let current: unknown = error; current instanceof Error; current = (current as { cause?: unknown }).cause) {
    const code = (current as NodeJS.ErrnoException).code;
    if (code && ANSWER_TIMEOUT_CODES.has(code)) return 'timeout';
  }
  return 'unreachable';
}

/**
 * The code of a message Herald could not even send: a payload over the RFC
 * 8291 limit is `too_large`; subscriber keys that are not a P-256 point (or an
 * auth secret of the wrong size) make an `invalid_subscription` that can never
 * receive anything; anything else (an unusable VAPID key or subject) is
 * Herald refusing to send: `rejected`.
 */
export function localFailureCode(error: unknown): Extract<FailureReason, 'too_large' | 'invalid_subscription' | 'rejected'> {
  if (error instanceof PushEncryptionError) return error.code === 'payload-too-large' ? 'too_large' : 'invalid_subscription';
  return 'rejected';
}

/** The reason recorded for a message that could not be encrypted or sent. */
export function errorMessage(error: unknown): string {
  if (error instanceof PushEncryptionError) return error.message;
  return error instanceof Error ? error.message : String(error);
}

/** An error with its code and causes, e.g. `ENOTFOUND getaddrinfo ENOTFOUND …`. */
export function describeError(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  const cause = (error as { cause?: unknown }).cause;
  const causeText = cause instanceof Error ? ` (${describeError(cause)})` : '';
  return `${code ? `${code} ` : ''}${error.message}${causeText}`.trim();
}

/** The outcome model's reason code of an outcome (docs/delivery.md, "Outcomes"), for the metrics' `reason` label. */
export function reasonCodeOf(outcome: PushOutcome): string | undefined {
  if (outcome.kind === 'gone') return 'gone';
  if (outcome.kind === 'rate-limited') return 'rate_limited';
  return 'code' in outcome ? (outcome.code ?? undefined) : undefined;
}
