// The receiving side of Web Push, written independently of src/delivery
// (node:crypto's HKDF and createHmac instead of the sender's hand-rolled HMAC),
// so a test that round-trips through both proves the sender against the RFCs
// rather than against itself.
import crypto from 'node:crypto';

/** A browser-side subscription key pair: what `PushManager.subscribe()` creates. */
export interface ReceiverKeys {
  /** 32-byte P-256 private key. */
  privateKey: Buffer;
  /** 65-byte uncompressed public point (the subscription's p256dh). */
  publicKey: Buffer;
  /** 16-byte authentication secret. */
  auth: Buffer;
}

export function generateReceiverKeys(): ReceiverKeys {
  const ecdh = crypto.createECDH('prime256v1');
  ecdh.generateKeys();
  return { privateKey: ecdh.getPrivateKey(), publicKey: ecdh.getPublicKey(), auth: crypto.randomBytes(16) };
}

export class DecryptionError extends Error {}

/** The parsed aes128gcm header of a push body (RFC 8188 §2.1). */
export interface Aes128gcmHeader {
  salt: Buffer;
  recordSize: number;
  keyId: Buffer;
}

export function parseAes128gcmHeader(body: Buffer): Aes128gcmHeader {
  if (body.length < 21) throw new DecryptionError('body shorter than the aes128gcm header');
  const idLength = body[20]!;
  if (body.length < 21 + idLength) throw new DecryptionError('body shorter than its key id');
  return { salt: body.subarray(0, 16), recordSize: body.readUInt32BE(16), keyId: body.subarray(21, 21 + idLength) };
}

/** Decrypts a single-record RFC 8291 body with the receiver's keys; throws DecryptionError when it does not authenticate. */
export function decryptPushBody(body: Buffer, receiver: ReceiverKeys): Buffer {
  const { salt, recordSize, keyId } = parseAes128gcmHeader(body);
  if (keyId.length !== 65) throw new DecryptionError(`key id is ${keyId.length} bytes, RFC 8291 requires the 65-byte sender key`);
  const record = body.subarray(21 + keyId.length);
  if (record.length > recordSize) throw new DecryptionError('more than one record');
  if (record.length < 17) throw new DecryptionError('record too short');

  const ecdh = crypto.createECDH('prime256v1');
  ecdh.setPrivateKey(receiver.privateKey);
  let sharedSecret: Buffer;
  try {
    sharedSecret = ecdh.computeSecret(keyId);
  } catch {
    throw new DecryptionError('sender key is not a P-256 point');
  }
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), receiver.publicKey, keyId]);
  const ikm = Buffer.from(crypto.hkdfSync('sha256', sharedSecret, receiver.auth, keyInfo, 32));
  const cek = Buffer.from(crypto.hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
  const nonce = Buffer.from(crypto.hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));

  const decipher = crypto.createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(record.subarray(record.length - 16));
  let padded: Buffer;
  try {
    padded = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()]);
  } catch {
    throw new DecryptionError('authentication tag does not match');
  }
  // Strip padding: trailing zeros, then the delimiter, which must be 0x02 in the last record.
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end--;
  if (end < 0 || padded[end] !== 0x02) throw new DecryptionError('missing last-record padding delimiter 0x02');
  return padded.subarray(0, end);
}
