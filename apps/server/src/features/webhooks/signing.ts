import crypto from 'node:crypto';
import { WEBHOOK_SECRET_PREFIX } from '@herald/contracts';

// Standard Webhooks (https://www.standardwebhooks.com, "Signature scheme"):
// the signed content is `${webhook-id}.${webhook-timestamp}.${body}`, the key
// is the base64-decoded part of the secret after `whsec_`, the signature is
// the base64 HMAC-SHA256, sent as `v1,<signature>` in webhook-signature.

/** 32 random bytes: the specification asks for 24 to 64. */
const SECRET_BYTES = 32;

export function generateWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${crypto.randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** `msg_` + 128 random bits: the webhook-id, one per event, the same on every retry. */
export function newMessageId(): string {
  return `msg_${crypto.randomBytes(16).toString('base64url')}`;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The three headers for one attempt; `timestampSeconds` is the attempt's time in unix seconds. */
export function signWebhook(secret: string, messageId: string, timestampSeconds: number, body: string): SignedHeaders {
  const key = Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64');
  const signature = crypto.createHmac('sha256', key).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64');
  return { 'webhook-id': messageId, 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': `v1,${signature}` };
}
