import crypto from 'node:crypto';
import type { CreateRssFeedInput, RssFeed, RssFeedCheck, SiteRole, UpdateRssFeedInput } from '@herald/contracts';
import type { Updateable } from 'kysely';
import type { AppContext } from '../../context';
import type { RssFeedRow, RssFeedsTable, SiteRow } from '../../db/schema';
import { createOutboundHttpFromConfig, type OutboundHttp } from '../../platform/outbound-http';
import { conflict, HttpError, notFound, retryAfterSeconds, tooManyRequests } from '../../platform/errors';
import { DatabaseRateLimiter } from '../../platform/rate-limit';
import { sha256Hex } from '../../platform/secrets';
import { iso, isoOrNull } from '../../platform/responses';
import { checkSiteRole } from '../../platform/site-roles';
import { changedFields, recordAudit } from '../audit-log/record';
import { requireSiteRole } from '../sites/service';
import { checkFeed, localDayOf } from './feed-check';
import * as repo from './repository';
import { requireSegmentOfSite } from '../segments/service';

export function toRssFeedResponse(row: RssFeedRow, today: { sent: number; skipped: number } = { sent: 0, skipped: 0 }): RssFeed {
  return {
    id: row.id,
    site_id: row.site_id,
    name: row.name,
    url: row.url,
    icon_url: row.icon_url,
    utm_params: { utm_source: row.utm_source, utm_medium: row.utm_medium, utm_campaign: row.utm_campaign },
    show_action_buttons: row.show_action_buttons === 1,
    create_draft: row.create_draft === 1,
    max_pushes_per_day: row.max_pushes_per_day,
    segment_id: row.segment_id,
    is_active: row.is_active === 1,
    last_fetched_at: isoOrNull(row.last_fetched_at),
    last_item_guid: row.last_item_guid,
    last_error: row.last_error,
    next_check_at: row.is_active === 1 ? iso(row.next_check_at) : null,
    pushes_today: today.sent,
    skipped_today: today.skipped,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

const flag = (value: boolean) => (value ? 1 : 0);

/** "Check now" fetches a feed at most once a minute (docs/security.md, "Abuse limits"). */
export const MANUAL_CHECK_INTERVAL_MS = 60_000;
const HOUR_MS = 3_600_000;

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

export const feedLimitReached = (limit: number) =>
  new HttpError(409, `You can have at most ${plural(limit, 'RSS feed')} over all your sites. Delete a feed to add another.`, 'feed_limit_reached');

/**
 * The counter of manual checks of one feed at one address: a feed whose
 * address was just changed may be checked right away (the edit starts it
 * over), one hammered at the same address may not.
 */
const manualCheckKey = (feed: Pick<RssFeedRow, 'id' | 'url'>) => `rss-check:feed:${feed.id}:${sha256Hex(feed.url).slice(0, 16)}`;
const userChecksKey = (userId: string) => `rss-check:user:${userId}`;

export function createRssFeedsService(ctx: AppContext, options: { outbound?: OutboundHttp } = {}) {
  const { db, clock, config } = ctx;
  const outbound = options.outbound ?? createOutboundHttpFromConfig(config);
  // In the database, so the limits hold across `serve` processes (docs/security.md, "Abuse limits").
  const limiter = new DatabaseRateLimiter(db);

  /**
   * Counts one "Check now" of the feed and of the user, atomically (a burst
   * of parallel clicks gets one check). Answers 429 with Retry-After when
   * either is over its limit; the feed's slot is given back when the user's
   * limit refuses, so the user can check it as soon as their hour allows.
   */
  async function countManualCheck(userId: string, feed: RssFeedRow): Promise<string> {
    const now = clock.now();
    const feedKey = manualCheckKey(feed);
    const byFeed = await limiter.hit(feedKey, MANUAL_CHECK_INTERVAL_MS, now);
    if (byFeed.hits > 1) {
      const seconds = retryAfterSeconds(byFeed.retryAfterMs);
      throw tooManyRequests(`This feed was checked less than a minute ago. Try again in ${plural(seconds, 'second')}.`, seconds);
    }
    const userKey = userChecksKey(userId);
    const perHour = config.rssChecksPerUserPerHour;
    const byUser = await limiter.hit(userKey, HOUR_MS, now);
    if (byUser.hits > perHour) {
      await limiter.reset(feedKey);
      const seconds = retryAfterSeconds(byUser.retryAfterMs);
      throw tooManyRequests(`You have used all ${plural(perHour, 'feed check')} of this hour. Try again in ${plural(Math.ceil(seconds / 60), 'minute')}.`, seconds);
    }
    return feedKey;
  }

  async function ownedFeed(userId: string, id: string, needed: SiteRole): Promise<RssFeedRow> {
    return checkSiteRole(await repo.findFeedOfUser(db, userId, id), needed, 'RSS feed');
  }

  /** A feed may target a segment of its own site (null: all subscribers). */
  async function checkSegment(site: SiteRow, segmentId: string | null | undefined): Promise<void> {
    if (segmentId) await requireSegmentOfSite(db, site.id, segmentId);
  }

  async function withToday(row: RssFeedRow, site?: SiteRow): Promise<RssFeed> {
    const timezone = (site ?? (await repo.findSite(db, row.site_id)))?.timezone ?? 'UTC';
    const counts = await repo.countTodayOfFeeds(db, [{ feedId: row.id, localDay: localDayOf(clock.now(), timezone) }]);
    return toRssFeedResponse(row, counts.get(row.id));
  }

  return {
    async list(userId: string, siteId: string): Promise<RssFeed[]> {
      const site = await requireSiteRole(ctx, userId, siteId, 'viewer');
      const rows = await repo.listFeedsOfSite(db, siteId);
      const localDay = localDayOf(clock.now(), site.timezone);
      const counts = await repo.countTodayOfFeeds(
        db,
        rows.map((r) => ({ feedId: r.id, localDay })),
      );
      return rows.map((row) => toRssFeedResponse(row, counts.get(row.id)));
    },

    async get(userId: string, id: string): Promise<RssFeed> {
      return withToday(await ownedFeed(userId, id, 'viewer'));
    },

    async create(userId: string, siteId: string, body: CreateRssFeedInput): Promise<RssFeed> {
      const site = await requireSiteRole(ctx, userId, siteId, 'editor');
      await checkSegment(site, body.segmentId);
      const now = clock.now();
      const isActive = body.is_active ?? true;
      const row: RssFeedRow = {
        id: crypto.randomUUID(),
        site_id: site.id,
        name: body.name,
        url: body.url,
        icon_url: body.iconUrl ?? null,
        utm_source: body.utmParams?.utm_source ?? null,
        utm_medium: body.utmParams?.utm_medium ?? null,
        utm_campaign: body.utmParams?.utm_campaign ?? null,
        show_action_buttons: flag(body.showActionButtons),
        create_draft: flag(body.createDraft),
        max_pushes_per_day: body.maxPushesPerDay,
        segment_id: body.segmentId ?? null,
        is_active: flag(isActive),
        baseline_recorded: 0,
        etag: null,
        last_modified: null,
        last_fetched_at: null,
        last_item_guid: null,
        last_error: null,
        // The first check (which only records what the feed already lists) runs right away.
        next_check_at: now,
        poll_lease_until: null,
        created_at: now,
        updated_at: now,
      };
      await db.transaction().execute(async (trx) => {
        // RSS_FEEDS_PER_USER counts the feeds of the sites an account owns (sites.user_id), whoever adds them.
        await repo.lockFeedsOfUser(trx, ctx.dbKind, site.user_id);
        if ((await repo.countFeedsOfUser(trx, site.user_id)) >= config.rssFeedsPerUser) throw feedLimitReached(config.rssFeedsPerUser);
        await repo.insertFeed(trx, row);
        await recordAudit(ctx, { siteId: site.id, actor: { userId }, action: 'created', subject: { type: 'rss_feed', id: row.id, label: row.name } }, trx);
      });
      if (isActive) ctx.wakeScheduler();
      return toRssFeedResponse(row);
    },

    /**
     * Spec §7 PATCH: `{ is_active }` pauses or activates; the other fields edit.
     * A new address, or activating a paused feed, starts the feed over: the
     * next check records what it lists without sending, so neither another
     * feed's back catalogue nor what was published while paused is pushed.
     */
    async update(userId: string, id: string, body: UpdateRssFeedInput): Promise<RssFeed> {
      const existing = await ownedFeed(userId, id, 'editor');
      const site = await requireSiteRole(ctx, userId, existing.site_id, 'editor');
      if (body.segmentId !== undefined) await checkSegment(site, body.segmentId);
      const now = clock.now();
      const changes: Updateable<RssFeedsTable> = { updated_at: now };
      if (body.name !== undefined) changes.name = body.name;
      if (body.iconUrl !== undefined) changes.icon_url = body.iconUrl;
      if (body.utmParams !== undefined) {
        changes.utm_source = body.utmParams?.utm_source ?? null;
        changes.utm_medium = body.utmParams?.utm_medium ?? null;
        changes.utm_campaign = body.utmParams?.utm_campaign ?? null;
      }
      if (body.showActionButtons !== undefined) changes.show_action_buttons = flag(body.showActionButtons);
      if (body.createDraft !== undefined) changes.create_draft = flag(body.createDraft);
      if (body.maxPushesPerDay !== undefined) changes.max_pushes_per_day = body.maxPushesPerDay;
      if (body.segmentId !== undefined) changes.segment_id = body.segmentId;
      if (body.is_active !== undefined) changes.is_active = flag(body.is_active);

      const urlChanged = body.url !== undefined && body.url !== existing.url;
      const activated = body.is_active === true && existing.is_active === 0;
      if (urlChanged) {
        changes.url = body.url;
        changes.last_item_guid = null;
        changes.last_error = null;
        changes.last_fetched_at = null;
      }
      if (urlChanged || activated) {
        Object.assign(changes, { baseline_recorded: 0, etag: null, last_modified: null, next_check_at: now });
      }
      const { is_active: isActive, baseline_recorded: _b, etag: _e, last_modified: _m, next_check_at: _n, last_item_guid: _g, last_error: _l, last_fetched_at: _f, ...edited } = changes;
      const fields = changedFields(existing, edited, { icon_url: 'iconUrl', show_action_buttons: 'showActionButtons', create_draft: 'createDraft', max_pushes_per_day: 'maxPushesPerDay', segment_id: 'segmentId' });
      await db.transaction().execute(async (trx) => {
        await repo.updateFeed(trx, id, changes);
        const audit = { siteId: existing.site_id, actor: { userId }, subject: { type: 'rss_feed' as const, id, label: changes.name ?? existing.name } };
        if (fields.length > 0) await recordAudit(ctx, { ...audit, action: 'updated', changedFields: [...new Set(fields)] }, trx);
        if (isActive !== undefined && isActive !== existing.is_active) await recordAudit(ctx, { ...audit, action: 'toggled', detail: { active: isActive === 1 } }, trx);
      });
      const nextActive = body.is_active ?? existing.is_active === 1;
      if (nextActive && (urlChanged || activated)) ctx.wakeScheduler();
      return withToday((await repo.findFeed(db, id))!, site);
    },

    async remove(userId: string, id: string): Promise<void> {
      const existing = await ownedFeed(userId, id, 'editor');
      await db.transaction().execute(async (trx) => {
        await repo.deleteFeed(trx, id);
        await recordAudit(ctx, { siteId: existing.site_id, actor: { userId }, action: 'deleted', subject: { type: 'rss_feed', id, label: existing.name } }, trx);
      });
    },

    /** "Check now": checks the feed in this request and answers what happened; limited per feed and per user. */
    async checkNow(userId: string, id: string): Promise<{ check: RssFeedCheck; feed: RssFeed }> {
      const existing = await ownedFeed(userId, id, 'editor');
      if (!existing.is_active) throw conflict('This feed is paused. Activate it to check it.');
      const feedKey = await countManualCheck(userId, existing);
      const attempt = await checkFeed({ db, clock, config, log: ctx.log, wakeScheduler: () => ctx.wakeScheduler(), outbound }, id, 'manual');
      if (attempt.status === 'busy') {
        // A scheduled check was running: this click fetched nothing, so it does not use the feed's minute.
        await limiter.reset(feedKey);
        throw conflict('This feed is being checked right now. Try again in a moment.');
      }
      if (attempt.status === 'paused') throw conflict('This feed is paused. Activate it to check it.');
      if (attempt.status === 'gone') throw notFound('RSS feed');
      return { check: attempt.check, feed: await withToday((await repo.findFeed(db, id))!) };
    },
  };
}
