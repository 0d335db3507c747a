import crypto from 'node:crypto';

/**
 * A site's VAPID key pair (RFC 8292): the public key as the 65-byte
 * uncompressed P-256 point, the private key as the 32-byte scalar, both
 * base64url — the form browsers take as `applicationServerKey`.
 * Generated once per site; a site may import more (importVapidKeyPair) and
 * every subscriber stays on the key it subscribed with.
 */
export function generateVapidKeys(): { publicKey: string; privateKey: string } {
  const { publicKey, privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const pub = publicKey.export({ format: 'jwk' });
  const priv = privateKey.export({ format: 'jwk' });
  const point = Buffer.concat([Buffer.from([0x04]), Buffer.from(pub.x!, 'base64url'), Buffer.from(pub.y!, 'base64url')]);
  return { publicKey: point.toString('base64url'), privateKey: priv.d! };
}

/** Rebuilds a signing key object from the stored base64url public point and private scalar. */
export function vapidPrivateKeyObject(publicKey: string, privateKey: string): crypto.KeyObject {
  const point = Buffer.from(publicKey, 'base64url');
  if (point.length !== 65 || point[0] !== 0x04) throw new Error('VAPID public key must be a 65-byte uncompressed P-256 point');
  return crypto.createPrivateKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      x: point.subarray(1, 33).toString('base64url'),
      y: point.subarray(33, 65).toString('base64url'),
      d: privateKey,
    },
    format: 'jwk',
  });
}

/** A key pair refused at import, with a message that says what is wrong. */
export class VapidKeyImportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VapidKeyImportError';
  }
}

const isPem = (text: string) => text.startsWith('-----BEGIN');

/** base64url (or standard base64, padded or not) to bytes; null for anything else. */
function base64Bytes(text: string): Buffer | null {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) return null;
  return Buffer.from(text.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''), 'base64url');
}

function requireP256(key: crypto.KeyObject, which: string): void {
  if (key.asymmetricKeyType !== 'ec') throw new VapidKeyImportError(`The ${which} key is not an elliptic-curve key: VAPID keys are ECDSA P-256 (prime256v1) keys`);
  const curve = key.asymmetricKeyDetails?.namedCurve;
  if (curve !== 'prime256v1') throw new VapidKeyImportError(`The ${which} key is on curve ${curve ?? 'unknown'}: VAPID keys must be on P-256 (prime256v1)`);
}

function pointOfJwk(jwk: crypto.JsonWebKey): string {
  return Buffer.concat([Buffer.from([0x04]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]).toString('base64url');
}

/** The public key as the base64url uncompressed point, from base64url/base64 raw bytes or an SPKI PEM. */
function parsePublicKey(input: string): string {
  const text = input.trim();
  let key: crypto.KeyObject;
  if (isPem(text)) {
    try {
      key = crypto.createPublicKey({ key: text, format: 'pem' });
    } catch {
      throw new VapidKeyImportError('The public key is not a readable PEM public key (expected -----BEGIN PUBLIC KEY-----, SPKI)');
    }
    requireP256(key, 'public');
    return pointOfJwk(key.export({ format: 'jwk' }));
  }
  const bytes = base64Bytes(text);
  if (!bytes) throw new VapidKeyImportError('The public key must be base64url (the 65-byte uncompressed P-256 point web-push libraries export) or an SPKI PEM');
  if (bytes.length !== 65 || bytes[0] !== 0x04) {
    throw new VapidKeyImportError(`The public key must be a 65-byte uncompressed P-256 point (starting with 0x04); this one is ${bytes.length} bytes`);
  }
  try {
    // Importing checks that the point is on the curve.
    key = crypto.createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: bytes.subarray(1, 33).toString('base64url'), y: bytes.subarray(33).toString('base64url') }, format: 'jwk' });
  } catch {
    throw new VapidKeyImportError('The public key is not a point on the P-256 curve');
  }
  return pointOfJwk(key.export({ format: 'jwk' }));
}

/** The private scalar (base64url) and the public point derived from it, from a raw base64url scalar or a PKCS8 / SEC1 PEM. */
function parsePrivateKey(input: string): { privateKey: string; derivedPublicKey: string } {
  const text = input.trim();
  if (isPem(text)) {
    let key: crypto.KeyObject;
    try {
      key = crypto.createPrivateKey({ key: text, format: 'pem' });
    } catch {
      throw new VapidKeyImportError('The private key is not a readable PEM private key (expected -----BEGIN PRIVATE KEY----- or -----BEGIN EC PRIVATE KEY-----)');
    }
    requireP256(key, 'private');
    const jwk = key.export({ format: 'jwk' });
    return { privateKey: jwk.d!, derivedPublicKey: pointOfJwk(jwk) };
  }
  const bytes = base64Bytes(text);
  if (!bytes) throw new VapidKeyImportError('The private key must be base64url (the 32-byte private key web-push libraries export) or a PEM (PKCS8 or SEC1)');
  // A scalar with leading zero bytes is exported shorter by some tools (Node's
  // ECDH getPrivateKey() drops them: one key in 256 is 31 bytes, one in 65,536
  // is 30); it is the same number, so it is padded back to 32. Whether it is
  // the right key is checked against the public key below.
  if (bytes.length < 30 || bytes.length > 32) throw new VapidKeyImportError(`The private key must be 32 bytes (a P-256 private key); this one is ${bytes.length} bytes`);
  const scalar = Buffer.concat([Buffer.alloc(32 - bytes.length), bytes]);
  try {
    const ecdh = crypto.createECDH('prime256v1');
    ecdh.setPrivateKey(scalar);
    return { privateKey: scalar.toString('base64url'), derivedPublicKey: ecdh.getPublicKey().toString('base64url') };
  } catch {
    throw new VapidKeyImportError('The private key is not a valid P-256 private key');
  }
}

/**
 * Reads a key pair a site brings (POST /sites/{id}/vapid-keys) in the forms
 * web-push libraries and openssl write: base64url raw keys, or PEM (SPKI
 * public; PKCS8 or SEC1 private). Both must be on P-256 and the private key
 * must belong to the public key (the public point is derived from it and
 * compared). Answers the stored form: base64url point and scalar.
 */
export function importVapidKeyPair(publicInput: string, privateInput: string): { publicKey: string; privateKey: string } {
  const publicKey = parsePublicKey(publicInput);
  const { privateKey, derivedPublicKey } = parsePrivateKey(privateInput);
  if (derivedPublicKey !== publicKey) throw new VapidKeyImportError('The private key does not belong to the public key: they are not one key pair');
  return { publicKey, privateKey };
}
