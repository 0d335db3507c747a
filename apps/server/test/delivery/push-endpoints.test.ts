import { describe, expect, it } from 'vitest';
import { PushClient } from '../../src/delivery/push-client';
import { checkPushEndpoint, isPermanentlyRemovedEndpoint, pushOriginPolicy } from '../../src/delivery/push-endpoints';
import { pushServiceOf } from '../../src/delivery/push-services';
import { generateVapidKeys } from '../../src/delivery/vapid-keys';

describe('push endpoint policy', () => {
  it('allows the known push services over https', () => {
    for (const endpoint of [
      'https://fcm.googleapis.com/fcm/send/abc:APA91b',
      'https://updates.push.services.mozilla.com/wpush/v2/gAAAA',
      'https://web.push.apple.com/QGuQyavXutnMUGO',
      'https://wns2-par02p.notify.windows.com/w/?token=BQYAAA',
    ]) {
      expect(checkPushEndpoint(endpoint)).toEqual({ ok: true, origin: new URL(endpoint).origin });
    }
  });

  it('refuses other hosts, plain http, credentials and look-alikes', () => {
    expect(checkPushEndpoint('http://fcm.googleapis.com/fcm/send/x')).toMatchObject({ ok: false, reason: expect.stringContaining('https') });
    expect(checkPushEndpoint('https://169.254.169.254/latest/meta-data')).toMatchObject({ ok: false });
    expect(checkPushEndpoint('https://127.0.0.1:8080/push/1')).toMatchObject({ ok: false });
    expect(checkPushEndpoint('https://fcm.googleapis.com.evil.example/x')).toMatchObject({ ok: false });
    expect(checkPushEndpoint('https://evilfcm.googleapis.com.example/x')).toMatchObject({ ok: false });
    expect(checkPushEndpoint('https://user:pw@fcm.googleapis.com/x')).toMatchObject({ ok: false, reason: expect.stringContaining('not on a known push service') });
    expect(checkPushEndpoint('not a url')).toMatchObject({ ok: false });
  });

  it('allows exactly the origins an administrator lists, http included', () => {
    const extra = ['http://127.0.0.1:9911'];
    expect(checkPushEndpoint('http://127.0.0.1:9911/push/s1', extra)).toEqual({ ok: true, origin: 'http://127.0.0.1:9911' });
    expect(checkPushEndpoint('http://127.0.0.1:9912/push/s1', extra)).toMatchObject({ ok: false });
    const allow = pushOriginPolicy(extra);
    expect(allow('http://127.0.0.1:9911')).toBe(true);
    expect(allow('https://fcm.googleapis.com')).toBe(true);
    expect(allow('http://10.0.0.1')).toBe(false);
  });

  it('treats revoked Chrome endpoints on .invalid as gone, without a request', async () => {
    expect(isPermanentlyRemovedEndpoint('https://permanently-removed.invalid/fcm/send/abc')).toBe(true);
    expect(isPermanentlyRemovedEndpoint('https://fcm.googleapis.com/fcm/send/abc')).toBe(false);
    const client = new PushClient({ encryptionThreads: 0 });
    const outcome = await client.send({
      ref: 1,
      endpoint: 'https://permanently-removed.invalid/fcm/send/abc',
      keys: { p256dh: generateVapidKeys().publicKey, auth: 'AAAAAAAAAAAAAAAAAAAAAA' },
      payload: Buffer.from('{}'),
      vapid: { ...generateVapidKeys(), subject: 'https://shop.example' },
      ttl: 60,
    });
    await client.close();
    expect(outcome).toMatchObject({ kind: 'gone', status: 410 });
  });

  it('makes the client refuse endpoints outside the policy', async () => {
    const client = new PushClient({ encryptionThreads: 0, allowOrigin: pushOriginPolicy([]) });
    const outcome = await client.send({
      ref: 1,
      endpoint: 'http://169.254.169.254/latest',
      keys: { p256dh: generateVapidKeys().publicKey, auth: 'AAAAAAAAAAAAAAAAAAAAAA' },
      payload: Buffer.from('{}'),
      vapid: { ...generateVapidKeys(), subject: 'https://shop.example' },
      ttl: 60,
    });
    await client.close();
    expect(outcome).toEqual({ kind: 'failed', reason: 'http://169.254.169.254 is not a known push service', code: 'rejected' });
  });

  it('names the push service of an endpoint from its host (issue 11 push_service)', () => {
    expect(pushServiceOf('https://fcm.googleapis.com/fcm/send/abc')).toBe('fcm');
    expect(pushServiceOf('https://android.googleapis.com/gcm/send/abc')).toBe('fcm');
    expect(pushServiceOf('https://updates.push.services.mozilla.com/wpush/v2/abc')).toBe('mozilla');
    expect(pushServiceOf('https://web.push.apple.com/QGx')).toBe('apple');
    expect(pushServiceOf('https://wns2-by3p.notify.windows.com/w/?token=abc')).toBe('microsoft');
    expect(pushServiceOf('https://FCM.GoogleAPIs.com/fcm/send/abc')).toBe('fcm');
    // Look-alikes and anything else are "other".
    expect(pushServiceOf('https://fcm.googleapis.com.evil.example/x')).toBe('other');
    expect(pushServiceOf('https://notfcm.googleapis.co/x')).toBe('other');
    expect(pushServiceOf('http://127.0.0.1:8080/push/1')).toBe('other');
    expect(pushServiceOf('not a url')).toBe('other');
  });
});
