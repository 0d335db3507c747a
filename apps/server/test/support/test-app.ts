import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app';
import type { StaticDirs } from '../../src/platform/static-files';
import { loadConfig, type Config } from '../../src/config';
import type { AppContext } from '../../src/context';
import { createAuthService } from '../../src/features/auth/service';
import type { Clock } from '../../src/platform/clock';
import type { Mailer } from '../../src/platform/mail';
import { openRuntime, type Runtime } from '../../src/runtime';
import { createTestDatabase } from './test-database';

export interface TestResponse<T = any> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | number | undefined>;
}

export interface TestUser {
  id: string;
  email: string;
  password: string;
  name: string;
  token: string;
}

export interface TestApp {
  app: FastifyInstance;
  ctx: AppContext;
  runtime: Runtime;
  config: Config;
  dataDir: string;
  request<T = any>(
    method: string,
    url: string,
    options?: { token?: string; body?: unknown; headers?: Record<string, string>; remoteAddress?: string },
  ): Promise<TestResponse<T>>;
  /** Creates a verified user directly and signs them in through the API. */
  createUser(overrides?: Partial<Pick<TestUser, 'email' | 'password' | 'name'>>): Promise<TestUser>;
  /** Creates a site through the API. */
  createSite(token: string, body?: Record<string, unknown>): Promise<any>;
  /** Mails written to DATA_DIR/mail (the outbox used when SMTP_URL is unset), oldest first. */
  outbox(): Array<{ to: string; subject: string; text: string }>;
  close(): Promise<void>;
}

let userCounter = 0;

export interface TestAppOptions {
  env?: Record<string, string>;
  clock?: Clock;
  mailer?: Mailer;
  /** Runs on the fresh, empty database before Herald opens (and migrates) it: e.g. to build an older schema with rows in it. */
  prepareDatabase?: (database: Config['database']) => Promise<void>;
  /** Built dashboard and SDK folders; none by default. */
  staticDirs?: StaticDirs;
}

export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-test-'));
  const config = {
    ...loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PUBLIC_URL: 'http://herald.test', ...options.env }),
    database: await createTestDatabase(dataDir),
  };
  await options.prepareDatabase?.(config.database);
  const runtime = await openRuntime(config, { clock: options.clock, mailer: options.mailer });
  const app = await buildApp(runtime.ctx, { staticDirs: options.staticDirs ?? { web: path.join(dataDir, 'no-web'), sdk: path.join(dataDir, 'no-sdk') } });
  await app.ready();

  const request: TestApp['request'] = async (method, url, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    const response = await app.inject({
      method: method as 'GET',
      url,
      headers,
      ...(opts.remoteAddress ? { remoteAddress: opts.remoteAddress } : {}),
      ...(opts.body !== undefined ? { payload: opts.body as object } : {}),
    });
    let body: unknown = response.body;
    if ((response.headers['content-type'] ?? '').toString().includes('application/json')) body = response.json();
    return { status: response.statusCode, body: body as any, headers: response.headers };
  };

  return {
    app,
    ctx: runtime.ctx,
    runtime,
    config,
    dataDir,
    request,
    async createUser(overrides = {}) {
      userCounter += 1;
      const email = overrides.email ?? `user${userCounter}-${Date.now()}@example.com`;
      const password = overrides.password ?? 'correct horse battery staple';
      const name = overrides.name ?? `User ${userCounter}`;
      const user = await createAuthService(runtime.ctx).createUser({ name, email, password, verified: true });
      const login = await request('POST', '/api/auth/login', { body: { email, password } });
      if (login.status !== 200) throw new Error(`login failed: ${JSON.stringify(login.body)}`);
      return { id: user.id, email, password, name, token: login.body.data.token };
    },
    async createSite(token, body = {}) {
      const response = await request('POST', '/api/sites', { token, body: { name: 'Shop', url: 'https://shop.example', ...body } });
      if (response.status !== 201) throw new Error(`create site failed: ${JSON.stringify(response.body)}`);
      return response.body.data.site;
    },
    outbox() {
      const dir = path.join(dataDir, 'mail');
      if (!fs.existsSync(dir)) return [];
      return fs
        .readdirSync(dir)
        .sort()
        .map((file) => {
          const raw = fs.readFileSync(path.join(dir, file), 'utf8');
          const [head = '', ...rest] = raw.split('\n\n');
          const header = (name: string) => new RegExp(`^${name}: (.*)$`, 'm').exec(head)?.[1] ?? '';
          return { to: header('To'), subject: header('Subject'), text: rest.join('\n\n') };
        });
    },
    async close() {
      await app.close();
      await runtime.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Waits until a condition holds (mail is sent after the response, for example). Bounded. */
export async function waitFor<T>(probe: () => T | Promise<T>, { timeoutMs = 5000, intervalMs = 20 } = {}): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error('waitFor: condition not met in time');
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
