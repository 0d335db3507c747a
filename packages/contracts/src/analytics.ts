import { z } from 'zod';
import { envelope } from './common';
import { FAILURE_REASONS, PUSH_SERVICES, outcomeCounts } from './delivery-outcomes';
import { NOTIFICATION_STATUSES } from './notifications';
import { promptConversion } from './prompts';

// Spec §7 Analytics and §3 "Dashboard metrics". Every figure is read from the
// hourly rollup (stats_hourly) and the sites/notifications counters; days are
// calendar days in the SITE's timezone (YYYY-MM-DD).

/** Spec §9: the dashboard chart covers 7 days; its lists show the first 5 items. */
export const DASHBOARD_DEFAULT_DAYS = 7;
export const DASHBOARD_MAX_DAYS = 365;
export const DASHBOARD_LIST_LIMIT = 5;
/** The longest range the subscribers and engagement reports accept, in days. */
export const ANALYTICS_MAX_RANGE_DAYS = 366;
/** Without `from`, the subscribers and engagement reports cover the last 30 days. */
export const ANALYTICS_DEFAULT_RANGE_DAYS = 30;

/** Spec §2 Dashboard "Weekly Engagement bar chart by weekday", Monday first (ISO 8601). */
export const WEEKDAY_NAMES = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;
export type WeekdayName = (typeof WEEKDAY_NAMES)[number];

function isCalendarDate(value: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return false;
  const [, y, m, d] = match.map(Number) as [number, number, number, number];
  const date = new Date(Date.UTC(y, m - 1, d));
  return y >= 1970 && y <= 9999 && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

/** A calendar date in the site's timezone, e.g. 2026-05-01. */
export const localDate = z
  .string()
  .trim()
  .refine(isCalendarDate, 'must be a date in the form YYYY-MM-DD');

export const dashboardQuery = z.object({
  days: z.coerce
    .number({ message: 'days must be a number' })
    .int('days must be a whole number')
    .min(1, 'days must be at least 1')
    .max(DASHBOARD_MAX_DAYS, `days must be at most ${DASHBOARD_MAX_DAYS}`)
    .default(DASHBOARD_DEFAULT_DAYS),
});
export type DashboardQuery = z.infer<typeof dashboardQuery>;

export const ANALYTICS_INTERVALS = ['day', 'week'] as const;
export type AnalyticsInterval = (typeof ANALYTICS_INTERVALS)[number];

export const subscriberGrowthQuery = z.object({
  from: localDate.optional(),
  to: localDate.optional(),
  interval: z.enum(ANALYTICS_INTERVALS, { message: 'interval must be day or week' }).default('day'),
});
export type SubscriberGrowthQuery = z.infer<typeof subscriberGrowthQuery>;

export const engagementQuery = z.object({
  from: localDate.optional(),
  to: localDate.optional(),
});
export type EngagementQuery = z.infer<typeof engagementQuery>;

/**
 * A dashboard figure with its comparison. `change` is the percent change of
 * `value` against `previous` (the previous period of the same length), two
 * decimals; 0 when both are 0; null when `previous` is 0 and `value` is not
 * (there is nothing to compare against, so no percentage is invented).
 */
export const metricValue = z.object({
  value: z.number(),
  previous: z.number(),
  change: z.number().nullable(),
});
export type MetricValue = z.infer<typeof metricValue>;

export const dashboardPeriod = z.object({
  days: z.number(),
  /** First and last local day of this period (the last is today, still running). */
  from: z.string(),
  to: z.string(),
  /** The previous period of the same length, as instants (it starts and ends inside local days). */
  previousStart: z.string(),
  previousEnd: z.string(),
  timezone: z.string(),
});

export const chartDay = z.object({ date: z.string(), sent: z.number(), delivered: z.number(), clicked: z.number() });
export type ChartDay = z.infer<typeof chartDay>;

export const engagementDay = z.object({ name: z.enum(WEEKDAY_NAMES), clicks: z.number() });
export type EngagementDay = z.infer<typeof engagementDay>;

export const recentNotification = z.object({
  id: z.string(),
  title: z.string(),
  message: z.string(),
  /** When the first push was accepted; null for a send that failed outright (see finished_at). */
  sent_at: z.string().nullable(),
  /** When the send finished (null while it is still going). */
  finished_at: z.string().nullable(),
  /** clicks / delivered × 100, two decimals (spec §9). */
  click_rate: z.number(),
  /** Accepted by the push services. */
  sent_count: z.number(),
  /** Issue 11: the send's status and its whole outcome (a failed send shows its failures, not "0 sent"). */
  status: z.enum(NOTIFICATION_STATUSES),
  failed_count: z.number(),
  counts: outcomeCounts,
});
export type RecentNotification = z.infer<typeof recentNotification>;

export const dashboardData = z.object({
  period: dashboardPeriod,
  metrics: z.object({
    /** Active subscribers now; `previous` is the count when the period began. */
    totalSubscribers: metricValue,
    /** Pushes accepted by the push services in the period. */
    notificationsSent: metricValue,
    /** clicks / delivered × 100 in the period. */
    clickRate: metricValue,
    /** new subscribers × value per subscriber + clicks × value per click (spec §9), in `currency`. */
    valueGenerated: metricValue.extend({ currency: z.string() }),
  }),
  chart: z.array(chartDay),
  engagement: z.array(engagementDay),
  recentNotifications: z.array(recentNotification),
  /** False until the site has sent anything: the dashboard then shows clearly marked sample data. */
  hasData: z.boolean(),
});
export type DashboardData = z.infer<typeof dashboardData>;
export const dashboardResponse = envelope(dashboardData);

export const subscriberGrowthPoint = z.object({
  /** The local day, or for weekly points the first day of the week inside the range (weeks start on Monday). */
  date: z.string(),
  new: z.number(),
  unsubscribed: z.number(),
  net: z.number(),
  /** Active subscribers at the end of that day or week (now, for the running one). */
  active: z.number(),
});
export type SubscriberGrowthPoint = z.infer<typeof subscriberGrowthPoint>;

export const subscriberGrowthData = z.object({
  from: z.string(),
  to: z.string(),
  interval: z.enum(ANALYTICS_INTERVALS),
  timezone: z.string(),
  totals: z.object({ new: z.number(), unsubscribed: z.number(), net: z.number() }),
  series: z.array(subscriberGrowthPoint),
  /** Per opt-in prompt type in the range: shown, subscriptions it brought, conversion (reported by the SDK). */
  prompts: z.array(promptConversion),
});
export type SubscriberGrowthData = z.infer<typeof subscriberGrowthData>;
export const subscriberGrowthResponse = envelope(subscriberGrowthData);

export const engagementTotals = z.object({
  sent: z.number(),
  delivered: z.number(),
  clicked: z.number(),
  failed: z.number(),
  /** clicks / delivered × 100 (spec §9). */
  click_rate: z.number(),
  /** delivered / sent × 100 (spec §9). */
  delivery_rate: z.number(),
});

export const engagementData = engagementTotals.extend({
  from: z.string(),
  to: z.string(),
  timezone: z.string(),
  series: z.array(z.object({ date: z.string(), sent: z.number(), delivered: z.number(), clicked: z.number(), failed: z.number() })),
});
export type EngagementData = z.infer<typeof engagementData>;
export const engagementResponse = envelope(engagementData);

/** The Delivery section's range: the last 7 or 30 local days (any 1…90). */
export const DELIVERY_HEALTH_MAX_DAYS = 90;
export const deliveryHealthQuery = z.object({
  days: z.coerce
    .number({ message: 'days must be a number' })
    .int('days must be a whole number')
    .min(1, 'days must be at least 1')
    .max(DELIVERY_HEALTH_MAX_DAYS, `days must be at most ${DELIVERY_HEALTH_MAX_DAYS}`)
    .default(7),
});
export type DeliveryHealthQuery = z.infer<typeof deliveryHealthQuery>;

/**
 * The median time from a send being due to the push service accepting it,
 * read from hourly histogram buckets: "within N ms" (the bucket's upper
 * bound), or "over N ms" for the slowest bucket; null when nothing was accepted.
 */
export const medianAcceptTime = z.union([z.object({ within_ms: z.number() }), z.object({ over_ms: z.number() })]).nullable();
export type MedianAcceptTime = z.infer<typeof medianAcceptTime>;

export const deliveryHealthService = z.object({
  push_service: z.enum(PUSH_SERVICES),
  accepted: z.number(),
  failed: z.number(),
  expired: z.number(),
  /** Failed deliveries by reason, most first. */
  failures: z.array(z.object({ reason: z.enum(FAILURE_REASONS), count: z.number() })),
  median_accept: medianAcceptTime,
});
export type DeliveryHealthService = z.infer<typeof deliveryHealthService>;

export const churnDay = z.object({
  date: z.string(),
  /** Subscriptions gained (new browsers, and ones that came back). */
  new: z.number(),
  /** Subscriptions lost, whatever the cause. */
  lost: z.number(),
  /** Of those, found gone or invalid by a push service (404/410). */
  lost_at_push_service: z.number(),
});

/** GET /sites/{siteId}/analytics/delivery: per push service, from the hourly rollups (never the deliveries). */
export const deliveryHealthData = z.object({
  days: z.number(),
  from: z.string(),
  to: z.string(),
  timezone: z.string(),
  totals: deliveryHealthService.omit({ push_service: true }),
  services: z.array(deliveryHealthService),
  churn: z.array(churnDay),
  churn_totals: churnDay.omit({ date: true }),
});
export type DeliveryHealthData = z.infer<typeof deliveryHealthData>;
export const deliveryHealthResponse = envelope(deliveryHealthData);

/**
 * Percent change of `current` against `previous`, two decimals. The rule for a
 * zero previous period: 0 → 0 is "no change" (0); 0 → anything else has no
 * meaningful percentage and is null (the dashboard says "new" instead).
 */
export function percentChange(current: number, previous: number): number | null {
  if (previous === 0) return current === 0 ? 0 : null;
  return Math.round(((current - previous) / Math.abs(previous)) * 10000) / 100;
}
