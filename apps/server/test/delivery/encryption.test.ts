import crypto from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import {
  decodeSubscriberKeys,
  encryptPayload,
  encryptedLength,
  HEADER_LENGTH,
  MAX_PLAINTEXT_LENGTH,
  PushEncryptionError,
} from '../../src/delivery/encryption';
import { createEncryptionPool, type PushEncryptor } from '../../src/delivery/encryption-pool';
import { decryptPushBody, generateReceiverKeys, parseAes128gcmHeader } from '../support/push-crypto';

const b64 = (value: string) => Buffer.from(value, 'base64url');

// RFC 8291 §5 (values from docs/web-push.md).
const RFC8291 = {
  plaintext: 'V2hlbiBJIGdyb3cgdXAsIEkgd2FudCB0byBiZSBhIHdhdGVybWVsb24',
  auth: 'BTBZMqHH6r4Tts7J_aSIgg',
  receiverPrivate: 'q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94',
  receiverPublic: 'BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4',
  senderPrivate: 'yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw',
  senderPublic: 'BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8',
  salt: 'DGv6ra1nlYgDCS1FRnbzlw',
  body:
    'DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN',
};

describe('RFC 8291 aes128gcm encryption', () => {
  it('reproduces the RFC 8291 §5 example body byte for byte', () => {
    const body = encryptPayload(
      b64(RFC8291.plaintext),
      { p256dh: RFC8291.receiverPublic, auth: RFC8291.auth },
      { salt: b64(RFC8291.salt), senderPrivateKey: b64(RFC8291.senderPrivate) },
    );
    const expected = b64(RFC8291.body);
    expect(expected.length).toBe(144);
    expect(body.length).toBe(144);
    expect(body.equals(expected)).toBe(true);
    expect(body.subarray(21, 86).toString('base64url')).toBe(RFC8291.senderPublic);
  });

  it('the RFC example decrypts with the receiver key, by an independent implementation', () => {
    const receiver = { privateKey: b64(RFC8291.receiverPrivate), publicKey: b64(RFC8291.receiverPublic), auth: b64(RFC8291.auth) };
    expect(decryptPushBody(b64(RFC8291.body), receiver).toString()).toBe('When I grow up, I want to be a watermelon');
  });

  it('round-trips with a fresh salt and sender key each time, in the one-record layout', () => {
    const receiver = generateReceiverKeys();
    const keys = { p256dh: receiver.publicKey.toString('base64url'), auth: receiver.auth.toString('base64url') };
    const plaintext = Buffer.from(JSON.stringify({ title: 'Héllo ✓', body: 'x'.repeat(300) }));
    const first = encryptPayload(plaintext, keys);
    const second = encryptPayload(plaintext, keys);

    for (const body of [first, second]) {
      const header = parseAes128gcmHeader(body);
      expect(header.recordSize).toBe(4096);
      expect(header.keyId.length).toBe(65);
      expect(body.length).toBe(HEADER_LENGTH + plaintext.length + 1 + 16);
      expect(decryptPushBody(body, receiver).equals(plaintext)).toBe(true);
    }
    expect(first.subarray(0, 16).equals(second.subarray(0, 16))).toBe(false); // salt
    expect(first.subarray(21, 86).equals(second.subarray(21, 86))).toBe(false); // sender key
  });

  it('fits exactly 3993 bytes of plaintext in a 4096-byte body and refuses one more', () => {
    const receiver = generateReceiverKeys();
    const keys = { p256dh: receiver.publicKey, auth: receiver.auth };
    expect(MAX_PLAINTEXT_LENGTH).toBe(3993);
    const largest = crypto.randomBytes(3993);
    const body = encryptPayload(largest, keys);
    expect(body.length).toBe(4096);
    expect(encryptedLength(3993)).toBe(4096);
    expect(decryptPushBody(body, receiver).equals(largest)).toBe(true);

    expect(() => encryptPayload(crypto.randomBytes(3994), keys)).toThrow(PushEncryptionError);
    expect(() => encryptPayload(crypto.randomBytes(3994), keys)).toThrow(/3994 bytes; at most 3993/);
  });

  it('refuses malformed subscription keys with a clear error', () => {
    const receiver = generateReceiverKeys();
    const auth = receiver.auth.toString('base64url');
    const expectCode = (fn: () => unknown, code: string) => {
      try {
        fn();
        expect.unreachable('no error thrown');
      } catch (error) {
        expect(error).toBeInstanceOf(PushEncryptionError);
        expect((error as PushEncryptionError).code).toBe(code);
      }
    };
    expectCode(() => decodeSubscriberKeys({ p256dh: receiver.publicKey.subarray(0, 33).toString('base64url'), auth }), 'invalid-p256dh');
    expectCode(() => decodeSubscriberKeys({ p256dh: receiver.publicKey.toString('base64url'), auth: 'c2hvcnQ' }), 'invalid-auth');
    // 65 bytes with the right prefix, but not a point on P-256.
    const offCurve = Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 1)]);
    expectCode(() => encryptPayload(Buffer.from('x'), { p256dh: offCurve, auth: receiver.auth }), 'invalid-p256dh');
  });
});

describe('encryption on worker threads', () => {
  const pools: PushEncryptor[] = [];
  afterAll(async () => {
    await Promise.all(pools.map((pool) => pool.close()));
  });

  it('produces bodies that decrypt, for many concurrent messages and several receivers', async () => {
    const pool = createEncryptionPool({ threads: 2, maxBatch: 16 });
    pools.push(pool);
    const receivers = Array.from({ length: 5 }, () => generateReceiverKeys());
    const plaintexts = Array.from({ length: 200 }, (_, i) => Buffer.from(`message ${i} ${'·'.repeat(i % 50)}`));
    const bodies = await Promise.all(
      plaintexts.map((plaintext, i) => pool.encrypt(plaintext, { p256dh: receivers[i % 5]!.publicKey, auth: receivers[i % 5]!.auth })),
    );
    bodies.forEach((body, i) => {
      expect(decryptPushBody(body, receivers[i % 5]!).equals(plaintexts[i]!)).toBe(true);
    });
  });

  it('rejects an off-curve key without failing the rest of its batch', async () => {
    const pool = createEncryptionPool({ threads: 1 });
    pools.push(pool);
    const receiver = generateReceiverKeys();
    const offCurve = Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 1)]);
    const [good, bad, tooLarge] = await Promise.allSettled([
      pool.encrypt(Buffer.from('fine'), { p256dh: receiver.publicKey, auth: receiver.auth }),
      pool.encrypt(Buffer.from('broken'), { p256dh: offCurve, auth: receiver.auth }),
      pool.encrypt(Buffer.alloc(4000), { p256dh: receiver.publicKey, auth: receiver.auth }),
    ]);
    expect(good.status).toBe('fulfilled');
    expect(decryptPushBody((good as PromiseFulfilledResult<Buffer>).value, receiver).toString()).toBe('fine');
    expect(bad.status).toBe('rejected');
    expect((bad as PromiseRejectedResult).reason).toMatchObject({ code: 'invalid-p256dh' });
    expect((tooLarge as PromiseRejectedResult).reason).toMatchObject({ code: 'payload-too-large' });
  });

  it('finishes queued work on close and refuses new work after it', async () => {
    const pool = createEncryptionPool({ threads: 1 });
    const receiver = generateReceiverKeys();
    const pending = Array.from({ length: 20 }, () => pool.encrypt(Buffer.from('late'), { p256dh: receiver.publicKey, auth: receiver.auth }));
    await pool.close();
    const bodies = await Promise.all(pending);
    expect(bodies).toHaveLength(20);
    await expect(pool.encrypt(Buffer.from('x'), { p256dh: receiver.publicKey, auth: receiver.auth })).rejects.toThrow(/closed/);
  });
});
