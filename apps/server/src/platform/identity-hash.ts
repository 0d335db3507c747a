import crypto from 'node:crypto';

// Identity verification (docs/security.md, "Identity verification"): a page
// can only claim an external id its site's backend signed. The backend computes
// HMAC-SHA256(identity secret, external_id) as lowercase hex — the scheme
// OneSignal and Intercom use — so the same one line works in any language.

/** 256 random bits as 64 hex characters: easy to paste into an environment variable. */
export function generateIdentitySecret(): string {
  return crypto.randomBytes(32).toString('hex');
}

/** HMAC-SHA256 keyed with the secret's UTF-8 bytes over the external id's UTF-8 bytes, lowercase hex. */
export function identityHash(secret: string, externalId: string): string {
  return crypto.createHmac('sha256', secret).update(externalId, 'utf8').digest('hex');
}

/** Constant-time: the time taken says nothing about how much of a guess was right. */
export function identityHashMatches(secret: string, externalId: string, claimedHash: string): boolean {
  const expected = Buffer.from(identityHash(secret, externalId), 'utf8');
  const claimed = Buffer.from(claimedHash, 'utf8');
  return expected.length === claimed.length && crypto.timingSafeEqual(expected, claimed);
}
