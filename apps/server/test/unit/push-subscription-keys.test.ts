import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkPushSubscription } from '../../src/features/subscribers/push-subscription';
import { checkRow, csvFields } from '../../src/features/subscriber-imports/import-row';

// The p256dh check is arithmetic (y² = x³ − 3x + b mod p), a few microseconds
// a key so an import of a million rows is not bound by it; it must answer
// exactly what OpenSSL's key import answers.

const ENDPOINT = 'https://fcm.googleapis.com/fcm/send/abc';
// Never starting with "-": a leading apostrophe before "-" is the export's formula guard, which the
// import drops (import-row.ts), so the row of line 5 below would read as valid about 1 run in 64.
const auth = `A${crypto.randomBytes(16).toString('base64url').slice(1)}`;

function opensslAccepts(point: Buffer): boolean {
  try {
    crypto.createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') }, format: 'jwk' });
    return true;
  } catch {
    return false;
  }
}
function heraldAccepts(point: Buffer): boolean {
  try {
    checkPushSubscription({ endpoint: ENDPOINT, keys: { p256dh: point.toString('base64url'), auth } }, []);
    return true;
  } catch {
    return false;
  }
}

describe('the p256dh check', () => {
  it('accepts what OpenSSL accepts and refuses what it refuses: real keys, random bytes, coordinates at or past p', () => {
    const p = Buffer.from('ffffffff00000001000000000000000000000000ffffffffffffffffffffffff', 'hex');
    const real = Array.from({ length: 200 }, () => crypto.createECDH('prime256v1').generateKeys());
    const random = Array.from({ length: 200 }, () => Buffer.concat([Buffer.from([4]), crypto.randomBytes(64)]));
    const pastP = real.slice(0, 5).map((key) => Buffer.concat([Buffer.from([4]), p, key.subarray(33)]));
    const flipped = real.slice(0, 20).map((key) => Buffer.concat([key.subarray(0, 64), Buffer.from([key[64]! ^ 1])]));
    for (const point of [...real, ...random, ...pastP, ...flipped]) expect(heraldAccepts(point)).toBe(opensslAccepts(point));
    expect(real.every(heraldAccepts)).toBe(true);
    expect(flipped.some(heraldAccepts)).toBe(false);
  });

  it('reads a row of the import by the same rules, naming the reason', () => {
    const context = { extraPushOrigins: [], keysByPublicKey: new Map<string, string>(), defaultKeyId: 'key', now: Date.now() };
    const columns = ['endpoint', 'p256dh', 'auth'];
    const good = crypto.createECDH('prime256v1').generateKeys().toString('base64url');
    expect(checkRow(2, csvFields(`${ENDPOINT},${good},${auth}`, columns), context)).toMatchObject({ line: 2, vapidKeyId: 'key', p256dh: good });
    expect(checkRow(3, csvFields(`${ENDPOINT},${Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 1)]).toString('base64url')},${auth}`, columns), context)).toMatchObject({ reason: 'bad_key', detail: 'p256dh is not a point on the P-256 curve' });
    expect(checkRow(4, csvFields(`http://example.com/push,${good},${auth}`, columns), context)).toMatchObject({ reason: 'endpoint_not_allowed', detail: expect.stringMatching(/^endpoint must be an https:\/\/ URL/) });
    expect(checkRow(5, csvFields(`"${ENDPOINT}","${good}",'${auth}`, columns), context)).toMatchObject({ reason: 'bad_key' });
  });
});
