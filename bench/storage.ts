// npm run bench:storage [-- --rows 100000] [-- --sends 10] [-- --batch 1000] [-- --firings 10000] [-- --pg]   (or HERALD_BENCH_PG=1)
//
// Bytes on disk per delivery (docs/storage.md, "Retention"): `--rows`
// deliveries over `--sends` finished sends, written the way the engine writes
// them (inserted pending at fan-out, 1,000 a statement; then each batch of
// 250 set to its outcome; then delivered beacons for 60 % and clicks for 5 %),
// on SQLite and, with --pg, on a throwaway PostgreSQL cluster. Prints the
// deliveries table and each of its indexes per row, as written and after
// VACUUM (FULL on PostgreSQL), against the baseline of the same run: the same
// rows written, in a database of their own, in the layout before issue 15
// (each row also holding its run's notification and site, which migration
// 0034 dropped, and the index deliveries_subscriber, which 0027 dropped).
// Then compacts everything (the sends finished 40 days ago) as the
// retention source does, 1,000 rows a transaction (--batch), and prints how long each
// transaction held the database (the longest is what a send's writes could
// wait), and the bytes that remain for good (compacted_deliveries).
// Then `--firings` trigger firings (a run of one delivery each, as a
// triggered notification or a welcome step makes them): the bytes
// notification_runs takes per firing, and what is left of them once
// retention has compacted their deliveries and removed their runs (migration
// 0033: each notification's latest run stays).
// No pass/fail: figures.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql, type Kysely } from 'kysely';
import { loadConfig } from '../apps/server/src/config';
import type { Database } from '../apps/server/src/db/schema';
import { subscriberSeqsOfSite } from '../apps/server/src/db/subscriber-seq';
import { createAuthService } from '../apps/server/src/features/auth/service';
import type { AppContext } from '../apps/server/src/context';
import { compactOldDeliveries, removeCompactedRuns } from '../apps/server/src/features/retention/service';
import { createSitesService } from '../apps/server/src/features/sites/service';
import { openRuntime } from '../apps/server/src/runtime';
import { createDatabase, startPgCluster } from '../apps/server/test/support/pg-cluster';

const { values } = parseArgs({
  options: { rows: { type: 'string', default: '100000' }, sends: { type: 'string', default: '10' }, pg: { type: 'boolean', default: false }, batch: { type: 'string', default: '1000' }, firings: { type: 'string', default: '10000' } },
});
const ROWS = Number(values.rows);
const SENDS = Number(values.sends);
const BATCH = Number(values.batch);
const FIRINGS = Number(values.firings);
const WITH_PG = values.pg || process.env.HERALD_BENCH_PG === '1';
if (!Number.isInteger(ROWS) || ROWS < SENDS || !Number.isInteger(SENDS) || SENDS < 1) throw new Error('--rows and --sends must be whole numbers, rows ≥ sends ≥ 1');
if (!Number.isInteger(FIRINGS) || FIRINGS < 2) throw new Error('--firings must be a whole number, at least 2');
const SUBSCRIBERS = Math.ceil(ROWS / SENDS);
const DAY = 86_400_000;

type Kind = 'sqlite' | 'postgres';

/** Bytes of a table and of each of its indexes. */
async function sizes(db: Kysely<Database>, kind: Kind, table: string): Promise<{ table: number; indexes: Record<string, number> }> {
  if (kind === 'sqlite') {
    const rows = await sql<{ name: string; type: string; bytes: number }>`
      select m.name, m.type, coalesce((select sum(pgsize) from dbstat d where d.name = m.name), 0) as bytes
      from sqlite_master m where m.tbl_name = ${table} and m.type in ('table', 'index')`.execute(db);
    const indexes: Record<string, number> = {};
    let tableBytes = 0;
    for (const row of rows.rows) {
      if (row.type === 'table') tableBytes = Number(row.bytes);
      else indexes[row.name] = Number(row.bytes);
    }
    return { table: tableBytes, indexes };
  }
  const main = await sql<{ bytes: string }>`select pg_table_size(${table}::regclass) as bytes`.execute(db);
  const rows = await sql<{ name: string; bytes: string }>`select indexrelid::regclass::text as name, pg_relation_size(indexrelid) as bytes from pg_index where indrelid = ${table}::regclass`.execute(db);
  return { table: Number(main.rows[0]!.bytes), indexes: Object.fromEntries(rows.rows.map((row) => [row.name, Number(row.bytes)])) };
}

const total = (s: { table: number; indexes: Record<string, number> }) => s.table + Object.values(s.indexes).reduce((a, b) => a + b, 0);
const perRow = (bytes: number, rows: number) => (bytes / rows).toFixed(1);

function describe(label: string, s: { table: number; indexes: Record<string, number> }, rows: number): string {
  const parts = Object.entries(s.indexes)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, bytes]) => `${name} ${perRow(bytes, rows)}`);
  return `${label}: ${perRow(total(s), rows)} B/delivery (table ${perRow(s.table, rows)}; ${parts.join(', ')})`;
}

async function vacuum(db: Kysely<Database>, kind: Kind, full: boolean, table: 'deliveries' | 'notification_runs' = 'deliveries'): Promise<void> {
  if (kind === 'sqlite') await sql`vacuum`.execute(db);
  else if (full) await sql`vacuum full ${sql.table(table)}`.execute(db);
  else await sql`vacuum ${sql.table(table)}`.execute(db);
}

/**
 * FIRINGS runs of one delivery each for one triggered notification, finished
 * at `at`: notification_runs' bytes per firing, then compaction and the
 * removal of the runs (what retention's sweep does), and what is left.
 */
async function triggerFirings(ctx: AppContext, kind: Kind, siteId: string, subscriberIds: string[], at: number): Promise<void> {
  const { db } = ctx;
  const notificationId = crypto.randomUUID();
  await db
    .insertInto('notifications')
    .values({ id: notificationId, site_id: siteId, type: 'TRIGGERED', source: 'dashboard', title: 'Thanks', message: 'Bench', destination_url: 'https://bench.example/', icon_url: null, image_url: null, actions: null, topic: null, throttle_per_minute: null, segment_id: null, status: 'scheduled', scheduled_at: null, sent_at: at, completed_at: null, last_error: null, created_at: at, updated_at: at })
    .execute();
  const subscriberSeqOf = await subscriberSeqsOfSite(db, siteId);
  for (let from = 0; from < FIRINGS; from += 500) {
    const firings = Array.from({ length: Math.min(500, FIRINGS - from) }, (_, i) => {
      const n = from + i;
      return { runId: crypto.randomUUID(), subscriberId: subscriberIds[n % subscriberIds.length]!, at: at + n * 1_000, n };
    });
    await db
      .insertInto('notification_runs')
      .values(firings.map((f) => ({ id: f.runId, notification_id: notificationId, site_id: siteId, dedupe_key: `trigger:${notificationId}:${f.subscriberId}:event-${f.n}`, status: 'completed' as const, due_at: f.at, segment_id: null, subscriber_id: f.subscriberId, after_run_id: null, fanout_cursor: f.subscriberId, fanout_done: 1, lease_owner: null, lease_until: null, started_at: f.at, finished_at: f.at, last_error: null, throttle_window_start: null, total_count: 1, sent_count: 1, created_at: f.at })))
      .execute();
    const seqOf = new Map((await db.selectFrom('notification_runs').select(['id', 'seq']).where('id', 'in', firings.map((f) => f.runId)).execute()).map((run) => [run.id, run.seq]));
    await db
      .insertInto('deliveries')
      .values(firings.map((f) => ({ run_seq: seqOf.get(f.runId)!, subscriber_seq: subscriberSeqOf.get(f.subscriberId)!, status: 'sent' as const, attempts: 1, next_attempt_at: null, lease_until: null, throttle_window: null, error: null, reason: null, push_service: null, sent_at: f.at, delivered_at: null, clicked_at: null, created_at: f.at })))
      .execute();
  }
  await vacuum(db, kind, true, 'notification_runs');
  const written = await sizes(db, kind, 'notification_runs');
  const runsOf = async () => Number((await db.selectFrom('notification_runs').select((eb) => eb.fn.countAll<number>().as('n')).where('notification_id', '=', notificationId).executeTakeFirstOrThrow()).n);
  // The table holds these runs and the sends' few: bytes per run.
  const allRuns = Number((await db.selectFrom('notification_runs').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const perFiring = total(written) / allRuns;
  while ((await compactOldDeliveries(ctx, Date.now())) > 0);
  let removed = 0;
  for (;;) {
    const count = await removeCompactedRuns(ctx);
    if (count === 0) break;
    removed += count;
  }
  await vacuum(db, kind, true, 'notification_runs');
  const left = await sizes(db, kind, 'notification_runs');
  const notification = await db.selectFrom('notifications').select('removed_run_count').where('id', '=', notificationId).executeTakeFirstOrThrow();
  const kept = await runsOf();
  console.log(
    `${kind}: ${FIRINGS.toLocaleString('en')} trigger firings (a run of one delivery each): notification_runs ${perFiring.toFixed(1)} B per firing (table + indexes, after VACUUM${kind === 'postgres' ? ' FULL' : ''}); ` +
      `after retention ${removed.toLocaleString('en')} runs removed, ${kept} kept (the notification's latest), fired ${(kept + Number(notification.removed_run_count)).toLocaleString('en')} times still; the table holds ${total(left).toLocaleString('en')} bytes for ${allRuns - removed} runs`,
  );
}

/** The layout measured: today's, or the one before issue 15 (docs/storage.md, "Bytes per delivery"). */
type Layout = 'now' | 'before';

/**
 * The deliveries table as it was before issue 15 (migration 0026's layout):
 * the run's UUID, notification and site on each row (0034 and 0035 changed
 * that) and the index deliveries_subscriber (0027 dropped it).
 */
async function restoreLayoutBefore(db: Kysely<Database>, kind: Kind): Promise<void> {
  await sql`drop table deliveries`.execute(db);
  await sql`
    create table deliveries (
      id ${sql.raw(kind === 'postgres' ? 'bigserial' : 'integer')} primary key,
      run_id text not null references notification_runs (id) on delete cascade,
      notification_id text not null,
      site_id text not null,
      subscriber_id text not null,
      status text not null,
      attempts integer default 0 not null,
      next_attempt_at bigint,
      lease_until bigint,
      error text,
      sent_at bigint,
      delivered_at bigint,
      clicked_at bigint,
      created_at bigint not null,
      reason text,
      push_service text,
      throttle_window bigint,
      variant_index integer,
      constraint deliveries_run_subscriber unique (run_id, subscriber_id)
    )`.execute(db);
  await sql`create index deliveries_run_pending on deliveries (run_id, id) where status = 'pending'`.execute(db);
  await sql`create index deliveries_subscriber on deliveries (subscriber_id)`.execute(db);
  await sql`create index deliveries_subscriber_status_sent on deliveries (subscriber_id, status, sent_at)`.execute(db);
  await sql`create index deliveries_notification_variant on deliveries (notification_id, variant_index, status, delivered_at, clicked_at) where variant_index is not null`.execute(db);
}

async function writeDeliveries(db: Kysely<Database>, siteId: string, subscriberIds: string[], finishedAt: number, layout: Layout): Promise<void> {
  // How a row names its subscriber: by number now (0036), by its UUID before issue 15.
  const seqOf = await subscriberSeqsOfSite(db, siteId);
  const subscriberKey = (subscriberId: string) => (layout === 'now' ? { subscriber_seq: seqOf.get(subscriberId)! } : ({ subscriber_id: subscriberId } as unknown as { subscriber_seq: number }));
  for (let s = 0; s < SENDS; s++) {
    const notificationId = crypto.randomUUID();
    const runId = crypto.randomUUID();
    const at = finishedAt + s * 60_000;
    await db
      .insertInto('notifications')
      .values({ id: notificationId, site_id: siteId, type: 'ONE_TIME', source: 'dashboard', title: 'Bench', message: 'Bench', destination_url: 'https://bench.example/', icon_url: null, image_url: null, actions: null, topic: null, throttle_per_minute: null, segment_id: null, status: 'completed', scheduled_at: null, sent_at: at, completed_at: at, last_error: null, created_at: at, updated_at: at })
      .execute();
    await db
      .insertInto('notification_runs')
      .values({ id: runId, notification_id: notificationId, site_id: siteId, dedupe_key: `once:${notificationId}`, status: 'completed', due_at: at, segment_id: null, subscriber_id: null, after_run_id: null, fanout_cursor: null, fanout_done: 1, lease_owner: null, lease_until: null, started_at: at, finished_at: at, last_error: null, throttle_window_start: null, created_at: at })
      .execute();
    // Read back, not RETURNING: SQLite numbers the run in a trigger after the insert (migration 0035).
    const { seq } = await db.selectFrom('notification_runs').select('seq').where('id', '=', runId).executeTakeFirstOrThrow();
    // How a row names its run: by number now (0035), by the run's UUID, with its notification and site, before issue 15.
    const runKey = layout === 'now' ? { run_seq: seq } : ({ run_id: runId, notification_id: notificationId, site_id: siteId } as unknown as { run_seq: number });
    const ofRun = layout === 'now' ? sql<boolean>`run_seq = ${seq}` : sql<boolean>`run_id = ${runId}`;
    const audience = subscriberIds.slice(0, Math.min(subscriberIds.length, ROWS - s * SUBSCRIBERS));
    // Fan-out: pending rows, a page at a time.
    for (let i = 0; i < audience.length; i += 1000) {
      await db
        .insertInto('deliveries')
        .values(
          audience.slice(i, i + 1000).map((subscriberId) => ({
            ...runKey,
            ...subscriberKey(subscriberId),
            status: 'pending' as const,
            next_attempt_at: null,
            lease_until: null,
            throttle_window: null,
            error: null,
            reason: null,
            push_service: null,
            sent_at: null,
            delivered_at: null,
            clicked_at: null,
            created_at: at,
          })),
        )
        .execute();
    }
    // Batches of 250: claimed (attempts, lease), then their outcome; 3 % fail, 1 % expire.
    const ids = (await db.selectFrom('deliveries').select('id').where(ofRun).orderBy('id').execute()).map((row) => row.id);
    for (let i = 0; i < ids.length; i += 250) {
      const batch = ids.slice(i, i + 250);
      await db.transaction().execute(async (trx) => {
        await trx.updateTable('deliveries').set((eb) => ({ attempts: eb('attempts', '+', 1), lease_until: at + 60_000 })).where('id', 'in', batch).execute();
        const failed = batch.filter((id) => id % 100 === 7 || id % 100 === 42 || id % 100 === 77);
        const gone = batch.filter((id) => id % 100 === 13);
        const sent = batch.filter((id) => !failed.includes(id) && !gone.includes(id));
        await trx.updateTable('deliveries').set({ status: 'sent', sent_at: at + 1_000, lease_until: null }).where('id', 'in', sent).execute();
        if (failed.length) await trx.updateTable('deliveries').set({ status: 'failed', reason: 'server_error', push_service: 'fcm', error: 'Push service answered 500: internal error', lease_until: null }).where('id', 'in', failed).execute();
        if (gone.length) await trx.updateTable('deliveries').set({ status: 'gone', reason: 'gone', push_service: 'mozilla', error: 'Push service answered 410: gone', lease_until: null }).where('id', 'in', gone).execute();
      });
    }
    // Beacons: delivered for 60 %, clicked for 5 % (set-based here; the engine writes them one by one).
    await db.updateTable('deliveries').set({ delivered_at: at + 5_000 }).where(ofRun).where('status', '=', 'sent').where(sql<boolean>`id % 10 < 6`).execute();
    await db.updateTable('deliveries').set({ clicked_at: at + 9_000 }).where(ofRun).where('status', '=', 'sent').where(sql<boolean>`id % 20 = 0`).execute();
  }
}

type Sizes = Awaited<ReturnType<typeof sizes>>;

/** A fresh Herald database with an owner, a site and SUBSCRIBERS subscribers, given to `use`, then removed. */
async function withBenchSite<T>(env: Record<string, string>, use: (ctx: AppContext, siteId: string, subscriberIds: string[], now: number) => Promise<T>): Promise<T> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-bench-storage-'));
  const runtime = await openRuntime(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PUBLIC_URL: 'https://herald.bench', ...env }));
  const { db } = runtime.ctx;
  try {
    const user = await createAuthService(runtime.ctx).createUser({ name: 'Bench', email: 'bench@example.com', password: 'bench-password', verified: true });
    const site = await createSitesService(runtime.ctx).create(user.id, { name: 'Bench shop', url: 'https://bench.example' });
    const now = Date.now();
    const subscriberIds: string[] = [];
    for (let i = 0; i < SUBSCRIBERS; i += 1000) {
      const rows = Array.from({ length: Math.min(1000, SUBSCRIBERS - i) }, () => {
        const id = crypto.randomUUID();
        subscriberIds.push(id);
        const endpoint = `https://fcm.googleapis.com/fcm/send/${crypto.randomBytes(96).toString('base64url')}`;
        return { id, site_id: site.id, endpoint, endpoint_hash: crypto.createHash('sha256').update(endpoint).digest('hex'), p256dh: 'p', auth: 'a', browser: 'Chrome', os: 'Windows', country: 'DE', language: 'de-DE', timezone: 'Europe/Berlin', user_agent: null, external_id: null, is_active: 1, subscribed_at: now - 90 * DAY, last_seen_at: null, last_delivered_at: null, unsubscribed_at: null, updated_at: now - 90 * DAY };
      });
      await db.insertInto('subscribers').values(rows).execute();
    }
    subscriberIds.sort();
    return await use(runtime.ctx, site.id, subscriberIds, now);
  } finally {
    await runtime.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Writes the deliveries in a layout and measures them as written and after VACUUM (FULL on PostgreSQL). */
async function writeAndMeasure(kind: Kind, db: Kysely<Database>, siteId: string, subscriberIds: string[], finishedAt: number, layout: Layout): Promise<{ rows: number; asWritten: Sizes; compact: Sizes }> {
  const started = performance.now();
  await writeDeliveries(db, siteId, subscriberIds, finishedAt, layout);
  const rows = Number((await db.selectFrom('deliveries').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const name = layout === 'before' ? 'the layout before issue 15' : 'the layout now';
  console.log(`${kind}, ${name}: ${rows.toLocaleString('en')} deliveries over ${SENDS} sends to ${SUBSCRIBERS.toLocaleString('en')} subscribers written in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const asWritten = await sizes(db, kind, 'deliveries');
  await vacuum(db, kind, true);
  const compact = await sizes(db, kind, 'deliveries');
  console.log(describe(`${kind}, ${name}, as written`, asWritten, rows));
  console.log(describe(`${kind}, ${name}, after VACUUM${kind === 'postgres' ? ' FULL' : ''}`, compact, rows));
  return { rows, asWritten, compact };
}

async function benchOn(kind: Kind, env: { now: Record<string, string>; before: Record<string, string> }): Promise<void> {
  // The baseline of the same run: the same rows in the layout before issue 15, in a database of their own.
  const before = await withBenchSite(env.before, async (ctx, siteId, subscriberIds, now) => {
    await restoreLayoutBefore(ctx.db, kind);
    return writeAndMeasure(kind, ctx.db, siteId, subscriberIds, now - 40 * DAY, 'before');
  });
  await withBenchSite(env.now, async (ctx, siteId, subscriberIds, now) => {
    const { rows, asWritten, compact } = await writeAndMeasure(kind, ctx.db, siteId, subscriberIds, now - 40 * DAY, 'now');
    const ratio = (after: Sizes, was: Sizes) => `${(total(after) / rows / (total(was) / before.rows)).toFixed(3)}× of ${perRow(total(was), before.rows)}`;
    console.log(
      `${kind}: ${perRow(total(asWritten), rows)} B/delivery as written (${ratio(asWritten, before.asWritten)} before issue 15), ` +
        `${perRow(total(compact), rows)} after VACUUM${kind === 'postgres' ? ' FULL' : ''} (${ratio(compact, before.compact)})`,
    );
    console.log(`${kind}: per million deliveries kept: ${((total(compact) * (1_000_000 / rows)) / 1024 / 1024).toFixed(0)} MiB (table + indexes, compact)`);
    await compactAndRemove(ctx, kind, siteId, subscriberIds, now, rows);
  });
}

/** Compaction of the written sends, timed a transaction at a time, then the trigger firings. */
async function compactAndRemove(ctx: AppContext, kind: Kind, siteId: string, subscriberIds: string[], now: number, rows: number): Promise<void> {
  const { db } = ctx;
  // Compaction, a transaction at a time, timed.
  const steps: number[] = [];
  const compactStarted = performance.now();
  let removed = 0;
  for (;;) {
    const stepStarted = performance.now();
    const count = await compactOldDeliveries(ctx, Date.now(), { everyMs: 0, batchSize: BATCH, maxBatches: 1 });
    steps.push(performance.now() - stepStarted);
    removed += count;
    if (count === 0) break;
  }
  const seconds = (performance.now() - compactStarted) / 1000;
  const sorted = [...steps].sort((a, b) => a - b);
  console.log(
    `${kind}: compaction removed ${removed.toLocaleString('en')} rows in ${seconds.toFixed(1)} s (${Math.round(removed / seconds).toLocaleString('en')} rows/s); ` +
      `per transaction of ≤ ${BATCH.toLocaleString('en')} rows: median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} ms, longest ${sorted.at(-1)!.toFixed(0)} ms`,
  );
  await vacuum(db, kind, false);
  const left = await sizes(db, kind, 'deliveries');
  const kept = await sizes(db, kind, 'compacted_deliveries');
  const groups = Number((await db.selectFrom('compacted_deliveries').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  console.log(`${kind}: after compaction and VACUUM, deliveries hold ${total(left).toLocaleString('en')} bytes${kind === 'postgres' ? ' (free for new rows; the files shrink only with VACUUM FULL)' : ''}; compacted_deliveries ${groups} rows, ${total(kept).toLocaleString('en')} bytes: ${perRow(total(kept), rows)} B per removed delivery kept for good`);

  await triggerFirings(ctx, kind, siteId, subscriberIds, now - 40 * DAY);
}

async function main(): Promise<void> {
  console.log(`bench:storage: ${ROWS.toLocaleString('en')} deliveries, ${os.availableParallelism()} cores, node ${process.version}`);
  await benchOn('sqlite', { now: {}, before: {} });
  if (WITH_PG) {
    const cluster = await startPgCluster({ durability: 'production' });
    try {
      await benchOn('postgres', {
        now: { DATABASE_URL: await createDatabase(cluster.adminUrl, 'bench') },
        before: { DATABASE_URL: await createDatabase(cluster.adminUrl, 'bench_before') },
      });
    } finally {
      cluster.stop();
    }
  }
}

await main();
