import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthService } from '../src/features/auth/service';
import { ManualClock } from '../src/platform/clock';
import { createTestApp, waitFor, type TestApp } from './support/test-app';

function tokenFromMail(text: string, route: string): string {
  const match = new RegExp(`http://herald\\.test/${route}\\?token=([A-Za-z0-9_-]+)`).exec(text);
  if (!match?.[1]) throw new Error(`no ${route} link in mail:\n${text}`);
  return match[1];
}

describe('auth API (spec §7 Auth)', () => {
  let t: TestApp;
  const clock = new ManualClock(Date.UTC(2026, 10, 1, 12));
  beforeAll(async () => {
    t = await createTestApp({ clock });
  });
  afterAll(async () => t.close());

  it('signs in with email and password and answers data.user and data.token', async () => {
    const user = await t.createUser({ email: 'Owner@Example.com', name: 'Olive Owner' });
    const login = await t.request('POST', '/api/auth/login', { body: { email: 'owner@example.com', password: user.password } });
    expect(login.status).toBe(200);
    expect(login.body.success).toBe(true);
    expect(login.body.data.user).toMatchObject({ email: 'owner@example.com', name: 'Olive Owner', emailVerified: true });
    expect(login.body.data.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const me = await t.request('GET', '/api/auth/me', { token: login.body.data.token });
    expect(me.status).toBe(200);
    expect(me.body.data.user.email).toBe('owner@example.com');
  });

  it('refuses a wrong password and an unknown email with the same 401 message', async () => {
    const user = await t.createUser();
    const wrong = await t.request('POST', '/api/auth/login', { body: { email: user.email, password: 'not the password' } });
    const unknown = await t.request('POST', '/api/auth/login', { body: { email: 'nobody@example.com', password: 'whatever1' } });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual({ success: false, error: { message: 'Invalid email or password', code: 'unauthorized' } });
    expect(unknown.body).toEqual(wrong.body);
  });

  it('answers a clear 400 for a malformed body', async () => {
    const missing = await t.request('POST', '/api/auth/login', { body: { email: 'a@example.com' } });
    expect(missing.status).toBe(400);
    expect(missing.body.success).toBe(false);
    expect(missing.body.error.message).toMatch(/password/i);
    const badEmail = await t.request('POST', '/api/auth/login', { body: { email: 'not-an-email', password: 'x' } });
    expect(badEmail.status).toBe(400);
    expect(badEmail.body.error.message).toContain('Please enter a valid email address');
    const notJson = await t.request('POST', '/api/auth/login', { body: '{"email":', headers: { 'content-type': 'application/json' } });
    expect(notJson.status).toBe(400);
    expect(typeof notJson.body.error.message).toBe('string');
  });

  it('rejects a 1 MB password quickly without hashing it', async () => {
    const started = Date.now();
    const response = await t.request('POST', '/api/auth/login', { body: { email: 'a@example.com', password: 'x'.repeat(1024 * 1024) } });
    expect([400, 413]).toContain(response.status);
    expect(response.body.success).toBe(false);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('requires a bearer token on protected routes', async () => {
    expect((await t.request('GET', '/api/auth/me')).status).toBe(401);
    expect((await t.request('GET', '/api/auth/me', { token: 'forged-token' })).status).toBe(401);
    const malformed = await t.request('GET', '/api/auth/me', { headers: { authorization: 'Basic abc' } });
    expect(malformed.status).toBe(401);
    expect(malformed.body.error.message).toBeTruthy();
  });

  it('ends the session on logout: the old token gets 401', async () => {
    const user = await t.createUser();
    expect((await t.request('POST', '/api/auth/logout', { token: user.token })).status).toBe(200);
    expect((await t.request('GET', '/api/auth/me', { token: user.token })).status).toBe(401);
  });

  it('expires sessions after 30 days', async () => {
    const user = await t.createUser();
    clock.advance(29 * 24 * 3600_000);
    expect((await t.request('GET', '/api/auth/me', { token: user.token })).status).toBe(200);
    clock.advance(2 * 24 * 3600_000);
    expect((await t.request('GET', '/api/auth/me', { token: user.token })).status).toBe(401);
  });

  it('refuses registration with 403 unless ALLOW_REGISTRATION=true', async () => {
    const response = await t.request('POST', '/api/auth/register', { body: { name: 'New', email: 'new@example.com', password: 'longenough' } });
    expect(response.status).toBe(403);
    expect(response.body.error.message).toMatch(/Sign-up is not open/);
  });

  describe('password reset', () => {
    it('answers forgot-password identically whether or not the account exists, and mails a single-use link', async () => {
      const user = await t.createUser({ email: 'forgetful@example.com' });
      const before = t.outbox().length;
      const known = await t.request('POST', '/api/auth/forgot-password', { body: { email: 'forgetful@example.com' } });
      const unknown = await t.request('POST', '/api/auth/forgot-password', { body: { email: 'ghost@example.com' } });
      expect(known.status).toBe(200);
      expect(unknown.status).toBe(200);
      expect(known.body).toEqual(unknown.body);

      const mail = await waitFor(() => t.outbox().slice(before).find((m) => m.to === 'forgetful@example.com'));
      expect(mail.subject).toBe('Reset your Herald password');
      const token = tokenFromMail(mail.text, 'reset-password');
      expect(t.outbox().slice(before).some((m) => m.to === 'ghost@example.com')).toBe(false);

      // A reset token is not a session token.
      expect((await t.request('GET', '/api/auth/me', { token })).status).toBe(401);

      const tooShort = await t.request('POST', '/api/auth/reset-password', { body: { token, password: 'short' } });
      expect(tooShort.status).toBe(400);
      expect(tooShort.body.error.message).toContain('Password must be at least 8 characters long');

      const reset = await t.request('POST', '/api/auth/reset-password', { body: { token, password: 'a brand new password' } });
      expect(reset.status).toBe(200);
      // Sessions from before the reset stop working.
      expect((await t.request('GET', '/api/auth/me', { token: user.token })).status).toBe(401);
      // The link works once.
      const again = await t.request('POST', '/api/auth/reset-password', { body: { token, password: 'another password' } });
      expect(again.status).toBe(400);
      expect(again.body.error.message).toMatch(/Invalid or expired reset token/);

      const oldLogin = await t.request('POST', '/api/auth/login', { body: { email: user.email, password: user.password } });
      expect(oldLogin.status).toBe(401);
      const newLogin = await t.request('POST', '/api/auth/login', { body: { email: user.email, password: 'a brand new password' } });
      expect(newLogin.status).toBe(200);
    });

    it('refuses a reset link older than one hour', async () => {
      await t.createUser({ email: 'slow@example.com' });
      const before = t.outbox().length;
      await t.request('POST', '/api/auth/forgot-password', { body: { email: 'slow@example.com' } });
      const mail = await waitFor(() => t.outbox().slice(before).find((m) => m.to === 'slow@example.com'));
      clock.advance(61 * 60_000);
      const response = await t.request('POST', '/api/auth/reset-password', { body: { token: tokenFromMail(mail.text, 'reset-password'), password: 'new password 123' } });
      expect(response.status).toBe(400);
    });

    it('refuses a made-up token', async () => {
      const response = await t.request('POST', '/api/auth/reset-password', { body: { token: 'A'.repeat(43), password: 'new password 123' } });
      expect(response.status).toBe(400);
    });
  });

  describe('login rate limits', () => {
    it('locks an address out of an account after 10 failures, even with a correct password', async () => {
      const user = await t.createUser();
      for (let i = 0; i < 10; i++) {
        expect((await t.request('POST', '/api/auth/login', { body: { email: user.email, password: `wrong-${i}` } })).status).toBe(401);
      }
      const locked = await t.request('POST', '/api/auth/login', { body: { email: user.email, password: user.password } });
      expect(locked.status).toBe(429);
      expect(locked.headers['retry-after']).toBeDefined();
      expect(locked.body.error.message).toMatch(/Too many failed sign-in attempts/);
      clock.advance(16 * 60_000);
      expect((await t.request('POST', '/api/auth/login', { body: { email: user.email, password: user.password } })).status).toBe(200);
    });

    it('limits a client address across accounts, and a spoofed X-Forwarded-For does not reset it', async () => {
      clock.advance(60 * 60_000);
      for (let i = 0; i < 50; i++) {
        const response = await t.request('POST', '/api/auth/login', {
          body: { email: `spray${i}@example.com`, password: 'guess-123' },
          headers: { 'x-forwarded-for': `10.0.0.${i}` },
        });
        expect(response.status).toBe(401);
      }
      const blocked = await t.request('POST', '/api/auth/login', {
        body: { email: 'spray-last@example.com', password: 'guess-123' },
        headers: { 'x-forwarded-for': '203.0.113.9' },
      });
      expect(blocked.status).toBe(429);
      clock.advance(16 * 60_000);
    });
  });

  describe('profile', () => {
    it('changes the name, and changes the password only with the current one, ending other sessions', async () => {
      const user = await t.createUser();
      const second = await t.request('POST', '/api/auth/login', { body: { email: user.email, password: user.password } });
      const renamed = await t.request('PATCH', '/api/auth/profile', { token: user.token, body: { name: 'Renamed' } });
      expect(renamed.status).toBe(200);
      expect(renamed.body.data.user.name).toBe('Renamed');

      const withoutCurrent = await t.request('PATCH', '/api/auth/profile', { token: user.token, body: { newPassword: 'changed password' } });
      expect(withoutCurrent.status).toBe(400);
      const changed = await t.request('PATCH', '/api/auth/profile', {
        token: user.token,
        body: { currentPassword: user.password, newPassword: 'changed password' },
      });
      expect(changed.status).toBe(200);
      expect((await t.request('GET', '/api/auth/me', { token: user.token })).status).toBe(200);
      expect((await t.request('GET', '/api/auth/me', { token: second.body.data.token })).status).toBe(401);
    });

    it('refuses unknown profile fields', async () => {
      const user = await t.createUser();
      const response = await t.request('PATCH', '/api/auth/profile', { token: user.token, body: { id: 'someone-else' } });
      expect(response.status).toBe(400);
    });
  });
});

describe('registration and email verification (ALLOW_REGISTRATION=true)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { ALLOW_REGISTRATION: 'true' } });
  });
  afterAll(async () => t.close());

  it('registers, mails a verification link, verifies once, and resends on request', async () => {
    const registered = await t.request('POST', '/api/auth/register', { body: { name: 'Nia', email: 'nia@example.com', password: 'longenough' } });
    expect(registered.status).toBe(201);
    expect(registered.body.data.user.emailVerified).toBe(false);
    const token = registered.body.data.token as string;

    const duplicate = await t.request('POST', '/api/auth/register', { body: { name: 'Nia', email: 'NIA@example.com', password: 'longenough' } });
    expect(duplicate.status).toBe(409);

    const first = await waitFor(() => t.outbox().find((m) => m.to === 'nia@example.com'));
    expect(first.subject).toBe('Verify your email for Herald');
    const resend = await t.request('POST', '/api/auth/resend-verification', { token });
    expect(resend.status).toBe(200);
    const mails = await waitFor(() => {
      const all = t.outbox().filter((m) => m.to === 'nia@example.com');
      return all.length >= 2 ? all : undefined;
    });
    // The resent link supersedes the first one.
    const oldToken = tokenFromMail(mails[0]!.text, 'verify-email');
    const newToken = tokenFromMail(mails[1]!.text, 'verify-email');
    expect((await t.request('POST', '/api/auth/verify-email', { body: { token: oldToken } })).status).toBe(400);
    const verified = await t.request('POST', '/api/auth/verify-email', { body: { token: newToken } });
    expect(verified.status).toBe(200);
    expect((await t.request('POST', '/api/auth/verify-email', { body: { token: newToken } })).status).toBe(400);
    const me = await t.request('GET', '/api/auth/me', { token });
    expect(me.body.data.user.emailVerified).toBe(true);
    const resendVerified = await t.request('POST', '/api/auth/resend-verification', { token });
    expect(resendVerified.status).toBe(400);
    expect(resendVerified.body.error.message).toBe('Your email is already verified');
  });

  it('refuses a short password at sign-up', async () => {
    const response = await t.request('POST', '/api/auth/register', { body: { name: 'Short', email: 'short@example.com', password: '1234567' } });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toContain('Password must be at least 8 characters long');
  });
});

describe('owner setup on a fresh install', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('creates the first account once with the one-time setup link', async () => {
    const token = await createAuthService(t.ctx).issueSetupToken();
    const status = await t.request('GET', `/api/auth/setup?token=${token}`);
    expect(status.body.data).toEqual({ setupRequired: true, tokenValid: true });
    expect((await t.request('GET', '/api/auth/setup?token=nope')).body.data).toEqual({ setupRequired: true, tokenValid: false });

    const badToken = await t.request('POST', '/api/auth/setup', { body: { token: 'nope', name: 'Olive', email: 'olive@example.com', password: 'longenough' } });
    expect(badToken.status).toBe(400);

    const created = await t.request('POST', '/api/auth/setup', { body: { token, name: 'Olive', email: 'olive@example.com', password: 'longenough' } });
    expect(created.status).toBe(201);
    expect(created.body.data.user).toMatchObject({ name: 'Olive', email: 'olive@example.com', emailVerified: true });
    expect((await t.request('GET', '/api/auth/me', { token: created.body.data.token })).status).toBe(200);

    const after = await t.request('GET', `/api/auth/setup?token=${token}`);
    expect(after.body.data).toEqual({ setupRequired: false, tokenValid: false });
    const second = await t.request('POST', '/api/auth/setup', { body: { token, name: 'Mallory', email: 'm@example.com', password: 'longenough' } });
    expect(second.status).toBe(403);
  });
});
