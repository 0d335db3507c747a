// Dashboard speed at scale (issue 5 part 3).
//
//   npm run bench:dashboard                                  # 1,000,000 subscribers, 10,000,000 events, SQLite and PostgreSQL
//   npm run bench:dashboard -- --subscribers 100000 --events 1000000   # a quick run
//   options: --db sqlite|postgres|both  --requests 200  --baseline-runs 5  --days 7
//
// For each database it seeds one site with bulk SQL, starts the real Herald
// HTTP server on 127.0.0.1, and times GET /api/sites/{id}/analytics/dashboard
// (p50/p95 over --requests sequential calls after a warm-up). In the same run
// it computes the same response from the raw events — deliveries and
// subscribers — with the best single-pass SQL the schema allows, checks the
// two answers are identical, and prints how many times faster the rollup is.
//
// The data set: "events" are sent + delivered + clicked. Deliveries are
// events / 2 rows: every row was sent, 90% delivered and 10% clicked (an 11.1%
// click rate), so 10,000,000 events are 5,000,000 delivery rows. They belong
// to 180 notifications (two a day over the last 90 days), each sent to an
// equal share of the subscribers who had subscribed by then; subscribers
// joined evenly over 180 days and 8% have unsubscribed since. stats_hourly,
// the notifications' counters and the site's active count are then built from
// those rows, exactly as the live paths would have written them.
import os from 'node:os';
import { parseArgs } from 'node:util';
import { DASHBOARD_LIST_LIMIT, WEEKDAY_NAMES, pendingOf, percentChange, rate, type DashboardData } from '@herald/contracts';
import { sql, type Kysely } from 'kysely';
import type { DatabaseKind } from '../apps/server/src/db/database';
import type { Database } from '../apps/server/src/db/schema';
import { HOUR_MS, hourStart } from '../apps/server/src/features/analytics/site-counters';
import { LocalDayRange, addDays, todayOf, weekdayIndex } from '../apps/server/src/features/analytics/local-days';
import { startPgCluster, type PgCluster } from '../apps/server/test/support/pg-cluster';
import { WINDOW_DAYS, analyze, deliveriesPerNotification, fmt, ms, openBenchServer, percentile, positiveInt, seedBigSite } from './support/big-site';

const NOTIFICATIONS = 2 * WINDOW_DAYS;
const TIMEZONE = 'America/New_York';
const VALUE_PER_SUBSCRIBER = 0.5;
const VALUE_PER_CLICK = 0.05;

const { values: args } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '1000000' },
    events: { type: 'string', default: '10000000' },
    db: { type: 'string', default: 'both' },
    requests: { type: 'string', default: '200' },
    'baseline-runs': { type: 'string', default: '5' },
    days: { type: 'string', default: '7' },
  },
});

const SUBSCRIBERS = positiveInt('subscribers', args.subscribers);
const EVENTS = positiveInt('events', args.events);
const REQUESTS = positiveInt('requests', args.requests);
const BASELINE_RUNS = positiveInt('baseline-runs', args['baseline-runs']);
const DAYS = positiveInt('days', args.days);
const SHAPE = { subscribers: SUBSCRIBERS, events: EVENTS, notifications: NOTIFICATIONS, timezone: TIMEZONE };
const DELIVERIES = deliveriesPerNotification(SHAPE) * NOTIFICATIONS;
const databases: DatabaseKind[] = args.db === 'both' ? ['sqlite', 'postgres'] : args.db === 'sqlite' || args.db === 'postgres' ? [args.db] : [];
if (!databases.length) throw new Error('--db must be sqlite, postgres or both');

// ---------------------------------------------------------------------------
// The baseline: the same response computed from the raw events.

interface RawSite {
  id: string;
  timezone: string;
  value_currency: string;
  value_per_subscriber: number;
  value_per_click: number;
}

/**
 * The dashboard from raw rows: one pass over the site's deliveries grouped by
 * the hours of their sent/delivered/clicked times (cheaper than three passes),
 * subscribers by the hours they joined and left, the active count, and the
 * latest notifications' rates counted from their deliveries. The calendar
 * logic is the product's, so only the data source differs.
 */
async function rawDashboard(db: Kysely<Database>, site: RawSite, days: number, now: number): Promise<DashboardData> {
  const timeZone = site.timezone;
  const today = todayOf(now, timeZone);
  const range = new LocalDayRange(addDays(today, -(days - 1)), today, timeZone);
  const periodStart = range.firstHour;
  const periodEnd = Math.max(periodStart, hourStart(now) + HOUR_MS);
  const previousStart = periodStart - (periodEnd - periodStart);
  const H = HOUR_MS;

  const deliveryHours = await sql<{ sh: number | null; dh: number | null; ch: number | null; n: number }>`
    SELECT (sent_at / ${sql.lit(H)}) * ${sql.lit(H)} AS sh, (delivered_at / ${sql.lit(H)}) * ${sql.lit(H)} AS dh,
           (clicked_at / ${sql.lit(H)}) * ${sql.lit(H)} AS ch, count(*) AS n
    FROM deliveries
    WHERE run_seq IN (SELECT seq FROM notification_runs WHERE site_id = ${site.id})
      AND ((sent_at >= ${previousStart} AND sent_at < ${periodEnd}) OR (delivered_at >= ${previousStart} AND delivered_at < ${periodEnd})
           OR (clicked_at >= ${previousStart} AND clicked_at < ${periodEnd}))
    GROUP BY 1, 2, 3`.execute(db);
  const joined = await sql<{ h: number; n: number }>`
    SELECT (subscribed_at / ${sql.lit(H)}) * ${sql.lit(H)} AS h, count(*) AS n FROM subscribers
    WHERE site_id = ${site.id} AND subscribed_at >= ${previousStart} AND subscribed_at < ${periodEnd} GROUP BY 1`.execute(db);
  const left = await sql<{ h: number; n: number }>`
    SELECT (unsubscribed_at / ${sql.lit(H)}) * ${sql.lit(H)} AS h, count(*) AS n FROM subscribers
    WHERE site_id = ${site.id} AND unsubscribed_at >= ${previousStart} AND unsubscribed_at < ${periodEnd} GROUP BY 1`.execute(db);
  const activeRow = await sql<{ n: number }>`SELECT count(*) AS n FROM subscribers WHERE site_id = ${site.id} AND is_active = 1`.execute(db);
  const latest = await db
    .selectFrom('notifications')
    .select(['id', 'title', 'message', 'status', 'sent_at', 'completed_at'])
    .where('site_id', '=', site.id)
    .where('sent_at', 'is not', null)
    .where('source', '!=', 'campaign')
    .orderBy('sent_at', 'desc')
    .orderBy('id', 'desc')
    .limit(DASHBOARD_LIST_LIMIT)
    .execute();
  const perNotification = latest.length
    ? await sql<{ id: string; targeted: number; sent: number; failed: number; expired: number; skipped: number; delivered: number; clicked: number }>`
        SELECT r.notification_id AS id, count(*) AS targeted, count(d.sent_at) AS sent,
               sum(CASE WHEN d.status = 'failed' THEN 1 ELSE 0 END) AS failed, sum(CASE WHEN d.status = 'gone' THEN 1 ELSE 0 END) AS expired,
               sum(CASE WHEN d.status = 'skipped' THEN 1 ELSE 0 END) AS skipped, count(d.delivered_at) AS delivered, count(d.clicked_at) AS clicked
        FROM notification_runs r JOIN deliveries d ON d.run_seq = r.seq
        WHERE r.notification_id IN (${sql.join(latest.map((n) => n.id))}) GROUP BY r.notification_id`.execute(db)
    : { rows: [] };
  const anyDelivery = await sql<{ one: number }>`SELECT 1 AS one FROM deliveries d JOIN notification_runs r ON r.seq = d.run_seq WHERE r.site_id = ${site.id} LIMIT 1`.execute(db);

  type Sums = { sent: number; delivered: number; clicked: number; subscribed: number; unsubscribed: number };
  const zero = (): Sums => ({ sent: 0, delivered: 0, clicked: 0, subscribed: 0, unsubscribed: 0 });
  const current = zero();
  const previous = zero();
  const byDay = range.dates.map(zero);
  const add = (hour: number | null, key: keyof Sums, n: number) => {
    if (hour === null) return;
    const h = Number(hour);
    if (h < previousStart || h >= periodEnd) return;
    (h >= periodStart ? current : previous)[key] += Number(n);
    const day = range.dayIndexOf(h);
    if (day >= 0) byDay[day]![key] += Number(n);
  };
  for (const row of deliveryHours.rows) {
    add(row.sh, 'sent', row.n);
    add(row.dh, 'delivered', row.n);
    add(row.ch, 'clicked', row.n);
  }
  for (const row of joined.rows) add(row.h, 'subscribed', row.n);
  for (const row of left.rows) add(row.h, 'unsubscribed', row.n);

  const active = Number(activeRow.rows[0]?.n ?? 0);
  const activeAtStart = Math.max(0, active - (current.subscribed - current.unsubscribed));
  const money = (n: number) => Math.round(n * 100) / 100;
  const value = money(current.subscribed * site.value_per_subscriber + current.clicked * site.value_per_click);
  const previousValue = money(previous.subscribed * site.value_per_subscriber + previous.clicked * site.value_per_click);
  const clickRate = rate(current.clicked, current.delivered);
  const previousClickRate = rate(previous.clicked, previous.delivered);
  const weekday = WEEKDAY_NAMES.map(() => 0);
  range.dates.forEach((date, i) => (weekday[weekdayIndex(date)]! += byDay[i]!.clicked));
  const counts = new Map(perNotification.rows.map((row) => [row.id, row]));

  return {
    period: {
      days,
      from: range.first,
      to: range.last,
      previousStart: new Date(previousStart).toISOString(),
      previousEnd: new Date(periodStart).toISOString(),
      timezone: timeZone,
    },
    metrics: {
      totalSubscribers: { value: active, previous: activeAtStart, change: percentChange(active, activeAtStart) },
      notificationsSent: { value: current.sent, previous: previous.sent, change: percentChange(current.sent, previous.sent) },
      clickRate: { value: clickRate, previous: previousClickRate, change: percentChange(clickRate, previousClickRate) },
      valueGenerated: { value, previous: previousValue, change: percentChange(value, previousValue), currency: site.value_currency },
    },
    chart: range.dates.map((date, i) => ({ date, sent: byDay[i]!.sent, delivered: byDay[i]!.delivered, clicked: byDay[i]!.clicked })),
    engagement: WEEKDAY_NAMES.map((name, i) => ({ name, clicks: weekday[i]! })),
    recentNotifications: latest.map((n) => {
      const c = counts.get(n.id);
      const outcome = {
        targeted: Number(c?.targeted ?? 0),
        sent: Number(c?.sent ?? 0),
        failed: Number(c?.failed ?? 0),
        expired: Number(c?.expired ?? 0),
        skipped: Number(c?.skipped ?? 0),
        delivered: Number(c?.delivered ?? 0),
        clicked: Number(c?.clicked ?? 0),
      };
      const { targeted, sent, failed, expired, skipped, delivered, clicked } = outcome;
      return {
        id: n.id,
        title: n.title,
        message: n.message,
        sent_at: new Date(Number(n.sent_at)).toISOString(),
        finished_at: n.completed_at === null ? null : new Date(Number(n.completed_at)).toISOString(),
        click_rate: rate(clicked, delivered),
        sent_count: sent,
        status: n.status,
        failed_count: failed,
        counts: { targeted, sent, failed, expired, skipped, pending: pendingOf(outcome), delivered, clicked },
      };
    }),
    hasData: anyDelivery.rows.length > 0,
  };
}

// ---------------------------------------------------------------------------

interface Result {
  kind: DatabaseKind;
  seedSeconds: number;
  endpoint: { p50: number; p95: number; max: number };
  baseline: { p50: number; p95: number };
  sample: DashboardData;
}

async function runOn(kind: DatabaseKind, cluster: PgCluster | undefined): Promise<Result> {
  console.log(`\n== ${kind}`);
  const server = await openBenchServer(kind, cluster, { timezone: TIMEZONE, valueCurrency: 'USD', valuePerSubscriber: VALUE_PER_SUBSCRIBER, valuePerClick: VALUE_PER_CLICK });
  const { runtime, address, headers, siteId } = server;
  try {
    const seedStarted = performance.now();
    await seedBigSite(runtime.ctx.db, kind, siteId, Date.now(), SHAPE);
    await analyze(runtime.ctx.db, kind);
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    const counts = await runtime.ctx.db
      .selectFrom('notifications')
      .select((eb) => [eb.fn.sum<number>('sent_count').as('sent'), eb.fn.sum<number>('delivered_count').as('delivered'), eb.fn.sum<number>('clicked_count').as('clicked')])
      .executeTakeFirstOrThrow();
    const [sent, delivered, clicked] = [Number(counts.sent), Number(counts.delivered), Number(counts.clicked)];
    console.log(`    events: ${fmt(sent)} sent + ${fmt(delivered)} delivered + ${fmt(clicked)} clicked = ${fmt(sent + delivered + clicked)}`);

    const url = `${address}/api/sites/${siteId}/analytics/dashboard?days=${DAYS}`;
    const call = async (): Promise<DashboardData> => {
      let response: Response;
      try {
        response = await fetch(url, { headers });
      } catch {
        // A kept-alive connection the server closed while the raw baseline held the event loop: one new attempt (a GET).
        response = await fetch(url, { headers });
      }
      if (response.status !== 200) throw new Error(`dashboard answered ${response.status}: ${await response.text()}`);
      return ((await response.json()) as { data: DashboardData }).data;
    };

    for (let i = 0; i < 20; i++) await call();
    const samples: number[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      const started = performance.now();
      await call();
      samples.push(performance.now() - started);
    }
    const endpoint = { p50: percentile(samples, 50), p95: percentile(samples, 95), max: Math.max(...samples) };
    console.log(`    endpoint over HTTP, ${REQUESTS} calls`.padEnd(48), `p50 ${ms(endpoint.p50)}, p95 ${ms(endpoint.p95)}, max ${ms(endpoint.max)}`);

    const site = await runtime.ctx.db
      .selectFrom('sites')
      .select(['id', 'timezone', 'value_currency', 'value_per_subscriber', 'value_per_click'])
      .where('id', '=', siteId)
      .executeTakeFirstOrThrow();
    // The two computations must agree (retried if an hour boundary passed in between).
    let sample: DashboardData | undefined;
    for (let attempt = 0; attempt < 2 && !sample; attempt++) {
      const before = Date.now();
      const fromEndpoint = await call();
      const fromRaw = await rawDashboard(runtime.ctx.db, site, DAYS, Date.now());
      if (JSON.stringify(fromEndpoint) === JSON.stringify(fromRaw)) sample = fromEndpoint;
      else if (hourStart(before) === hourStart(Date.now())) {
        throw new Error(`the rollup and the raw events disagree:\n${JSON.stringify(fromEndpoint)}\n${JSON.stringify(fromRaw)}`);
      }
    }
    if (!sample) throw new Error('the rollup and the raw events disagree twice');
    console.log('    rollup answer = raw-events answer            yes');

    const rawSamples: number[] = [];
    for (let i = 0; i < BASELINE_RUNS; i++) {
      const started = performance.now();
      await rawDashboard(runtime.ctx.db, site, DAYS, Date.now());
      rawSamples.push(performance.now() - started);
    }
    const baseline = { p50: percentile(rawSamples, 50), p95: percentile(rawSamples, 95) };
    console.log(`    raw-events baseline, ${BASELINE_RUNS} runs`.padEnd(48), `p50 ${ms(baseline.p50)}, p95 ${ms(baseline.p95)}`);
    return { kind, seedSeconds, endpoint, baseline, sample };
  } finally {
    await server.close();
  }
}

async function main(): Promise<void> {
  console.log(`Herald dashboard benchmark: ${fmt(SUBSCRIBERS)} subscribers, ${fmt(EVENTS)} events`);
  console.log(
    `  events = sent + delivered + clicked: ${fmt(DELIVERIES)} deliveries (all sent, 90% delivered, 10% clicked) from ${NOTIFICATIONS} notifications over ${WINDOW_DAYS} days; site timezone ${TIMEZONE}; days=${DAYS}`,
  );
  console.log(`  ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), Node ${process.version}`);
  const cluster = databases.includes('postgres') ? await startPgCluster({ durability: 'production' }) : undefined;
  const results: Result[] = [];
  try {
    for (const kind of databases) results.push(await runOn(kind, cluster));
  } finally {
    cluster?.stop();
  }

  console.log('\ndatabase    seed      endpoint p50   endpoint p95   raw p50        raw p95        rollup vs raw (p50)   p95 < 100 ms');
  for (const r of results) {
    console.log(
      [
        r.kind.padEnd(11),
        `${r.seedSeconds.toFixed(0)} s`.padEnd(9),
        ms(r.endpoint.p50).padEnd(14),
        ms(r.endpoint.p95).padEnd(14),
        ms(r.baseline.p50).padEnd(14),
        ms(r.baseline.p95).padEnd(14),
        `${(r.baseline.p50 / r.endpoint.p50).toFixed(0)}× faster`.padEnd(21),
        r.endpoint.p95 < 100 ? 'yes' : 'NO',
      ].join(' '),
    );
  }
  const sample = results[0]?.sample;
  if (sample) {
    const m = sample.metrics;
    console.log(
      `\nlast ${DAYS} days: ${fmt(m.totalSubscribers.value)} subscribers (${m.totalSubscribers.change ?? 'n/a'}%), ${fmt(m.notificationsSent.value)} sent (${m.notificationsSent.change ?? 'n/a'}%), click rate ${m.clickRate.value}%, value ${m.valueGenerated.value} ${m.valueGenerated.currency}`,
    );
  }
  if (results.some((r) => r.endpoint.p95 >= 100)) process.exitCode = 1;
}

await main();
