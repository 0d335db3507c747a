// npm run bench:import [-- --rows 1000000] [-- --pg] [-- --batch 5000]   (or HERALD_BENCH_PG=1)
//
// Importing subscribers (docs/product.md, "Importing subscribers") through the
// real service and job: a CSV of realistic browser subscriptions (FCM, Mozilla
// and Apple endpoints, P-256 keys on the curve, tags, metadata) is generated
// into a temp folder as a stream, queued with the import service, claimed by
// the scheduler's due-work source and read by the job, on SQLite and, with
// --pg, on a throwaway PostgreSQL cluster. Compared in the same run with the
// floor: reading and checking the same file without writing anything.
// Prints rows/s, seconds, and resident memory every 100k rows and at the end
// (the job must stay flat in file size). Targets on a 2-core machine: 1M rows
// under 60 s on SQLite, under 120 s on PostgreSQL. No pass/fail: figures.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { loadConfig } from '../apps/server/src/config';
import { createAuthService } from '../apps/server/src/features/auth/service';
import { readRecords } from '../apps/server/src/features/subscriber-imports/import-file';
import { checkRow, csvColumns, csvFields } from '../apps/server/src/features/subscriber-imports/import-row';
import { runImport, subscriberImportsDueWork } from '../apps/server/src/features/subscriber-imports/job';
import { createSubscriberImportsService } from '../apps/server/src/features/subscriber-imports/service';
import { createSitesService } from '../apps/server/src/features/sites/service';
import type { JobQueue } from '../apps/server/src/jobs/queue';
import { openRuntime } from '../apps/server/src/runtime';
import { createDatabase, startPgCluster } from '../apps/server/test/support/pg-cluster';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '1000000' }, pg: { type: 'boolean', default: false }, batch: { type: 'string' } } });
/** `--batch N`: rows per transaction instead of the job's default (to compare sizes). */
const BATCH = values.batch === undefined ? undefined : Number(values.batch);
const ROWS = Number(values.rows);
const WITH_PG = values.pg || process.env.HERALD_BENCH_PG === '1';
const MB = 1024 * 1024;
const rssMb = () => process.memoryUsage().rss / MB;

/** A pool of real P-256 public keys: generating a million takes longer than the import. Endpoints are all distinct. */
const KEY_POOL = Array.from({ length: 2000 }, () => crypto.createECDH('prime256v1').generateKeys().toString('base64url'));
const HOSTS = ['https://fcm.googleapis.com/fcm/send/', 'https://updates.push.services.mozilla.com/wpush/v2/', 'https://web.push.apple.com/'];
const BROWSERS = [['Chrome', 'Windows'], ['Firefox', 'Linux'], ['Safari', 'macOS'], ['Edge', 'Windows'], ['Chrome', 'Android']];
const PLACES = [['DE', 'de-DE', 'Europe/Berlin'], ['FR', 'fr-FR', 'Europe/Paris'], ['US', 'en-US', 'America/New_York'], ['GB', 'en-GB', 'Europe/London'], ['BR', 'pt-BR', 'America/Sao_Paulo']];

async function generateCsv(file: string, rows: number): Promise<number> {
  const out = fs.createWriteStream(file);
  out.write('endpoint,p256dh,auth,created_at,browser,os,country,language,timezone,tags,external_id\n');
  const start = Date.UTC(2024, 0, 1);
  let chunk = '';
  for (let i = 0; i < rows; i += 1) {
    const [browser, system] = BROWSERS[i % BROWSERS.length]!;
    const [country, language, zone] = PLACES[i % PLACES.length]!;
    const endpoint = `${HOSTS[i % HOSTS.length]}${crypto.randomBytes(96).toString('base64url')}`;
    const created = new Date(start + i * 17_000).toISOString();
    const tags = i % 3 === 0 ? 'news|sale' : i % 3 === 1 ? 'vip' : '';
    chunk += `${endpoint},${KEY_POOL[i % KEY_POOL.length]},${crypto.randomBytes(16).toString('base64url')},${created},${browser},${system},${country},${language},${zone},${tags},${i % 4 === 0 ? `user-${i}` : ''}\n`;
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'finish');
  return fs.statSync(file).size;
}

/** The floor: the same file read and every row checked, nothing written. */
async function readAndCheck(file: string): Promise<number> {
  let columns: string[] | null = null;
  const context = { extraPushOrigins: [], keysByPublicKey: new Map<string, string>(), defaultKeyId: 'k', now: Date.now() };
  const started = performance.now();
  for await (const record of readRecords(file, 'csv', { offset: 0, line: 0 })) {
    if (!columns) {
      const header = csvColumns(record.text);
      if ('error' in header) throw new Error(header.error);
      columns = header.columns;
      continue;
    }
    checkRow(record.line, csvFields(record.text, columns), context);
  }
  return (performance.now() - started) / 1000;
}

async function importOn(label: string, file: string, size: number, env: Record<string, string>): Promise<{ seconds: number; rssBy100k: number[]; rssEnd: number; peak: number; base: number }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `herald-bench-import-${label}-`));
  const runtime = await openRuntime(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PUBLIC_URL: 'https://herald.bench', ...env }));
  const ctx = runtime.ctx;
  if (BATCH !== undefined) ctx.subscriberImports = { batchSize: BATCH };
  try {
    const user = await createAuthService(ctx).createUser({ name: 'Bench', email: 'bench@example.com', password: 'bench-password', verified: true });
    const site = await createSitesService(ctx).create(user.id, { name: 'Bench shop', url: 'https://bench.example' });
    const storedFile = 'bench.upload';
    // The upload step itself is a file copy; the bench hands the service the generated file as the upload.
    const created = await createSubscriberImportsService(ctx).create(user.id, site.id, async (folder) => {
      await fs.promises.mkdir(folder, { recursive: true });
      await fs.promises.copyFile(file, path.join(folder, storedFile));
      const head = Buffer.alloc(4096);
      const handle = await fs.promises.open(file);
      await handle.read(head, 0, 4096, 0);
      await handle.close();
      return { storedFile, fileName: 'bench.csv', size, head, fields: {} };
    });
    const claims: Array<{ importId: string; attempt: number }> = [];
    const queue = { enqueue: async (_job: unknown, payload: { importId: string; attempt: number }) => void claims.push(payload) } as unknown as JobQueue;
    await subscriberImportsDueWork(ctx, queue).runDue(ctx.clock.now());
    const claim = claims[0]!;
    global.gc?.();
    const base = rssMb();
    let peak = base;
    /** RSS each time another 100k rows are stored: flat memory shows as a flat series. */
    const rssBy100k: number[] = [];
    let rowsDone = 0;
    const started = performance.now();
    await runImport(ctx, claim.importId, claim.attempt, {
      onBatch: async (rows) => {
        rowsDone += rows;
        const rss = rssMb();
        peak = Math.max(peak, rss);
        while (rowsDone >= (rssBy100k.length + 1) * 100_000) rssBy100k.push(rss);
      },
    });
    const seconds = (performance.now() - started) / 1000;
    const done = await ctx.db.selectFrom('subscriber_imports').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    if (done.status !== 'done' || Number(done.imported) !== ROWS) throw new Error(`${label}: import ended ${done.status} with ${done.imported} imported, ${done.rejected} rejected (${done.error})`);
    return { seconds, rssBy100k, rssEnd: rssMb(), peak, base };
  } finally {
    await runtime.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-bench-import-file-'));
  const file = path.join(folder, 'subscribers.csv');
  try {
    console.log(`generating ${ROWS.toLocaleString('en')} rows…`);
    const size = await generateCsv(file, ROWS);
    console.log(`file: ${(size / MB).toFixed(1)} MB on disk, ${os.availableParallelism()} cores, node ${process.version}`);
    const floor = await readAndCheck(file);
    console.log(`floor (read + check every row, no writes): ${floor.toFixed(1)} s, ${Math.round(ROWS / floor).toLocaleString('en')} rows/s`);

    const targets: Array<[string, Record<string, string>, number, () => void]> = [['sqlite', {}, 60, () => undefined]];
    if (WITH_PG) {
      const cluster = await startPgCluster({ durability: 'production' });
      targets.push(['postgres', { DATABASE_URL: await createDatabase(cluster.adminUrl, 'bench') }, 120, () => cluster.stop()]);
    }
    for (const [label, env, target, cleanUp] of targets) {
      try {
        const result = await importOn(label, file, size, env);
        const perMillion = (result.seconds * 1_000_000) / ROWS;
        console.log(
          `${label}: ${result.seconds.toFixed(1)} s, ${Math.round(ROWS / result.seconds).toLocaleString('en')} rows/s (${(result.seconds / floor).toFixed(2)}× the floor); ` +
            `${perMillion.toFixed(0)} s per million rows (target < ${target} s)`,
        );
        console.log(
          `${label}: RSS before ${result.base.toFixed(0)} MB, every 100k rows ${result.rssBy100k.map((rss) => rss.toFixed(0)).join(' ')} MB, at the end ${result.rssEnd.toFixed(0)} MB, peak ${result.peak.toFixed(0)} MB ` +
            `(growth ${(result.peak - result.base).toFixed(0)} MB for a ${(size / MB).toFixed(0)} MB file: ${((result.peak - result.base) / (size / MB)).toFixed(2)} MB per MB)`,
        );
      } finally {
        cleanUp();
      }
    }
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
  }
}

await main();
