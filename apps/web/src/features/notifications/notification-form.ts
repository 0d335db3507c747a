import {
  NOTIFICATION_ACTIONS_MAX,
  NOTIFICATION_MESSAGE_MAX,
  NOTIFICATION_TTL_DEFAULT_SECONDS,
  NOTIFICATION_TYPES,
  NOTIFICATION_URGENCIES,
  RECURRING_INTERVALS,
  SCHEDULE_MAX_DAYS_AHEAD,
  THROTTLE_PER_MINUTE_MAX,
  THROTTLE_PER_MINUTE_MIN,
  actionButton,
  httpUrl,
  notificationMessage,
  notificationTitle,
  notificationTopicName,
  optionalImageUrl,
  recurringScheduleInput,
  timeOfDay,
  triggerInput,
  type Notification,
  type NotificationBody,
  type NotificationType,
  type NotificationUrgency,
  type RecurringInterval,
} from '@herald/contracts';
import { z } from 'zod';
import { AB_DEFAULT_VALUES, AB_FORM_SHAPE, abFormValues, abTestBody, checkAbTestValues, type AbTestFormValues } from './ab-test-form';
import { toZonedInputValue } from './zoned-time';

// The notification form (spec §2 Notification form, §3 submitted payload,
// §5 validation). Every field is kept as the text the user typed; the rules
// reuse the contracts' schemas so the messages match the server's.

export interface ActionButtonValues {
  title: string;
  url: string;
}

export interface NotificationFormValues extends AbTestFormValues {
  type: NotificationType;
  /** '' is "All Subscribers". */
  segment_id: string;
  title: string;
  message: string;
  destination_url: string;
  icon_url: string;
  image_enabled: boolean;
  image_url: string;
  actions_enabled: boolean;
  actions: ActionButtonValues[];
  /** ONE_TIME: a `datetime-local` value in the site's timezone, '' to save as a draft. */
  scheduled_at: string;
  interval_type: RecurringInterval;
  interval_value: string;
  start_date: string;
  end_date: string;
  trigger_event: string;
  trigger_delay: string;
  /** Delivery options (docs/web-push.md, "TTL, Urgency and Topic"): seconds as text, one of TTL_CHOICES or a value set through the API. */
  ttl_seconds: string;
  urgency: NotificationUrgency;
  topic_enabled: boolean;
  topic: string;
  require_interaction: boolean;
  frequency_cap_exempt: boolean;
  /** "Spread the send" (docs/delivery.md, "Throttled sends"): on, at most `throttle_per_minute` (text) pushes a minute. */
  throttle_enabled: boolean;
  throttle_per_minute: string;
  /** "Send anyway": sent even inside the site's quiet hours. */
  quiet_hours_exempt: boolean;
  /** At a time of day in each subscriber's zone (docs/product.md, "Local-time delivery"), "HH:MM". */
  local_time_enabled: boolean;
  local_time: string;
}

const HOUR = 3600;
/** The TTLs the form offers; a value set through the API is shown too (ttlChoices). */
export const TTL_CHOICES: ReadonlyArray<{ seconds: number; label: string }> = [
  { seconds: 0, label: 'Now or never (browsers online right away)' },
  { seconds: HOUR, label: '1 hour' },
  { seconds: 4 * HOUR, label: '4 hours' },
  { seconds: 12 * HOUR, label: '12 hours' },
  { seconds: 24 * HOUR, label: '1 day' },
  { seconds: 3 * 24 * HOUR, label: '3 days' },
  { seconds: 7 * 24 * HOUR, label: '7 days' },
  { seconds: 28 * 24 * HOUR, label: '28 days' },
];

/** The offered TTLs, plus the notification's own when it is not one of them. */
export function ttlChoices(current: string): ReadonlyArray<{ seconds: number; label: string }> {
  const seconds = Number(current);
  if (current === '' || TTL_CHOICES.some((choice) => choice.seconds === seconds)) return TTL_CHOICES;
  return [...TTL_CHOICES, { seconds, label: `${seconds.toLocaleString('en-US')} seconds` }].sort((a, b) => a.seconds - b.seconds);
}

export const URGENCY_LABELS: Record<NotificationUrgency, string> = {
  'very-low': 'Very low (may wait for power and Wi-Fi)',
  low: 'Low (may wait for power or Wi-Fi)',
  normal: 'Normal',
  high: 'High (time-sensitive, wakes the device)',
};

export const DEFAULT_FORM_VALUES: NotificationFormValues = {
  type: 'ONE_TIME',
  segment_id: '',
  title: '',
  message: '',
  destination_url: '',
  icon_url: '',
  image_enabled: false,
  image_url: '',
  actions_enabled: false,
  actions: [],
  scheduled_at: '',
  interval_type: 'DAILY',
  interval_value: '1',
  start_date: '',
  end_date: '',
  trigger_event: '',
  trigger_delay: '0',
  ttl_seconds: String(NOTIFICATION_TTL_DEFAULT_SECONDS),
  urgency: 'normal',
  topic_enabled: false,
  topic: '',
  require_interaction: false,
  frequency_cap_exempt: false,
  throttle_enabled: false,
  throttle_per_minute: '1000',
  quiet_hours_exempt: false,
  local_time_enabled: false,
  local_time: '09:00',
  ...AB_DEFAULT_VALUES,
};

/**
 * The type a link asks the new-notification form to start with
 * (`?type=RECURRING`, as the dashboard's Recurring panel links); any case is
 * accepted, anything else is ignored.
 */
export function typeFromQuery(value: string | null): NotificationType | undefined {
  const wanted = value?.trim().toUpperCase();
  return NOTIFICATION_TYPES.find((type) => type === wanted);
}

export const EMPTY_ACTION: ActionButtonValues = { title: '', url: '' };

const DAY_MS = 86_400_000;
/** The form may have been open a minute; the server allows the same slack. */
const PAST_TOLERANCE_MS = 60_000;

/** The earliest and latest schedule times the server accepts (spec help text: up to 30 days ahead), as input values. */
export function scheduleBounds(timeZone: string, now: number = Date.now()): { min: string; max: string } {
  return { min: toZonedInputValue(now, timeZone), max: toZonedInputValue(now + SCHEDULE_MAX_DAYS_AHEAD * DAY_MS, timeZone) };
}

function firstIssue(schema: z.ZodType, value: unknown): string | null {
  const result = schema.safeParse(value);
  return result.success ? null : (result.error.issues[0]?.message ?? 'Invalid value');
}

/**
 * The form's schema for a site's timezone. Every field is plain text, so the
 * object itself always parses and all rules run together in one pass: the
 * user sees every problem at once, not section by section.
 */
export function notificationFormSchema(timeZone: string) {
  return z
    .object({
      type: z.enum(NOTIFICATION_TYPES),
      segment_id: z.string(),
      title: z.string(),
      message: z.string(),
      destination_url: z.string(),
      icon_url: z.string(),
      image_enabled: z.boolean(),
      image_url: z.string(),
      actions_enabled: z.boolean(),
      actions: z.array(z.object({ title: z.string(), url: z.string() })),
      scheduled_at: z.string(),
      interval_type: z.enum(RECURRING_INTERVALS),
      interval_value: z.string(),
      start_date: z.string(),
      end_date: z.string(),
      trigger_event: z.string(),
      trigger_delay: z.string(),
      ttl_seconds: z.string(),
      urgency: z.enum(NOTIFICATION_URGENCIES),
      topic_enabled: z.boolean(),
      topic: z.string(),
      require_interaction: z.boolean(),
      frequency_cap_exempt: z.boolean(),
      throttle_enabled: z.boolean(),
      throttle_per_minute: z.string(),
      quiet_hours_exempt: z.boolean(),
      local_time_enabled: z.boolean(),
      local_time: z.string(),
      ...AB_FORM_SHAPE,
    })
    .superRefine((values, ctx) => {
      const check = (path: (string | number)[], message: string | null) => {
        if (message) ctx.addIssue({ code: 'custom', path, message });
      };

      check(['title'], firstIssue(notificationTitle, values.title));
      check(['message'], firstIssue(notificationMessage(NOTIFICATION_MESSAGE_MAX), values.message));
      check(['destination_url'], values.destination_url.trim() === '' ? 'Destination URL is required' : firstIssue(httpUrl, values.destination_url));
      check(['icon_url'], firstIssue(optionalImageUrl, values.icon_url.trim()));
      if (values.image_enabled) check(['image_url'], firstIssue(optionalImageUrl, values.image_url.trim()));

      if (values.actions_enabled) {
        values.actions.slice(0, NOTIFICATION_ACTIONS_MAX).forEach((action, index) => {
          check(['actions', index, 'title'], firstIssue(actionButton.shape.title, action.title));
          check(['actions', index, 'url'], action.url.trim() === '' ? 'Button URL is required' : firstIssue(actionButton.shape.url, action.url));
        });
      }

      if (values.type === 'ONE_TIME' && values.scheduled_at) {
        const now = Date.now();
        // Same-format datetime-local strings compare correctly as text.
        if (values.scheduled_at < toZonedInputValue(now - PAST_TOLERANCE_MS, timeZone)) {
          check(['scheduled_at'], 'Schedule time must be in the future');
        } else if (values.scheduled_at > scheduleBounds(timeZone, now).max) {
          check(['scheduled_at'], `Notifications can be scheduled up to ${SCHEDULE_MAX_DAYS_AHEAD} days ahead`);
        }
      }

      if (values.type === 'RECURRING') {
        const every = values.interval_value.trim();
        check(
          ['interval_value'],
          every !== '' && Number(every) > 365 ? 'Repeat every must be at most 365' : firstIssue(recurringScheduleInput.shape.interval_value, every === '' ? 0 : every),
        );
        check(['start_date'], firstIssue(recurringScheduleInput.shape.start_date, values.start_date));
        if (values.start_date && values.end_date && values.end_date <= values.start_date) {
          check(['end_date'], 'End date must be after the start date');
        }
      }

      if (spreads(values)) {
        const perMinute = values.throttle_per_minute.trim();
        const count = Number(perMinute);
        check(
          ['throttle_per_minute'],
          !/^\d+$/.test(perMinute)
            ? 'Messages per minute must be a whole number'
            : count < THROTTLE_PER_MINUTE_MIN
              ? `Messages per minute must be at least ${THROTTLE_PER_MINUTE_MIN}`
              : count > THROTTLE_PER_MINUTE_MAX
                ? `Messages per minute must be at most ${THROTTLE_PER_MINUTE_MAX.toLocaleString('en-US')}`
                : null,
        );
      }
      if (values.local_time_enabled && values.type !== 'TRIGGERED') {
        check(['local_time'], values.local_time === '' ? 'Pick the local time, e.g. 09:00' : firstIssue(timeOfDay('Local time'), values.local_time));
        // The server's rule (docs/delivery.md, "A/B tests"): a sample drawn zone by zone would not be random.
        if (values.type === 'ONE_TIME' && values.ab_enabled) check(['local_time'], 'An A/B test is sent to the whole audience at once: turn off the local time, or the A/B test');
      }

      if (values.topic_enabled) check(['topic'], values.topic.trim() === '' ? 'Name the campaign, e.g. flash-sale' : firstIssue(notificationTopicName, values.topic));

      if (values.type === 'TRIGGERED') {
        check(['trigger_event'], firstIssue(triggerInput.shape.event, values.trigger_event));
        const delay = values.trigger_delay.trim();
        check(
          ['trigger_delay'],
          delay !== '' && !/^\d+$/.test(delay) ? 'Delay must be a whole number of minutes' : firstIssue(triggerInput.shape.delay_minutes, delay === '' ? 0 : delay),
        );
      }

      checkAbTestValues(values, check);
    });
}

/** A triggered notification goes to one subscriber at a time: nothing to spread, so the option is neither shown nor sent. */
export const spreads = (values: Pick<NotificationFormValues, 'type' | 'throttle_enabled'>) => values.throttle_enabled && values.type !== 'TRIGGERED';

const DELIVERY_FIELDS = ['ttl_seconds', 'urgency', 'topic_enabled', 'topic', 'require_interaction', 'frequency_cap_exempt', 'throttle_per_minute', 'quiet_hours_exempt'] as const;
const hasDefaultDelivery = (values: NotificationFormValues) =>
  DELIVERY_FIELDS.every((field) => {
    if (field === 'topic') return !values.topic_enabled || values.topic === DEFAULT_FORM_VALUES.topic;
    if (field === 'throttle_per_minute') return !spreads(values);
    return values[field] === DEFAULT_FORM_VALUES[field];
  });

/**
 * Spec §3 "Submitted notification payload", plus the action buttons and the
 * trigger. The form always submits status "DRAFT". The delivery options are
 * sent only when they are not the defaults, now or when the form was opened
 * (`initial`, editing), so a notification that keeps them sends the spec's
 * payload as it was.
 */
export function toNotificationBody(values: NotificationFormValues, initial: NotificationFormValues = DEFAULT_FORM_VALUES): NotificationBody {
  const body: NotificationBody = {
    type: values.type,
    title: values.title.trim(),
    message: values.message.trim(),
    destination_url: values.destination_url.trim(),
    icon_url: values.icon_url.trim() || null,
    image_url: values.image_enabled ? values.image_url.trim() || null : null,
    segment_id: values.segment_id || null,
    status: 'DRAFT',
    // Sent as typed: the server reads a value without offset in the site's timezone.
    scheduled_at: values.type === 'ONE_TIME' && values.scheduled_at ? values.scheduled_at : null,
    actions: values.actions_enabled
      ? values.actions.slice(0, NOTIFICATION_ACTIONS_MAX).map((action) => ({ title: action.title.trim(), url: action.url.trim() }))
      : [],
  };
  if (!hasDefaultDelivery(values) || !hasDefaultDelivery(initial)) {
    body.ttl_seconds = Number(values.ttl_seconds);
    body.urgency = values.urgency;
    body.topic = values.topic_enabled ? values.topic.trim() : null;
    body.require_interaction = values.require_interaction;
    body.frequency_cap_exempt = values.frequency_cap_exempt;
    body.throttle_per_minute = spreads(values) ? Number(values.throttle_per_minute.trim()) : null;
    body.quiet_hours_exempt = values.quiet_hours_exempt;
  }
  // Sent when it is or was on, so a notification that never used it sends the spec's payload as it was.
  const localTime = values.local_time_enabled && values.type !== 'TRIGGERED';
  if (localTime || initial.local_time_enabled) {
    body.delivery = localTime ? { mode: 'subscriber_local_time', local_time: values.local_time } : { mode: 'at_once' };
  }
  Object.assign(body, abTestBody({ ...values, ...body }, initial.ab_enabled));
  if (values.type === 'RECURRING') {
    body.recurring_schedule = {
      interval_type: values.interval_type,
      interval_value: Number.parseInt(values.interval_value, 10),
      start_date: values.start_date,
      end_date: values.end_date || null,
    };
  }
  if (values.type === 'TRIGGERED') {
    body.trigger = { event: values.trigger_event.trim(), delay_minutes: Number(values.trigger_delay.trim() || 0) };
  }
  return body;
}

/** An existing notification as form values; instants become wall times in the site's timezone. */
export function toFormValues(notification: Notification, timeZone: string): NotificationFormValues {
  const schedule = notification.recurringSchedule;
  return {
    ...DEFAULT_FORM_VALUES,
    type: notification.type,
    segment_id: notification.segment_id ?? '',
    title: notification.title,
    message: notification.message,
    destination_url: notification.destination_url,
    icon_url: notification.icon_url ?? '',
    image_enabled: Boolean(notification.image_url),
    image_url: notification.image_url ?? '',
    actions_enabled: notification.actions.length > 0,
    actions: notification.actions.map((action) => ({ title: action.title, url: action.url })),
    scheduled_at: notification.scheduled_at ? toZonedInputValue(notification.scheduled_at, timeZone) : '',
    ...(schedule
      ? {
          interval_type: schedule.intervalType,
          interval_value: String(schedule.intervalValue),
          start_date: toZonedInputValue(schedule.startDate, timeZone),
          end_date: schedule.endDate ? toZonedInputValue(schedule.endDate, timeZone) : '',
        }
      : {}),
    ...(notification.trigger ? { trigger_event: notification.trigger.event, trigger_delay: String(notification.trigger.delay_minutes) } : {}),
    ttl_seconds: String(notification.ttl_seconds),
    urgency: notification.urgency,
    topic_enabled: notification.topic !== null,
    topic: notification.topic ?? '',
    require_interaction: notification.require_interaction,
    frequency_cap_exempt: notification.frequency_cap_exempt,
    throttle_enabled: notification.throttle_per_minute !== null,
    throttle_per_minute: String(notification.throttle_per_minute ?? DEFAULT_FORM_VALUES.throttle_per_minute),
    quiet_hours_exempt: notification.quiet_hours_exempt,
    local_time_enabled: notification.delivery.mode === 'subscriber_local_time',
    local_time: notification.delivery.local_time ?? DEFAULT_FORM_VALUES.local_time,
    ...abFormValues(notification),
  };
}
