import {
  PROMPT_TYPES,
  ANALYTICS_DEFAULT_RANGE_DAYS,
  ANALYTICS_MAX_RANGE_DAYS,
  DASHBOARD_LIST_LIMIT,
  WEEKDAY_NAMES,
  pendingOf,
  percentChange,
  rate,
  type DashboardData,
  type DashboardQuery,
  type DeliveryHealthData,
  type DeliveryHealthQuery,
  type DeliveryHealthService,
  type FailureReason,
  type MedianAcceptTime,
  type PushServiceName,
  type EngagementData,
  type EngagementQuery,
  type SubscriberGrowthData,
  type SubscriberGrowthPoint,
  type SubscriberGrowthQuery,
} from '@herald/contracts';
import type { AppContext } from '../../context';
import { badRequest } from '../../platform/errors';
import { iso, isoOrNull } from '../../platform/responses';
import { requireSiteRole } from '../sites/service';
import { HOUR_MS, LATENCY_BUCKET_UPPER_MS, hourStart, readActiveSubscriberCount } from './site-counters';
import { LocalDayRange, addDays, daysBetween, todayOf, weekdayIndex, type LocalDate } from './local-days';
import * as repo from './repository';

type Counter = 'sent' | 'delivered' | 'clicked' | 'failed' | 'subscribed' | 'unsubscribed';
type Totals = Record<Counter, number>;

const zeroTotals = (): Totals => ({ sent: 0, delivered: 0, clicked: 0, failed: 0, subscribed: 0, unsubscribed: 0 });

function addInto(totals: Totals, row: repo.HourlyStats): void {
  totals.sent += row.sent;
  totals.delivered += row.delivered;
  totals.clicked += row.clicked;
  totals.failed += row.failed;
  totals.subscribed += row.subscribed;
  totals.unsubscribed += row.unsubscribed;
}

/** Sums hourly rows into the local days of a range (rows outside it are ignored). */
function totalsByDay(range: LocalDayRange, rows: repo.HourlyStats[]): Totals[] {
  const days = range.dates.map(zeroTotals);
  for (const row of rows) {
    const index = range.dayIndexOf(row.hour_start);
    if (index >= 0) addInto(days[index]!, row);
  }
  return days;
}

const money = (amount: number) => Math.round(amount * 100) / 100;

interface ServiceTally {
  accepted: number;
  failed: number;
  expired: number;
  failures: Map<FailureReason, number>;
  /** Accepted deliveries by latency bucket (1 … LATENCY_BUCKET_UPPER_MS.length + 1). */
  latency: Map<number, number>;
}

const newTally = (): ServiceTally => ({ accepted: 0, failed: 0, expired: 0, failures: new Map(), latency: new Map() });

function addHealthRow(tally: ServiceTally, row: repo.DeliveryHealthRow): void {
  if (row.outcome === 'accepted') {
    tally.accepted += row.count;
    tally.latency.set(row.latency_bucket, (tally.latency.get(row.latency_bucket) ?? 0) + row.count);
  } else if (row.outcome === 'expired') {
    tally.expired += row.count;
  } else {
    tally.failed += row.count;
    const reason = (row.reason || 'rejected') as FailureReason;
    tally.failures.set(reason, (tally.failures.get(reason) ?? 0) + row.count);
  }
}

/** The bucket holding the middle accepted delivery: "within" its upper bound, or "over" the last bound for the slowest bucket. */
function medianOf(latency: Map<number, number>, accepted: number): MedianAcceptTime {
  if (accepted === 0) return null;
  const middle = Math.ceil(accepted / 2);
  let seen = 0;
  for (const bucket of [...latency.keys()].sort((a, b) => a - b)) {
    seen += latency.get(bucket)!;
    if (seen < middle) continue;
    const upper = LATENCY_BUCKET_UPPER_MS[bucket - 1];
    return upper === undefined ? { over_ms: LATENCY_BUCKET_UPPER_MS[LATENCY_BUCKET_UPPER_MS.length - 1]! } : { within_ms: upper };
  }
  return null;
}

function summarise(tally: ServiceTally): Omit<DeliveryHealthService, 'push_service'> {
  return {
    accepted: tally.accepted,
    failed: tally.failed,
    expired: tally.expired,
    failures: [...tally.failures.entries()].map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason)),
    median_accept: medianOf(tally.latency, tally.accepted),
  };
}

/**
 * The range of the subscribers and engagement reports: local days `from`…`to`
 * inclusive. `to` defaults to today and is clamped to today (a browser ahead
 * of the site's timezone may ask for "tomorrow"); `from` defaults to 30 days
 * ending at `to`.
 */
function reportRange(query: { from?: string; to?: string }, today: LocalDate): { from: LocalDate; to: LocalDate } {
  if (query.from !== undefined && daysBetween(query.from, today) < 0) {
    throw badRequest(`from must not be later than today (${today} in the site's timezone)`);
  }
  if (query.from !== undefined && query.to !== undefined && daysBetween(query.from, query.to) < 0) {
    throw badRequest('from must be on or before to');
  }
  const to = query.to === undefined || daysBetween(query.to, today) < 0 ? today : query.to;
  const from = query.from ?? addDays(to, -(ANALYTICS_DEFAULT_RANGE_DAYS - 1));
  if (daysBetween(from, to) + 1 > ANALYTICS_MAX_RANGE_DAYS) {
    throw badRequest(`The range can cover at most ${ANALYTICS_MAX_RANGE_DAYS} days`);
  }
  return { from, to };
}

/**
 * Spec §7 Analytics. Everything comes from the hourly rollup (stats_hourly,
 * kept by sends, beacons and (un)subscribes in their own transactions) and the
 * counters on sites and notifications — never from the deliveries table — so
 * a report reads a few hundred rows whatever the audience size.
 */
export function createAnalyticsService(ctx: Pick<AppContext, 'db' | 'clock'>) {
  const { db, clock } = ctx;

  return {
    /**
     * The dashboard (spec §2/§3). The period is the last `days` local days,
     * today included (still running); the previous period is the same number
     * of hours right before it, so a comparison made at 10:00 weighs like
     * against like. Total subscribers compares now with the count when the
     * period began.
     */
    async dashboard(userId: string, siteId: string, query: DashboardQuery): Promise<DashboardData> {
      const site = await requireSiteRole(ctx, userId, siteId, 'viewer');
      const timeZone = site.timezone;
      const now = clock.now();
      const today = todayOf(now, timeZone);
      const days = new LocalDayRange(addDays(today, -(query.days - 1)), today, timeZone);
      const periodStart = days.firstHour;
      // Through the running hour; empty in the half hour after midnight of a :30 zone with days=1.
      const periodEnd = Math.max(periodStart, hourStart(now) + HOUR_MS);
      const previousStart = periodStart - (periodEnd - periodStart);

      const [rows, active, recent, hasData] = await Promise.all([
        repo.hourlyStats(db, site.id, previousStart, periodEnd),
        readActiveSubscriberCount(db, site.id),
        repo.latestSentNotifications(db, site.id, DASHBOARD_LIST_LIMIT),
        repo.hasSendingActivity(db, site.id),
      ]);

      const current = zeroTotals();
      const previous = zeroTotals();
      for (const row of rows) addInto(row.hour_start >= periodStart ? current : previous, row);
      const byDay = totalsByDay(days, rows);

      const activeAtStart = Math.max(0, active - (current.subscribed - current.unsubscribed));
      const clickRate = rate(current.clicked, current.delivered);
      const previousClickRate = rate(previous.clicked, previous.delivered);
      const value = money(current.subscribed * site.value_per_subscriber + current.clicked * site.value_per_click);
      const previousValue = money(previous.subscribed * site.value_per_subscriber + previous.clicked * site.value_per_click);

      const clicksByWeekday = WEEKDAY_NAMES.map(() => 0);
      days.dates.forEach((date, i) => (clicksByWeekday[weekdayIndex(date)]! += byDay[i]!.clicked));

      return {
        period: {
          days: query.days,
          from: days.first,
          to: days.last,
          previousStart: iso(previousStart),
          previousEnd: iso(periodStart),
          timezone: timeZone,
        },
        metrics: {
          totalSubscribers: { value: active, previous: activeAtStart, change: percentChange(active, activeAtStart) },
          notificationsSent: { value: current.sent, previous: previous.sent, change: percentChange(current.sent, previous.sent) },
          clickRate: { value: clickRate, previous: previousClickRate, change: percentChange(clickRate, previousClickRate) },
          valueGenerated: { value, previous: previousValue, change: percentChange(value, previousValue), currency: site.value_currency },
        },
        chart: days.dates.map((date, i) => ({ date, sent: byDay[i]!.sent, delivered: byDay[i]!.delivered, clicked: byDay[i]!.clicked })),
        engagement: WEEKDAY_NAMES.map((name, i) => ({ name, clicks: clicksByWeekday[i]! })),
        recentNotifications: recent.map((n) => {
          const counts = {
            targeted: n.total_count,
            sent: n.sent_count,
            failed: n.failed_count,
            expired: n.expired_count,
            skipped: n.skipped_count,
            delivered: n.delivered_count,
            clicked: n.clicked_count,
          };
          return {
            id: n.id,
            title: n.title,
            message: n.message,
            sent_at: isoOrNull(n.sent_at),
            finished_at: isoOrNull(n.completed_at),
            click_rate: rate(n.clicked_count, n.delivered_count),
            sent_count: n.sent_count,
            status: n.status,
            failed_count: n.failed_count,
            counts: { ...counts, pending: pendingOf(counts) },
          };
        }),
        hasData,
      };
    },

    /**
     * Subscriber growth per local day or week: subscriptions gained (a new
     * browser, or one that came back), lost (unsubscribed, removed, or gone at
     * the push service), and the active count at the end of each point,
     * counted back from today's exact active count.
     */
    async subscriberGrowth(userId: string, siteId: string, query: SubscriberGrowthQuery): Promise<SubscriberGrowthData> {
      const site = await requireSiteRole(ctx, userId, siteId, 'viewer');
      const timeZone = site.timezone;
      const { from, to } = reportRange(query, todayOf(clock.now(), timeZone));
      const range = new LocalDayRange(from, to, timeZone);
      const [rows, netAfter, active, promptRows] = await Promise.all([
        repo.hourlyStats(db, site.id, range.firstHour, range.endHour),
        repo.netSubscribersSince(db, site.id, range.endHour),
        readActiveSubscriberCount(db, site.id),
        repo.promptTotals(db, site.id, range.firstHour, range.endHour),
      ]);
      const byDay = totalsByDay(range, rows);

      // Active at the end of each day, walking back from now.
      const activeAtEnd: number[] = new Array<number>(byDay.length);
      let running = active - netAfter;
      for (let i = byDay.length - 1; i >= 0; i--) {
        activeAtEnd[i] = Math.max(0, running);
        running -= byDay[i]!.subscribed - byDay[i]!.unsubscribed;
      }

      const series: SubscriberGrowthPoint[] = [];
      range.dates.forEach((date, i) => {
        const day = byDay[i]!;
        const startsPoint = query.interval === 'day' || i === 0 || weekdayIndex(date) === 0;
        if (startsPoint) series.push({ date, new: 0, unsubscribed: 0, net: 0, active: 0 });
        const point = series[series.length - 1]!;
        point.new += day.subscribed;
        point.unsubscribed += day.unsubscribed;
        point.net = point.new - point.unsubscribed;
        point.active = activeAtEnd[i]!;
      });

      const totals = byDay.reduce((sum, day) => ({ new: sum.new + day.subscribed, unsubscribed: sum.unsubscribed + day.unsubscribed, net: 0 }), {
        new: 0,
        unsubscribed: 0,
        net: 0,
      });
      totals.net = totals.new - totals.unsubscribed;
      // Every prompt type, shown or not, so a report can compare them side by side.
      const prompts = PROMPT_TYPES.map((prompt) => {
        const row = promptRows.find((r) => r.prompt === prompt);
        const shown = row?.shown ?? 0;
        const subscribed = row?.subscribed ?? 0;
        return { prompt, shown, subscribed, conversion_rate: shown ? Math.round((subscribed / shown) * 10_000) / 100 : 0 };
      });
      return { from, to, interval: query.interval, timezone: timeZone, totals, series, prompts };
    },

    /**
     * The Delivery section: for the last `days` local days, per push service,
     * what was accepted, what failed and why, what expired, and the median
     * time from due to accepted (from the latency histogram); and per day the
     * subscriptions gained against those lost. Reads delivery_stats_hourly and
     * stats_hourly only — a few hundred rows, whatever was sent.
     */
    async deliveryHealth(userId: string, siteId: string, query: DeliveryHealthQuery): Promise<DeliveryHealthData> {
      const site = await requireSiteRole(ctx, userId, siteId, 'viewer');
      const timeZone = site.timezone;
      const today = todayOf(clock.now(), timeZone);
      const range = new LocalDayRange(addDays(today, -(query.days - 1)), today, timeZone);
      const [healthRows, hourly] = await Promise.all([
        repo.deliveryHealth(db, site.id, range.firstHour, range.endHour),
        repo.hourlyStats(db, site.id, range.firstHour, range.endHour),
      ]);

      const byService = new Map<PushServiceName, ServiceTally>();
      const total = newTally();
      for (const row of healthRows) {
        const tally = byService.get(row.push_service) ?? newTally();
        byService.set(row.push_service, tally);
        for (const target of [tally, total]) addHealthRow(target, row);
      }
      const services = [...byService.entries()]
        .map(([pushService, tally]) => ({ push_service: pushService, ...summarise(tally) }))
        .sort((a, b) => b.accepted + b.failed + b.expired - (a.accepted + a.failed + a.expired) || a.push_service.localeCompare(b.push_service));

      const churn = range.dates.map((date) => ({ date, new: 0, lost: 0, lost_at_push_service: 0 }));
      for (const row of hourly) {
        const index = range.dayIndexOf(row.hour_start);
        if (index < 0) continue;
        churn[index]!.new += row.subscribed;
        churn[index]!.lost += row.unsubscribed;
        churn[index]!.lost_at_push_service += row.lost_at_push_service;
      }
      const churnTotals = churn.reduce((sum, day) => ({ new: sum.new + day.new, lost: sum.lost + day.lost, lost_at_push_service: sum.lost_at_push_service + day.lost_at_push_service }), {
        new: 0,
        lost: 0,
        lost_at_push_service: 0,
      });
      return { days: query.days, from: range.first, to: range.last, timezone: timeZone, totals: summarise(total), services, churn, churn_totals: churnTotals };
    },

    /** Sent, delivered, clicked and failed pushes with their rates, in total and per local day. */
    async engagement(userId: string, siteId: string, query: EngagementQuery): Promise<EngagementData> {
      const site = await requireSiteRole(ctx, userId, siteId, 'viewer');
      const timeZone = site.timezone;
      const { from, to } = reportRange(query, todayOf(clock.now(), timeZone));
      const range = new LocalDayRange(from, to, timeZone);
      const rows = await repo.hourlyStats(db, site.id, range.firstHour, range.endHour);
      const byDay = totalsByDay(range, rows);
      const total = zeroTotals();
      for (const day of byDay) {
        total.sent += day.sent;
        total.delivered += day.delivered;
        total.clicked += day.clicked;
        total.failed += day.failed;
      }
      return {
        from,
        to,
        timezone: timeZone,
        sent: total.sent,
        delivered: total.delivered,
        clicked: total.clicked,
        failed: total.failed,
        click_rate: rate(total.clicked, total.delivered),
        delivery_rate: rate(total.delivered, total.sent),
        series: range.dates.map((date, i) => ({ date, sent: byDay[i]!.sent, delivered: byDay[i]!.delivered, clicked: byDay[i]!.clicked, failed: byDay[i]!.failed })),
      };
    },
  };
}
