import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { NOTIFICATION_TYPES } from '@herald/contracts';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../src/app';
import { loadConfig, type Config } from '../src/config';
import { generateAudience } from '../src/demo/audience';
import { demoCommand } from '../src/demo/command';
import { SeededRandom } from '../src/demo/random';
import { addDays, todayOf } from '../src/features/analytics/local-days';
import { createAuthService } from '../src/features/auth/service';
import { checkPushSubscription } from '../src/features/subscribers/push-subscription';
import { openRuntime, type Runtime } from '../src/runtime';
import { createTestDatabase } from './support/test-database';
import { runsOfSite } from './support/delivery-rows';

const run = promisify(execFile);
const serverRoot = path.resolve(import.meta.dirname, '..');
const mainTs = path.join(serverRoot, 'src/main.ts');
const PASSWORD = 'demo-test-password';

/** `herald demo …` as a separate process (the source through tsx: no build needed). */
function cliArgs(args: string[]): string[] {
  return ['--import', import.meta.resolve('tsx'), mainTs, 'demo', ...args];
}

/** The environment that points a process at one test database. */
function envFor(dataDir: string, database: Config['database']): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    ...(database.kind === 'postgres' ? { DATABASE_URL: database.url } : {}),
  };
}

/** Runs demoCommand in this process, collecting what it prints. */
async function demoInProcess(args: string[], env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => void out.push(parts.join(' ')));
  const error = vi.spyOn(console, 'error').mockImplementation((...parts: unknown[]) => void err.push(parts.join(' ')));
  try {
    const code = await demoCommand(args, env);
    return { code, out: out.join('\n'), err: err.join('\n') };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('herald demo', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-demo-'));
  let database: Config['database'];
  let printed: string;
  let runtime: Runtime;
  let app: FastifyInstance;
  let token: string;
  let site: any;
  /** When the demo process started: every run due by then has been played. */
  let seedStartedAt: number;

  const api = async (url: string) => {
    const response = await app.inject({ method: 'GET', url: `/api${url}`, headers: { authorization: `Bearer ${token}` } });
    expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
    return response.json().data;
  };

  beforeAll(async () => {
    database = await createTestDatabase(dataDir);
    const started = Date.now();
    seedStartedAt = started;
    const { stdout } = await run(process.execPath, cliArgs(['--data-dir', dataDir, '--password', PASSWORD]), { env: envFor(dataDir, database), cwd: dataDir });
    printed = stdout;
    // "A few seconds", with room for a busy machine and tsx compiling the server first.
    expect(Date.now() - started).toBeLessThan(45_000);

    const config = { ...loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PUBLIC_URL: 'http://herald.test' }), database };
    runtime = await openRuntime(config);
    app = await buildApp(runtime.ctx, { staticDirs: { web: path.join(dataDir, 'no-web'), sdk: path.join(dataDir, 'no-sdk') } });
    await app.ready();
    const login = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: 'demo@herald.local', password: PASSWORD } });
    expect(login.statusCode).toBe(200);
    token = login.json().data.token;
    [site] = (await api('/sites')).sites;
  }, 90_000);

  afterAll(async () => {
    await app?.close();
    await runtime?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints the login on lines of their own and says the subscribers are not real browsers', () => {
    expect(printed).toMatch(/^Email: +demo@herald\.local$/m);
    expect(printed).toMatch(new RegExp(`^Password: +${PASSWORD}$`, 'm'));
    expect(printed).toMatch(/^Open: +http:\/\/localhost:3000$/m);
    expect(printed).toMatch(/Demo subscribers are not real browsers: a send to them fails/);
    expect(printed).toMatch(/3,000 subscribers/);
    // Into the database the configuration names: the SQLite file of the data folder, or DATABASE_URL.
    expect(printed).toContain(database.kind === 'postgres' ? 'is ready in the PostgreSQL database of DATABASE_URL' : `is ready in ${path.join(dataDir, 'herald.db')}`);
  });

  it('creates the demo shop for the demo account, its active count equal to its active subscribers', async () => {
    expect(site).toMatchObject({ name: 'Demo Shop', url: 'https://shop.example', settings: { timezone: 'America/New_York', valueCurrency: 'USD' } });
    const all = await api(`/sites/${site.id}/subscribers?limit=1`);
    const active = await api(`/sites/${site.id}/subscribers?is_active=true&limit=1`);
    const inactive = await api(`/sites/${site.id}/subscribers?is_active=false&limit=1`);
    expect(all.total).toBe(3000);
    expect(active.total).toBe(site.subscriber_count);
    expect(inactive.total).toBeGreaterThan(100);
    expect(active.total + inactive.total).toBe(3000);
  });

  it('shows a living dashboard: subscribers, sends, deliveries and clicks in the last 30 days', async () => {
    const dashboard = await api(`/sites/${site.id}/analytics/dashboard?days=30`);
    const chart = dashboard.chart as Array<{ sent: number; delivered: number; clicked: number }>;
    const sum = (key: 'sent' | 'delivered' | 'clicked') => chart.reduce((total, day) => total + day[key], 0);
    expect(dashboard.hasData).toBe(true);
    expect(dashboard.metrics.totalSubscribers.value).toBe(site.subscriber_count);
    expect(dashboard.metrics.notificationsSent.value).toBe(sum('sent'));
    expect(sum('sent')).toBeGreaterThan(10_000);
    expect(sum('delivered')).toBeGreaterThan(0.85 * sum('sent'));
    expect(sum('delivered')).toBeLessThanOrEqual(sum('sent'));
    expect(sum('clicked')).toBeGreaterThan(0.03 * sum('delivered'));
    expect(dashboard.metrics.clickRate.value).toBeGreaterThan(3);
    expect(dashboard.metrics.valueGenerated.value).toBeGreaterThan(0);
    expect(dashboard.recentNotifications).toHaveLength(5);
    // Every day of the last week has clicks: welcome steps and triggered sends go out daily.
    for (const day of chart.slice(-7, -1)) expect(day.clicked).toBeGreaterThan(0);
  });

  it('has history whose rollup adds up to the notifications’ counters, and counters that agree with each other', async () => {
    const { notifications } = await api(`/sites/${site.id}/notifications`);
    const { campaigns } = await api(`/sites/${site.id}/welcome-campaigns`);
    const counters = [...notifications.map((n: any) => n.stats), ...campaigns.flatMap((c: any) => c.steps.map((s: any) => s.stats))];
    const total = (key: string) => counters.reduce((sum: number, stats: any) => sum + stats[key], 0);
    for (const n of notifications) {
      expect(n.stats.delivered).toBeLessThanOrEqual(n.stats.sent);
      expect(n.stats.clicked).toBeLessThanOrEqual(n.stats.delivered);
      expect(n.stats.failed + n.stats.sent).toBeLessThanOrEqual(n.stats.total);
    }
    // The whole history lies within the last 90 days of the site's calendar.
    const today = todayOf(seedStartedAt, site.settings.timezone);
    const engagement = await api(`/sites/${site.id}/analytics/engagement?from=${addDays(today, -90)}&to=${today}`);
    expect(engagement.sent).toBe(total('sent'));
    expect(engagement.delivered).toBe(total('delivered'));
    expect(engagement.clicked).toBe(total('clicked'));
    expect(engagement.failed).toBe(total('failed'));
    expect(engagement.sent).toBeGreaterThan(30_000);
  });

  it('has an hourly rollup that matches the subscribers’ and the deliveries’ own timestamps, hour by hour', async () => {
    const db = runtime.ctx.db;
    const hour = (at: number | null) => (at === null ? null : Math.floor(Number(at) / 3_600_000) * 3_600_000);
    const expected = new Map<number, Record<string, number>>();
    const add = (at: number | null, key: string) => {
      const h = hour(at);
      if (h === null) return;
      const row = expected.get(h) ?? { sent: 0, delivered: 0, clicked: 0, subscribed: 0, unsubscribed: 0 };
      row[key]! += 1;
      expected.set(h, row);
    };
    for (const s of await db.selectFrom('subscribers').select(['subscribed_at', 'unsubscribed_at']).where('site_id', '=', site.id).execute()) {
      add(s.subscribed_at, 'subscribed');
      add(s.unsubscribed_at, 'unsubscribed');
    }
    for (const d of await db.selectFrom('deliveries').select(['sent_at', 'delivered_at', 'clicked_at']).where('run_seq', 'in', runsOfSite(site.id)).execute()) {
      add(d.sent_at, 'sent');
      add(d.delivered_at, 'delivered');
      add(d.clicked_at, 'clicked');
    }
    const rollup = await db.selectFrom('stats_hourly').selectAll().where('site_id', '=', site.id).execute();
    const actual = new Map(
      rollup
        .map((r) => [Number(r.hour_start), { sent: Number(r.sent), delivered: Number(r.delivered), clicked: Number(r.clicked), subscribed: Number(r.subscribed), unsubscribed: Number(r.unsubscribed) }] as const)
        .filter(([, r]) => r.sent + r.delivered + r.clicked + r.subscribed + r.unsubscribed > 0),
    );
    expect(actual).toEqual(expected);

    // Each run's counters are its deliveries', and each notification's the sum of its runs'.
    const runs = await db.selectFrom('notification_runs').selectAll().where('site_id', '=', site.id).execute();
    const deliveries = await db
      .selectFrom('deliveries')
      .innerJoin('notification_runs', 'notification_runs.seq', 'deliveries.run_seq')
      .select(['notification_runs.id as run_id', 'deliveries.status', 'deliveries.delivered_at', 'deliveries.clicked_at'])
      .where('notification_runs.site_id', '=', site.id)
      .execute();
    const byRun = new Map<string, { total: number; sent: number; failed: number; delivered: number; clicked: number }>();
    for (const d of deliveries) {
      const c = byRun.get(d.run_id) ?? { total: 0, sent: 0, failed: 0, delivered: 0, clicked: 0 };
      c.total += 1;
      if (d.status === 'sent') c.sent += 1;
      if (d.status === 'failed') c.failed += 1;
      if (d.delivered_at !== null) c.delivered += 1;
      if (d.clicked_at !== null) c.clicked += 1;
      byRun.set(d.run_id, c);
    }
    for (const r of runs) {
      const c = byRun.get(r.id) ?? { total: 0, sent: 0, failed: 0, delivered: 0, clicked: 0 };
      expect({ total: r.total_count, sent: r.sent_count, failed: r.failed_count, delivered: r.delivered_count, clicked: r.clicked_count }).toEqual(c);
    }
    const notifications = await db.selectFrom('notifications').selectAll().where('site_id', '=', site.id).execute();
    for (const n of notifications) {
      const own = runs.filter((r) => r.notification_id === n.id);
      expect(n.sent_count).toBe(own.reduce((sum, r) => sum + r.sent_count, 0));
      expect(n.clicked_count).toBe(own.reduce((sum, r) => sum + r.clicked_count, 0));
    }
    // Nothing is left half-sent for `serve` to pick up: only runs that were
    // still in the future when the demo ran wait. (Measured against the demo's
    // start, not now: a welcome step due a minute after the seed is rightly
    // pending, and may have come due while these tests ran.)
    expect(runs.filter((r) => r.status === 'sending')).toEqual([]);
    expect(runs.filter((r) => r.status === 'pending' && r.due_at <= seedStartedAt)).toEqual([]);
  });

  it('has the subscriber growth report agree with the subscriber rows', async () => {
    const today = todayOf(seedStartedAt, site.settings.timezone);
    const growth = await api(`/sites/${site.id}/analytics/subscribers?from=${addDays(today, -91)}&to=${today}`);
    const inactive = await api(`/sites/${site.id}/subscribers?is_active=false&limit=1`);
    expect(growth.totals.new).toBe(3000);
    expect(growth.totals.unsubscribed).toBe(inactive.total);
    expect(growth.series.at(-1).active).toBe(site.subscriber_count);
    // Growing: the last 30 days bring more subscribers than the first 30.
    const firstMonth = growth.series.slice(0, 30).reduce((sum: number, d: any) => sum + d.new, 0);
    const lastMonth = growth.series.slice(-30).reduce((sum: number, d: any) => sum + d.new, 0);
    expect(lastMonth).toBeGreaterThan(firstMonth);
  });

  it('has every notification type, and drafts, scheduled, completed (with and without errors), cancelled and failed ones', async () => {
    const { notifications, counts } = await api(`/sites/${site.id}/notifications`);
    expect(new Set(notifications.map((n: any) => n.type))).toEqual(new Set(NOTIFICATION_TYPES));
    for (const status of ['draft', 'scheduled', 'completed', 'completed_with_errors', 'cancelled', 'failed']) expect(counts[status], status).toBeGreaterThan(0);
    expect(counts.completed + counts.completed_with_errors).toBeGreaterThanOrEqual(20);
    // Every failed delivery has its reason group; the failed send says why, and was never "sent".
    for (const n of notifications.filter((x: any) => x.status === 'failed' || x.status === 'completed_with_errors')) {
      const performance = await api(`/notifications/${n.id}/performance`);
      expect(performance.failures.reduce((sum: number, g: any) => sum + g.count, 0), n.title).toBe(n.counts.failed);
      expect(n.last_error, n.title).toMatch(/not accepted/);
      if (n.status === 'failed') expect(n.sent_at, n.title).toBeNull();
    }
    expect(counts.draft).toBe(2);
    // No notification is left "sending": serve would send it, for real, to the demo's made-up endpoints.
    expect(counts.sending ?? 0).toBe(0);

    const recurring = notifications.filter((n: any) => n.type === 'RECURRING');
    expect(recurring.map((n: any) => n.recurringSchedule.isActive).sort()).toEqual([false, true]);
    const weekly = recurring.find((n: any) => n.recurringSchedule.isActive);
    expect(Date.parse(weekly.recurringSchedule.nextRunAt)).toBeGreaterThan(seedStartedAt);
    expect(weekly.stats.sent).toBeGreaterThan(0);
    const triggered = notifications.filter((n: any) => n.type === 'TRIGGERED');
    expect(triggered.map((n: any) => n.trigger.event).sort()).toEqual(['cart_abandoned', 'order_shipped']);
    for (const n of triggered) expect(n.stats.sent).toBeGreaterThan(10);

    const failed = notifications.find((n: any) => n.status === 'failed');
    expect(failed.stats.failed).toBe(failed.stats.total);
    expect(failed.last_error).toMatch(/^\d+ of \d+ not accepted: \d+ unreachable \((fcm|mozilla|apple|microsoft)\)/);
    const why = await api(`/notifications/${failed.id}/performance`);
    expect(why.failures.every((g: any) => g.reason === 'unreachable' && /gave up after 5 attempts/.test(g.sample_error))).toBe(true);
    const scheduled = notifications.find((n: any) => n.type === 'ONE_TIME' && n.status === 'scheduled');
    expect(Date.parse(scheduled.scheduled_at)).toBeGreaterThan(seedStartedAt);
  });

  it('has segments, a three-step welcome campaign with enrolments, a paused feed, an API key and recent events', async () => {
    const { segments } = await api(`/sites/${site.id}/segments`);
    expect(segments.map((s: any) => s.name)).toEqual(expect.arrayContaining(['Chrome users', 'Germany', 'VIP customers']));
    for (const segment of segments) expect(segment.estimated_count, segment.name).toBeGreaterThan(0);
    const chrome = segments.find((s: any) => s.name === 'Chrome users');
    expect(chrome.estimated_count).toBeGreaterThan(0.4 * site.subscriber_count);

    const { campaigns } = await api(`/sites/${site.id}/welcome-campaigns`);
    expect(campaigns).toHaveLength(1);
    expect(campaigns[0]).toMatchObject({ name: 'Welcome series', is_active: true, steps_count: 3 });
    expect(campaigns[0].stats.enrolled).toBeGreaterThan(200);
    expect(campaigns[0].stats.clicked).toBeGreaterThan(0);

    const { feeds } = await api(`/sites/${site.id}/rss-feeds`);
    expect(feeds).toHaveLength(1);
    expect(feeds[0]).toMatchObject({ is_active: false });
    expect(new URL(feeds[0].url).hostname.endsWith('.example')).toBe(true);

    expect((await api(`/sites/${site.id}/api-keys`)).api_keys).toHaveLength(1);
    const { events } = await api(`/sites/${site.id}/events?limit=100`);
    expect(new Set(events.map((e: any) => e.event))).toEqual(new Set(['cart_abandoned', 'order_shipped', 'wishlist_added']));
    expect(events.some((e: any) => e.triggered > 0)).toBe(true);
  });

  it('gives every subscriber a push subscription the subscribe API would accept, on the real push services', async () => {
    const rows = await runtime.ctx.db.selectFrom('subscribers').select(['endpoint', 'p256dh', 'auth', 'browser']).where('site_id', '=', site.id).execute();
    const hosts = new Set<string>();
    for (const row of rows) {
      expect(() => checkPushSubscription({ endpoint: row.endpoint, keys: { p256dh: row.p256dh, auth: row.auth } }, [])).not.toThrow();
      hosts.add(new URL(row.endpoint).hostname.replace(/^wns2-\w+\./, 'wns2-*.'));
    }
    expect(hosts).toEqual(new Set(['fcm.googleapis.com', 'updates.push.services.mozilla.com', 'web.push.apple.com', 'wns2-*.notify.windows.com']));
    expect(new Set(rows.map((r) => r.p256dh)).size).toBe(rows.length);
    const browsers = rows.map((r) => r.browser);
    const share = (name: string) => browsers.filter((b) => b === name).length / browsers.length;
    expect(share('Chrome')).toBeGreaterThan(0.5);
    for (const name of ['Firefox', 'Safari', 'Edge']) expect(share(name), name).toBeGreaterThan(0.05);
  });

  it('refuses a second run on the same folder, in one line, and changes nothing', async () => {
    const second = await demoInProcess(['--data-dir', dataDir], envFor(dataDir, database));
    expect(second.code).toBe(1);
    expect(second.err).toMatch(/^Not filling .+: it already holds 1 account and 1 site\. The demo fills only an empty database; (give --data-dir a new folder|point DATABASE_URL at an empty database)\.$/);
    expect(second.err.split('\n')).toHaveLength(1);
    expect((await api(`/sites/${site.id}/subscribers?limit=1`)).total).toBe(3000);
    expect((await api('/sites')).sites).toHaveLength(1);
  });

  it('with --serve, serves a folder that already holds the demo as it is, on 127.0.0.1', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, cliArgs(['--data-dir', dataDir, '--password', PASSWORD, '--serve']), {
      env: { ...envFor(dataDir, database), PORT: String(port) },
      cwd: dataDir,
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      const deadline = Date.now() + 45_000;
      while (!/^Password: /m.test(output)) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`demo --serve did not start:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(output).toMatch(/already holds the demo: serving it as it is/);
      expect(output).toMatch(new RegExp(`^Open: +http://localhost:${port}$`, 'm'));
      const login = await fetch(`http://127.0.0.1:${port}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'demo@herald.local', password: PASSWORD }),
      });
      expect(login.status).toBe(200);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)));
    }
  }, 60_000);
});

describe('herald demo on a database that is not empty', () => {
  it('refuses a database holding an account but no site, and leaves it as it was', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-demo-'));
    const database = await createTestDatabase(dataDir);
    try {
      const runtime = await openRuntime({ ...loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), database });
      try {
        await createAuthService(runtime.ctx).createUser({ name: 'Owner', email: 'owner@example.com', password: 'owner-password', verified: true });
        const refused = await demoInProcess(['--password', PASSWORD], envFor(dataDir, database));
        expect(refused.code).toBe(1);
        expect(refused.err).toMatch(/it already holds 1 account and 0 sites/);
        const users = await runtime.ctx.db.selectFrom('users').select('email').execute();
        expect(users).toEqual([{ email: 'owner@example.com' }]);
        expect(await runtime.ctx.db.selectFrom('subscribers').select('id').execute()).toEqual([]);
      } finally {
        await runtime.close();
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('explains itself with --help, and refuses an unknown option or a short password', async () => {
    const env = { DATA_DIR: path.join(os.tmpdir(), 'herald-demo-never-created') };
    const help = await demoInProcess(['--help'], env);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^Usage: herald demo \[--data-dir DIR\] \[--password P\] \[--serve\]/);
    expect(help.out).toMatch(/A database holding any account or site is never touched/);
    const unknown = await demoInProcess(['--force'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/Unknown option '--force'/);
    const short = await demoInProcess(['--password', 'short'], env);
    expect(short.code).toBe(2);
    expect(fs.existsSync(env.DATA_DIR)).toBe(false);
  });
});

describe('the demo audience', () => {
  it('is the same from the same seed, apart from the keys the browsers would generate', () => {
    const options = { siteId: 'site', count: 200, now: Date.UTC(2026, 5, 1, 12), days: 90, busyDays: new Map([[10, 2]]), unsubscribedShare: 0.09 };
    const strip = (rows: ReturnType<typeof generateAudience>) => rows.map(({ row: { p256dh: _p, auth: _a, ...rest }, tags }) => ({ ...rest, tags }));
    const first = generateAudience(new SeededRandom(7), options);
    const second = generateAudience(new SeededRandom(7), options);
    expect(strip(second)).toEqual(strip(first));
    expect(second[0]!.row.p256dh).not.toBe(first[0]!.row.p256dh);
    expect(strip(generateAudience(new SeededRandom(8), options))).not.toEqual(strip(first));
    for (const { row } of first) {
      expect(row.subscribed_at).toBeLessThan(options.now);
      expect(row.subscribed_at).toBeGreaterThan(options.now - 91 * 86_400_000);
      if (row.unsubscribed_at !== null) expect(row.unsubscribed_at).toBeGreaterThan(row.subscribed_at);
      expect(row.is_active).toBe(row.unsubscribed_at === null ? 1 : 0);
    }
  });
});
