import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './support/pg-cluster';
import { createTestApp, waitFor, type TestApp } from './support/test-app';

/** Undoes quoted-printable soft line breaks and escapes (RFC 2045 §6.7), enough to read a link. */
function decodeQuotedPrintable(raw: string): string {
  return raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

// Mail goes to a real SMTP server (smtp-server on 127.0.0.1), not a mock.
describe('mail over SMTP_URL', () => {
  let server: SMTPServer;
  let t: TestApp;
  const received: Array<{ from: string; to: string[]; raw: string }> = [];

  beforeAll(async () => {
    const port = await freePort();
    server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    t = await createTestApp({ env: { SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM: 'Herald <herald@shop.example>', PUBLIC_URL: 'https://push.shop.example' } });
  });
  afterAll(async () => {
    await t.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('sends the reset mail through SMTP with a PUBLIC_URL link that works', async () => {
    const user = await t.createUser({ email: 'smtp-user@example.com' });
    await t.request('POST', '/api/auth/forgot-password', { body: { email: user.email } });
    const message = await waitFor(() => received.find((m) => m.to.includes('smtp-user@example.com')));
    expect(message.from).toBe('herald@shop.example');
    expect(message.raw).toMatch(/^Subject: Reset your Herald password\r?$/m);
    const token = /https:\/\/push\.shop\.example\/reset-password\?token=([A-Za-z0-9_-]+)/.exec(decodeQuotedPrintable(message.raw))?.[1];
    expect(token).toBeTruthy();
    // Nothing went to the file outbox: SMTP is configured.
    expect(t.outbox()).toEqual([]);
    const reset = await t.request('POST', '/api/auth/reset-password', { body: { token, password: 'reset over smtp' } });
    expect(reset.status).toBe(200);
  });
});
