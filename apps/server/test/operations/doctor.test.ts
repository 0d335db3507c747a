// Issue 17, item 3: `herald doctor` (CLI) and the System checks (API), here
// without the Internet: the push-service hosts are injected, a local TLS
// server stands in for a reachable push service, a closed port and an
// unresolvable name for unreachable ones.
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diskSpaceStatus, formatDoctorReport, runDoctor } from '../../src/features/system/doctor';
import { recordSecretFingerprint } from '../../src/features/system/repository';
import { freePort } from '../support/pg-cluster';
import { createTestCertificate } from '../support/test-certificate';
import { createTestApp, type TestApp } from '../support/test-app';
import { HeraldProcess } from '../scale/herald-processes';

const byId = (checks: Array<{ id: string }>, id: string) => checks.find((c) => c.id === id) as any;

describe('herald doctor', () => {
  let standIn: tls.Server;
  let standInPort: number;
  let closedPort: number;
  const certificate = createTestCertificate();

  beforeAll(async () => {
    // A push service stand-in: it only has to complete a TLS handshake.
    standIn = tls.createServer({ cert: certificate.cert, key: certificate.key }, (socket) => socket.end());
    await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve));
    standInPort = (standIn.address() as AddressInfo).port;
    closedPort = await freePort();
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => standIn.close(() => resolve()));
  });

  it('times DNS, TCP and TLS to a reachable push service, and says at which step an unreachable one fails and what to do', async () => {
    const t = await createTestApp();
    try {
      const checks = await runDoctor(t.ctx, {
        ca: certificate.ca,
        timeoutMs: 3_000,
        pushHosts: [
          { service: 'fcm', host: '127.0.0.1', port: standInPort },
          { service: 'mozilla', host: '127.0.0.1', port: closedPort },
          { service: 'apple', host: 'push.nowhere.invalid', port: 443 },
        ],
      });
      const reachable = byId(checks, 'push-fcm');
      expect(reachable.status).toBe('ok');
      expect(reachable.detail).toMatch(new RegExp(`^DNS \\d+ ms \\(127\\.0\\.0\\.1\\), TCP ${standInPort} \\d+ ms, TLS \\d+ ms$`));
      expect(reachable.action).toBeNull();
      const refused = byId(checks, 'push-mozilla');
      expect(refused.status).toBe('fail');
      expect(refused.detail).toMatch(new RegExp(`TCP connection to port ${closedPort} failed after \\d+ ms: .*ECONNREFUSED`));
      expect(refused.action).toBe(`Allow outbound TCP ${closedPort} from this machine to 127.0.0.1 (firewall, security group, egress proxy).`);
      const unresolvable = byId(checks, 'push-apple');
      expect(unresolvable.status).toBe('fail');
      expect(unresolvable.detail).toMatch(/^DNS lookup failed after \d+ ms/);
      expect(unresolvable.action).toMatch(/cannot resolve push\.nowhere\.invalid/);

      // The rest of this test app's configuration: PUBLIC_URL http://herald.test, no SMTP, no Redis.
      expect(byId(checks, 'public-url-https')).toMatchObject({ status: 'fail', detail: 'http://herald.test is plain http' });
      expect(byId(checks, 'public-url-reachable').status).toBe('fail');
      expect(byId(checks, 'smtp').status).toBe('warn');
      expect(byId(checks, 'secret-key').status).toBe(t.ctx.dbKind === 'postgres' ? 'warn' : 'ok');
      expect(byId(checks, 'secret-key-same').status).toBe('ok');
      expect(byId(checks, 'vapid-subject')).toMatchObject({ status: 'ok', detail: 'no sites yet' });
      expect(byId(checks, 'database').status).toBe('ok');
      expect(byId(checks, 'migrations').status).toBe('ok');
      expect(byId(checks, 'redis')).toMatchObject({ status: 'ok', detail: 'not used: REDIS_URL is unset, jobs run in the `serve` process' });
      expect(byId(checks, 'clock-skew').status).toBe('ok');
      if (t.ctx.dbKind === 'postgres') expect(byId(checks, 'clock-skew').detail).toMatch(/this machine is \d+ ms (behind|ahead of) the database server/);
      expect(byId(checks, 'disk-space').detail).toContain(t.config.dataDir);

      // The same stand-in without its CA: the handshake fails as behind a TLS-intercepting proxy.
      const [untrusted] = await runDoctor(t.ctx, { pushHosts: [{ service: 'fcm', host: '127.0.0.1', port: standInPort }], timeoutMs: 3_000 }).then((all) => all.filter((c) => c.id === 'push-fcm'));
      expect(untrusted!.status).toBe('fail');
      expect(untrusted!.detail).toMatch(/TLS handshake failed after \d+ ms/);

      const report = formatDoctorReport(checks);
      expect(report).toContain(`OK    Push service fcm (127.0.0.1:${standInPort}) is reachable: DNS`);
      expect(report).toContain(`FAIL  Push service mozilla (127.0.0.1:${closedPort}) is reachable:`);
      expect(report).toContain(`      → Allow outbound TCP ${closedPort}`);
      expect(report).toMatch(new RegExp(`\\n\\d+ OK, ${t.ctx.dbKind === 'postgres' ? 2 : 1} WARN, \\d+ FAIL$`));
    } finally {
      await t.close();
    }
  });

  it('fails when processes run with different secrets, and when a site has no usable VAPID subject', async () => {
    const t = await createTestApp({ env: { DOCTOR_PUSH_HOSTS: `127.0.0.1:${standInPort}` } });
    try {
      const owner = await t.createUser();
      await t.createSite(owner.token, { name: 'Plain Shop', url: 'http://plain-shop.example' });
      // An address the sign-up form refuses, as an older install may hold: push services refuse it as a VAPID contact.
      await t.ctx.db.updateTable('users').set({ email: 'owner@localhost' }).where('id', '=', owner.id).execute();
      await recordSecretFingerprint(t.ctx.db, '0123456789abcdef', t.ctx.clock.now());
      const checks = await runDoctor(t.ctx, { timeoutMs: 2_000 });
      const same = byId(checks, 'secret-key-same');
      expect(same.status).toBe('fail');
      expect(same.detail).toMatch(/^2 different secrets in use in the last 15 minutes: this one [0-9a-f]{16}, others 0123456789abcdef$/);
      expect(same.action).toMatch(/Set the same SECRET_KEY for every Herald process/);
      const vapid = byId(checks, 'vapid-subject');
      expect(vapid.status).toBe('fail');
      expect(vapid.detail).toMatch(/^Plain Shop: The VAPID contact address "owner@localhost" must be at a real domain/);
      // DOCTOR_PUSH_HOSTS replaces the four push services.
      expect(checks.filter((c) => c.id.startsWith('push-')).map((c) => c.id)).toEqual([`push-127.0.0.1:${standInPort}`]);
    } finally {
      await t.close();
    }
  });

  it('checks the SMTP login and that PUBLIC_URL leads to this Herald', async () => {
    const smtpPort = await freePort();
    const smtp = new SMTPServer({
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      onAuth(auth, _session, callback) {
        if (auth.username === 'herald' && auth.password === 'right') callback(null, { user: 'herald' });
        else callback(new Error('Invalid username or password'));
      },
    });
    await new Promise<void>((resolve) => smtp.listen(smtpPort, '127.0.0.1', resolve));
    const port = await freePort();
    const t = await createTestApp({ env: { PUBLIC_URL: `http://127.0.0.1:${port}`, SMTP_URL: `smtp://herald:right@127.0.0.1:${smtpPort}`, DOCTOR_PUSH_HOSTS: `127.0.0.1:${closedPort}` } });
    try {
      await t.app.listen({ host: '127.0.0.1', port });
      const checks = await runDoctor(t.ctx, { timeoutMs: 3_000 });
      expect(byId(checks, 'smtp')).toMatchObject({ status: 'ok' });
      expect(byId(checks, 'smtp').detail).toMatch(/^127\.0\.0\.1:\d+ accepted the login in \d+ ms$/);
      expect(byId(checks, 'public-url-reachable').detail).toMatch(new RegExp(`^GET http://127.0.0.1:${port}/healthz answered 200 in \\d+ ms$`));
      // Plain http on this machine: a trial, not a failure.
      expect(byId(checks, 'public-url-https').status).toBe('warn');

      const wrong = await runDoctor({ ...t.ctx, config: { ...t.config, smtpUrl: `smtp://herald:wrong@127.0.0.1:${smtpPort}` } }, { timeoutMs: 3_000 });
      expect(byId(wrong, 'smtp').status).toBe('fail');
      expect(byId(wrong, 'smtp').detail).toMatch(/Invalid username or password/);
    } finally {
      await t.close();
      await new Promise<void>((resolve) => smtp.close(() => resolve()));
    }
  });

  it('judges disk space by free bytes and share', () => {
    const GiB = 1024 ** 3;
    expect(diskSpaceStatus(50 * GiB, 100 * GiB)).toBe('ok');
    expect(diskSpaceStatus(5 * GiB, 100 * GiB)).toBe('warn');
    expect(diskSpaceStatus(0.5 * GiB, 4 * GiB)).toBe('warn');
    expect(diskSpaceStatus(50 * 1024 ** 2, 4 * GiB)).toBe('fail');
    expect(diskSpaceStatus(1 * GiB, 100 * GiB)).toBe('fail');
  });
});

describe('System checks in the dashboard API', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { DOCTOR_PUSH_HOSTS: `127.0.0.1:${await freePort()}` } });
  });
  afterAll(async () => t?.close());

  it("answers the install's owner (its first account) and refuses everyone else", async () => {
    const owner = await t.createUser();
    const other = await t.createUser();
    const answer = await t.request('GET', '/api/system/checks', { token: owner.token });
    expect(answer.status).toBe(200);
    expect(answer.body.data.checks.map((c: { id: string }) => c.id)).toEqual(
      expect.arrayContaining(['public-url-https', 'secret-key-same', 'smtp', 'vapid-subject', 'database', 'migrations', 'redis', 'clock-skew', 'disk-space']),
    );
    expect(answer.body.data.checks.find((c: { id: string }) => c.id.startsWith('push-')).status).toBe('fail');
    expect(answer.headers['cache-control']).toBe('no-store');
    const refused = await t.request('GET', '/api/system/checks', { token: other.token });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toBe('Only the owner of this Herald install (its first account) can see its system checks.');
    expect((await t.request('GET', '/api/system/checks')).status).toBe(401);
  });
});

describe('herald doctor on the command line', () => {
  it('exits 0 when nothing fails and 1 when a check fails, one line per check', async () => {
    const port = await freePort();
    const t = await createTestApp({ env: { PUBLIC_URL: `http://127.0.0.1:${port}` } });
    const certificate = createTestCertificate();
    const standIn = tls.createServer({ cert: certificate.cert, key: certificate.key }, (socket) => socket.end());
    await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve));
    try {
      await t.app.listen({ host: '127.0.0.1', port });
      const env: Record<string, string> = {
        DATA_DIR: t.dataDir,
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        PORT: String(port),
        NODE_EXTRA_CA_CERTS: certificate.caFile,
        DOCTOR_PUSH_HOSTS: `127.0.0.1:${(standIn.address() as AddressInfo).port}`,
        ...(t.config.database.kind === 'postgres' ? { DATABASE_URL: t.config.database.url, SECRET_KEY: 's'.repeat(40) } : {}),
      };
      const passing = await HeraldProcess.start('doctor', 'doctor', env);
      expect(await passing.exited, passing.output()).toBe(0);
      expect(passing.output()).toMatch(/^OK {4}Push service 127\.0\.0\.1 \(127\.0\.0\.1:\d+\) is reachable: DNS \d+ ms/m);
      expect(passing.output()).toMatch(/^WARN {2}SMTP login: SMTP_URL is not set/m);
      expect(passing.output()).toMatch(/^\d+ OK, \d+ WARN, 0 FAIL$/m);

      const failing = await HeraldProcess.start('doctor-2', 'doctor', { ...env, DOCTOR_PUSH_HOSTS: `127.0.0.1:${await freePort()}` });
      expect(await failing.exited).toBe(1);
      expect(failing.output()).toMatch(/^FAIL {2}Push service 127\.0\.0\.1 .*ECONNREFUSED/m);

      const json = await HeraldProcess.start('doctor-3', 'doctor', env, ['--json']);
      expect(await json.exited).toBe(0);
      expect(JSON.parse(json.output()).checks.length).toBeGreaterThan(10);
    } finally {
      await new Promise<void>((resolve) => standIn.close(() => resolve()));
      await t.close();
    }
  }, 60_000);
});
