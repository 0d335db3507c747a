// SIGTERM of `serve` and `scheduler` (deploy/README.md, "Graceful stop";
// `runRole` in src/roles.ts). The worker role's stop is tested with Redis
// (test/redis/worker-faults.test.ts); these two roles run the engine
// in-process without Redis, so they are tested here, on SQLite and
// PostgreSQL: each role is a real process (the source through tsx, as the
// demo test starts one) sharing this test's database, sending to the local
// push service.
//   - pushes in flight when SIGTERM comes are answered and recorded, then
//     the process exits 0, well within SHUTDOWN_TIMEOUT_SECONDS;
//   - pushes that never get an answer do not hold it past the bound: it
//     exits 1 at SHUTDOWN_TIMEOUT_SECONDS, saying so.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { notificationInput } from '../support/delivery-harness';
import { PushService, type PushAnswer } from '../support/push-service';
import { createTestApp, waitFor, type TestApp, type TestUser } from '../support/test-app';

const mainTs = path.resolve(import.meta.dirname, '..', '..', 'src', 'main.ts');

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface RoleProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

const started = new Set<ChildProcess>();

describe.each(['serve', 'scheduler'] as const)('SIGTERM of `%s`', (role) => {
  let t: TestApp;
  let push: PushService;
  let owner: TestUser;

  beforeAll(async () => {
    push = await PushService.start();
    t = await createTestApp({ env: { EXTRA_PUSH_ORIGINS: push.origin } });
    owner = await t.createUser();
  });
  afterEach(async () => {
    for (const child of started) child.kill('SIGKILL');
    started.clear();
  });
  afterAll(async () => {
    await t?.close();
    await push?.close();
  });

  /** Starts the role on this test's data folder and database; resolves once its /readyz answers 200. */
  async function start(env: Record<string, string>): Promise<RoleProcess> {
    const port = await freePort();
    const metricsPort = await freePort();
    const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), mainTs, role], {
      cwd: t.dataDir,
      env: {
        PATH: process.env.PATH ?? '',
        DATA_DIR: t.dataDir,
        ...(t.config.database.kind === 'postgres' ? { DATABASE_URL: t.config.database.url } : {}),
        HOST: '127.0.0.1',
        PORT: String(port),
        METRICS_PORT: String(metricsPort),
        LOG_LEVEL: 'info',
        LOG_FORMAT: 'json',
        EXTRA_PUSH_ORIGINS: push.origin,
        SCHEDULER_INTERVAL_MS: '100',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    started.add(child);
    let text = '';
    child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const readyz = `http://127.0.0.1:${role === 'serve' ? port : metricsPort}/readyz`;
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${role} exited with ${child.exitCode}:\n${text}`);
      if (await fetch(readyz).then((r) => r.ok, () => false)) break;
      if (Date.now() > deadline) throw new Error(`${role} was not ready within 60 s:\n${text}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return { child, output: () => text, exited };
  }

  /** A site with `count` browsers whose push service answers them `answer`; its notification is sent (due now). */
  async function sendingTo(count: number, answer: PushAnswer): Promise<string> {
    const site = await t.createSite(owner.token, { name: `${role} shop` });
    for (let i = 0; i < count; i++) {
      const subscription = push.createSubscription({ applicationServerKey: site.vapid_public_key });
      push.setAnswer(answer, subscription.id);
      const subscribed = await t.request('POST', `/api/public/sites/${site.id}/subscribers`, {
        body: { subscription: { endpoint: subscription.endpoint, keys: subscription.keys } },
        remoteAddress: `198.51.100.${i + 1}`,
      });
      expect(subscribed.status).toBe(201);
    }
    const created = await t.request('POST', `/api/sites/${site.id}/notifications`, { token: owner.token, body: notificationInput() });
    expect(created.status).toBe(201);
    const id: string = created.body.data.notification.id;
    expect((await t.request('POST', `/api/notifications/${id}/send`, { token: owner.token })).status).toBe(200);
    return id;
  }

  /** Sends SIGTERM; resolves with the exit code and how long the exit took. */
  async function stop(herald: RoleProcess): Promise<{ code: number | null; ms: number }> {
    const since = Date.now();
    herald.child.kill('SIGTERM');
    const code = await herald.exited;
    return { code, ms: Date.now() - since };
  }

  it('lets the pushes in flight be answered and recorded, then exits 0 well within SHUTDOWN_TIMEOUT_SECONDS', async () => {
    const herald = await start({ SHUTDOWN_TIMEOUT_SECONDS: '20' });
    const accepted = push.stats().accepted;
    const id = await sendingTo(3, { status: 201, delayMs: 1500 });
    // All three pushes are at the push service, unanswered.
    await waitFor(() => push.stats().inFlight >= 3, { timeoutMs: 20_000 });

    const { code, ms } = await stop(herald);
    expect(code, herald.output()).toBe(0);
    expect(ms).toBeLessThan(20_000);
    expect(herald.output()).toContain('SIGTERM received, shutting down');
    expect(herald.output()).not.toContain('shutdown took longer');
    // Answered before it exited, and written down: the send is complete, nothing left to send again.
    expect(push.stats().accepted - accepted).toBe(3);
    const notification = (await t.request('GET', `/api/notifications/${id}`, { token: owner.token })).body.data.notification;
    expect(notification).toMatchObject({ status: 'completed', counts: { targeted: 3, sent: 3, pending: 0 } });
  }, 120_000);

  it('does not wait for a push service that never answers past SHUTDOWN_TIMEOUT_SECONDS: it exits 1 at the bound, saying so', async () => {
    const herald = await start({ SHUTDOWN_TIMEOUT_SECONDS: '3', PUSH_TIMEOUT_MS: '120000' });
    const requests = push.stats().requests;
    await sendingTo(1, { hang: true });
    await waitFor(() => push.stats().requests > requests, { timeoutMs: 20_000 });

    const { code, ms } = await stop(herald);
    expect(code, herald.output()).toBe(1);
    expect(ms).toBeGreaterThanOrEqual(2_900);
    // The bound, plus the time a busy machine takes to run the timer and exit.
    expect(ms).toBeLessThan(3_000 + 5_000);
    expect(herald.output()).toContain('shutdown took longer than 3 s (SHUTDOWN_TIMEOUT_SECONDS)');
  }, 120_000);
});
