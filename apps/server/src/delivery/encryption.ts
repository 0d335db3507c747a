// RFC 8291 message encryption for Web Push, `Content-Encoding: aes128gcm`
// (RFC 8188), as one record:
//
//   body = salt(16) | rs(4, = 4096) | idlen(1, = 65) | sender public key(65)
//          | AES-128-GCM(plaintext | 0x02) | tag(16)
//
// This is the CPU floor of every send: one P-256 key generation, one ECDH and
// one AES-GCM pass per message, so the hot path avoids anything that costs
// more than the arithmetic itself (see the comments in the factory below).
import nodeCrypto from 'node:crypto';

/** salt(16) + rs(4) + idlen(1) + sender public key(65), RFC 8291 §4. */
export const HEADER_LENGTH = 86;
/** AES-GCM authentication tag. */
export const TAG_LENGTH = 16;
/** RFC 8030 §7.2: a push service must accept bodies up to 4096 bytes. */
export const MAX_BODY_LENGTH = 4096;
/** 4096 − 86 (header) − 16 (tag) − 1 (padding delimiter) = 3993 bytes of plaintext. */
export const MAX_PLAINTEXT_LENGTH = MAX_BODY_LENGTH - HEADER_LENGTH - TAG_LENGTH - 1;

/** Encrypted size of a plaintext of `plaintextLength` bytes. */
export function encryptedLength(plaintextLength: number): number {
  return HEADER_LENGTH + plaintextLength + 1 + TAG_LENGTH;
}

/** A subscription's keys from `PushSubscription.getKey()`, decoded. */
export interface SubscriberKeys {
  /** The user agent's P-256 public key, 65-byte uncompressed point. */
  p256dh: Uint8Array;
  /** The 16-byte authentication secret. */
  auth: Uint8Array;
}

/** The keys as a browser's `PushSubscription.toJSON()` gives them (base64url). */
export interface EncodedSubscriberKeys {
  p256dh: string;
  auth: string;
}

export type PushEncryptionErrorCode = 'invalid-p256dh' | 'invalid-auth' | 'payload-too-large';

export class PushEncryptionError extends Error {
  constructor(
    public readonly code: PushEncryptionErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'PushEncryptionError';
  }
}

/** Decodes and checks the shape of base64url subscription keys (the curve check happens in ECDH). */
export function decodeSubscriberKeys(keys: EncodedSubscriberKeys): SubscriberKeys {
  const p256dh = Buffer.from(keys.p256dh, 'base64url');
  const auth = Buffer.from(keys.auth, 'base64url');
  checkSubscriberKeys(p256dh, auth);
  return { p256dh, auth };
}

function checkSubscriberKeys(p256dh: Uint8Array, auth: Uint8Array): void {
  if (p256dh.length !== 65 || p256dh[0] !== 0x04) {
    throw new PushEncryptionError('invalid-p256dh', 'The subscription key p256dh must be a 65-byte uncompressed P-256 point');
  }
  if (auth.length !== 16) throw new PushEncryptionError('invalid-auth', 'The subscription key auth must be 16 bytes');
}

function checkPlaintext(plaintext: Uint8Array): void {
  if (plaintext.length > MAX_PLAINTEXT_LENGTH) {
    throw new PushEncryptionError(
      'payload-too-large',
      `The push payload is ${plaintext.length} bytes; at most ${MAX_PLAINTEXT_LENGTH} bytes fit in a 4096-byte push message`,
    );
  }
}

/** Encrypts with fixed values instead of fresh random ones; only for the RFC 8291 §5 test vector. */
export interface FixedEncryptionInputs {
  salt?: Uint8Array;
  /** The sender's 32-byte P-256 private key; its public key is derived from it. */
  senderPrivateKey?: Uint8Array;
}

/** Encrypts one push message body for a subscriber (RFC 8291). */
export type Aes128gcmEncryptor = (
  plaintext: Uint8Array,
  p256dh: Uint8Array,
  auth: Uint8Array,
  fixed?: FixedEncryptionInputs,
) => Buffer;

/**
 * Builds the RFC 8291 encryptor around a `node:crypto` module.
 *
 * The function is self-contained (it uses only its argument and globals such
 * as Buffer) because encryption-pool.ts ships its source text to worker
 * threads; keep it that way: no imports or outer constants inside.
 *
 * Inputs are assumed valid in shape (checked by the callers); an invalid
 * curve point makes ECDH throw.
 */
export function createAes128gcmEncryptor(crypto: typeof nodeCrypto): Aes128gcmEncryptor {
  const KEY_INFO = Buffer.from('WebPush: info\0', 'latin1');
  const CEK_INFO = Buffer.from('Content-Encoding: aes128gcm\0\x01', 'latin1');
  const NONCE_INFO = Buffer.from('Content-Encoding: nonce\0\x01', 'latin1');
  // The padding delimiter of the last (only) record, RFC 8188 §2.
  const LAST_RECORD_DELIMITER = Buffer.from([0x02]);
  const HEADER = 86;
  // HMAC-SHA-256 written out over the one-shot crypto.hash(): createHmac()
  // costs about 10 µs of object set-up per call and a message needs four.
  // Every key here is at most 32 bytes, so no key hashing is needed.
  // The scratch buffers are safe to share: the function never yields.
  const inner = Buffer.alloc(64 + 160);
  const outer = Buffer.alloc(64 + 32);
  const hmac = (key: Uint8Array, messageLength: number): Buffer => {
    for (let i = 0; i < 64; i++) {
      const k = i < key.length ? key[i]! : 0;
      inner[i] = k ^ 0x36;
      outer[i] = k ^ 0x5c;
    }
    crypto.hash('sha256', inner.subarray(0, 64 + messageLength), 'buffer').copy(outer, 64);
    return crypto.hash('sha256', outer, 'buffer');
  };
  const message = inner.subarray(64);

  return (plaintext, p256dh, auth, fixed) => {
    const body = Buffer.allocUnsafe(HEADER + plaintext.length + 1 + 16);
    if (fixed?.salt) body.set(fixed.salt, 0);
    else crypto.randomFillSync(body, 0, 16);
    const salt = body.subarray(0, 16);
    body.writeUInt32BE(4096, 16); // rs, the record size: one record always fits
    body[20] = 65;

    // RFC 8291 §3.1: a new sender key pair for every message.
    const ecdh = crypto.createECDH('prime256v1');
    if (fixed?.senderPrivateKey) ecdh.setPrivateKey(fixed.senderPrivateKey);
    else ecdh.generateKeys();
    const senderPublicKey = ecdh.getPublicKey();
    const sharedSecret = ecdh.computeSecret(p256dh);
    body.set(senderPublicKey, 21);

    // RFC 8291 §3.3–3.4 and RFC 8188 §2.2 key schedule.
    message.set(sharedSecret, 0);
    const prkKey = hmac(auth, 32);
    message.set(KEY_INFO, 0);
    message.set(p256dh, 14);
    message.set(senderPublicKey, 79);
    message[144] = 0x01;
    const ikm = hmac(prkKey, 145);
    message.set(ikm, 0);
    const prk = hmac(salt, 32);
    message.set(CEK_INFO, 0);
    const cek = hmac(prk, CEK_INFO.length).subarray(0, 16);
    message.set(NONCE_INFO, 0);
    const nonce = hmac(prk, NONCE_INFO.length).subarray(0, 12);

    const cipher = crypto.createCipheriv('aes-128-gcm', cek, nonce);
    let offset = HEADER;
    offset += cipher.update(plaintext).copy(body, offset);
    offset += cipher.update(LAST_RECORD_DELIMITER).copy(body, offset);
    offset += cipher.final().copy(body, offset);
    cipher.getAuthTag().copy(body, offset);
    return body;
  };
}

const encryptRecord = createAes128gcmEncryptor(nodeCrypto);

/**
 * Encrypts `plaintext` for a subscriber; returns the request body to POST
 * with `Content-Encoding: aes128gcm`. Throws PushEncryptionError for bad keys
 * or an oversized payload.
 */
export function encryptPayload(
  plaintext: Uint8Array,
  keys: SubscriberKeys | EncodedSubscriberKeys,
  fixed?: FixedEncryptionInputs,
): Buffer {
  const decoded = typeof keys.p256dh === 'string' ? decodeSubscriberKeys(keys as EncodedSubscriberKeys) : (keys as SubscriberKeys);
  checkSubscriberKeys(decoded.p256dh, decoded.auth);
  checkPlaintext(plaintext);
  try {
    return encryptRecord(plaintext, decoded.p256dh, decoded.auth, fixed);
  } catch (error) {
    throw asEncryptionError(error);
  }
}

/** Maps node:crypto's "not a point on the curve" error to a PushEncryptionError. */
export function asEncryptionError(error: unknown): Error {
  if (error instanceof Error && (error as NodeJS.ErrnoException).code === 'ERR_CRYPTO_ECDH_INVALID_PUBLIC_KEY') {
    return new PushEncryptionError('invalid-p256dh', 'The subscription key p256dh is not a point on the P-256 curve');
  }
  return error instanceof Error ? error : new Error(String(error));
}

/** Shape and size checks shared with the worker-thread path. */
export function checkEncryptionInputs(plaintext: Uint8Array, keys: SubscriberKeys): void {
  checkSubscriberKeys(keys.p256dh, keys.auth);
  checkPlaintext(plaintext);
}
