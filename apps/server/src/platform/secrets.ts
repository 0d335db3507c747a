import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The server secret signs beacon tokens and anything else Herald must verify
 * later. From SECRET_KEY when set (required when several machines share a
 * deployment), otherwise generated once and kept in DATA_DIR/secret.key.
 */
export function loadOrCreateSecret(configured: string | undefined, dataDir: string): Buffer {
  if (configured) return Buffer.from(configured, 'utf8');
  const file = path.join(dataDir, 'secret.key');
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    const existing = fs.readFileSync(file, 'utf8').trim();
    if (existing.length >= 32) return Buffer.from(existing, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const generated = crypto.randomBytes(48).toString('base64url');
  try {
    // 'wx' fails if another process created it first; then use theirs.
    fs.writeFileSync(file, generated + '\n', { mode: 0o600, flag: 'wx' });
    return Buffer.from(generated, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'utf8');
  }
}

/** 256 random bits, URL-safe. Used for session, reset, verification and setup tokens. */
export function randomToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}

export function sha256Hex(value: string): string {
  return crypto.createHash('sha256').update(value).digest('hex');
}

// A secret turned into a KeyObject once: creating an Hmac from a raw Buffer
// converts the key every time, which showed up on the delivery hot path.
const secretKeys = new WeakMap<Buffer, crypto.KeyObject>();

export function hmac(secret: Buffer, purpose: string, value: string): Buffer {
  let key = secretKeys.get(secret);
  if (!key) {
    key = crypto.createSecretKey(secret);
    secretKeys.set(secret, key);
  }
  return crypto.createHmac('sha256', key).update(purpose).update('\0').update(value).digest();
}

/** Constant-time comparison of two buffers of possibly different length. */
export function safeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/** 16 hex characters of an HMAC of a fixed text under the secret: tells secrets apart (doctor, backups), reveals nothing of one. */
export function secretFingerprint(secret: Buffer): string {
  return hmac(secret, 'herald-secret-fingerprint', 'v1').toString('hex').slice(0, 16);
}
