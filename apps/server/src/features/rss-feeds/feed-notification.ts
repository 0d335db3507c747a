// What a new feed item looks like as a push notification (spec §2 RSS Feeds,
// §9 limits: title 50, message 150, up to 2 action buttons).
import { NOTIFICATION_ACTIONS_MAX, NOTIFICATION_MESSAGE_MAX, NOTIFICATION_TITLE_MAX, type ActionButton, type UtmParams, withUtmParams } from '@herald/contracts';
import type { NotificationContent } from '../notifications/create';
import type { FeedItem } from './feed-parser';
import { collapseWhitespace, truncateText } from './feed-text';

/** Longest destination Herald stores (the contracts' URL limit); a longer item link falls back to the feed's page. */
const URL_MAX_LENGTH = 2048;
/**
 * A push message carries at most 4096 bytes (RFC 8291 §4 with one record);
 * the payload also holds the tag, the delivery token and Herald's address.
 * Above this many bytes of content the extras (buttons, then the image) go.
 */
const CONTENT_BYTE_BUDGET = 3200;

export const READ_MORE_BUTTON = 'Read more';
export const VISIT_SITE_BUTTON = 'Visit site';

/** What a feed item's notification shows; `actions` is mutable while extras are dropped to fit one push. */
export type FeedNotificationContent = NotificationContent & { actions: ActionButton[] };

export interface FeedNotificationContext {
  feedName: string;
  utm: UtmParams;
  showActionButtons: boolean;
  /** The feed's own icon, else the site's; absolute http(s) or null. */
  iconUrl: string | null;
  /** The page the feed belongs to (the channel's link), else the site's address. */
  homeUrl: string;
}

/** Adds the feed's UTM parameters to a link, keeping its other query parameters (a configured value replaces the link's own). */
function isHttpUrl(value: string | null | undefined): value is string {
  if (!value || value.length > URL_MAX_LENGTH) return false;
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

function byteLength(content: FeedNotificationContent): number {
  return Buffer.byteLength(JSON.stringify(content));
}

/**
 * Title: the item's title, shortened at a word with "…"; an item without one
 * (microblogs, podcasts) is titled with the feed's name. Message: the item's
 * summary shortened the same way; without a summary, the rest of a long title,
 * else a line naming the feed. Link: the item's, with the UTM parameters.
 */
export function feedItemNotification(item: FeedItem, context: FeedNotificationContext): FeedNotificationContent {
  const itemTitle = collapseWhitespace(item.title);
  const summary = collapseWhitespace(item.summary);
  const feedName = collapseWhitespace(context.feedName);
  const title = truncateText(itemTitle || feedName, NOTIFICATION_TITLE_MAX);

  let message: string;
  if (summary) message = truncateText(summary, NOTIFICATION_MESSAGE_MAX);
  else if (itemTitle && title !== itemTitle) message = truncateText(itemTitle, NOTIFICATION_MESSAGE_MAX);
  else message = truncateText(`New post from ${feedName}`, NOTIFICATION_MESSAGE_MAX);

  const link = isHttpUrl(item.link) ? item.link : context.homeUrl;
  const destination = withUtmParams(link, context.utm);
  const destinationUrl = destination.length <= URL_MAX_LENGTH ? destination : link;
  const home = withUtmParams(context.homeUrl, context.utm);

  const actions: ActionButton[] = [];
  if (context.showActionButtons) {
    actions.push({ title: READ_MORE_BUTTON, url: destinationUrl });
    if (home !== destinationUrl && home.length <= URL_MAX_LENGTH) actions.push({ title: VISIT_SITE_BUTTON, url: home });
  }

  const content: FeedNotificationContent = {
    title,
    message,
    destination_url: destinationUrl,
    image_url: isHttpUrl(item.imageUrl) ? item.imageUrl : null,
    icon_url: isHttpUrl(context.iconUrl) ? context.iconUrl : null,
    actions: actions.slice(0, NOTIFICATION_ACTIONS_MAX),
  };
  // Long links would push the payload past what one push message carries: drop the extras first.
  if (byteLength(content) > CONTENT_BYTE_BUDGET) content.actions = [];
  if (byteLength(content) > CONTENT_BYTE_BUDGET) content.image_url = null;
  return content;
}

/**
 * New items newest first: by date when every one of them has a date,
 * otherwise in the feed's own order (feeds list their newest items first).
 */
export function newestFirst<T extends { item: Pick<FeedItem, 'publishedAt'>; position: number }>(entries: T[]): T[] {
  const sorted = [...entries];
  if (entries.every((e) => e.item.publishedAt !== null)) {
    sorted.sort((a, b) => b.item.publishedAt! - a.item.publishedAt! || a.position - b.position);
  } else {
    sorted.sort((a, b) => a.position - b.position);
  }
  return sorted;
}

export type PlannedOutcome = 'sent' | 'draft' | 'skipped';

/**
 * Decides what each new item becomes (spec §2/§9 "Maximum RSS Pushes Per
 * Day"). Sending: the newest `sendsLeftToday` items are sent, the rest are
 * skipped — recorded as seen, never sent later, so a burst of posts (or a
 * feed that re-issues its ids) cannot turn into a burst of pushes tomorrow.
 * Drafts are not pushes, so the daily maximum does not count them; one check
 * makes at most `draftsPerCheck` drafts so a feed that suddenly lists hundreds
 * of unseen items cannot bury the notification list.
 */
export function planNewItems<T>(newestFirstItems: T[], options: { createDraft: boolean; sendsLeftToday: number; draftsPerCheck: number }): Array<{ entry: T; outcome: PlannedOutcome }> {
  const allowance = options.createDraft ? options.draftsPerCheck : Math.max(0, options.sendsLeftToday);
  const kept: PlannedOutcome = options.createDraft ? 'draft' : 'sent';
  return newestFirstItems.map((entry, index) => ({ entry, outcome: index < allowance ? kept : 'skipped' }));
}
