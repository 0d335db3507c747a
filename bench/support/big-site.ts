// The large site the read benchmarks share (bench:dashboard, bench:lists): one
// site seeded with bulk SQL on SQLite or a throwaway PostgreSQL, behind the
// real Herald HTTP server on 127.0.0.1.
//
// The data set: "events" are sent + delivered + clicked. Deliveries are
// events / 2 rows: every row was sent, 90% delivered and 10% clicked (an 11.1%
// click rate). They belong to `notifications` notifications spread evenly over
// the last 90 days, each sent to an equal share of the subscribers who had
// subscribed by then; subscribers joined evenly over 180 days and 8% have
// unsubscribed since. stats_hourly, the notifications' counters and the
// site's active count are then built from those rows, exactly as the live
// paths would have written them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { buildApp } from '../../apps/server/src/app';
import { loadConfig } from '../../apps/server/src/config';
import type { DatabaseKind } from '../../apps/server/src/db/database';
import type { Database } from '../../apps/server/src/db/schema';
import { HOUR_MS } from '../../apps/server/src/features/analytics/site-counters';
import { createAuthService } from '../../apps/server/src/features/auth/service';
import { openRuntime, type Runtime } from '../../apps/server/src/runtime';
import { createDatabase, type PgCluster } from '../../apps/server/test/support/pg-cluster';

export const DAY_MS = 86_400_000;
export const WINDOW_DAYS = 90;
const SUBSCRIBE_SPAN_DAYS = 180;

export const fmt = (n: number) => n.toLocaleString('en-US');
export const ms = (n: number) => `${n.toFixed(n < 10 ? 2 : 1)} ms`;

export function positiveInt(name: string, value: string | undefined): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive whole number`);
  return n;
}

export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export async function timed<T>(label: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await work();
  console.log(`    ${label.padEnd(44)} ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return result;
}

/** A numbered row source from…to as a CTE named seq(d), for `WITH … INSERT`. */
export function sequence(kind: DatabaseKind, from: number, to: number): string {
  return kind === 'postgres'
    ? `WITH seq(d) AS (SELECT generate_series(${from}::bigint, ${to}::bigint))`
    : `WITH RECURSIVE seq(d) AS (SELECT ${from} UNION ALL SELECT d + 1 FROM seq WHERE d < ${to})`;
}

export interface SiteShape {
  subscribers: number;
  /** sent + delivered + clicked; deliveries are events / 2 rows. */
  events: number;
  notifications: number;
  timezone: string;
}

/** Delivery rows per notification, checked against the audience it can reach. */
export function deliveriesPerNotification(shape: SiteShape): number {
  const perNotification = Math.floor(shape.events / 2 / shape.notifications);
  if (perNotification < 1) throw new Error(`--events must be at least ${2 * shape.notifications}`);
  if (perNotification > shape.subscribers / 2) throw new Error('--events is too large for --subscribers: each notification goes to at most half of them');
  return perNotification;
}

export async function seedBigSite(db: Kysely<Database>, kind: DatabaseKind, siteId: string, now: number, shape: SiteShape): Promise<void> {
  // siteId is a UUID Herald generated: safe to inline into the bulk statements.
  if (!/^[0-9a-f-]{36}$/.test(siteId)) throw new Error('unexpected site id');
  const S = shape.subscribers;
  const K = deliveriesPerNotification(shape);
  const R = shape.notifications;
  const deliveries = K * R;
  const subscribeStart = now - SUBSCRIBE_SPAN_DAYS * DAY_MS;
  const subscribeStep = Math.floor((SUBSCRIBE_SPAN_DAYS * DAY_MS) / S);
  const windowStart = now - WINDOW_DAYS * DAY_MS;
  const spacing = Math.floor((WINDOW_DAYS * DAY_MS) / R);

  if (kind === 'sqlite') {
    await sql`PRAGMA cache_size = -1000000`.execute(db);
    await sql`PRAGMA foreign_keys = OFF`.execute(db);
  }

  await timed(`${fmt(S)} subscribers`, async () => {
    const chunk = 250_000;
    for (let from = 0; from < S; from += chunk) {
      const to = Math.min(S, from + chunk) - 1;
      const subscribedAt = `(${subscribeStart} + d * ${subscribeStep})`;
      const inactive = `((d * 7919) % 100 < 8)`;
      await sql
        .raw(
          `${sequence(kind, from, to)}
           INSERT INTO subscribers (id, seq, site_id, endpoint, endpoint_hash, p256dh, auth, browser, os, country, language, timezone, user_agent, external_id,
                                    is_active, subscribed_at, last_seen_at, unsubscribed_at, updated_at)
           SELECT 'sub-' || (1000000000 + d), d + 1, '${siteId}',
                  'https://fcm.googleapis.com/fcm/send/bench-' || d, 'bench-' || d, 'bench-key', 'bench-auth',
                  CASE d % 10 WHEN 6 THEN 'Safari' WHEN 7 THEN 'Safari' WHEN 8 THEN 'Firefox' WHEN 9 THEN 'Edge' ELSE 'Chrome' END,
                  CASE d % 5 WHEN 0 THEN 'Windows' WHEN 1 THEN 'Android' WHEN 2 THEN 'macOS' WHEN 3 THEN 'iOS' ELSE 'Linux' END,
                  CASE d % 4 WHEN 0 THEN 'US' WHEN 1 THEN 'DE' WHEN 2 THEN 'FR' ELSE 'JP' END,
                  'en-US', '${shape.timezone}', NULL, NULL,
                  CASE WHEN ${inactive} THEN 0 ELSE 1 END,
                  ${subscribedAt}, ${subscribedAt},
                  CASE WHEN ${inactive} THEN ${subscribedAt} + ((${now} - ${subscribedAt}) * ((d * 31) % 97 + 1)) / 100 ELSE NULL END,
                  ${subscribedAt}
           FROM seq`,
        )
        .execute(db);
    }
    // Numbered here (d + 1) so the deliveries below can name their subscriber by it (migration 0036); the next subscriber gets S + 1.
    if (kind === 'postgres') await sql.raw(`SELECT setval(pg_get_serial_sequence('subscribers', 'seq'), ${S})`).execute(db);
    else await sql.raw(`UPDATE seq_counters SET last = ${S} WHERE name = 'subscribers'`).execute(db);
  });

  await timed(`${fmt(R)} notifications and their runs`, async () => {
    const notifications = [];
    const runs = [];
    for (let r = 0; r < R; r++) {
      const sentAt = windowStart + r * spacing + ((r * 7) % 5) * HOUR_MS;
      const id = `ntf-${1_000_000 + r}`;
      notifications.push({
        id,
        site_id: siteId,
        type: 'ONE_TIME' as const,
        source: 'dashboard' as const,
        title: `Weekly deals #${r + 1}`,
        message: 'New arrivals and this week’s best offers, picked for you.',
        destination_url: 'https://shop.example/deals',
        icon_url: null,
        image_url: null,
        actions: null,
        segment_id: null,
        status: 'completed' as const,
        scheduled_at: null,
        sent_at: sentAt,
        completed_at: sentAt + 600_000,
        last_error: null,
        created_at: sentAt - DAY_MS,
        updated_at: sentAt + 600_000,
      });
      runs.push({
        id: `run-${1_000_000 + r}`,
        // Numbered here so the deliveries below can name their run by it (migration 0035).
        seq: r + 1,
        notification_id: id,
        site_id: siteId,
        dedupe_key: `once:${id}`,
        status: 'completed' as const,
        due_at: sentAt,
        segment_id: null,
        subscriber_id: null,
        fanout_cursor: null,
        fanout_done: 1,
        lease_owner: null,
        lease_until: null,
        started_at: sentAt,
        finished_at: sentAt + 600_000,
        last_error: null,
        created_at: sentAt - DAY_MS,
      });
    }
    // In slices: SQLite takes at most 32,766 bound values in one statement.
    for (let from = 0; from < R; from += 1000) {
      await db.insertInto('notifications').values(notifications.slice(from, from + 1000)).execute();
      await db.insertInto('notification_runs').values(runs.slice(from, from + 1000)).execute();
    }
    if (kind === 'postgres') await sql.raw(`SELECT setval(pg_get_serial_sequence('notification_runs', 'seq'), ${R})`).execute(db);
  });

  await timed(`${fmt(deliveries)} deliveries (${fmt(deliveries * 2)} events)`, async () => {
    // Notification r goes to K of the A_r subscribers who had joined by then, starting at a spread offset.
    const r = `(d / ${K})`;
    const j = `(d % ${K})`;
    const audience = `(${Math.floor(S / 2)} + (${r} * ${S}) / ${2 * R})`;
    const sentAt = `(${windowStart} + ${r} * ${spacing} + ((${r} * 7) % 5) * ${HOUR_MS} + (${j} * 600000) / ${K})`;
    const bucket = `((d * 2654435761) % 1000)`;
    const deliveredAt = `(${sentAt} + 1000 + ((d * 1117) % 120000))`;
    const chunk = 500_000;
    for (let from = 0; from < deliveries; from += chunk) {
      const to = Math.min(deliveries, from + chunk) - 1;
      const insert = sql.raw(
        `${sequence(kind, from, to)}
           INSERT INTO deliveries (id, run_seq, subscriber_seq, status, attempts, next_attempt_at, lease_until, error,
                                   sent_at, delivered_at, clicked_at, created_at)
           SELECT d + 1, ${r} + 1,
                  (${r} * 7919 + ${j}) % ${audience} + 1,
                  'sent', 1, NULL, NULL, NULL,
                  ${sentAt},
                  CASE WHEN ${bucket} < 900 THEN ${deliveredAt} ELSE NULL END,
                  CASE WHEN ${bucket} < 100 THEN ${deliveredAt} + 5000 + ((d * 40503) % 7200000) ELSE NULL END,
                  ${sentAt}
           FROM seq`,
      );
      // The rows reference runs created above by construction; PostgreSQL's per-row
      // foreign-key triggers would only slow the seeding (SQLite's are off for it below).
      await db.transaction().execute(async (trx) => {
        if (kind === 'postgres') await sql`SET LOCAL session_replication_role = replica`.execute(trx);
        await insert.execute(trx);
      });
    }
    if (kind === 'postgres') await sql.raw(`SELECT setval(pg_get_serial_sequence('deliveries', 'id'), ${deliveries})`).execute(db);
  });

  await timed('hourly rollup, counters, active count', async () => {
    const hour = (column: string) => `(${column} / ${HOUR_MS}) * ${HOUR_MS}`;
    // A delivery row names only its run, by number (migrations 0034, 0035).
    const ofSite = `run_seq IN (SELECT seq FROM notification_runs WHERE site_id = '${siteId}')`;
    await sql
      .raw(
        `INSERT INTO stats_hourly (site_id, hour_start, sent, delivered, clicked, failed, subscribed, unsubscribed)
         SELECT '${siteId}', h, sum(sent), sum(delivered), sum(clicked), 0, sum(subscribed), sum(unsubscribed) FROM (
           SELECT ${hour('sent_at')} AS h, 1 AS sent, 0 AS delivered, 0 AS clicked, 0 AS subscribed, 0 AS unsubscribed FROM deliveries WHERE ${ofSite}
           UNION ALL SELECT ${hour('delivered_at')}, 0, 1, 0, 0, 0 FROM deliveries WHERE ${ofSite} AND delivered_at IS NOT NULL
           UNION ALL SELECT ${hour('clicked_at')}, 0, 0, 1, 0, 0 FROM deliveries WHERE ${ofSite} AND clicked_at IS NOT NULL
           UNION ALL SELECT ${hour('subscribed_at')}, 0, 0, 0, 1, 0 FROM subscribers WHERE site_id = '${siteId}'
           UNION ALL SELECT ${hour('unsubscribed_at')}, 0, 0, 0, 0, 1 FROM subscribers WHERE site_id = '${siteId}' AND unsubscribed_at IS NOT NULL
         ) AS events GROUP BY h`,
      )
      .execute(db);
    // Each run's counts from its rows, and each notification's from its runs' rows.
    const owners = { notification_runs: 'r.id', notifications: 'r.notification_id' };
    for (const [table, owner] of Object.entries(owners)) {
      await sql
        .raw(
          `UPDATE ${table} SET total_count = a.total, sent_count = a.total, delivered_count = a.delivered, clicked_count = a.clicked
           FROM (SELECT ${owner} AS owner, count(*) AS total, count(d.delivered_at) AS delivered, count(d.clicked_at) AS clicked
                 FROM deliveries d JOIN notification_runs r ON r.seq = d.run_seq GROUP BY ${owner}) AS a
           WHERE a.owner = ${table}.id`,
        )
        .execute(db);
    }
    await sql
      .raw(`UPDATE sites SET active_subscriber_count = (SELECT count(*) FROM subscribers WHERE site_id = '${siteId}' AND is_active = 1) WHERE id = '${siteId}'`)
      .execute(db);
  });

  if (kind === 'sqlite') await sql`PRAGMA foreign_keys = ON`.execute(db);
}

export async function analyze(db: Kysely<Database>, kind: DatabaseKind): Promise<void> {
  await timed(kind === 'postgres' ? 'VACUUM ANALYZE' : 'ANALYZE', async () => {
    await sql.raw(kind === 'postgres' ? 'VACUUM ANALYZE' : 'ANALYZE').execute(db);
  });
}

export interface BenchServer {
  runtime: Runtime;
  address: string;
  headers: { authorization: string };
  siteId: string;
  close(): Promise<void>;
}

/**
 * A fresh Herald (a temp data folder, or a new database in the cluster) listening
 * on 127.0.0.1, a signed-in owner and one empty site with these settings.
 */
export async function openBenchServer(kind: DatabaseKind, cluster: PgCluster | undefined, siteSettings: Record<string, unknown>): Promise<BenchServer> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-bench-'));
  let databaseUrl: string | undefined;
  if (kind === 'postgres') {
    databaseUrl = await createDatabase(cluster!.adminUrl, 'herald_bench', { replace: true });
  }
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PUBLIC_URL: 'http://127.0.0.1', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) });
  const runtime = await openRuntime(config);
  const app = await buildApp(runtime.ctx, { staticDirs: { web: path.join(dataDir, 'no-web'), sdk: path.join(dataDir, 'no-sdk') } });
  const close = async () => {
    await app.close();
    await runtime.close();
    // HERALD_BENCH_KEEP=1 leaves the SQLite data folder for a look at query plans afterwards.
    if (process.env.HERALD_BENCH_KEEP) console.log(`    kept ${dataDir}`);
    else fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const address = await app.listen({ host: '127.0.0.1', port: 0 });
    const email = `bench-${Date.now()}@example.com`;
    const password = 'correct horse battery staple';
    await createAuthService(runtime.ctx).createUser({ name: 'Bench', email, password, verified: true });
    const login = (await (await fetch(`${address}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) })).json()) as {
      data: { token: string };
    };
    const headers = { authorization: `Bearer ${login.data.token}` };
    const created = (await (
      await fetch(`${address}/api/sites`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Bench Shop', url: 'https://shop.example', settings: siteSettings }),
      })
    ).json()) as { data: { site: { id: string } } };
    return { runtime, address, headers, siteId: created.data.site.id, close };
  } catch (error) {
    await close();
    throw error;
  }
}
