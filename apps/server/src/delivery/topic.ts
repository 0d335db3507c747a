// RFC 8030 §5.4: a push message with the same Topic as one still queued at the
// push service replaces it. Herald derives the Topic from the notification
// (or notification run), so a re-send of the same notification to the same
// subscriber — after a crash, or a retry of a request whose answer was lost —
// collapses at the push service instead of being shown twice.
import crypto from 'node:crypto';

/** RFC 8030 allows 32 base64url characters; Mozilla autopush accepts only [A-Za-z0-9]. */
export const MAX_TOPIC_LENGTH = 32;
const TOPIC_PATTERN = /^[A-Za-z0-9]{1,32}$/;

/**
 * The Topic for every push of one notification delivery: 32 hex characters
 * (128 bits of SHA-256) of `collapseKey`, so it is alphanumeric, fixed-length
 * and reveals nothing about the id.
 *
 * Pass what identifies one send: the notification id, plus the run for a
 * recurring notification (`${notificationId}:${runId}`), so two runs do not
 * replace each other while queued.
 */
export function pushTopic(collapseKey: string | number): string {
  return crypto.hash('sha256', `herald-topic:${collapseKey}`, 'hex').slice(0, MAX_TOPIC_LENGTH);
}

/** True when `topic` is acceptable to every push service (RFC 8030 §5.4 and Mozilla's alphabet). */
export function isValidTopic(topic: string): boolean {
  return TOPIC_PATTERN.test(topic);
}
