// npm run bench:api [-- --db sqlite|postgres|both] [-- --duration 10] [-- --connections 50] [-- --sites 100]
//
// The public API under load (issue 6 §5): ONE process of the built product
// (`node apps/server/dist/main.js serve`, LOG_LEVEL=warn) on SQLite and on a
// throwaway PostgreSQL, driven by autocannon from this process:
//   - POST /api/public/sites/{id}/subscribers, each request a new browser
//     subscription (endpoint on FCM's origin, a valid P-256 key);
//   - POST /api/public/events, "delivered" then "clicked" beacons, each with
//     the signed token of a different delivery.
// It prints requests per second, latency (p50, p99), responses other than the
// expected status, and checks afterwards that every request the API accepted
// is in the database: each 201 is a stored subscriber, the sites' active
// counts add up, each beacon counted once on its delivery, run, notification
// and the hourly rollup once the scheduler of the same process has folded it
// (docs/delivery.md, "How beacons are counted").
//
// The public routes are flood-limited per client address (60/min) and per
// site (3,000/min), per process. So that the bench measures the server and
// not the limiter, the server trusts X-Forwarded-For (TRUST_PROXY=true, as
// behind the nginx of deploy/), every subscribe request comes from its own
// address, and the requests are spread over --sites sites (100 sites allow
// 5,000 subscriptions per second). The beacons are not rate limited (a
// signed token is the authorisation). Load generator and server share this
// machine's cores, so the figures are a floor.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { openDatabase, type DatabaseHandle, type DatabaseKind } from '../apps/server/src/db/database';
import { subscriberSeqOf } from '../apps/server/src/db/subscriber-seq';
import { createDeliveryToken } from '../apps/server/src/delivery/delivery-token';
import { insertRun } from '../apps/server/src/delivery/runs';
import { HeraldProcess, stopAll } from '../apps/server/test/scale/herald-processes';
import { createDatabase, startPgCluster, type PgCluster } from '../apps/server/test/support/pg-cluster';
import { clusterCpuBetween, clusterCpuSeconds, processCpuSeconds } from './support/process-cpu';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'both' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    sites: { type: 'string', default: '100' },
    warmup: { type: 'string', default: '2' },
  },
});

function positiveInt(name: string, value: string | undefined): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive whole number`);
  return n;
}

const DURATION = positiveInt('duration', args.duration);
const CONNECTIONS = positiveInt('connections', args.connections);
const SITES = positiveInt('sites', args.sites);
const WARMUP = Number(args.warmup);
const databases: DatabaseKind[] = args.db === 'both' ? ['sqlite', 'postgres'] : args.db === 'sqlite' || args.db === 'postgres' ? [args.db] : [];
if (!databases.length) throw new Error('--db must be sqlite, postgres or both');

const OWNER = { email: 'bench@herald.example', password: 'bench-password-1' };
const USER_AGENT = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
/** Subscribes per second one process should take (issue 15 §3), p99 under SUBSCRIBE_P99_TARGET_MS. */
const SUBSCRIBE_TARGET_PER_SECOND: Record<DatabaseKind, number> = { sqlite: 3_000, postgres: 2_500 };
const SUBSCRIBE_P99_TARGET_MS = 50;
/** Beacons per second one process should take (issue 15 §2), printed against each run's figure. */
const BEACON_TARGET_PER_SECOND = 4_000;
/** Deliveries seeded for the beacons: more than a run of --duration seconds can use (each beacon names a delivery not yet used: no replays). */
const BEACON_DELIVERIES = 250_000;

interface Row {
  database: string;
  endpoint: string;
  requests: number;
  'req/s': number;
  'p50 ms': number;
  'p99 ms': number;
  /** CPU per request of the server process, the database (PostgreSQL's processes) and the load generator: robust to what else the machine runs. */
  'server µs/req': number;
  'database µs/req': number;
  'load µs/req': number;
  unexpected: number;
  errors: number;
  stored: string;
}

const rows: Row[] = [];

/** A distinct IPv4 address per request number (unique below 13 million). */
const addressOf = (n: number) => `${11 + ((n >>> 16) % 200)}.${(n >>> 8) & 255}.${n & 255}.${1 + (n % 254)}`;

async function api(url: string, method: string, route: string, token?: string, body?: unknown): Promise<any> {
  const response = await fetch(`${url}/api${route}`, {
    method,
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const parsed = await response.json();
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

/** Where the measured load's CPU is read: the server process, and the PostgreSQL cluster when there is one. */
let cpuSources: { serverPid: number; pgDataDir: string | undefined } | undefined;

interface Measured {
  result: autocannon.Result;
  /** CPU seconds each part used during the measured DURATION. */
  cpu: { server: number; database: number; load: number };
}

/** Runs autocannon for WARMUP seconds (not measured), then DURATION seconds; returns the measured result and the CPU it took. */
async function load(options: autocannon.Options): Promise<Measured> {
  if (WARMUP > 0) await autocannon({ ...options, duration: WARMUP });
  const read = () => ({
    server: cpuSources ? processCpuSeconds(cpuSources.serverPid) : 0,
    database: cpuSources?.pgDataDir ? clusterCpuSeconds(cpuSources.pgDataDir) : new Map<number, number>(),
    load: (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
  });
  const before = read();
  const result = await autocannon({ ...options, duration: DURATION });
  const after = read();
  return { result, cpu: { server: after.server - before.server, database: clusterCpuBetween(before.database, after.database), load: after.load - before.load } };
}

function record(database: string, endpoint: string, { result, cpu }: Measured, expected: number, stored: string): void {
  const perRequest = (seconds: number) => Math.round((seconds * 1e6) / Math.max(1, result.requests.total));
  const unexpected = result.requests.total - (result.statusCodeStats?.[`${expected}`]?.count ?? 0);
  rows.push({
    database,
    endpoint,
    requests: result.requests.total,
    'req/s': Math.round(result.requests.average),
    'p50 ms': result.latency.p50,
    'p99 ms': result.latency.p99,
    'server µs/req': perRequest(cpu.server),
    'database µs/req': perRequest(cpu.database),
    'load µs/req': perRequest(cpu.load),
    unexpected: Math.max(0, unexpected - result.errors),
    errors: result.errors + result.timeouts,
    stored,
  });
}

/**
 * Waits until the server has finished the requests autocannon left in flight
 * when it stopped (it does not wait for their answers): `read` returns the
 * same value twice, half a second apart.
 */
async function quiet(read: () => Promise<number>): Promise<void> {
  let last = await read();
  for (let i = 0; i < 40; i++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const now = await read();
    if (now === last) return;
    last = now;
  }
  throw new Error('the server did not settle within 20 s');
}

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(`check failed: ${message}`);
}

async function benchDatabase(kind: DatabaseKind): Promise<void> {
  console.log(`\n=== ${kind}`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-bench-api-'));
  let cluster: PgCluster | undefined;
  let handle: DatabaseHandle | undefined;
  try {
    const secretKey = crypto.randomBytes(32).toString('hex');
    const env: Record<string, string> = {
      DATA_DIR: dataDir,
      SECRET_KEY: secretKey,
      TRUST_PROXY: 'true',
      LOG_LEVEL: 'warn',
      ADMIN_EMAIL: OWNER.email,
      ADMIN_PASSWORD: OWNER.password,
    };
    if (kind === 'postgres') {
      cluster = await startPgCluster({ durability: 'production' });
      env.DATABASE_URL = await createDatabase(cluster.adminUrl, 'herald');
    }
    const serve = await HeraldProcess.start('serve', 'serve', env);
    cpuSources = { serverPid: serve.pid, pgDataDir: cluster?.dataDir };
    handle = openDatabase(kind === 'postgres' ? { kind, url: env.DATABASE_URL! } : { kind, file: path.join(dataDir, 'herald.db') });
    const db = handle.db;

    const token: string = (await api(serve.url, 'POST', '/auth/login', undefined, OWNER)).data.token;
    const siteIds: string[] = [];
    for (let i = 0; i < SITES; i++) siteIds.push((await api(serve.url, 'POST', '/sites', token, { name: `Bench ${i}`, url: `https://bench-${i}.example` })).data.site.id);

    // ---- Subscribe: each request a new subscription, from a new address, round-robin over the sites.
    const keys = Array.from({ length: 64 }, () => {
      const ecdh = crypto.createECDH('prime256v1');
      ecdh.generateKeys();
      return { p256dh: ecdh.getPublicKey().toString('base64url'), auth: crypto.randomBytes(16).toString('base64url') };
    });
    const runTag = crypto.randomBytes(4).toString('hex');
    let subscribeCount = 0;
    const accepted: string[] = [];
    type Context = { endpoint?: string; token?: string };
    const subscribeResult = await load({
      url: serve.url,
      connections: CONNECTIONS,
      requests: [
        {
          method: 'POST',
          setupRequest: (request, context) => {
            const n = subscribeCount++;
            const endpoint = `https://fcm.googleapis.com/fcm/send/bench-${runTag}-${n}`;
            (context as Context).endpoint = endpoint;
            return {
              ...request,
              path: `/api/public/sites/${siteIds[n % siteIds.length]}/subscribers`,
              headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT, 'x-forwarded-for': addressOf(n) },
              body: JSON.stringify({ subscription: { endpoint, keys: keys[n % keys.length] }, timezone: 'Europe/Paris', language: 'fr-FR' }),
            };
          },
          onResponse: (status, _body, context) => {
            if (status === 201) accepted.push((context as Context).endpoint!);
          },
        },
      ],
    });
    // Every 201 is a stored, active subscriber, and the sites' counters add up.
    await quiet(async () => Number((await db.selectFrom('subscribers').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n));
    const hashes = accepted.map((e) => crypto.createHash('sha256').update(e).digest('hex'));
    let found = 0;
    for (let i = 0; i < hashes.length; i += 1000) {
      const page = await db.selectFrom('subscribers').select('id').where('endpoint_hash', 'in', hashes.slice(i, i + 1000)).where('is_active', '=', 1).execute();
      found += page.length;
    }
    const stored = await db.selectFrom('subscribers').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const counted = await db.selectFrom('sites').select((eb) => eb.fn.sum<number>('active_subscriber_count').as('n')).executeTakeFirstOrThrow();
    // (Requests still in flight when autocannon stops may be stored without their 201 being read.)
    check(found === accepted.length, `${accepted.length} subscriptions accepted, ${found} of them stored`);
    check(Number(stored.n) >= accepted.length && Number(stored.n) <= subscribeCount, `${Number(stored.n)} subscribers stored for ${accepted.length} accepted of ${subscribeCount} sent`);
    check(Number(counted.n) === Number(stored.n), `sites count ${Number(counted.n)} active subscribers for ${Number(stored.n)} stored`);
    record(kind, 'POST /api/public/sites/{id}/subscribers', subscribeResult, 201, `${accepted.length} accepted, all stored`);

    // ---- Beacons: a sent notification with one delivery per subscriber of the first site.
    const siteId = siteIds[0]!;
    const notificationId: string = (
      await api(serve.url, 'POST', `/sites/${siteId}/notifications`, token, {
        type: 'ONE_TIME',
        title: 'Bench',
        message: 'Beacons',
        destination_url: 'https://bench-0.example/',
        status: 'DRAFT',
      })
    ).data.notification.id;
    const now = Date.now();
    const runId = crypto.randomUUID();
    await insertRun(db, { id: runId, notification_id: notificationId, site_id: siteId, dedupe_key: `bench:${runId}`, due_at: now, segment_id: null, subscriber_id: null, created_at: now });
    const { seq: runSeq } = await db.selectFrom('notification_runs').select('seq').where('id', '=', runId).executeTakeFirstOrThrow();
    await db.updateTable('notification_runs').set({ status: 'completed', fanout_done: 1, started_at: now, finished_at: now, total_count: BEACON_DELIVERIES, sent_count: BEACON_DELIVERIES }).where('id', '=', runId).execute();
    await db.updateTable('notifications').set({ status: 'completed', sent_at: now, completed_at: now, total_count: BEACON_DELIVERIES, sent_count: BEACON_DELIVERIES }).where('id', '=', notificationId).execute();
    if (kind === 'sqlite') await sql`PRAGMA foreign_keys = OFF`.execute(db);
    for (let from = 0; from < BEACON_DELIVERIES; from += 1000) {
      const page = Array.from({ length: Math.min(1000, BEACON_DELIVERIES - from) }, (_, i) => {
        const endpoint = `https://fcm.googleapis.com/fcm/send/beacon-${runTag}-${from + i}`;
        return { id: crypto.randomUUID(), endpoint };
      });
      await db.transaction().execute(async (trx) => {
        await trx
          .insertInto('subscribers')
          .values(
            page.map(({ id, endpoint }) => ({
              id,
              site_id: siteId,
              endpoint,
              endpoint_hash: crypto.createHash('sha256').update(endpoint).digest('hex'),
              p256dh: keys[0]!.p256dh,
              auth: keys[0]!.auth,
              browser: 'Chrome',
              os: 'Windows',
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
            })),
          )
          .execute();
        await trx
          .insertInto('deliveries')
          .values(
            page.map(({ id }) => ({
              run_seq: runSeq,
              subscriber_seq: subscriberSeqOf(id),
              status: 'sent' as const,
              created_at: now,
              next_attempt_at: null,
              lease_until: null,
              error: null,
              sent_at: now,
              delivered_at: null,
              clicked_at: null,
            })),
          )
          .execute();
      });
    }
    if (kind === 'sqlite') await sql`PRAGMA foreign_keys = ON`.execute(db);
    const deliveryIds = (await db.selectFrom('deliveries').select('id').where('run_seq', '=', runSeq).orderBy('id').execute()).map((r) => r.id);
    const secret = Buffer.from(secretKey, 'utf8');

    const beacons = async (type: 'delivered' | 'clicked') => {
      let count = 0;
      let acknowledged = 0;
      const result = await load({
        url: serve.url,
        connections: CONNECTIONS,
        requests: [
          {
            method: 'POST',
            path: '/api/public/events',
            setupRequest: (request) => ({
              ...request,
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ type, token: createDeliveryToken(secret, deliveryIds[count++ % deliveryIds.length]!) }),
            }),
            onResponse: (status, body) => {
              if (status === 200 && (JSON.parse(body) as { data: { counted: boolean } }).data.counted) acknowledged++;
            },
          },
        ],
      });
      return { measured: result, sent: Math.min(count, deliveryIds.length), acknowledged };
    };
    /**
     * Each beacon counted once: on its delivery, the run, the notification and the site's hourly rollup.
     * Beacons are folded into the counters by the scheduler about every second (docs/delivery.md, "How
     * beacons are counted"): first the requests left in flight finish, then the fold empties the table.
     */
    const countedBeacons = async () => {
      await quiet(async () => {
        const marked = await db
          .selectFrom('deliveries')
          .select((eb) => [eb.fn.count<number>('delivered_at').as('delivered'), eb.fn.count<number>('clicked_at').as('clicked')])
          .where('run_seq', '=', runSeq)
          .executeTakeFirstOrThrow();
        return Number(marked.delivered) + Number(marked.clicked);
      });
      await quiet(async () => Number((await db.selectFrom('uncounted_beacons').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n));
      check((await db.selectFrom('uncounted_beacons').select('id').limit(1).executeTakeFirst()) === undefined, 'every beacon folded into the counters');
      const state = await db
        .selectFrom('deliveries')
        .select((eb) => [eb.fn.count<number>('delivered_at').as('delivered'), eb.fn.count<number>('clicked_at').as('clicked')])
        .where('run_seq', '=', runSeq)
        .executeTakeFirstOrThrow();
      const rowsNow = { delivered_count: Number(state.delivered), clicked_count: Number(state.clicked) };
      const run = await db.selectFrom('notification_runs').select(['delivered_count', 'clicked_count']).where('id', '=', runId).executeTakeFirstOrThrow();
      const notification = await db.selectFrom('notifications').select(['delivered_count', 'clicked_count']).where('id', '=', notificationId).executeTakeFirstOrThrow();
      const hourly = await db
        .selectFrom('stats_hourly')
        .select((eb) => [eb.fn.sum<number>('delivered').as('delivered'), eb.fn.sum<number>('clicked').as('clicked')])
        .where('site_id', '=', siteId)
        .executeTakeFirstOrThrow();
      const rollup = { delivered_count: Number(hourly.delivered), clicked_count: Number(hourly.clicked) };
      for (const [what, counters] of [['run', run], ['notification', notification], ['hourly rollup', rollup]] as const) {
        check(counters.delivered_count === rowsNow.delivered_count && counters.clicked_count === rowsNow.clicked_count, `${what} counters ${JSON.stringify(counters)} match the rows ${JSON.stringify(rowsNow)}`);
      }
      return rowsNow;
    };

    const delivered = await beacons('delivered');
    const afterDelivered = await countedBeacons();
    check(afterDelivered.delivered_count >= delivered.acknowledged && afterDelivered.delivered_count <= delivered.sent, `${afterDelivered.delivered_count} delivered stored, ${delivered.acknowledged} acknowledged of ${delivered.sent} sent`);
    check(afterDelivered.clicked_count === 0, 'no click before the click beacons');
    record(kind, 'POST /api/public/events (delivered)', delivered.measured, 200, `${delivered.acknowledged} counted, ${afterDelivered.delivered_count} stored`);

    const clicked = await beacons('clicked');
    const afterClicked = await countedBeacons();
    check(afterClicked.clicked_count >= clicked.acknowledged && afterClicked.clicked_count <= clicked.sent, `${afterClicked.clicked_count} clicks stored, ${clicked.acknowledged} acknowledged of ${clicked.sent} sent`);
    // A click on a delivery not yet reported delivered counts as a delivery too (tracking/service.ts).
    check(
      afterClicked.delivered_count >= Math.max(afterDelivered.delivered_count, afterClicked.clicked_count) &&
        afterClicked.delivered_count <= afterDelivered.delivered_count + afterClicked.clicked_count,
      `${afterClicked.delivered_count} delivered after the clicks`,
    );
    record(kind, 'POST /api/public/events (clicked)', clicked.measured, 200, `${clicked.acknowledged} counted, ${afterClicked.clicked_count} stored`);
    console.log(`server RSS after the load: ${Math.round(serve.rssMb())} MB`);
  } finally {
    await handle?.close();
    await stopAll();
    cluster?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log(`bench:api — ${DURATION} s per endpoint after ${WARMUP} s warm-up, ${CONNECTIONS} connections, ${SITES} sites, ${os.availableParallelism()} cores shared with the load generator`);
  for (const kind of databases) await benchDatabase(kind);
  console.log();
  console.table(rows);
  // Issue 15 §2: beacons at push speed, ≥ 4,000/s on PostgreSQL on one process; and against this run's subscribe figure.
  for (const row of rows.filter((r) => r.endpoint.startsWith('POST /api/public/events'))) {
    const subscribe = rows.find((r) => r.database === row.database && r.endpoint.includes('/subscribers'));
    const vsSubscribe = subscribe?.['req/s'] ? `, ${(row['req/s'] / subscribe['req/s']).toFixed(1)}× this run's subscribe rate` : '';
    console.log(`${row.database} ${row.endpoint.replace('POST /api/public/events ', 'beacons ')}: ${row['req/s']} req/s, ${Math.round((row['req/s'] / BEACON_TARGET_PER_SECOND) * 100)} % of the ${BEACON_TARGET_PER_SECOND.toLocaleString('en')}/s target${vsSubscribe}`);
  }
  // Issue 15 §3: subscribes, ≥ 3,000/s on SQLite and ≥ 2,500/s on PostgreSQL, p99 under 50 ms.
  for (const row of rows.filter((r) => r.endpoint.includes('/subscribers'))) {
    const target = SUBSCRIBE_TARGET_PER_SECOND[row.database as DatabaseKind];
    const met = row['req/s'] >= target && row['p99 ms'] < SUBSCRIBE_P99_TARGET_MS;
    console.log(`${row.database} subscribes: ${row['req/s']} req/s (target ${target.toLocaleString('en')}), p99 ${row['p99 ms']} ms (target < ${SUBSCRIBE_P99_TARGET_MS}): ${met ? 'MET' : 'NOT MET'}`);
  }
  const bad = rows.filter((r) => r.unexpected || r.errors);
  if (bad.length) {
    console.error('Unexpected responses or errors:', bad.map((r) => `${r.database} ${r.endpoint}`).join(', '));
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
