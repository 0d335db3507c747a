import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureOwnerAccount } from '../../src/bootstrap';
import { createAuthService } from '../../src/features/auth/service';
import { createOutboxMailer } from '../../src/platform/mail';
import { createTestApp, waitFor, type TestApp } from '../support/test-app';
import { expectErrorBody } from './support/fixtures';

// docs/security.md, "Emailed links": a reset or verification link is bound to
// the address it was mailed to and dies when the email or password changes;
// and links never reach the log (only the mail file does).

const PUBLIC_URL = 'http://herald.test';
const tokenIn = (text: string, route: string) => {
  const token = new RegExp(`${PUBLIC_URL.replace(/\./g, '\\.')}/${route}\\?token=([A-Za-z0-9_-]+)`).exec(text)?.[1];
  if (!token) throw new Error(`no ${route} link in:\n${text}`);
  return token;
};

/** A pino logger whose lines a test can read, as a terminal or a log shipper would. */
function capturingLogger() {
  const lines: string[] = [];
  const log = pino({ level: 'info', base: undefined }, { write: (line: string) => void lines.push(line) });
  return { log, text: () => lines.join('') };
}

describe('emailed links die with the address or password they were sent for', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { ALLOW_REGISTRATION: 'true', PUBLIC_URL } });
  });
  afterAll(async () => t?.close());

  const mailTo = (email: string, subject: string, skip = 0) => waitFor(() => t.outbox().filter((m) => m.to === email && m.subject.includes(subject))[skip]);
  let registrations = 0;
  const register = async (email: string) => {
    registrations += 1; // each from its own address: sign-ups are limited per address
    const response = await t.request('POST', '/api/auth/register', { body: { name: 'Reader', email, password: 'reader password 1' }, remoteAddress: `192.0.2.${registrations}` });
    expect(response.status).toBe(201);
    return { token: response.body.data.token as string, password: 'reader password 1' };
  };
  const resetWith = (token: string, password = 'taken over account') => t.request('POST', '/api/auth/reset-password', { body: { token, password } });
  const verifyWith = (token: string) => t.request('POST', '/api/auth/verify-email', { body: { token } });
  const forgot = (email: string) => t.request('POST', '/api/auth/forgot-password', { body: { email } });

  it('a reset link mailed to the old address no longer works after the email changed', async () => {
    const user = await t.createUser({ email: `old-${crypto.randomUUID()}@example.com` });
    expect((await forgot(user.email)).status).toBe(200);
    const resetToken = tokenIn((await mailTo(user.email, 'Reset')).text, 'reset-password');

    const newEmail = `new-${crypto.randomUUID()}@example.com`;
    const changed = await t.request('PATCH', '/api/auth/profile', { token: user.token, body: { email: newEmail, currentPassword: user.password } });
    expect(changed.status).toBe(200);

    const taken = await resetWith(resetToken);
    expect(taken.status).toBe(400);
    expectErrorBody(taken.body, 'reset link for the old address');
    // Nothing changed: the owner's password still works.
    expect((await t.request('POST', '/api/auth/login', { body: { email: newEmail, password: user.password } })).status).toBe(200);
  });

  it('a verification link for the old address does not verify the new one; the new link does', async () => {
    const email = `first-${crypto.randomUUID()}@example.com`;
    const session = await register(email);
    const oldLink = tokenIn((await mailTo(email, 'Verify')).text, 'verify-email');

    const newEmail = `second-${crypto.randomUUID()}@example.com`;
    expect((await t.request('PATCH', '/api/auth/profile', { token: session.token, body: { email: newEmail, currentPassword: session.password } })).status).toBe(200);
    const refused = await verifyWith(oldLink);
    expect(refused.status).toBe(400);
    expectErrorBody(refused.body, 'verify link for the old address');
    expect((await t.request('GET', '/api/auth/me', { token: session.token })).body.data.user.emailVerified).toBe(false);

    const newLink = tokenIn((await mailTo(newEmail, 'Verify')).text, 'verify-email');
    expect((await verifyWith(newLink)).status).toBe(200);
    expect((await t.request('GET', '/api/auth/me', { token: session.token })).body.data.user).toMatchObject({ email: newEmail, emailVerified: true });
  });

  it('a password change voids every outstanding reset and verification link', async () => {
    const email = `changer-${crypto.randomUUID()}@example.com`;
    const session = await register(email);
    const verifyLink = tokenIn((await mailTo(email, 'Verify')).text, 'verify-email');
    expect((await forgot(email)).status).toBe(200);
    const resetLink = tokenIn((await mailTo(email, 'Reset')).text, 'reset-password');

    const changed = await t.request('PATCH', '/api/auth/profile', { token: session.token, body: { currentPassword: session.password, newPassword: 'changed on purpose' } });
    expect(changed.status).toBe(200);
    expect((await resetWith(resetLink)).status).toBe(400);
    expect((await verifyWith(verifyLink)).status).toBe(400);
    expect((await t.request('POST', '/api/auth/login', { body: { email, password: 'changed on purpose' } })).status).toBe(200);
  });

  it("the administrator's reset (herald user reset-password) and a completed reset void the other links too", async () => {
    const email = `admin-reset-${crypto.randomUUID()}@example.com`;
    await register(email);
    const verifyLink = tokenIn((await mailTo(email, 'Verify')).text, 'verify-email');
    expect((await forgot(email)).status).toBe(200);
    const resetLink = tokenIn((await mailTo(email, 'Reset')).text, 'reset-password');
    expect(await createAuthService(t.ctx).setPasswordByEmail(email, 'set by the administrator')).toBe(true);
    expect((await resetWith(resetLink)).status).toBe(400);
    expect((await verifyWith(verifyLink)).status).toBe(400);

    const other = `reset-voids-${crypto.randomUUID()}@example.com`;
    await register(other);
    const otherVerify = tokenIn((await mailTo(other, 'Verify')).text, 'verify-email');
    expect((await forgot(other)).status).toBe(200);
    expect((await resetWith(tokenIn((await mailTo(other, 'Reset')).text, 'reset-password'), 'reset by the owner')).status).toBe(200);
    expect((await verifyWith(otherVerify)).status).toBe(400);
  });

  it('a link works only while the account still has the address it was mailed to', async () => {
    const email = `bound-${crypto.randomUUID()}@example.com`;
    const session = await register(email);
    const verifyLink = tokenIn((await mailTo(email, 'Verify')).text, 'verify-email');
    expect((await forgot(email)).status).toBe(200);
    const resetLink = tokenIn((await mailTo(email, 'Reset')).text, 'reset-password');
    // The address changes without the links being voided (as a change racing the mail would).
    const me = (await t.request('GET', '/api/auth/me', { token: session.token })).body.data.user;
    await t.ctx.db.updateTable('users').set({ email: `elsewhere-${crypto.randomUUID()}@example.com` }).where('id', '=', me.id).execute();
    expect((await verifyWith(verifyLink)).status).toBe(400);
    expect((await resetWith(resetLink)).status).toBe(400);
    // Back at the address they were mailed to, they do their job.
    await t.ctx.db.updateTable('users').set({ email }).where('id', '=', me.id).execute();
    expect((await verifyWith(verifyLink)).status).toBe(200);
    expect((await resetWith(resetLink, 'back at my address')).status).toBe(200);
    expect((await t.request('POST', '/api/auth/login', { body: { email, password: 'back at my address' } })).status).toBe(200);
  });
});

describe('links in mails stay out of the log', () => {
  let t: TestApp;
  let outboxDir: string;
  const captured = capturingLogger();
  beforeAll(async () => {
    outboxDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-outbox-'));
    t = await createTestApp({ env: { ALLOW_REGISTRATION: 'true', PUBLIC_URL }, mailer: createOutboxMailer(outboxDir, 'herald@herald.test', captured.log) });
  });
  afterAll(async () => {
    await t?.close();
    fs.rmSync(outboxDir, { recursive: true, force: true });
  });

  const mailFiles = () => fs.readdirSync(path.join(outboxDir, 'mail')).map((file) => path.join(outboxDir, 'mail', file));

  it('without SMTP, reset and verification mails go to DATA_DIR/mail and the log says only where', async () => {
    const user = await t.createUser();
    expect((await t.request('POST', '/api/auth/forgot-password', { body: { email: user.email } })).status).toBe(200);
    const registered = `logged-${crypto.randomUUID()}@example.com`;
    expect((await t.request('POST', '/api/auth/register', { body: { name: 'Logged', email: registered, password: 'logged password 1' } })).status).toBe(201);
    // The log line follows the file: wait until both mails are written and logged.
    const files = await waitFor(() => {
      const all = fs.existsSync(path.join(outboxDir, 'mail')) ? mailFiles() : [];
      return all.length >= 2 && all.every((file) => captured.text().includes(file)) ? all : undefined;
    });
    const log = captured.text();
    for (const file of files) {
      const mail = fs.readFileSync(file, 'utf8');
      const token = tokenIn(mail, mail.includes('/reset-password?') ? 'reset-password' : 'verify-email');
      expect(log, 'the link is not in the log').not.toContain(token);
      // Only Herald's user may read the file.
      expect(fs.statSync(file).mode & 0o077).toBe(0);
    }
    expect(log).not.toMatch(/token=/);
  });

  it('the one-time setup link is still printed at start: it is how a self-hoster creates the owner account', async () => {
    const fresh = await createTestApp({ env: { PUBLIC_URL } });
    try {
      const terminal = capturingLogger();
      const link = await ensureOwnerAccount({ ...fresh.ctx, log: terminal.log });
      expect(link).toMatch(new RegExp(`^${PUBLIC_URL.replace(/\./g, '\\.')}/setup\\?token=`));
      expect(terminal.text()).toContain(link!);
      const token = new URL(link!).searchParams.get('token')!;
      expect((await fresh.request('GET', `/api/auth/setup?token=${token}`)).body.data).toEqual({ setupRequired: true, tokenValid: true });
    } finally {
      await fresh.close();
    }
  });
});
