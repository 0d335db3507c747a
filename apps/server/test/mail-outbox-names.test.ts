import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, waitFor, type TestApp } from './support/test-app';

// Without SMTP_URL each mail is a file in DATA_DIR/mail (docs/security.md,
// "Emailed links"): its name holds a cut address, so an address of 254
// characters (valid at sign-up) still gets its verification link.

describe('a mail written to the data folder (no SMTP)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { ALLOW_REGISTRATION: 'true' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('writes the verification mail of a long (valid, ≤ 254 characters) address', async () => {
    // 64-character local part (the RFC 5321 maximum) and a 186-character domain: 251 characters, accepted by sign-up.
    const email = `${'a'.repeat(64)}@${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.com`;
    expect(email.length).toBeLessThanOrEqual(254);
    const registered = await t.request('POST', '/api/auth/register', { body: { name: 'Long', email, password: 'correct horse battery' } });
    expect(registered.status).toBe(201);
    // The file name is "<timestamp>-<address>.txt": 280 bytes, over the 255 a file name may have (ENAMETOOLONG), so the mail is lost.
    const mail = await waitFor(() => t.outbox().find((m) => m.to === email), { timeoutMs: 3000 }).catch(() => undefined);
    expect(mail?.subject).toBe('Verify your email for Herald');
  });
});
