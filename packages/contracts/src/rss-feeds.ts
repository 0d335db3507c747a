import { z } from 'zod';
import { envelope, httpUrl, optionalImageUrl } from './common';
import { utmParams, utmParamsInput } from './utm';

/** Spec §9: feeds are checked every 15 minutes (RSS_POLL_INTERVAL_SECONDS on the server). */
export const RSS_CHECK_INTERVAL_MINUTES = 15;
/** Spec §5/§9: max pushes per day min 1. The upper bound keeps a typo from meaning "unlimited". */
export const RSS_MAX_PUSHES_PER_DAY_MIN = 1;
export const RSS_MAX_PUSHES_PER_DAY_MAX = 100;
/** Best practices (spec §2 Help): 1–2 pushes per day at most. */
export const RSS_MAX_PUSHES_PER_DAY_DEFAULT = 2;
export const RSS_FEED_NAME_MAX = 100;
/** A draft feed makes at most this many drafts per check; newer items beyond them are skipped, never drafted later. */
export const RSS_DRAFTS_PER_CHECK = 50;
/** Spec §2 RSS Feeds list: the last item id is shown by its first 20 characters. */
export const RSS_ITEM_ID_SHOWN_LENGTH = 20;

const feedName = z
  .string({ message: 'Feed name is required' })
  .trim()
  .min(1, 'Feed name is required')
  .max(RSS_FEED_NAME_MAX, `Feed name must be at most ${RSS_FEED_NAME_MAX} characters`);

const feedUrl = z.string({ message: 'RSS feed URL is required' }).trim().min(1, 'RSS feed URL is required').pipe(httpUrl);

export const maxPushesPerDay = z.coerce
  .number({ message: 'Maximum pushes per day must be a number' })
  .int('Maximum pushes per day must be a whole number')
  .min(RSS_MAX_PUSHES_PER_DAY_MIN, `Maximum pushes per day must be at least ${RSS_MAX_PUSHES_PER_DAY_MIN}`)
  .max(RSS_MAX_PUSHES_PER_DAY_MAX, `Maximum pushes per day must be at most ${RSS_MAX_PUSHES_PER_DAY_MAX}`);

const segmentId = z.string().trim().max(100).nullable().optional();

/**
 * Spec §3 "RSS feed … Create payload: name, url, iconUrl, utmParams,
 * showActionButtons, createDraft, maxPushesPerDay, segmentId". A new feed is
 * active (watched) unless `is_active: false` is sent.
 */
export const createRssFeedBody = z.object({
  name: feedName,
  url: feedUrl,
  iconUrl: optionalImageUrl,
  utmParams: utmParamsInput.nullable().optional(),
  showActionButtons: z.boolean().default(false),
  createDraft: z.boolean().default(false),
  maxPushesPerDay: maxPushesPerDay.default(RSS_MAX_PUSHES_PER_DAY_DEFAULT),
  segmentId,
  is_active: z.boolean().optional(),
});
export type CreateRssFeedBody = z.input<typeof createRssFeedBody>;
export type CreateRssFeedInput = z.output<typeof createRssFeedBody>;

/** Spec §7: PATCH /rss-feeds/{id}; the toggle sends `{ is_active }`, the edit form the create fields. */
export const updateRssFeedBody = z
  .object({
    name: feedName,
    url: feedUrl,
    iconUrl: optionalImageUrl,
    utmParams: utmParamsInput.nullable(),
    showActionButtons: z.boolean(),
    createDraft: z.boolean(),
    maxPushesPerDay,
    segmentId,
    is_active: z.boolean(),
  })
  .partial()
  .strict();
export type UpdateRssFeedBody = z.input<typeof updateRssFeedBody>;
export type UpdateRssFeedInput = z.output<typeof updateRssFeedBody>;



export const rssFeed = z.object({
  id: z.string(),
  site_id: z.string(),
  name: z.string(),
  url: z.string(),
  icon_url: z.string().nullable(),
  utm_params: utmParams,
  show_action_buttons: z.boolean(),
  create_draft: z.boolean(),
  max_pushes_per_day: z.number(),
  segment_id: z.string().nullable(),
  is_active: z.boolean(),
  /** When the feed was last checked (successfully or not); null: "Not checked yet". */
  last_fetched_at: z.string().nullable(),
  /** The newest item's id at the last successful check. */
  last_item_guid: z.string().nullable(),
  /** Why the last check failed; null after a successful one. */
  last_error: z.string().nullable(),
  next_check_at: z.string().nullable(),
  /** Notifications this feed sent today (the site's local day), against max_pushes_per_day. */
  pushes_today: z.number(),
  /** New items today that were not sent because the daily maximum was reached. */
  skipped_today: z.number(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type RssFeed = z.infer<typeof rssFeed>;

export const RSS_CHECK_OUTCOMES = ['baseline', 'checked', 'not_modified', 'error'] as const;
export type RssCheckOutcome = (typeof RSS_CHECK_OUTCOMES)[number];

/** What one check of a feed did ("Check now" answers with it). */
export const rssFeedCheck = z.object({
  /**
   * baseline: the first successful check, which only records where the feed
   * stands; checked: new items were looked for; not_modified: the server
   * answered 304; error: see `error`.
   */
  outcome: z.enum(RSS_CHECK_OUTCOMES),
  checked_at: z.string(),
  items_in_feed: z.number(),
  new_items: z.number(),
  sent: z.number(),
  drafted: z.number(),
  /** New items left unsent: over the daily maximum (sends) or over the per-check bound (drafts). */
  skipped: z.number(),
  notification_ids: z.array(z.string()),
  error: z.string().nullable(),
  /** One sentence for the dashboard. */
  summary: z.string(),
});
export type RssFeedCheck = z.infer<typeof rssFeedCheck>;

export const rssFeedResponse = envelope(z.object({ feed: rssFeed }));
export const rssFeedListResponse = envelope(z.object({ feeds: z.array(rssFeed) }));
export const rssFeedCheckResponse = envelope(z.object({ check: rssFeedCheck, feed: rssFeed }));
export const rssFeedDeletedResponse = envelope(z.object({ deleted: z.literal(true) }));
