import { z } from 'zod';
import { envelope } from './common';
import { PROMPT_TYPES } from './prompts';

/** Shown for a browser, OS or country Herald could not identify (spec §2 Subscribers: "Unknown values show 'Unknown'"). */
export const UNKNOWN = 'Unknown';

/** Spec §2 Segments: the browser and OS names a subscriber is filed under. Others keep the parser's name. */
export const SUBSCRIBER_BROWSERS = ['Chrome', 'Firefox', 'Safari', 'Edge', 'Opera'] as const;
export const SUBSCRIBER_OPERATING_SYSTEMS = ['Windows', 'macOS', 'Linux', 'Android', 'iOS'] as const;

export const SUBSCRIBER_TAG_MAX_COUNT = 50;
export const SUBSCRIBER_TAG_MAX_LENGTH = 64;
/** Tags are one CSV cell, joined with this (the import splits on it, so a tag that itself holds a | would come back as two). */
export const SUBSCRIBER_EXPORT_TAG_SEPARATOR = '|';
/** Why a tag holding the separator is refused (the tags API, the SDK's tags, v1 tags and events). */
export const TAG_SEPARATOR_MESSAGE = `a tag must not contain "${SUBSCRIBER_EXPORT_TAG_SEPARATOR}" (it separates tags in exports and imports)`;
export const SUBSCRIBERS_PAGE_DEFAULT_LIMIT = 50;
export const SUBSCRIBERS_PAGE_MAX_LIMIT = 200;

/** Push endpoints are capability URLs of a few hundred characters; anything far longer is not one. */
export const PUSH_ENDPOINT_MAX_LENGTH = 2048;

// ---------------------------------------------------------------------------
// Public API, called by the browser SDK on customers' sites (no credentials).
// The shapes are checked here; the server also proves p256dh is a point on
// P-256, auth is 16 bytes and the endpoint is on a known push service.

const endpoint = z
  .string({ message: 'endpoint is required' })
  .trim()
  .min(1, 'endpoint is required')
  .max(PUSH_ENDPOINT_MAX_LENGTH, `endpoint must be at most ${PUSH_ENDPOINT_MAX_LENGTH} characters`);

/** `PushSubscription.toJSON()` as the browser produces it (W3C Push API). */
export const pushSubscriptionInput = z.object({
  endpoint,
  expirationTime: z.number().nullable().optional(),
  keys: z.object(
    {
      p256dh: z.string({ message: 'keys.p256dh is required' }).max(200, 'keys.p256dh is too long'),
      auth: z.string({ message: 'keys.auth is required' }).max(100, 'keys.auth is too long'),
    },
    { message: 'keys (p256dh and auth) are required' },
  ),
});
export type PushSubscriptionInput = z.infer<typeof pushSubscriptionInput>;

export const subscribeBody = z.object({
  subscription: pushSubscriptionInput,
  /** IANA zone from `Intl.DateTimeFormat().resolvedOptions().timeZone`; an unknown zone is stored as null. */
  timezone: z.string().max(100).nullable().optional(),
  /** `navigator.language`; a malformed tag is stored as null. */
  language: z.string().max(100).nullable().optional(),
  /** The endpoint this browser had before `pushsubscriptionchange`: the subscriber moves to the new one and keeps its id. */
  previous_endpoint: endpoint.nullable().optional(),
  /** The opt-in prompt the visitor accepted (counted in the prompt's conversion when this subscribes someone). */
  prompt: z.enum(PROMPT_TYPES, { message: 'prompt must be slide, native or bell' }).nullable().optional(),
  /** The applicationServerKey the subscription was made with (base64url): one of the site's VAPID keys; absent: the primary one. */
  vapid_public_key: z.string().max(200, 'vapid_public_key is too long').nullable().optional(),
});
export type SubscribeBody = z.infer<typeof subscribeBody>;

/** 201 for a new subscriber, 200 when the endpoint was already known (keys and last seen refreshed). */
export const subscribeResponse = envelope(z.object({ subscriber: z.object({ id: z.string() }) }));
export type SubscribeResponse = z.infer<typeof subscribeResponse>;

export const publicUnsubscribeBody = z.object({ endpoint });
export const publicUnsubscribeResponse = envelope(z.object({ subscriber: z.object({ id: z.string(), is_active: z.literal(false) }) }));

// ---------------------------------------------------------------------------
// Dashboard API (spec §7 Subscribers, §3 Subscriber).

export const subscriber = z.object({
  id: z.string(),
  browser: z.string(),
  os: z.string(),
  /** ISO 3166-1 alpha-2 code from the subscriber's address, or "Unknown". */
  country: z.string(),
  metadata: z.object({ user_agent: z.string().nullable() }),
  language: z.string().nullable(),
  timezone: z.string().nullable(),
  subscribed_at: z.string(),
  last_seen_at: z.string().nullable(),
  unsubscribed_at: z.string().nullable(),
  is_active: z.boolean(),
  tags: z.array(z.string()),
  /** One of the owner's own browsers: "Send test" reaches these only. */
  test_device: z.boolean(),
  /** Its name as a test device ("Firefox on Linux" unless renamed); null when not a test device. */
  test_device_name: z.string().nullable(),
});
export type Subscriber = z.infer<typeof subscriber>;

const booleanQuery = z.enum(['true', 'false'], { message: 'must be true or false' }).transform((v) => v === 'true');

/** A place in the subscribers list: "<subscribed_at in ms>.<id>" of a row (subscribers/list-page.ts). */
const listCursor = (name: string) =>
  z
    .string()
    .max(120)
    .regex(/^\d{1,16}\.[\w-]{1,100}$/, `${name} must be a cursor from a list answer`);

export const subscribersListQuery = z.object({
  /** Omitted for all subscribers (spec §2 Subscribers filter All/Active/Inactive). */
  is_active: booleanQuery.optional(),
  /** Case-insensitive match on browser, OS or country (code or English name). */
  search: z.string().trim().max(100, 'search must be at most 100 characters').optional(),
  page: z.coerce.number({ message: 'page must be a number' }).int('page must be a whole number').min(1, 'page must be 1 or more').default(1),
  limit: z.coerce
    .number({ message: 'limit must be a number' })
    .int('limit must be a whole number')
    .min(1, 'limit must be 1 or more')
    .max(SUBSCRIBERS_PAGE_MAX_LIMIT, `limit must be at most ${SUBSCRIBERS_PAGE_MAX_LIMIT}`)
    .default(SUBSCRIBERS_PAGE_DEFAULT_LIMIT),
  /**
   * `cursors.next` of the page before: the page after it, read from there
   * (Next), at the cost of one page however deep; `page` then only names it.
   */
  after: listCursor('after').optional(),
  /** `cursors.previous` of the page after: the page before it (Previous). */
  before: listCursor('before').optional(),
}).refine((query) => !(query.after && query.before), { message: 'Give after or before, not both', path: ['before'] });
export type SubscribersListQuery = z.input<typeof subscribersListQuery>;

/** Newest first; `total` counts every subscriber matching the same filters. */
export const subscribersListResponse = envelope(
  z.object({
    subscribers: z.array(subscriber),
    total: z.number(),
    page: z.number(),
    limit: z.number(),
    /** Where this page ends (`next`, for `after`) and starts (`previous`, for `before`); null on an empty page. */
    cursors: z.object({ next: z.string().nullable(), previous: z.string().nullable() }).default({ next: null, previous: null }),
  }),
);
export type SubscribersList = z.infer<typeof subscribersListResponse>['data'];

export const subscriberResponse = envelope(z.object({ subscriber }));

export const siteSubscriberParams = z.object({ siteId: z.string().min(1).max(100), id: z.string().min(1).max(100) });

/** Replaces the subscriber's tags: trimmed, duplicates and empty tags dropped. */
export const updateSubscriberTagsBody = z.object({
  tags: z
    .array(
      z
        .string({ message: 'each tag must be text' })
        .trim()
        .max(SUBSCRIBER_TAG_MAX_LENGTH, `each tag must be at most ${SUBSCRIBER_TAG_MAX_LENGTH} characters`)
        .refine((tag) => !tag.includes(SUBSCRIBER_EXPORT_TAG_SEPARATOR), TAG_SEPARATOR_MESSAGE),
      { message: 'tags must be a list of text' },
    )
    .max(500, 'too many tags')
    .transform((tags) => [...new Set(tags.filter((tag) => tag.length > 0))])
    .refine((tags) => tags.length <= SUBSCRIBER_TAG_MAX_COUNT, `a subscriber can have at most ${SUBSCRIBER_TAG_MAX_COUNT} tags`),
});
export type UpdateSubscriberTagsBody = z.input<typeof updateSubscriberTagsBody>;

/** Spec §9 best practice: clean inactive subscribers at 90+ days. */
export const STALE_SUBSCRIBER_DAYS = 90;

/**
 * Stale subscribers: active, subscribed at least STALE_SUBSCRIBER_DAYS days
 * ago, and no delivered beacon in that time (or ever). Their browsers no
 * longer show what is sent, so they only inflate the audience.
 */
export const staleSubscribersSummary = z.object({
  days: z.number(),
  /** The cut-off instant: no delivered push since then. */
  since: z.string(),
  active: z.number(),
  stale: z.number(),
});
export type StaleSubscribersSummary = z.infer<typeof staleSubscribersSummary>;
export const staleSubscribersResponse = envelope(staleSubscribersSummary);

/** POST /sites/{siteId}/subscribers/stale/deactivate: the counts before and after the clean-up. */
export const staleCleanupResponse = envelope(
  z.object({
    deactivated: z.number(),
    before: staleSubscribersSummary,
    after: staleSubscribersSummary,
  }),
);
export type StaleCleanup = z.infer<typeof staleCleanupResponse>['data'];

// ---------------------------------------------------------------------------
// Moving in and out (docs/product.md, "Subscribers"): the audience as CSV, one
// subscriber's data as JSON, and erasing a subscriber completely.



/** The columns that let another push server send as this site: only with `include_keys=true`. Named as the import reads them. */
export const SUBSCRIBER_EXPORT_KEY_COLUMNS = ['endpoint', 'p256dh', 'auth', 'vapid_public_key'] as const;

/** The other columns, always there. `created_at` is when the browser subscribed; `status` is `active` or `inactive`. */
export const SUBSCRIBER_EXPORT_COLUMNS = ['created_at', 'browser', 'os', 'country', 'language', 'timezone', 'tags', 'external_id', 'status'] as const;

/** The header line of the CSV export: the subscriber's id first, then the keys when asked for, then the rest. */
export function subscriberExportColumns(includeKeys: boolean): string[] {
  return ['id', ...(includeKeys ? SUBSCRIBER_EXPORT_KEY_COLUMNS : []), ...SUBSCRIBER_EXPORT_COLUMNS];
}

/** GET /sites/{siteId}/subscribers/export: the list's filters, and whether the push keys go with it. */
export const subscribersExportQuery = z.object({
  is_active: booleanQuery.optional(),
  search: z.string().trim().max(100, 'search must be at most 100 characters').optional(),
  /** true: endpoint, p256dh, auth and the site's VAPID public key are in the file (for moving to another push server). */
  include_keys: booleanQuery.optional(),
});
export type SubscribersExportQuery = z.infer<typeof subscribersExportQuery>;

/** DELETE /subscribers/{id}: `erase=true` deletes the subscriber and everything keyed by it; without it the subscriber is made inactive. */
export const deleteSubscriberQuery = z.object({ erase: booleanQuery.optional() });

/** What an erase removed: the subscriber is gone, these rows with it (counters and hourly totals stay as they were). */
export const subscriberErased = z.object({
  id: z.string(),
  deliveries: z.number(),
  events: z.number(),
});
export type SubscriberErased = z.infer<typeof subscriberErased>;
export const subscriberErasedResponse = envelope(z.object({ erased: subscriberErased }));

/** DELETE /subscribers/{id} answers the inactive subscriber, or with `erase=true` what was erased. */
export const deleteSubscriberResponse = z.union([subscriberResponse, subscriberErasedResponse]);

/** GET /subscribers/{id}/export: everything Herald holds about one subscriber (a data subject's access request). */
export const subscriberDataExport = z.object({
  exported_at: z.string(),
  site: z.object({ id: z.string(), name: z.string(), url: z.string() }),
  /** The stored row, its internal endpoint hash left out. */
  subscriber: z.object({
    id: z.string(),
    endpoint: z.string(),
    p256dh: z.string(),
    auth: z.string(),
    browser: z.string().nullable(),
    os: z.string().nullable(),
    country: z.string().nullable(),
    language: z.string().nullable(),
    timezone: z.string().nullable(),
    user_agent: z.string().nullable(),
    external_id: z.string().nullable(),
    external_id_verified: z.boolean(),
    is_active: z.boolean(),
    test_device: z.boolean(),
    test_device_name: z.string().nullable(),
    subscribed_at: z.string(),
    last_seen_at: z.string().nullable(),
    last_delivered_at: z.string().nullable(),
    /** The latest push its push service accepted, including pushes whose rows retention has compacted (docs/product.md, "Retention"). */
    last_sent_at: z.string().nullable(),
    /** The latest click, the same way. */
    last_clicked_at: z.string().nullable(),
    unsubscribed_at: z.string().nullable(),
    updated_at: z.string(),
  }),
  tags: z.array(z.string()),
  /** Events about this subscriber (and about its external id when no other subscriber has it), newest first. */
  events: z.array(
    z.object({
      id: z.string(),
      event: z.string(),
      source: z.string(),
      external_id: z.string().nullable(),
      data: z.record(z.string(), z.unknown()).nullable(),
      idempotency_key: z.string().nullable(),
      received_at: z.string(),
    }),
  ),
  /** Every push made to it, newest first, with the send's outcome word (sent, failed, expired, skipped, pending). */
  deliveries: z.array(
    z.object({
      notification_id: z.string(),
      notification_title: z.string().nullable(),
      run_id: z.string(),
      outcome: z.string(),
      reason: z.string().nullable(),
      attempts: z.number(),
      created_at: z.string(),
      sent_at: z.string().nullable(),
      delivered_at: z.string().nullable(),
      clicked_at: z.string().nullable(),
    }),
  ),
  /** Sends made for this subscriber alone (welcome campaign steps, triggered notifications), done or still due. */
  personal_sends: z.array(z.object({ run_id: z.string(), notification_id: z.string(), status: z.string(), due_at: z.string() })),
  welcome_campaigns: z.array(z.object({ campaign_id: z.string(), enrolled_at: z.string() })),
});
export type SubscriberDataExport = z.infer<typeof subscriberDataExport>;
export const subscriberDataExportResponse = envelope(subscriberDataExport);
