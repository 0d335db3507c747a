// What became of one push message, decided from the push service's answer
// (RFC 8030 §5, §7.3; docs/web-push.md) or from a failure to get one. Pure
// rules: the PushClient applies the pauses they ask for.
import { PushEncryptionError } from './encryption';

/**
 * What became of one message.
 * - sent: the push service accepted it (201/200/202; not "shown").
 * - gone: 404/410, the subscription no longer exists; deactivate it (if its
 *   endpoint is still the one sent to).
 * - rate-limited: 429; try again at `retryAt` (the origin is paused till then).
 * - deferred: not sent at all (its origin is paused past what the client
 *   waits for, or the client is closing); try again at `retryAt`.
 * - retryable: 5xx, timeout or connection failure; retry with backoff (or at
 *   `retryAt` when the service sent Retry-After). A timed-out request may have
 *   been accepted: the Topic makes the re-send collapse.
 * - failed: will not succeed as is. 401/403 are Herald's VAPID fault (never a
 *   reason to delete a subscriber); 400/413/others, bad keys, a bad endpoint.
 */
export type PushOutcome =
  | { kind: 'sent'; status: number }
  | { kind: 'gone'; status: number; reason: string }
  | { kind: 'rate-limited'; status: 429; retryAt: number; reason: string }
  | { kind: 'deferred'; retryAt: number; reason: string }
  | { kind: 'retryable'; status?: number; retryAt?: number; reason: string }
  | { kind: 'failed'; status?: number; reason: string; vapidRejected?: boolean };

export type PushOutcomeKind = PushOutcome['kind'];

/** Statuses a push service accepts a message with (RFC 8030 §5: 201; some answer 200 or 202). */
export const SUCCESS_STATUSES = new Set([200, 201, 202]);

/** Parses Retry-After (RFC 9110 §10.2.3: delay-seconds or an HTTP-date) into milliseconds from now. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** How long to wait before the next try, and whether the whole origin should wait that long. */
export interface RetryPolicy {
  /** Wait after a 429 without Retry-After. */
  defaultRetryAfterMs: number;
  /** Longest wait honoured from a Retry-After. */
  maxRetryAfterMs: number;
}

/**
 * The verdict on an answer with a status line. `pauseOriginMs` asks the client
 * to stop sending to that push service for a while: a 429 (slow down), or a
 * 503 with Retry-After (RFC 9110 §15.6.4: stay away that long).
 */
export type AnswerVerdict =
  | { kind: 'sent'; status: number }
  | { kind: 'gone'; status: number; reason: string }
  | { kind: 'rate-limited'; status: 429; reason: string; pauseOriginMs: number }
  | { kind: 'retryable'; status: number; reason: string; waitMs?: number; pauseOriginMs?: number }
  | { kind: 'failed'; status: number; reason: string; vapidRejected?: boolean };

/** Classifies a push service's answer: its status, the start of its body and its Retry-After header. */
export function classifyAnswer(status: number, body: string, retryAfter: string | undefined, now: number, policy: RetryPolicy): AnswerVerdict {
  if (SUCCESS_STATUSES.has(status)) return { kind: 'sent', status };
  const reason = body ? `${status} ${body}` : String(status);
  if (status === 404 || status === 410) return { kind: 'gone', status, reason };
  const waitMs = (() => {
    const delay = parseRetryAfter(retryAfter, now);
    return delay === undefined ? undefined : Math.min(delay, policy.maxRetryAfterMs);
  })();
  if (status === 429) return { kind: 'rate-limited', status: 429, reason, pauseOriginMs: waitMs ?? policy.defaultRetryAfterMs };
  if (status >= 500) {
    if (waitMs === undefined) return { kind: 'retryable', status, reason };
    return status === 503 ? { kind: 'retryable', status, reason, pauseOriginMs: waitMs } : { kind: 'retryable', status, reason, waitMs };
  }
  if (status === 401 || status === 403) return { kind: 'failed', status, reason: `VAPID rejected: ${reason}`, vapidRejected: true };
  return { kind: 'failed', status, reason };
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
