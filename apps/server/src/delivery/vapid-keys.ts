import crypto from 'node:crypto';

/**
 * A site's VAPID key pair (RFC 8292): the public key as the 65-byte
 * uncompressed P-256 point, the private key as the 32-byte scalar, both
 * base64url — the form browsers take as `applicationServerKey`.
 * Generated once per site and never rotated: rotating orphans every subscriber.
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
