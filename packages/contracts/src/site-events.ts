import { z } from 'zod';
import { envelope } from './common';
import { eventName } from './notifications';
import { PUSH_ENDPOINT_MAX_LENGTH, SUBSCRIBER_EXPORT_TAG_SEPARATOR, SUBSCRIBER_TAG_MAX_COUNT, SUBSCRIBER_TAG_MAX_LENGTH, TAG_SEPARATOR_MESSAGE } from './subscribers';

// Events a site sends about one of its subscribers: from the browser SDK
// (herald.track / identify / addTags / removeTags, public and CORS open) or
// from the site's backend (v1 API with a site API key). An event fires every
// armed TRIGGERED notification of the site listening for its name.

export const EXTERNAL_ID_MAX = 200;
export const IDEMPOTENCY_KEY_MAX = 200;
/** The `data` object of an event, as JSON, at most this many characters: it is context for the events list, not storage. */
export const EVENT_DATA_MAX_CHARS = 4096;
export const SITE_EVENTS_PAGE_MAX = 100;

const endpoint = z
  .string({ message: 'endpoint is required' })
  .trim()
  .min(1, 'endpoint is required')
  .max(PUSH_ENDPOINT_MAX_LENGTH, `endpoint must be at most ${PUSH_ENDPOINT_MAX_LENGTH} characters`);

export const externalId = z
  .string({ message: 'external_id must be text' })
  .trim()
  .min(1, 'external_id must not be empty')
  .max(EXTERNAL_ID_MAX, `external_id must be at most ${EXTERNAL_ID_MAX} characters`);

/** Makes a retried call count once: the same key for the same subscriber (or external id) is one event. */
export const idempotencyKey = z
  .string({ message: 'idempotency_key must be text' })
  .trim()
  .min(1, 'idempotency_key must not be empty')
  .max(IDEMPOTENCY_KEY_MAX, `idempotency_key must be at most ${IDEMPOTENCY_KEY_MAX} characters`);

export const eventData = z
  .record(z.string(), z.unknown(), { message: 'data must be an object' })
  .refine((data) => JSON.stringify(data).length <= EVENT_DATA_MAX_CHARS, `data must be at most ${EVENT_DATA_MAX_CHARS} characters as JSON`);

const tagList = z
  .array(
    z
      .string({ message: 'each tag must be text' })
      .trim()
      .min(1, 'tags must not be empty')
      .max(SUBSCRIBER_TAG_MAX_LENGTH, `each tag must be at most ${SUBSCRIBER_TAG_MAX_LENGTH} characters`)
      .refine((tag) => !tag.includes(SUBSCRIBER_EXPORT_TAG_SEPARATOR), TAG_SEPARATOR_MESSAGE),
    { message: 'tags must be a list of text' },
  )
  .max(SUBSCRIBER_TAG_MAX_COUNT, `at most ${SUBSCRIBER_TAG_MAX_COUNT} tags at once`);

// ---------------------------------------------------------------------------
// Public API (browser SDK). `endpoint` is the browser's push endpoint: it names
// an active subscriber of the site, else 404.

export const publicTrackBody = z.object({
  endpoint,
  event: eventName,
  data: eventData.optional(),
  idempotency_key: idempotencyKey.optional(),
});
export type PublicTrackBody = z.infer<typeof publicTrackBody>;

/** HMAC-SHA256(site identity secret, external_id) as lowercase hex, computed by the site's backend (docs/security.md). */
export const identityHash = z
  .string({ message: 'identity_hash must be text' })
  .regex(/^[0-9a-f]{64}$/, 'identity_hash must be the HMAC-SHA256 of external_id as 64 lowercase hex characters');

export const publicIdentifyBody = z.object({ endpoint, external_id: externalId, identity_hash: identityHash.optional() });
export type PublicIdentifyBody = z.infer<typeof publicIdentifyBody>;

export const publicTagsBody = z
  .object({ endpoint, add: tagList.optional(), remove: tagList.optional() })
  .refine((body) => (body.add?.length ?? 0) + (body.remove?.length ?? 0) > 0, 'add or remove must list at least one tag');
export type PublicTagsBody = z.infer<typeof publicTagsBody>;

// ---------------------------------------------------------------------------
// v1 API (the site's backend, `Authorization: Bearer <site API key>`).

export const apiEventBody = z
  .object({
    event: eventName,
    /** A Herald subscriber id (from `herald.subscribe()` in the browser). */
    subscriber_id: z.string().trim().min(1, 'subscriber_id must not be empty').max(100).optional(),
    /** Your own user id, set in the browser with `herald.identify()`: every active subscriber with it receives the notification. */
    external_id: externalId.optional(),
    data: eventData.optional(),
    idempotency_key: idempotencyKey.optional(),
  })
  .refine((body) => (body.subscriber_id === undefined) !== (body.external_id === undefined), 'Send exactly one of subscriber_id or external_id');
export type ApiEventBody = z.infer<typeof apiEventBody>;

/**
 * The IETF draft's `Idempotency-Key` request header (draft-ietf-httpapi-idempotency-key-header),
 * accepted by the v1 events API besides `idempotency_key` in the body; both given must be equal.
 * Loose: the other request headers pass through untouched.
 */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const apiEventHeaders = z.looseObject({
  'idempotency-key': z
    .string({ message: `the ${IDEMPOTENCY_KEY_HEADER} header must be text` })
    .trim()
    .min(1, `the ${IDEMPOTENCY_KEY_HEADER} header must not be empty`)
    .max(IDEMPOTENCY_KEY_MAX, `the ${IDEMPOTENCY_KEY_HEADER} header must be at most ${IDEMPOTENCY_KEY_MAX} characters`)
    .optional(),
});

/** DELETE /v1/sites/{siteId}/subscribers?external_id=…: erases every subscriber of the site with that external id. */
export const apiEraseSubscribersQuery = z.object({ external_id: externalId });
/** How many subscribers were erased (0 when none had the external id: a repeated request is harmless). */
export const apiEraseSubscribersResponse = envelope(z.object({ erased: z.number() }));

/** What an accepted event did. */
export const eventReceipt = z.object({
  id: z.string(),
  event: z.string(),
  /** True when an event with the same idempotency key was already received: nothing was done again. */
  duplicate: z.boolean(),
  /** Active subscribers the event was about. */
  subscribers: z.number(),
  /** Notification sends scheduled by this event (armed triggered notifications × subscribers). */
  triggered: z.number(),
});
export type EventReceipt = z.infer<typeof eventReceipt>;
export const eventReceiptResponse = envelope(z.object({ event: eventReceipt }));

/**
 * Tags set by the site's backend (also the tags the site marked server-only,
 * which the browser may not change). Address one subscriber or a person.
 */
export const apiSubscriberTagsBody = z
  .object({
    subscriber_id: z.string().trim().min(1, 'subscriber_id must not be empty').max(100).optional(),
    external_id: externalId.optional(),
    add: tagList.optional(),
    remove: tagList.optional(),
  })
  .refine((body) => (body.subscriber_id === undefined) !== (body.external_id === undefined), 'Send exactly one of subscriber_id or external_id')
  .refine((body) => (body.add?.length ?? 0) + (body.remove?.length ?? 0) > 0, 'add or remove must list at least one tag');
export type ApiSubscriberTagsBody = z.infer<typeof apiSubscriberTagsBody>;

/** `verified`: the claim came with a valid identity hash (on a site that verifies identities, only such claims count). */
export const identifyResponse = envelope(z.object({ subscriber: z.object({ id: z.string(), external_id: z.string(), verified: z.boolean() }) }));
export const tagsResponse = envelope(z.object({ subscriber: z.object({ id: z.string(), tags: z.array(z.string()) }) }));
/** Every subscriber the v1 tags call changed, with its tags after the change. */
export const apiSubscriberTagsResponse = envelope(z.object({ subscribers: z.array(z.object({ id: z.string(), tags: z.array(z.string()) })) }));

// ---------------------------------------------------------------------------
// Dashboard: the site's recent events (Settings → Automation).

export const SITE_EVENT_SOURCES = ['browser', 'api'] as const;
export type SiteEventSource = (typeof SITE_EVENT_SOURCES)[number];

export const siteEvent = z.object({
  id: z.string(),
  event: z.string(),
  source: z.enum(SITE_EVENT_SOURCES),
  subscriber_id: z.string().nullable(),
  external_id: z.string().nullable(),
  data: z.record(z.string(), z.unknown()).nullable(),
  idempotency_key: z.string().nullable(),
  subscribers: z.number(),
  triggered: z.number(),
  received_at: z.string(),
});
export type SiteEvent = z.infer<typeof siteEvent>;

export const siteEventsQuery = z.object({
  limit: z.coerce
    .number({ message: 'limit must be a number' })
    .int('limit must be a whole number')
    .min(1, 'limit must be 1 or more')
    .max(SITE_EVENTS_PAGE_MAX, `limit must be at most ${SITE_EVENTS_PAGE_MAX}`)
    .default(50),
});

export const siteEventsResponse = envelope(z.object({ events: z.array(siteEvent) }));
