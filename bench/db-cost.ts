// npm run bench:db-cost [-- --subscribers 50000] [-- --sqlite] [-- --statements]
//
// THE DATABASE SIDE OF A SEND, WITHOUT ENCRYPTION OR NETWORK (issue 15 §6).
// A separate, clearly named mode: Herald's real sending path (scheduler,
// fan-out, send-batch jobs, payloads, delivery tokens, result recording,
// counters) against a throwaway PostgreSQL cluster, with the push client
// replaced by a stand-in that accepts every message at once: no RFC 8291
// encryption, no VAPID signature, no HTTPS. So the database can be pushed
// further than two cores could encrypt, and its cost per delivery measured:
//   - deliveries per second the database side sustains on one process;
//   - SQL statements, transactions (commits) and WAL bytes per 1,000
//     deliveries (PostgreSQL's own counters: pg_stat_database, the WAL
//     position), i.e. what a send costs the database whatever the workers;
//   - for comparison in the same run, bare encryption per core (the cost the
//     stand-in leaves out), so deploy/README.md can size workers from both.
// PostgreSQL runs with its durable defaults (fsync, synchronous commit and
// full-page writes on: docs/storage.md, "Benchmarks measure a durable
// PostgreSQL"); the bench prints them, with the checkpoints and full-page
// images of the measured send. `--statements` also prints where
// PostgreSQL's time went (pg_stat_statements) and the deliveries table's
// live and dead rows and HOT updates. No pass/fail: figures. `--sqlite`
// runs the same on the embedded database.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { loadConfig } from '../apps/server/src/config';
import { encryptPayload } from '../apps/server/src/delivery/encryption';
import type { PushEncryptor } from '../apps/server/src/delivery/encryption-pool';
import { PushClient } from '../apps/server/src/delivery/push-client';
import { DEFAULT_PUSH_CONCURRENCY, type SendAllSummary } from '../apps/server/src/delivery/push-client-options';
import type { PushMessage } from '../apps/server/src/delivery/push-message';
import type { PushOutcome } from '../apps/server/src/delivery/push-outcome';
import { endpointHash } from '../apps/server/src/delivery/push-endpoints';
import { startEngine } from '../apps/server/src/engine';
import { createAuthService } from '../apps/server/src/features/auth/service';
import { createNotificationsService } from '../apps/server/src/features/notifications/service';
import { createSitesService } from '../apps/server/src/features/sites/service';
import { openRuntime } from '../apps/server/src/runtime';
import { createDatabase, startPgCluster } from '../apps/server/test/support/pg-cluster';

const { values } = parseArgs({
  options: { subscribers: { type: 'string', default: '50000' }, sqlite: { type: 'boolean', default: false }, statements: { type: 'boolean', default: false } },
});
const SUBSCRIBERS = Number(values.subscribers);
if (!Number.isInteger(SUBSCRIBERS) || SUBSCRIBERS <= 0) throw new Error('--subscribers must be a positive whole number');

/** Results in flight at once: PUSH_CONCURRENCY's default. */
const IN_FLIGHT = DEFAULT_PUSH_CONCURRENCY;

/** Accepts every message at once: the stand-in for encryption, VAPID and the push service. */
class AcceptingPushClient extends PushClient {
  constructor() {
    const encryptor: PushEncryptor = { encrypt: async () => Buffer.alloc(0), close: async () => undefined };
    super({ encryptor });
  }

  override async sendAll<Ref>(
    messages: Iterable<PushMessage<Ref>> | AsyncIterable<PushMessage<Ref>>,
    onResult: (message: PushMessage<Ref>, outcome: PushOutcome) => void | Promise<void>,
  ): Promise<SendAllSummary> {
    const accepted: PushOutcome = { kind: 'sent', status: 201 };
    let total = 0;
    // Like the real client: a message's result counts as in flight until it is recorded, at most IN_FLIGHT of them.
    const inFlight = new Set<Promise<void>>();
    for await (const message of messages) {
      const recorded: Promise<void> = Promise.resolve(onResult(message, accepted)).finally(() => inFlight.delete(recorded));
      inFlight.add(recorded);
      total += 1;
      if (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    return { total, counts: { sent: total, gone: 0, 'rate-limited': 0, deferred: 0, retryable: 0, failed: 0 }, stopped: false };
  }
}

/** Real P-256 keys (the send decodes them); a pool, since generating one per subscriber would take longer than the send. */
const KEY_POOL = Array.from({ length: 500 }, () => ({ p256dh: crypto.createECDH('prime256v1').generateKeys().toString('base64url'), auth: crypto.randomBytes(16).toString('base64url') }));

interface DbCounters {
  commits: number;
  statements: number;
  walBytes: number;
  rowsWritten: number;
  /** WAL records that hold a whole 8 kB page: the first change to a page after each checkpoint (full_page_writes). */
  fullPageImages: number;
  /** Checkpoints started because the WAL reached max_wal_size, and on the timer. */
  checkpointsRequested: number;
  checkpointsTimed: number;
}

async function pgCounters(client: pg.Client): Promise<DbCounters> {
  // Statistics reach the shared counters when a backend ends a transaction, at most once a second (PostgreSQL 15).
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const stats = await client.query<{ commits: string; rows: string; wal: string; fpi: string; requested: string; timed: string }>(
    `select d.xact_commit as commits, d.tup_inserted + d.tup_updated + d.tup_deleted as rows,
            pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0') as wal, w.wal_fpi as fpi,
            b.checkpoints_req as requested, b.checkpoints_timed as timed
       from pg_stat_database d, pg_stat_wal w, pg_stat_bgwriter b where d.datname = current_database()`,
  );
  const row = stats.rows[0]!;
  return {
    commits: Number(row.commits),
    statements: statementsSent,
    walBytes: Number(row.wal),
    rowsWritten: Number(row.rows),
    fullPageImages: Number(row.fpi),
    checkpointsRequested: Number(row.requested),
    checkpointsTimed: Number(row.timed),
  };
}

/** The bench's own connection (counters, waiting for the send to finish): its queries are not Herald's. */
let benchClient: pg.Client | undefined;

/** Statements Herald sent to PostgreSQL (every query of every pooled client but the bench's own). */
let statementsSent = 0;
const clientQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(this: pg.Client, ...args: unknown[]) {
  if (this !== benchClient) statementsSent += 1;
  return (clientQuery as (...a: unknown[]) => unknown).apply(this, args);
} as typeof pg.Client.prototype.query;

async function run(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-bench-db-cost-'));
  const statementStats = ['shared_preload_libraries=pg_stat_statements', 'pg_stat_statements.track=all'];
  const cluster = values.sqlite ? undefined : await startPgCluster({ durability: 'production', settings: values.statements ? statementStats : [] });
  try {
    let env: Record<string, string> = {};
    if (cluster) {
      const databaseUrl = await createDatabase(cluster.adminUrl, 'bench');
      env = { DATABASE_URL: databaseUrl };
      benchClient = await connected(databaseUrl);
      if (values.statements) await benchClient.query('create extension pg_stat_statements');
    }
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PUBLIC_URL: 'https://herald.bench', ...env });
    const runtime = await openRuntime(config);
    const { ctx } = runtime;
    const user = await createAuthService(ctx).createUser({ name: 'Bench', email: 'bench@example.com', password: 'bench-password', verified: true });
    const site = await createSitesService(ctx).create(user.id, { name: 'Bench shop', url: 'https://bench.example' });
    const now = Date.now();
    for (let made = 0; made < SUBSCRIBERS; made += 1000) {
      await ctx.db
        .insertInto('subscribers')
        .values(
          Array.from({ length: Math.min(1000, SUBSCRIBERS - made) }, (_, i) => {
            const endpoint = `https://fcm.googleapis.com/fcm/send/${crypto.randomBytes(60).toString('base64url')}`;
            const keys = KEY_POOL[(made + i) % KEY_POOL.length]!;
            return { id: crypto.randomUUID(), site_id: site.id, endpoint, endpoint_hash: endpointHash(endpoint), p256dh: keys.p256dh, auth: keys.auth, browser: 'Chrome', os: 'Windows', country: 'DE', is_active: 1, subscribed_at: now, updated_at: now };
          }),
        )
        .execute();
    }
    await ctx.db.updateTable('sites').set({ active_subscriber_count: SUBSCRIBERS }).where('id', '=', site.id).execute();

    const notifications = createNotificationsService(ctx);
    const body = { type: 'ONE_TIME' as const, title: 'Weekend sale', message: 'Everything 20% off until Sunday night', destination_url: 'https://bench.example/sale', icon_url: null, image_url: null, segment_id: null };
    const engine = startEngine(ctx, { scheduler: true, worker: true, pushClient: new AcceptingPushClient() });
    const send = async (title: string) => {
      const notification = await notifications.create(user.id, site.id, { ...body, title });
      const before = benchClient ? await pgCounters(benchClient) : undefined;
      const started = performance.now();
      await notifications.sendNow(user.id, notification.id);
      for (;;) {
        // On PostgreSQL through the bench's own connection, so the waiting is not counted as Herald's statements.
        const row = benchClient
          ? (await benchClient.query<{ status: string; sent_count: string }>('select status, sent_count from notifications where id = $1', [notification.id])).rows[0]!
          : await ctx.db.selectFrom('notifications').select(['status', 'sent_count']).where('id', '=', notification.id).executeTakeFirstOrThrow();
        if (row.status === 'completed' || row.status === 'failed') {
          if (Number(row.sent_count) !== SUBSCRIBERS) throw new Error(`sent ${row.sent_count} of ${SUBSCRIBERS}`);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const seconds = (performance.now() - started) / 1000;
      const after = benchClient ? await pgCounters(benchClient) : undefined;
      return { seconds, before, after };
    };
    // The first send warms the process (JIT, pool); the second is measured.
    await send('Warm-up');
    if (values.statements) await benchClient?.query('select pg_stat_statements_reset()');
    const measured = await send('Weekend sale');
    if (values.statements && benchClient) await printWhereTimeWent(benchClient);
    const settings: Record<string, string> = {};
    if (benchClient) {
      const names = ['fsync', 'synchronous_commit', 'full_page_writes', 'max_wal_size', 'checkpoint_timeout', 'shared_buffers'];
      const rows = await benchClient.query<{ name: string; setting: string }>('select name, current_setting(name) as setting from pg_settings where name = any($1)', [names]);
      for (const row of rows.rows) settings[row.name] = row.setting;
    }
    await engine.close();
    await runtime.close();

    // What the stand-in left out: bare RFC 8291 encryption of a like message, on one core.
    const payload = Buffer.from(JSON.stringify({ title: body.title, body: body.message, url: body.destination_url, token: 'x'.repeat(60) }));
    const keys = KEY_POOL.map((key) => ({ p256dh: key.p256dh, auth: key.auth }));
    const encryptStarted = performance.now();
    const ENCRYPTIONS = 3000;
    for (let i = 0; i < ENCRYPTIONS; i++) encryptPayload(payload, keys[i % keys.length]!);
    const encryptPerCore = ENCRYPTIONS / ((performance.now() - encryptStarted) / 1000);

    const perSecond = SUBSCRIBERS / measured.seconds;
    console.log(`database: ${cluster ? 'PostgreSQL 15 (throwaway cluster)' : 'SQLite'}, ${SUBSCRIBERS.toLocaleString('en')} subscribers, ${os.availableParallelism()} cores, node ${process.version}`);
    console.log(`database side of a send (no encryption, no network): ${measured.seconds.toFixed(2)} s, ${Math.round(perSecond).toLocaleString('en')} deliveries/s on one process`);
    if (measured.before && measured.after) {
      const during = (field: keyof DbCounters) => measured.after![field] - measured.before![field];
      const per1000 = (field: keyof DbCounters) => (during(field) * 1000) / SUBSCRIBERS;
      console.log(
        `per 1,000 deliveries: ${per1000('statements').toFixed(0)} statements, ${per1000('commits').toFixed(1)} commits, ${per1000('rowsWritten').toFixed(0)} rows written, ${(per1000('walBytes') / 1024).toFixed(0)} KiB of WAL (${per1000('fullPageImages').toFixed(0)} full-page images)`,
      );
      console.log(
        `during the send: ${during('checkpointsRequested')} checkpoints for WAL volume, ${during('checkpointsTimed')} on the timer (max_wal_size ${settings.max_wal_size}, checkpoint_timeout ${settings.checkpoint_timeout}); fsync ${settings.fsync}, synchronous_commit ${settings.synchronous_commit}, full_page_writes ${settings.full_page_writes}, shared_buffers ${settings.shared_buffers}`,
      );
    }
    console.log(`bare encryption (left out above): ${Math.round(encryptPerCore).toLocaleString('en')} messages/s on one core`);
  } finally {
    await benchClient?.end();
    cluster?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** `--statements`: where PostgreSQL's time went during the measured send, and the state of the deliveries table after it. */
async function printWhereTimeWent(client: pg.Client): Promise<void> {
  const top = await client.query<{ calls: string; total: string; mean: string; rows: string; query: string }>(
    `select calls, round(total_exec_time::numeric, 0) as total, round(mean_exec_time::numeric, 3) as mean, rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 160) as query
       from pg_stat_statements where query not like '%pg_stat%' order by total_exec_time desc limit 15`,
  );
  const table = await client.query<{ upd: string; hot: string; dead: string; live: string; autovacuums: string; autoanalyzes: string }>(
    `select n_tup_upd as upd, n_tup_hot_upd as hot, n_dead_tup as dead, n_live_tup as live, autovacuum_count as autovacuums, autoanalyze_count as autoanalyzes
       from pg_stat_user_tables where relname = 'deliveries'`,
  );
  const deliveries = table.rows[0]!;
  console.log(
    `deliveries after both sends: ${deliveries.live} live rows, ${deliveries.dead} dead; ${deliveries.upd} updates of which ${deliveries.hot} HOT; ${deliveries.autovacuums} autovacuums, ${deliveries.autoanalyzes} autoanalyzes`,
  );
  const sizes = await client.query<{ name: string; size: string }>(
    `select c.relname as name, pg_size_pretty(pg_relation_size(c.oid)) as size from pg_class c
       where c.oid = 'deliveries'::regclass or c.oid in (select indexrelid from pg_index where indrelid = 'deliveries'::regclass) order by c.relname`,
  );
  console.log(`sizes: ${sizes.rows.map((r) => `${r.name} ${r.size}`).join(', ')}`);
  console.log('statements by total time during the send (ms total, calls, ms mean, rows):');
  for (const row of top.rows) console.log(`  ${String(row.total).padStart(7)} ${String(row.calls).padStart(7)} ${String(row.mean).padStart(8)} ${String(row.rows).padStart(8)}  ${row.query}`);
}

async function connected(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

await run();
