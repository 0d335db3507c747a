// One check of one feed: fetch (conditional GET), read, and turn each item
// never seen before into a notification — sent now, or saved as a draft —
// within the feed's daily maximum (spec §2 RSS Feeds, §9). Every failure
// (network, refused address, HTTP error, unreadable document) is stored on
// the feed as `last_error` and never escapes: a failing feed is simply
// checked again at the next interval.
import crypto from 'node:crypto';
import http from 'node:http';
import type { RssFeedCheck } from '@herald/contracts';
import type { AppContext } from '../../context';
import type { RssFeedRow, RssItemOutcome, SiteRow } from '../../db/schema';
import { insertRun } from '../../delivery/runs';
import { OutboundError } from '../../platform/outbound-errors';
import type { OutboundHttp, OutboundResponse } from '../../platform/outbound-http';
import { RSS_DRAFTS_PER_CHECK, wallTimeOf } from '@herald/contracts';
import { createNotification } from '../notifications/create';
import { FEED_ACCEPT_HEADER, FeedParseError, parseFeed, type FeedItem, type ParsedFeed } from './feed-parser';
import { feedItemNotification, newestFirst, planNewItems, type FeedNotificationContext } from './feed-notification';
import * as repo from './repository';

/** Longer than a fetch may take (10 s) plus the writes; a crashed check frees the feed after this. */
export const CHECK_LEASE_MS = 2 * 60_000;

export type CheckDeps = Pick<AppContext, 'db' | 'clock' | 'config' | 'log' | 'wakeScheduler'> & { outbound: OutboundHttp };

export type CheckAttempt = { status: 'done'; check: RssFeedCheck } | { status: 'busy' } | { status: 'gone' } | { status: 'paused' };

/** The dedupe key of the run that sends one feed item (the runs table keeps it unique). */
export const feedItemRunKey = (feedId: string, itemKey: string) => `rss:${feedId}:${itemKey}`;

const sha256 = (value: string) => crypto.createHash('sha256').update(value).digest('hex');

/** "2026-03-29": the site's local day at an instant; the daily maximum counts by it. */
export function localDayOf(millis: number, timeZone: string): string {
  const w = wallTimeOf(millis, timeZone);
  return `${w.year}-${String(w.month).padStart(2, '0')}-${String(w.day).padStart(2, '0')}`;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function httpErrorMessage(status: number): string {
  const reason = http.STATUS_CODES[status];
  const base = `Feed server answered HTTP ${status}${reason ? ` ${reason}` : ''}`;
  if (status === 401 || status === 403) return `${base}: the feed is not public or blocks Herald`;
  if (status === 404 || status === 410) return `${base}: there is no feed at this address`;
  if (status >= 500) return `${base}: the site has a problem; Herald will try again at the next check`;
  return base;
}

/** An absolute URL for an icon stored as an upload path (`/uploads/…`); push payloads need absolute http(s) URLs. */
function absoluteIcon(icon: string | null, publicUrl: string): string | null {
  if (!icon) return null;
  try {
    return new URL(icon, `${publicUrl}/`).href;
  } catch {
    return null;
  }
}

interface Entry {
  item: FeedItem;
  position: number;
  itemKey: string;
  linkKey: string | null;
}

/**
 * Checks a feed once. The lease makes checks of one feed take turns (a
 * scheduled check and "Check now", two schedulers); the seen-items table
 * makes each item act once even if they did not.
 */
export async function checkFeed(deps: CheckDeps, feedId: string, trigger: 'schedule' | 'manual'): Promise<CheckAttempt> {
  const { db, clock } = deps;
  const startedAt = clock.now();
  const leaseUntil = startedAt + CHECK_LEASE_MS;
  if (!(await repo.acquirePollLease(db, feedId, startedAt, leaseUntil))) {
    return (await repo.findFeed(db, feedId)) ? { status: 'busy' } : { status: 'gone' };
  }
  try {
    const feed = await repo.findFeed(db, feedId);
    if (!feed) return { status: 'gone' };
    if (!feed.is_active) return { status: 'paused' };
    const site = await repo.findSite(db, feed.site_id);
    if (!site) return { status: 'gone' };
    const check = await fetchAndProcess(deps, feed, site);
    if (trigger === 'manual') await repo.updateFeed(db, feed.id, { next_check_at: clock.now() + deps.config.rssPollIntervalSeconds * 1000 });
    return { status: 'done', check };
  } finally {
    await repo.releasePollLease(db, feedId, leaseUntil);
  }
}

async function fetchAndProcess(deps: CheckDeps, feed: RssFeedRow, site: SiteRow): Promise<RssFeedCheck> {
  const { db, clock, log } = deps;
  const baselineRecorded = feed.baseline_recorded === 1;

  const fail = async (message: string): Promise<RssFeedCheck> => {
    const at = clock.now();
    await repo.finishCheck(db, feed.id, feed.url, { last_fetched_at: at, last_error: message });
    return emptyCheck('error', at, message, message);
  };

  let response: OutboundResponse;
  try {
    response = await deps.outbound.get(feed.url, {
      subject: 'Feed',
      accept: FEED_ACCEPT_HEADER,
      // Validators only once the feed's items are on record: a 304 must mean "nothing new to us".
      ifNoneMatch: baselineRecorded ? feed.etag : null,
      ifModifiedSince: baselineRecorded ? feed.last_modified : null,
    });
  } catch (error) {
    if (error instanceof OutboundError) return fail(error.message);
    log.warn({ err: error, feedId: feed.id }, 'feed fetch failed unexpectedly');
    return fail('Feed could not be fetched');
  }

  if (response.notModified) {
    const at = clock.now();
    await repo.finishCheck(db, feed.id, feed.url, { last_fetched_at: at, last_error: null });
    return emptyCheck('not_modified', at, null, 'No changes since the last check (the feed server answered 304 Not Modified).');
  }
  if (response.status < 200 || response.status > 299) return fail(httpErrorMessage(response.status));

  let parsed: ParsedFeed;
  try {
    parsed = parseFeed(response.body, { url: response.finalUrl, contentType: response.headers['content-type'] });
  } catch (error) {
    if (error instanceof FeedParseError) return fail(error.message);
    log.warn({ err: error, feedId: feed.id }, 'feed could not be parsed');
    return fail('This address did not return a readable RSS or Atom feed');
  }

  const now = clock.now();
  const localDay = localDayOf(now, site.timezone);
  const entries: Entry[] = parsed.items.map((item, position) => ({
    item,
    position,
    itemKey: sha256(item.id),
    linkKey: item.link ? sha256(item.link) : null,
  }));
  const newestItemId = newestFirst(entries)[0]?.item.id ?? feed.last_item_guid;
  const validators = { etag: response.etag, last_modified: response.lastModified };
  const seenRow = (entry: Entry, outcome: RssItemOutcome, notificationId: string | null) => ({
    feed_id: feed.id,
    item_key: entry.itemKey,
    item_id: entry.item.id,
    link_key: entry.linkKey,
    outcome,
    local_day: localDay,
    notification_id: notificationId,
    seen_at: now,
  });

  if (!baselineRecorded) {
    // The first successful check records where the feed stands: its current items are never sent.
    await repo.recordSeenItems(db, entries.map((e) => seenRow(e, 'baseline', null)));
    await repo.finishCheck(db, feed.id, feed.url, { ...validators, baseline_recorded: 1, last_fetched_at: now, last_error: null, last_item_guid: newestItemId });
    return {
      ...emptyCheck('baseline', now, null, `First check: ${plural(entries.length, 'item')} in the feed recorded. Only items published from now on will be sent.`),
      items_in_feed: entries.length,
    };
  }

  // An item is new unless its id, or its link (when no other item in the document shares it), was seen before:
  // a feed that re-issues guids or retitles a guid-less item does not send the same article twice.
  const linkUses = new Map<string, number>();
  for (const e of entries) if (e.linkKey) linkUses.set(e.linkKey, (linkUses.get(e.linkKey) ?? 0) + 1);
  const distinctLinks = entries.filter((e) => e.linkKey && linkUses.get(e.linkKey) === 1).map((e) => e.linkKey!);
  const seen = await repo.findSeenKeys(
    db,
    feed.id,
    entries.map((e) => e.itemKey),
    distinctLinks,
  );
  const knownByLink = entries.filter((e) => !seen.items.has(e.itemKey) && e.linkKey && linkUses.get(e.linkKey) === 1 && seen.links.has(e.linkKey));
  // A guid the publisher repeats within the document (a reused guid, a duplicated item) sends once:
  // its first occurrence stands for the others (docs/security.md: a repeated GUID never sends twice).
  const firstWithGuid = new Map<string, Entry>();
  for (const e of entries) if (e.item.guid && !firstWithGuid.has(e.item.guid)) firstWithGuid.set(e.item.guid, e);
  const repeatedGuid = entries.filter((e) => e.item.guid && firstWithGuid.get(e.item.guid) !== e && !seen.items.has(e.itemKey));
  // So does an item without a guid listed twice (the same link, title and date): its first listing stands for it.
  const repeatedItem = entries.filter((e) => e.item.repeatsEarlierItem && !seen.items.has(e.itemKey));
  const alreadyKnown = [...knownByLink, ...repeatedGuid, ...repeatedItem];
  if (alreadyKnown.length) await repo.recordSeenItems(db, alreadyKnown.map((e) => seenRow(e, 'baseline', null)));
  const fresh = entries.filter((e) => !seen.items.has(e.itemKey) && !alreadyKnown.includes(e));

  const today = await repo.countOutcomesOnDay(db, feed.id, localDay);
  const plan = planNewItems(newestFirst(fresh), {
    createDraft: feed.create_draft === 1,
    sendsLeftToday: feed.max_pushes_per_day - today.sent,
    draftsPerCheck: RSS_DRAFTS_PER_CHECK,
  });

  const context: FeedNotificationContext = {
    feedName: feed.name,
    utm: { utm_source: feed.utm_source, utm_medium: feed.utm_medium, utm_campaign: feed.utm_campaign },
    showActionButtons: feed.show_action_buttons === 1,
    iconUrl: absoluteIcon(feed.icon_url ?? site.icon, deps.config.publicUrl),
    homeUrl: parsed.link ?? site.url,
  };
  const counts = { sent: 0, draft: 0, skipped: 0 };
  const notificationIds: string[] = [];
  // Oldest of the chosen first, so the newest arrives last and sits on top of the subscriber's list.
  for (const { entry, outcome } of [...plan].reverse()) {
    const notificationId = outcome === 'skipped' ? null : crypto.randomUUID();
    const acted = await db.transaction().execute(async (trx) => {
      if (!(await repo.recordSeenItem(trx, seenRow(entry, outcome, notificationId)))) return false;
      if (!notificationId) return true;
      await createNotification(
        trx,
        {
          id: notificationId,
          siteId: feed.site_id,
          type: 'ONE_TIME',
          source: 'rss',
          content: feedItemNotification(entry.item, context),
          segmentId: feed.segment_id,
          status: outcome === 'sent' ? 'sending' : 'draft',
          sentAt: outcome === 'sent' ? now : null,
        },
        now,
      );
      if (outcome === 'sent') {
        await insertRun(trx, {
          id: crypto.randomUUID(),
          notification_id: notificationId,
          site_id: feed.site_id,
          dedupe_key: feedItemRunKey(feed.id, entry.itemKey),
          due_at: now,
          segment_id: feed.segment_id,
          subscriber_id: null,
          created_at: now,
        });
      }
      return true;
    });
    if (!acted) continue;
    counts[outcome] += 1;
    if (notificationId) notificationIds.push(notificationId);
  }
  if (counts.sent) deps.wakeScheduler();

  await repo.pruneSeenItems(
    db,
    feed.id,
    // Items seen FEED_ITEM_RETENTION_DAYS ago that the feed no longer lists are forgotten: a listed one never is (dedupe).
    now - deps.config.feedItemRetentionDays * 86_400_000,
    entries.map((e) => e.itemKey),
  );
  await repo.finishCheck(db, feed.id, feed.url, { ...validators, last_fetched_at: now, last_error: null, last_item_guid: newestItemId });

  const newItems = counts.sent + counts.draft + counts.skipped;
  return {
    outcome: 'checked',
    checked_at: new Date(now).toISOString(),
    items_in_feed: entries.length,
    new_items: newItems,
    sent: counts.sent,
    drafted: counts.draft,
    skipped: counts.skipped,
    notification_ids: notificationIds.reverse(),
    error: null,
    summary: checkSummary(newItems, entries.length, counts, feed),
  };
}

function emptyCheck(outcome: RssFeedCheck['outcome'], at: number, error: string | null, summary: string): RssFeedCheck {
  return {
    outcome,
    checked_at: new Date(at).toISOString(),
    items_in_feed: 0,
    new_items: 0,
    sent: 0,
    drafted: 0,
    skipped: 0,
    notification_ids: [],
    error,
    summary,
  };
}

function checkSummary(newItems: number, inFeed: number, counts: { sent: number; draft: number; skipped: number }, feed: RssFeedRow): string {
  if (!newItems) return `No new items (${plural(inFeed, 'item')} in the feed).`;
  const parts: string[] = [];
  if (counts.sent) parts.push(`${plural(counts.sent, 'notification')} sent`);
  if (counts.draft) parts.push(`${plural(counts.draft, 'draft')} created`);
  if (counts.skipped) {
    parts.push(
      feed.create_draft
        ? `${counts.skipped} skipped (at most ${RSS_DRAFTS_PER_CHECK} drafts per check)`
        : `${counts.skipped} not sent: today's maximum of ${plural(feed.max_pushes_per_day, 'push', 'pushes')} reached`,
    );
  }
  return `${plural(newItems, 'new item')}: ${parts.join(', ')}.`;
}
