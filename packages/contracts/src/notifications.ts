import { z } from 'zod';
import { abTestInput, abTestPerformance, abTestSettings, abVariant, abVariantPerformance, abVariantsInput } from './ab-tests';
import { envelope, httpUrl, optionalImageUrl } from './common';
import { failureGroup, outcomeCounts, retryGroup } from './delivery-outcomes';
import { localTimeProgress, notificationDelivery, notificationDeliveryResponse } from './local-time';

/** Spec §5/§9 limits. */
export const NOTIFICATION_TITLE_MAX = 50;
export const NOTIFICATION_MESSAGE_MAX = 150;
export const NOTIFICATION_ACTIONS_MAX = 2;
export const SCHEDULE_MAX_DAYS_AHEAD = 30;

export const NOTIFICATION_TYPES = ['ONE_TIME', 'RECURRING', 'TRIGGERED'] as const;
/**
 * Spec §3/§4 statuses, plus `completed_with_errors`: a finished send where some
 * deliveries failed (`failed` is a send no push service accepted anything of).
 */
export const NOTIFICATION_STATUSES = ['draft', 'scheduled', 'sending', 'completed', 'completed_with_errors', 'cancelled', 'failed'] as const;
export const RECURRING_INTERVALS = ['DAILY', 'WEEKLY', 'MONTHLY'] as const;
export const NOTIFICATION_SOURCES = ['dashboard', 'campaign', 'rss'] as const;
export type NotificationSource = (typeof NOTIFICATION_SOURCES)[number];
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];
export type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number];
export type RecurringInterval = (typeof RECURRING_INTERVALS)[number];

export const notificationTitle = z
  .string({ message: 'Title is required' })
  .trim()
  .min(1, 'Title is required')
  .max(NOTIFICATION_TITLE_MAX, `Title must be at most ${NOTIFICATION_TITLE_MAX} characters`);
export const notificationMessage = (max: number) =>
  z.string({ message: 'Message is required' }).trim().min(1, 'Message is required').max(max, `Message must be at most ${max} characters`);

export const actionButton = z.object({
  title: z.string().trim().min(1, 'Button text is required').max(30, 'Button text must be at most 30 characters'),
  url: httpUrl,
});
export type ActionButton = z.infer<typeof actionButton>;
export const actionButtons = z.array(actionButton).max(NOTIFICATION_ACTIONS_MAX, 'At most 2 action buttons');

/** A date-time: ISO with offset, or a `datetime-local` value read in the site's timezone. */
export const dateTimeInput = z.string().trim().min(1).max(40);

export const recurringScheduleInput = z.object({
  interval_type: z.enum(RECURRING_INTERVALS, { message: 'Repeat must be DAILY, WEEKLY or MONTHLY' }),
  interval_value: z.coerce.number({ message: 'Repeat every must be a number' }).int('Repeat every must be a whole number').min(1, 'Repeat every must be at least 1').max(365, 'Repeat every must be at most 365'),
  start_date: z.string({ message: 'Start date is required' }).trim().min(1, 'Start date is required').max(40),
  end_date: dateTimeInput.nullable().optional(),
  is_active: z.boolean().optional(),
});

/**
 * An event name, as the SDK's `herald.track(name)` and the v1 events API send
 * it and as a triggered notification listens for it. Matched exactly (case-sensitive).
 */
export const EVENT_NAME_MAX = 64;
export const eventName = z
  .string({ message: 'Event name is required' })
  .trim()
  .min(1, 'Event name is required')
  .max(EVENT_NAME_MAX, `Event name must be at most ${EVENT_NAME_MAX} characters`)
  .regex(/^[A-Za-z0-9_.:-]+$/, 'Event name may contain letters, digits, _ . : and - only');

export const TRIGGER_DELAY_MAX_MINUTES = 60 * 24 * 30;
export const triggerInput = z.object({
  event: eventName,
  delay_minutes: z.coerce
    .number({ message: 'Delay must be a number of minutes' })
    .int('Delay must be a whole number of minutes')
    .min(0, 'Delay must be 0 or more')
    .max(TRIGGER_DELAY_MAX_MINUTES, 'Delay must be at most 30 days')
    .default(0),
});

/**
 * How push services handle a notification (RFC 8030 §5; docs/web-push.md,
 * "TTL, Urgency and Topic"): how long it waits for an offline browser, how
 * urgent it is (a browser on battery may hold low ones back), and a topic
 * under which a newer notification replaces an older one still waiting or
 * still on screen.
 */
export const NOTIFICATION_URGENCIES = ['very-low', 'low', 'normal', 'high'] as const;
export type NotificationUrgency = (typeof NOTIFICATION_URGENCIES)[number];
/** RFC 8030 lets a push service cap TTL; 28 days is the longest the big ones keep a message. */
export const NOTIFICATION_TTL_MAX_SECONDS = 28 * 24 * 60 * 60;
export const NOTIFICATION_TTL_DEFAULT_SECONDS = 24 * 60 * 60;
export const NOTIFICATION_TOPIC_MAX = 64;

const ttlSeconds = z
  .number({ message: 'ttl_seconds must be a number of seconds' })
  .int('ttl_seconds must be a whole number of seconds')
  .min(0, 'ttl_seconds must be 0 or more')
  .max(NOTIFICATION_TTL_MAX_SECONDS, `ttl_seconds must be at most ${NOTIFICATION_TTL_MAX_SECONDS} (28 days)`);
const urgency = z.enum(NOTIFICATION_URGENCIES, { message: 'urgency must be very-low, low, normal or high' });
/** A name the owner picks ("flash-sale"); Herald turns it into a valid RFC 8030 Topic per site. */
export const notificationTopicName = z
  .string({ message: 'topic must be text' })
  .trim()
  .min(1, 'topic must not be empty (send null for none)')
  .max(NOTIFICATION_TOPIC_MAX, `topic must be at most ${NOTIFICATION_TOPIC_MAX} characters`)
  .regex(/^[A-Za-z0-9 _.-]+$/, 'topic may use letters, digits, spaces, dots, dashes and underscores');

/**
 * Throttled sends (issue 14 §5; docs/delivery.md, "Throttled sends"): a send
 * spread over at most this many pushes a minute, retries included, so the
 * clicks it brings do not all land on the site at once. null: no throttle.
 */
export const THROTTLE_PER_MINUTE_MIN = 1;
export const THROTTLE_PER_MINUTE_MAX = 1_000_000;
export const throttlePerMinute = z
  .number({ message: 'throttle_per_minute must be a number of messages per minute (or null for no throttle)' })
  .int('throttle_per_minute must be a whole number of messages per minute')
  .min(THROTTLE_PER_MINUTE_MIN, `throttle_per_minute must be at least ${THROTTLE_PER_MINUTE_MIN} (or null for no throttle)`)
  .max(THROTTLE_PER_MINUTE_MAX, `throttle_per_minute must be at most ${THROTTLE_PER_MINUTE_MAX.toLocaleString('en-US')}`);

/** Spec §3 "Submitted notification payload". The form always sends status "DRAFT". */
const notificationType = z.enum(NOTIFICATION_TYPES, { message: 'Type must be ONE_TIME, RECURRING or TRIGGERED' });
const notificationFields = z.object({
  type: notificationType,
  title: notificationTitle,
  message: notificationMessage(NOTIFICATION_MESSAGE_MAX),
  destination_url: httpUrl,
  icon_url: optionalImageUrl,
  image_url: optionalImageUrl,
  segment_id: z.string().max(100).nullable().optional(),
  status: z.literal('DRAFT').optional(),
  scheduled_at: dateTimeInput.nullable().optional(),
  recurring_schedule: recurringScheduleInput.nullable().optional(),
  trigger: triggerInput.nullable().optional(),
  actions: actionButtons.optional(),
  ttl_seconds: ttlSeconds.optional(),
  urgency: urgency.optional(),
  topic: notificationTopicName.nullable().optional(),
  require_interaction: z.boolean({ message: 'require_interaction must be true or false' }).optional(),
  /** Sent even to subscribers at the site's frequency cap (an order update the subscriber asked for). */
  frequency_cap_exempt: z.boolean({ message: 'frequency_cap_exempt must be true or false' }).optional(),
  /** At most this many pushes a minute (one-time and recurring sends); null: no throttle. */
  throttle_per_minute: throttlePerMinute.nullable().optional(),
  /** At once, or at a time of day in each subscriber's zone (docs/product.md, "Local-time delivery"). */
  delivery: notificationDelivery.optional(),
  /** "Send anyway": sent even inside the site's quiet hours. */
  quiet_hours_exempt: z.boolean({ message: 'quiet_hours_exempt must be true or false' }).optional(),
  /** A/B test (ab-tests.ts): 2–4 variants; variant A becomes the notification's own content. Null removes them. */
  variants: abVariantsInput.nullable().optional(),
  ab_test: abTestInput.nullable().optional(),
});
export const notificationBody = notificationFields.extend({ type: notificationType.default('ONE_TIME') });
export type NotificationBody = z.input<typeof notificationBody>;
export type NotificationInput = z.output<typeof notificationBody>;
/**
 * PATCH changes only the fields it carries. `recurring_schedule` may be partial
 * too: `{ recurring_schedule: { is_active: false } }` pauses a recurring
 * notification and `{ is_active: true }` resumes it; a schedule sent without
 * `is_active` keeps its current active state (the edit form resends the whole
 * schedule and must not resume a paused one).
 */
export const recurringSchedulePatch = recurringScheduleInput.partial();
export const notificationPatchBody = notificationFields
  .partial()
  .extend({ recurring_schedule: recurringSchedulePatch.nullable().optional() })
  .strict();
export type NotificationPatchInput = z.output<typeof notificationPatchBody>;

export const recurringSchedule = z.object({
  intervalType: z.enum(RECURRING_INTERVALS),
  intervalValue: z.number(),
  startDate: z.string(),
  endDate: z.string().nullable(),
  isActive: z.boolean(),
  nextRunAt: z.string().nullable(),
});

/** The spec-era counters (kept: the web and the API's users read them); `counts` holds the whole outcome model. */
export const notificationStats = z.object({
  total: z.number(),
  sent: z.number(),
  delivered: z.number(),
  clicked: z.number(),
  failed: z.number(),
});

export const notification = z.object({
  id: z.string(),
  site_id: z.string(),
  type: z.enum(NOTIFICATION_TYPES),
  source: z.enum(NOTIFICATION_SOURCES),
  title: z.string(),
  message: z.string(),
  destination_url: z.string(),
  icon_url: z.string().nullable(),
  image_url: z.string().nullable(),
  segment_id: z.string().nullable(),
  actions: z.array(actionButton),
  /** RFC 8030 TTL, Urgency and the owner's topic name (null: each send has its own); require_interaction keeps it on screen until acted on. */
  ttl_seconds: z.number(),
  urgency: z.enum(NOTIFICATION_URGENCIES),
  topic: z.string().nullable(),
  require_interaction: z.boolean(),
  frequency_cap_exempt: z.boolean(),
  /** At most this many pushes a minute, retries included (docs/delivery.md, "Throttled sends"); null: no throttle. */
  throttle_per_minute: z.number().nullable(),
  delivery: notificationDeliveryResponse,
  quiet_hours_exempt: z.boolean(),
  /** A send split by zone (local time, or quiet hours): its zones and how many have been sent; null when it was not split. */
  local_time_progress: localTimeProgress.nullable(),
  /** Subscribers held for the site's quiet hours, all its sends together (a wait, not an outcome: they join `counts` when it ends). */
  quiet_hours_deferred: z.number(),
  /**
   * True once retention turned this failed (or partly failed) send's
   * per-subscriber deliveries into totals (docs/storage.md, "Retention"):
   * every figure stays, but there is nothing left to retry.
   */
  deliveries_compacted: z.boolean(),
  /** A/B variants (null: a single message) and the test on a sample (null: every variant to everyone). */
  variants: z.array(abVariant).nullable(),
  ab_test: abTestSettings.nullable(),
  status: z.enum(NOTIFICATION_STATUSES),
  scheduled_at: z.string().nullable(),
  sent_at: z.string().nullable(),
  completed_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  last_error: z.string().nullable(),
  recurringSchedule: recurringSchedule.nullable(),
  trigger: z.object({ event: z.string(), delay_minutes: z.number() }).nullable(),
  stats: notificationStats,
  /** targeted, sent (accepted), failed, expired, skipped, pending, delivered, clicked (delivery-outcomes.ts). */
  counts: outcomeCounts,
  /** TRIGGERED: how many times its event fired it (one run per subscriber and event); null for other types. */
  fire_count: z.number().nullable(),
});
export type Notification = z.infer<typeof notification>;

/** The most notifications one list answer holds (and its default: the list before paging answered the newest 500). */
export const NOTIFICATIONS_PAGE_MAX_LIMIT = 500;

/**
 * `status`: one status, or several separated by commas (`completed,completed_with_errors`).
 * `page` and `limit`: newest first, `limit` a page (the dashboard asks for 50; docs/product.md, "Notifications list").
 */
export const notificationListQuery = z.object({
  status: z
    .string()
    .max(200)
    .transform((value) => value.split(',').map((part) => part.trim()))
    .pipe(z.array(z.enum(NOTIFICATION_STATUSES, { message: `status must be one of ${NOTIFICATION_STATUSES.join(', ')}` })).min(1))
    .optional(),
  type: z.enum(NOTIFICATION_TYPES).optional(),
  page: z.coerce.number({ message: 'page must be a number' }).int('page must be a whole number').min(1, 'page must be 1 or more').default(1),
  limit: z.coerce
    .number({ message: 'limit must be a number' })
    .int('limit must be a whole number')
    .min(1, 'limit must be 1 or more')
    .max(NOTIFICATIONS_PAGE_MAX_LIMIT, `limit must be at most ${NOTIFICATIONS_PAGE_MAX_LIMIT}`)
    .default(NOTIFICATIONS_PAGE_MAX_LIMIT),
});

export const notificationResponse = envelope(z.object({ notification }));
export const notificationListResponse = envelope(
  z.object({
    notifications: z.array(notification),
    /** One entry per status (0 when none) plus `all`, their sum. Welcome-campaign steps are not listed or counted. */
    counts: z.record(z.string(), z.number()),
  }),
);

export const runSummary = z.object({
  id: z.string(),
  status: z.string(),
  due_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  last_error: z.string().nullable(),
  stats: notificationStats,
  counts: outcomeCounts,
});

/**
 * Spec §9: click rate = clicks / delivered × 100; delivery rate = delivered /
 * sent × 100. Beside them, reach = delivered / targeted × 100: how many of the
 * people it was meant for got it.
 */
export const performanceResponse = envelope(
  z.object({
    notification_id: z.string(),
    status: z.enum(NOTIFICATION_STATUSES),
    total: z.number(),
    sent: z.number(),
    delivered: z.number(),
    clicked: z.number(),
    failed: z.number(),
    click_rate: z.number(),
    delivery_rate: z.number(),
    reach_rate: z.number(),
    /** Failed ÷ targeted × 100 (expired and skipped apart). */
    failure_rate: z.number(),
    last_error: z.string().nullable(),
    counts: outcomeCounts,
    /** Failed deliveries by reason and push service, most first (expired are counted apart, in counts.expired). */
    failures: z.array(failureGroup),
    /** Deliveries waiting for another attempt right now, by reason and push service. */
    retrying: z.array(retryGroup),
    /**
     * counts.skipped by cause: inactive (left before it was sent) and
     * frequency_cap; quiet_hours_deferred is not a skip but a wait: the
     * subscribers whose push was held for the end of the site's quiet hours
     * (sent then, and counted in the other figures as they are).
     */
    skipped: z.object({ inactive: z.number(), frequency_cap: z.number(), quiet_hours_deferred: z.number() }),
    runs: z.array(runSummary),
    /** A/B sends: each variant's figures (empty for a single message), and the test's state. */
    variants: z.array(abVariantPerformance),
    ab_test: abTestPerformance.nullable(),
  }),
);
export type NotificationPerformance = z.infer<typeof performanceResponse>['data'];

export function rate(part: number, whole: number): number {
  return whole > 0 ? Math.round((part / whole) * 10000) / 100 : 0;
}
