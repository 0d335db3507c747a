// A whole Herald deployment on this machine, for multi-process tests: a
// throwaway PostgreSQL cluster, a redis-server, and real processes of the
// built product (one `serve` without engine, N `scheduler`, M `worker`), all
// sharing DATABASE_URL, REDIS_URL and SECRET_KEY, listening on 127.0.0.1.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { openDatabase, type DatabaseHandle } from '../../src/db/database';
import type { Database } from '../../src/db/schema';
import { freePort, startPgCluster, type PgCluster } from '../support/pg-cluster';
import { startRedis, type RedisServer } from '../support/redis-server';
import { HeraldProcess, stopAll, waitUntil } from './herald-processes';
import { runSeqsOfNotification } from '../../src/db/run-seq';

export const OWNER = { email: 'owner@scale.example', password: 'owner-password-1' };

export interface ApiResponse {
  status: number;
  body: any;
}

export interface DeploymentOptions {
  schedulers: number;
  workers: number;
  /** Push-service origins Herald may send to (EXTRA_PUSH_ORIGINS). */
  pushOrigins: string[];
  /** Variables for every process (after the defaults). */
  env?: Record<string, string>;
  /** Variables for the worker processes only. */
  workerEnv?: Record<string, string>;
}

export class Deployment {
  readonly schedulers: HeraldProcess[] = [];
  readonly workers: HeraldProcess[] = [];
  serve!: HeraldProcess;
  token = '';
  private workerCount = 0;
  private schedulerCount = 0;
  private readonly handle: DatabaseHandle;

  private constructor(
    readonly pg: PgCluster,
    readonly redis: RedisServer,
    readonly databaseUrl: string,
    readonly env: Record<string, string>,
    private readonly workerEnv: Record<string, string>,
    private readonly dataDir: string,
  ) {
    // The test's own view of the database, for seeding and for checking invariants.
    this.handle = openDatabase({ kind: 'postgres', url: databaseUrl }, { poolSize: 4 });
  }

  get db(): Kysely<Database> {
    return this.handle.db;
  }

  static async start(options: DeploymentOptions): Promise<Deployment> {
    const cluster = await startPgCluster();
    let redis: RedisServer | undefined;
    try {
      const admin = new pg.Client({ connectionString: cluster.adminUrl });
      await admin.connect();
      await admin.query('CREATE DATABASE herald');
      await admin.end();
      const databaseUrl = cluster.adminUrl.replace(/\/postgres$/, '/herald');
      redis = await startRedis();
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-scale-'));
      const port = String(await freePort());
      const env: Record<string, string> = {
        DATABASE_URL: databaseUrl,
        REDIS_URL: redis.url,
        SECRET_KEY: crypto.randomBytes(32).toString('hex'),
        DATA_DIR: dataDir,
        PORT: port,
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        EXTRA_PUSH_ORIGINS: options.pushOrigins.join(','),
        ADMIN_EMAIL: OWNER.email,
        ADMIN_PASSWORD: OWNER.password,
        SCHEDULER_INTERVAL_MS: '200',
        ...options.env,
      };
      const deployment = new Deployment(cluster, redis, databaseUrl, env, options.workerEnv ?? {}, dataDir);
      // As an operator would: migrate once, then start the processes.
      await HeraldProcess.migrate(env);
      deployment.serve = await HeraldProcess.start('serve', 'serve', env, ['--no-scheduler', '--no-worker']);
      await Promise.all([
        ...Array.from({ length: options.schedulers }, () => deployment.addScheduler()),
        ...Array.from({ length: options.workers }, () => deployment.addWorker()),
      ]);
      const login = await deployment.api('POST', '/auth/login', { email: OWNER.email, password: OWNER.password });
      if (login.status !== 200) throw new Error(`login failed: ${JSON.stringify(login.body)}`);
      deployment.token = login.body.data.token;
      return deployment;
    } catch (error) {
      await stopAll(5_000);
      await redis?.stop();
      cluster.stop();
      throw error;
    }
  }

  async addScheduler(): Promise<HeraldProcess> {
    const scheduler = await HeraldProcess.start(`scheduler-${++this.schedulerCount}`, 'scheduler', this.env);
    this.schedulers.push(scheduler);
    return scheduler;
  }

  /** Starts one more worker process (LOG_LEVEL debug: one line per batch it sent). */
  async addWorker(env: Record<string, string> = {}): Promise<HeraldProcess> {
    const worker = await HeraldProcess.start(`worker-${++this.workerCount}`, 'worker', { ...this.env, LOG_LEVEL: 'debug', ...this.workerEnv, ...env });
    this.workers.push(worker);
    return worker;
  }

  /** A call to the API of the `serve` process, signed in as the owner. */
  async api(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse> {
    const response = await fetch(`${this.serve.url}/api${url}`, {
      method,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(this.token ? { authorization: `Bearer ${this.token}` } : {}), ...headers },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  }

  async createSite(name: string): Promise<{ id: string; vapid_public_key: string }> {
    const response = await this.api('POST', '/sites', { name, url: `https://${name.toLowerCase().replace(/\W+/g, '-')}.example` });
    if (response.status !== 201) throw new Error(`site not created: ${JSON.stringify(response.body)}`);
    return response.body.data.site;
  }

  /** Creates a draft notification and returns its id. */
  async createNotification(siteId: string, overrides: Record<string, unknown> = {}): Promise<string> {
    const response = await this.api('POST', `/sites/${siteId}/notifications`, {
      type: 'ONE_TIME',
      title: 'Flash sale',
      message: 'Only today',
      destination_url: 'https://shop.example/sale',
      status: 'DRAFT',
      ...overrides,
    });
    if (response.status !== 201) throw new Error(`notification not created: ${JSON.stringify(response.body)}`);
    return response.body.data.notification.id;
  }

  async notification(id: string): Promise<any> {
    return (await this.api('GET', `/notifications/${id}`)).body.data.notification;
  }

  async waitForNotification(id: string, statuses: string[], timeoutMs: number): Promise<any> {
    return waitUntil(
      `notification ${id} to be ${statuses.join(' or ')}`,
      async () => {
        const notification = await this.notification(id);
        return statuses.includes(notification.status) ? notification : undefined;
      },
      timeoutMs,
      250,
    );
  }

  /**
   * Seeds subscribers straight into the database (the public API is rate
   * limited per address), in multi-row INSERTs, and keeps the site's
   * active count right. Returns their ids in the order given.
   */
  async seedSubscribers(siteId: string, subscriptions: Array<{ endpoint: string; keys: { p256dh: string; auth: string } }>): Promise<string[]> {
    const now = Date.now();
    const ids: string[] = [];
    for (let from = 0; from < subscriptions.length; from += 1000) {
      const rows = subscriptions.slice(from, from + 1000).map((s) => {
        const id = crypto.randomUUID();
        ids.push(id);
        return {
          id,
          site_id: siteId,
          endpoint: s.endpoint,
          endpoint_hash: crypto.createHash('sha256').update(s.endpoint).digest('hex'),
          p256dh: s.keys.p256dh,
          auth: s.keys.auth,
          browser: 'Firefox',
          os: 'Linux',
          country: 'Unknown',
          language: null,
          timezone: null,
          user_agent: null,
          external_id: null,
          is_active: 1 as const,
          subscribed_at: now,
          last_seen_at: null,
          unsubscribed_at: null,
          updated_at: now,
        };
      });
      await this.db.insertInto('subscribers').values(rows).execute();
    }
    await this.db
      .updateTable('sites')
      .set((eb) => ({ active_subscriber_count: eb('active_subscriber_count', '+', subscriptions.length) }))
      .where('id', '=', siteId)
      .execute();
    return ids;
  }

  /** Delivery rows of a notification: per subscriber, how many rows and their statuses. */
  async deliveriesOf(notificationId: string): Promise<Array<{ subscriber_id: string; status: string; attempts: number; error: string | null }>> {
    return this.db.selectFrom('deliveries').innerJoin('subscribers', 'subscribers.seq', 'deliveries.subscriber_seq').select(['subscribers.id as subscriber_id', 'status', 'attempts', 'error']).where('run_seq', 'in', runSeqsOfNotification(notificationId)).execute();
  }

  /** What a failed test needs to see: runs, delivery states, and each process's warnings and errors. */
  async diagnose(): Promise<string> {
    const lines: string[] = [];
    try {
      const runs = await this.db.selectFrom('notification_runs').select(['id', 'seq', 'status', 'fanout_done', 'lease_owner', 'lease_until', 'total_count', 'sent_count', 'last_error']).execute();
      lines.push(`now ${Date.now()}`, 'runs:', ...runs.map((r) => `  ${JSON.stringify(r)}`));
      const states = await this.db
        .selectFrom('deliveries')
        .select((eb) => ['run_seq', 'status', eb.fn.countAll<number>().as('n'), eb.fn.max('attempts').as('max_attempts'), eb.fn.max('lease_until').as('max_lease'), eb.fn.max('next_attempt_at').as('max_next')])
        .groupBy(['run_seq', 'status'])
        .execute();
      lines.push('deliveries:', ...states.map((s) => `  ${JSON.stringify(s)}`));
    } catch (error) {
      lines.push(`database unreadable: ${String(error)}`);
    }
    const dump = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-scale-logs-'));
    lines.push(`full output of every process in ${dump}`);
    for (const p of [this.serve, ...this.schedulers, ...this.workers]) {
      fs.writeFileSync(path.join(dump, `${p.name}.log`), p.output());
      const notable = p.logs().filter((l) => l.level >= 40);
      lines.push(`${p.name} (pid ${p.pid}, ${p.alive ? 'running' : `exited ${p.exitCode ?? p.exitSignal}`}): ${notable.length} warnings/errors`);
      for (const l of notable.slice(-8)) lines.push(`  ${JSON.stringify(l).slice(0, 400)}`);
    }
    return lines.join('\n');
  }

  /** Stops every process (SIGTERM, SIGKILL after a grace period), then Redis and PostgreSQL. */
  async close(): Promise<void> {
    await stopAll(15_000);
    await this.handle.close().catch(() => undefined);
    await this.redis.stop();
    this.pg.stop();
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** Counts per key (subscription id, title…). */
export function countBy<T>(items: Iterable<T>, key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}
