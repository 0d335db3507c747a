// The lists owners use all day, at a million subscribers (issue 15 part 5).
//
//   npm run bench:lists                                     # 1,000,000 subscribers, 10,000,000 events, 10,000 notifications, SQLite
//   npm run bench:lists -- --pg                             # the same on a throwaway PostgreSQL (--db both for the two)
//   npm run bench:lists -- --subscribers 100000 --events 200000   # a quick run
//   options: --requests 50  --notifications 10000
//
// The site of bench:dashboard (bench/support/big-site.ts), with 10,000
// notifications and tags on a third of the subscribers, behind the real HTTP
// server on 127.0.0.1. Each page is called with the query string the web app
// sends (apps/web: subscribers/api.ts, notifications/api.ts, segments/api.ts,
// lib/audience.ts): --requests sequential calls after a warm-up, p50/p95
// printed next to the target (p95 < 50 ms; the CSV export's first byte < 1 s,
// and the server's memory while a client in another process reads the whole
// file). The segments list is timed twice: with the 4 segments the estimates
// use, then with 40 (a site that grew its segments).
import { spawn } from 'node:child_process';
import os from 'node:os';
import v8 from 'node:v8';
import vm from 'node:vm';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import type { DatabaseKind } from '../apps/server/src/db/database';
import { startPgCluster, type PgCluster } from '../apps/server/test/support/pg-cluster';
import { analyze, fmt, ms, openBenchServer, percentile, positiveInt, seedBigSite, sequence, timed, type BenchServer } from './support/big-site';

const { values: args } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '1000000' },
    events: { type: 'string', default: '10000000' },
    notifications: { type: 'string', default: '10000' },
    requests: { type: 'string', default: '50' },
    db: { type: 'string' },
    pg: { type: 'boolean', default: false },
  },
});

const SHAPE = {
  subscribers: positiveInt('subscribers', args.subscribers),
  events: positiveInt('events', args.events),
  notifications: positiveInt('notifications', args.notifications),
  timezone: 'America/New_York',
};
const REQUESTS = positiveInt('requests', args.requests);
const dbArg = args.db ?? (args.pg ? 'postgres' : 'sqlite');
const databases: DatabaseKind[] = dbArg === 'both' ? ['sqlite', 'postgres'] : dbArg === 'sqlite' || dbArg === 'postgres' ? [dbArg] : [];
if (!databases.length) throw new Error('--db must be sqlite, postgres or both');

const TARGET_MS = 50;
const EXPORT_FIRST_BYTE_TARGET_MS = 1000;
const PAGE_SIZE = 50; // SUBSCRIBERS_PAGE_SIZE and NOTIFICATIONS_PAGE_SIZE of the web app
/** Segments of the site for the second timing of the segments list. */
const MANY_SEGMENTS = 40;

interface Row {
  page: string;
  p50: number;
  p95: number;
  target: number;
  note?: string;
}

/** Tags as owners use them: a third of the subscribers have "newsletter", a tenth also "vip". */
async function seedTags(server: BenchServer, kind: DatabaseKind): Promise<void> {
  const { siteId } = server;
  await timed('tags', async () => {
    const chunk = 250_000;
    for (let from = 0; from < SHAPE.subscribers; from += chunk) {
      const to = Math.min(SHAPE.subscribers, from + chunk) - 1;
      await sql
        .raw(
          `${sequence(kind, from, to)}
           INSERT INTO subscriber_tags (subscriber_id, site_id, tag)
           SELECT 'sub-' || (1000000000 + d), '${siteId}', 'newsletter' FROM seq WHERE d % 3 = 0
           UNION ALL SELECT 'sub-' || (1000000000 + d), '${siteId}', 'vip' FROM seq WHERE d % 10 = 0`,
        )
        .execute(server.runtime.ctx.db);
    }
  });
}

async function runOn(kind: DatabaseKind, cluster: PgCluster | undefined): Promise<Row[]> {
  console.log(`\n== ${kind}`);
  const server = await openBenchServer(kind, cluster, { timezone: SHAPE.timezone });
  const { address, headers, siteId } = server;
  try {
    await seedBigSite(server.runtime.ctx.db, kind, siteId, Date.now(), SHAPE);
    await seedTags(server, kind);
    await analyze(server.runtime.ctx.db, kind);

    const api = async (method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> => {
      const init = {
        method,
        headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      };
      let response: Response;
      try {
        response = await fetch(`${address}/api${path}`, init);
      } catch {
        // A kept-alive connection the server closed while seeding held its event loop: one new attempt (nothing was answered).
        response = await fetch(`${address}/api${path}`, init);
      }
      const text = await response.text();
      if (response.status !== 200 && response.status !== 201) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
      return (JSON.parse(text) as { data: unknown }).data;
    };

    const segments: Array<{ name: string; rules: Record<string, unknown> }> = [
      { name: 'Chrome', rules: { browser: 'Chrome' } },
      { name: 'US and Germany', rules: { country: 'US, DE' } },
      { name: 'Subscribed 30+ days ago on iOS', rules: { os: 'iOS', subscribed_days_ago: 30 } },
      { name: 'VIP', rules: { tags: ['vip'] } },
    ];
    const segmentIds: string[] = [];
    for (const segment of segments) {
      const created = (await api('POST', `/sites/${siteId}/segments`, segment)) as { segment: { id: string } };
      segmentIds.push(created.segment.id);
    }

    const first = (await api('GET', `/sites/${siteId}/subscribers?page=1&limit=${PAGE_SIZE}`)) as { total: number };
    const lastPage = Math.max(1, Math.ceil(first.total / PAGE_SIZE));
    const site = `/sites/${siteId}`;
    // What the web app sends for the middle page reached with Next: the cursor where the page before it ended.
    const middle = Math.ceil(lastPage / 2);
    const before = (await api('GET', `${site}/subscribers?page=${middle - 1}&limit=${PAGE_SIZE}`)) as { cursors: { next: string } };
    const pages: Array<{ page: string; method?: 'POST'; path: string }> = [
      { page: 'subscribers: first page', path: `${site}/subscribers?page=1&limit=${PAGE_SIZE}` },
      { page: 'subscribers: Active', path: `${site}/subscribers?is_active=true&page=1&limit=${PAGE_SIZE}` },
      { page: 'subscribers: Inactive', path: `${site}/subscribers?is_active=false&page=1&limit=${PAGE_SIZE}` },
      { page: 'subscribers: page 2', path: `${site}/subscribers?page=2&limit=${PAGE_SIZE}` },
      { page: 'subscribers: middle page', path: `${site}/subscribers?page=${middle}&limit=${PAGE_SIZE}` },
      { page: 'subscribers: middle page by Next', path: `${site}/subscribers?page=${middle}&limit=${PAGE_SIZE}&after=${before.cursors.next}` },
      { page: `subscribers: last page (${fmt(lastPage)})`, path: `${site}/subscribers?page=${lastPage}&limit=${PAGE_SIZE}` },
      { page: 'subscribers: search "firefox"', path: `${site}/subscribers?search=firefox&page=1&limit=${PAGE_SIZE}` },
      { page: 'subscribers: search "germany"', path: `${site}/subscribers?search=germany&page=1&limit=${PAGE_SIZE}` },
      { page: 'subscribers: search "zz" (no match)', path: `${site}/subscribers?search=zz&page=1&limit=${PAGE_SIZE}` },
      { page: 'subscribers: Active + search "ios"', path: `${site}/subscribers?is_active=true&search=ios&page=1&limit=${PAGE_SIZE}` },
      { page: 'notifications: All', path: `${site}/notifications?page=1&limit=${PAGE_SIZE}` },
      { page: 'notifications: Completed', path: `${site}/notifications?status=completed,completed_with_errors&page=1&limit=${PAGE_SIZE}` },
      { page: 'notifications: Draft (none)', path: `${site}/notifications?status=draft&page=1&limit=${PAGE_SIZE}` },
      { page: 'segments list', path: `${site}/segments` },
      ...segments.map((segment, i) => ({ page: `segment estimate: ${segment.name}`, method: 'POST' as const, path: `/segments/${segmentIds[i]}/estimate` })),
      { page: 'audience: everyone', path: `${site}/audience` },
      { page: `audience: segment ${segments[0]!.name}`, path: `${site}/audience?segment_id=${segmentIds[0]}` },
    ];

    const rows: Row[] = [];
    const timePage = async (entry: { page: string; method?: 'GET' | 'POST'; path: string }) => {
      const call = () => api(entry.method ?? 'GET', entry.path);
      for (let i = 0; i < 3; i++) await call();
      const samples: number[] = [];
      for (let i = 0; i < REQUESTS; i++) {
        const started = performance.now();
        await call();
        samples.push(performance.now() - started);
      }
      const row = { page: entry.page, p50: percentile(samples, 50), p95: percentile(samples, 95), target: TARGET_MS };
      console.log(`    ${row.page.padEnd(44)} p50 ${ms(row.p50).padEnd(10)} p95 ${ms(row.p95).padEnd(10)} ${row.p95 < TARGET_MS ? 'met' : 'NOT met'}`);
      rows.push(row);
    };
    for (const entry of pages) await timePage(entry);
    // A site that grew its segments: the list shows every one's count (one read of the sample for all of them).
    const browsers = ['Chrome', 'Firefox', 'Safari', 'Edge'];
    const countries = ['US', 'DE', 'FR', 'GB', 'BR', 'IN', 'JP', 'CA', 'AU'];
    for (let i = segments.length; i < MANY_SEGMENTS; i++) {
      const rules = i % 3 === 0 ? { country: countries[i % countries.length]! } : i % 3 === 1 ? { browser: browsers[i % browsers.length]!, subscribed_days_ago: i } : { tags: ['newsletter'], os: i % 2 ? 'Android' : 'Windows' };
      await api('POST', `/sites/${siteId}/segments`, { name: `Segment ${i + 1}`, rules });
    }
    await timePage({ page: `segments list (${MANY_SEGMENTS} segments)`, path: `${site}/segments` });
    rows.push(await exportRun(server));
    return rows;
  } finally {
    await server.close();
  }
}

/**
 * The CSV export read to its end by a client in another process (in this one,
 * the server's synchronous SQLite reads would hold the client's event loop and
 * delay its first byte): time to first byte and to the end, and how far this
 * process's memory (the server's) rose meanwhile.
 */
async function exportRun(server: BenchServer): Promise<Row> {
  const client = `
    const started = performance.now();
    const response = await fetch(process.argv[1], { headers: { authorization: process.argv[2] } });
    if (response.status !== 200) throw new Error('export answered ' + response.status);
    let firstByte = 0, bytes = 0, lines = 0;
    for await (const chunk of response.body) {
      if (!firstByte) firstByte = performance.now() - started;
      bytes += chunk.byteLength;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
    }
    console.log(JSON.stringify({ firstByte, total: performance.now() - started, bytes, lines }));`;
  // A full collection before and after tells memory the export still holds
  // from garbage the collector had not got round to (the peak counts both).
  v8.setFlagsFromString('--expose-gc');
  const collectGarbage = vm.runInNewContext('gc') as () => void;
  collectGarbage();
  const rssBefore = process.memoryUsage().rss;
  const heapBefore = process.memoryUsage().heapUsed;
  let rssPeak = rssBefore;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 50);
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', client, `${server.address}/api/sites/${server.siteId}/subscribers/export`, server.headers.authorization], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`the export client exited with ${code}`))));
  });
  clearInterval(sampler);
  collectGarbage();
  const heapHeld = process.memoryUsage().heapUsed - heapBefore;
  const { firstByte, total, bytes, lines } = JSON.parse(output) as { firstByte: number; total: number; bytes: number; lines: number };
  const note =
    `${fmt(lines - 1)} rows, ${(bytes / 1e6).toFixed(0)} MB in ${(total / 1000).toFixed(1)} s; ` +
    `server memory +${((rssPeak - rssBefore) / 1e6).toFixed(0)} MB at its peak, heap ${heapHeld >= 0 ? '+' : '−'}${Math.abs(heapHeld / 1e6).toFixed(0)} MB once collected after the export`;
  console.log(
    `    ${'subscribers CSV export: first byte'.padEnd(44)} ${ms(firstByte).padEnd(25)} ${firstByte < EXPORT_FIRST_BYTE_TARGET_MS ? 'met' : 'NOT met'} (${note})`,
  );
  return { page: 'subscribers CSV export: first byte', p50: firstByte, p95: firstByte, target: EXPORT_FIRST_BYTE_TARGET_MS, note };
}

async function main(): Promise<void> {
  console.log(
    `Herald lists benchmark: ${fmt(SHAPE.subscribers)} subscribers, ${fmt(SHAPE.events)} events, ${fmt(SHAPE.notifications)} notifications; ${REQUESTS} calls per page`,
  );
  console.log(`  ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), Node ${process.version}`);
  const cluster = databases.includes('postgres') ? await startPgCluster({ durability: 'production' }) : undefined;
  const results = new Map<DatabaseKind, Row[]>();
  try {
    for (const kind of databases) results.set(kind, await runOn(kind, cluster));
  } finally {
    cluster?.stop();
  }
  for (const [kind, rows] of results) {
    console.log(`\n${kind}: page`.padEnd(48) + 'p50        p95        target      met');
    for (const row of rows) {
      console.log(
        [`  ${row.page}`.padEnd(46), ms(row.p50).padEnd(10), ms(row.p95).padEnd(10), `< ${fmt(row.target)} ms`.padEnd(11), row.p95 < row.target ? 'yes' : 'NO', row.note ?? ''].join(' '),
      );
    }
    const met = rows.filter((row) => row.p95 < row.target).length;
    console.log(`  ${met} of ${rows.length} pages meet their target`);
  }
}

await main();
