import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock';
import { generateVapidKeys, vapidPrivateKeyObject } from '../../src/delivery/vapid-keys';
import {
  signVapidJwt,
  VAPID_RENEW_BEFORE_SECONDS,
  VAPID_TOKEN_LIFETIME_SECONDS,
  vapidAuthorization,
  vapidSubject,
  checkVapidSubject,
  VapidKeyError,
  VapidSubjectError,
  VapidTokenCache,
} from '../../src/delivery/vapid';
import { verifyVapidAuthorization } from '../support/push-service';

// RFC 8292 §2.4.
const RFC8292 = {
  jwt:
    'eyJ0eXAiOiJKV1QiLCJhbGciOiJFUzI1NiJ9.eyJhdWQiOiJodHRwczovL3B1c2guZXhhbXBsZS5uZXQiLCJleHAiOjE0NTM1MjM3NjgsInN1YiI6Im1haWx0bzpwdXNoQGV4YW1wbGUuY29tIn0.i3CYb7t4xfxCDquptFOepC9GAu_HLGkMlMuCGSK2rpiUfnK9ojFwDXb1JrErtmysazNjjvW2L9OkSSHzvoD1oA',
  key: 'BA1Hxzyi1RUM1b5wjxsn7nGxAszw2u61m164i3MrAIxHF6YK5h4SDYic-dRuU_RCPCfA5aq9ojSwk5Y2EmClBPs',
  audience: 'https://push.example.net',
  exp: 1453523768,
};

function decodeClaims(authorization: string): { aud: string; exp: number; sub: string } {
  const jwt = /t=([^,]+)/.exec(authorization)![1]!;
  return JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString());
}

describe('RFC 8292 VAPID tokens', () => {
  it('the RFC 8292 §2.4 example verifies against its key before its exp, and is rejected as expired now', () => {
    const header = vapidAuthorization(RFC8292.jwt, RFC8292.key);
    const beforeExp = (RFC8292.exp - 60) * 1000;
    expect(verifyVapidAuthorization(header, RFC8292.audience, beforeExp)).toMatchObject({ ok: true, publicKey: RFC8292.key });
    expect(verifyVapidAuthorization(header, RFC8292.audience, Date.now())).toEqual({ ok: false, status: 403, reason: 'BadJwtToken: expired' });
    // The verifier is not a rubber stamp: another key, or a changed claim, fails the signature.
    const otherKey = generateVapidKeys().publicKey;
    expect(verifyVapidAuthorization(vapidAuthorization(RFC8292.jwt, otherKey), RFC8292.audience, beforeExp)).toMatchObject({ ok: false, status: 403 });
    const [h, , s] = RFC8292.jwt.split('.');
    const forgedClaims = Buffer.from(JSON.stringify({ aud: RFC8292.audience, exp: RFC8292.exp + 1, sub: 'mailto:push@example.com' })).toString('base64url');
    expect(verifyVapidAuthorization(vapidAuthorization(`${h}.${forgedClaims}.${s}`, RFC8292.key), RFC8292.audience, beforeExp)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('signature'),
    });
  });

  it('signs an ES256 JWT with the header, claims and Authorization format of RFC 8292', () => {
    const keys = generateVapidKeys();
    const now = Date.now();
    const exp = Math.floor(now / 1000) + 3600;
    const jwt = signVapidJwt({ aud: 'https://fcm.googleapis.com', exp, sub: 'https://shop.example' }, vapidPrivateKeyObject(keys.publicKey, keys.privateKey));
    const [header, claims, signature] = jwt.split('.');
    expect(JSON.parse(Buffer.from(header!, 'base64url').toString())).toEqual({ typ: 'JWT', alg: 'ES256' });
    expect(JSON.parse(Buffer.from(claims!, 'base64url').toString())).toEqual({ aud: 'https://fcm.googleapis.com', exp, sub: 'https://shop.example' });
    expect(Buffer.from(signature!, 'base64url').length).toBe(64);
    const authorization = vapidAuthorization(jwt, keys.publicKey);
    expect(authorization).toBe(`vapid t=${jwt}, k=${keys.publicKey}`);
    expect(verifyVapidAuthorization(authorization, 'https://fcm.googleapis.com', now)).toMatchObject({ ok: true });
    expect(verifyVapidAuthorization(authorization, 'https://updates.push.services.mozilla.com', now)).toMatchObject({ ok: false, status: 403 });
  });
});

describe('VAPID subject', () => {
  it('is the site origin for an https site, else mailto: the owner', () => {
    expect(vapidSubject('https://shop.example/path?q=1', undefined)).toBe('https://shop.example');
    expect(vapidSubject('http://shop.example', 'ops@herald.example')).toBe('mailto:ops@herald.example');
    expect(vapidSubject('http://localhost:3000', ' ops@herald.example ')).toBe('mailto:ops@herald.example');
  });

  it('never uses a local https origin, which Apple refuses (403 BadJwtToken)', () => {
    expect(vapidSubject('https://localhost:8443', 'ops@herald.example')).toBe('mailto:ops@herald.example');
    expect(vapidSubject('https://127.0.0.1:8443', 'ops@herald.example')).toBe('mailto:ops@herald.example');
    expect(vapidSubject('https://intranet', 'ops@herald.example')).toBe('mailto:ops@herald.example');
    expect(() => vapidSubject('https://shop.localhost', 'admin@localhost')).toThrow(/VAPID_SUBJECT/);
  });

  it('uses the operator’s VAPID_SUBJECT first, whatever the site', () => {
    expect(vapidSubject('https://shop.example', 'owner@shop.example', 'mailto:push@herald.example')).toBe('mailto:push@herald.example');
    expect(vapidSubject('http://localhost:3000', 'admin@localhost', 'https://herald.example')).toBe('https://herald.example');
  });

  it('refuses contacts Apple rejects, and a missing one, with a clear error naming VAPID_SUBJECT', () => {
    expect(() => vapidSubject('http://shop.example', undefined)).toThrow(VapidSubjectError);
    expect(() => vapidSubject('http://shop.example', undefined)).toThrow(/set VAPID_SUBJECT/);
    expect(() => vapidSubject('http://shop.example', 'admin@localhost')).toThrow(/real domain/);
    expect(() => vapidSubject('http://shop.example', 'ops @herald.example')).toThrow(VapidSubjectError);
    expect(() => vapidSubject('http://shop.example', 'not-an-address')).toThrow(VapidSubjectError);
  });

  it('checks a configured subject: mailto: or https: at a real domain, nothing else', () => {
    expect(checkVapidSubject(' mailto:Ops@Herald.Example ')).toEqual({ subject: 'mailto:Ops@herald.example' });
    expect(checkVapidSubject('https://herald.example/contact')).toEqual({ subject: 'https://herald.example/contact' });
    expect(checkVapidSubject('https://herald.example/')).toEqual({ subject: 'https://herald.example' });
    for (const bad of ['mailto:admin@localhost', 'mailto: ops@herald.example', 'mailto:ops@intranet', 'https://localhost', 'https://127.0.0.1', 'http://herald.example', 'ops@herald.example', 'herald']) {
      expect(checkVapidSubject(bad), bad).toHaveProperty('problem');
    }
  });
});

describe('VapidTokenCache', () => {
  const site = { ...generateVapidKeys(), subject: 'https://shop.example' };

  it('signs once per (push-service origin, site key) and reuses the header', () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const cache = new VapidTokenCache({ clock });
    const fcm = cache.authorization('https://fcm.googleapis.com', site);
    for (let i = 0; i < 100; i++) expect(cache.authorization('https://fcm.googleapis.com', site)).toBe(fcm);
    expect(cache.signatures).toBe(1);

    const mozilla = cache.authorization('https://updates.push.services.mozilla.com', site);
    expect(mozilla).not.toBe(fcm);
    expect(cache.signatures).toBe(2);

    const otherSite = { ...generateVapidKeys(), subject: 'https://blog.example' };
    cache.authorization('https://fcm.googleapis.com', otherSite);
    expect(cache.signatures).toBe(3);

    const claims = decodeClaims(fcm);
    expect(claims).toEqual({ aud: 'https://fcm.googleapis.com', exp: clock.now() / 1000 + VAPID_TOKEN_LIFETIME_SECONDS, sub: 'https://shop.example' });
    expect(verifyVapidAuthorization(fcm, 'https://fcm.googleapis.com', clock.now())).toMatchObject({ ok: true });
  });

  it('renews a token an hour before it expires, by the injected clock', () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const cache = new VapidTokenCache({ clock });
    const first = cache.authorization('https://fcm.googleapis.com', site);
    const firstExp = decodeClaims(first).exp;

    clock.advance((VAPID_TOKEN_LIFETIME_SECONDS - VAPID_RENEW_BEFORE_SECONDS) * 1000 - 1000);
    expect(cache.authorization('https://fcm.googleapis.com', site)).toBe(first);
    expect(cache.signatures).toBe(1);

    clock.advance(1000);
    const renewed = cache.authorization('https://fcm.googleapis.com', site);
    expect(renewed).not.toBe(first);
    expect(cache.signatures).toBe(2);
    expect(decodeClaims(renewed).exp).toBe(firstExp + VAPID_TOKEN_LIFETIME_SECONDS - VAPID_RENEW_BEFORE_SECONDS);
    // Never more than 24 h ahead, and still valid when used.
    expect(verifyVapidAuthorization(renewed, 'https://fcm.googleapis.com', clock.now())).toMatchObject({ ok: true });
  });

  it('signs again after the clock was set back: the reused token would expire more than 24 h ahead, which push services refuse', () => {
    const site = { ...generateVapidKeys(), subject: 'mailto:owner@push-shop.example' };
    const clock = new ManualClock(Date.UTC(2026, 0, 2, 12));
    const cache = new VapidTokenCache({ clock });
    const audience = 'https://fcm.googleapis.com';
    expect(verifyVapidAuthorization(cache.authorization(audience, site), audience, clock.now())).toMatchObject({ ok: true });
    // The host clock ran 13 h ahead; NTP corrects it.
    clock.advance(-13 * 3_600_000);
    expect(verifyVapidAuthorization(cache.authorization(audience, site), audience, clock.now())).toMatchObject({ ok: true });
    expect(cache.signatures).toBe(2);
  });

  it('refuses a private key that is malformed or belongs to another public key', () => {
    const cache = new VapidTokenCache({ clock: new ManualClock() });
    const other = generateVapidKeys();
    expect(() => cache.authorization('https://fcm.googleapis.com', { ...site, publicKey: other.publicKey })).toThrow(VapidKeyError);
    expect(() => cache.authorization('https://fcm.googleapis.com', { ...other, privateKey: 'c2hvcnQ', subject: site.subject })).toThrow(
      /not a P-256 private key/,
    );
    expect(cache.signatures).toBe(0);
  });

  it('starts over when a site subject changes', () => {
    const cache = new VapidTokenCache({ clock: new ManualClock() });
    cache.authorization('https://fcm.googleapis.com', { ...site, subject: 'mailto:ops@herald.example' });
    const moved = cache.authorization('https://fcm.googleapis.com', site);
    expect(decodeClaims(moved).sub).toBe('https://shop.example');
    expect(cache.signatures).toBe(2);
  });
});
