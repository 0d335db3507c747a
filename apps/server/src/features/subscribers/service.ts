import crypto from 'node:crypto';
import { STALE_SUBSCRIBER_DAYS, UNKNOWN, type StaleCleanup, type SubscriberRemovedCause, type StaleSubscribersSummary, type SubscribeBody, type Subscriber, type SubscribersList } from '@herald/contracts';
import type { Kysely, Transaction } from 'kysely';
import type { AppContext } from '../../context';
import { isUniqueViolation } from '../../db/database';
import type { Database, SubscriberRow } from '../../db/schema';
import { countryOfAddress } from '../../platform/country-of-address';
import { badRequest, HttpError, notFound } from '../../platform/errors';
import { iso, isoOrNull } from '../../platform/responses';
import { addToHourlyStats, adjustActiveSubscriberCount } from '../analytics/site-counters';
import { checkSiteRole } from '../../platform/site-roles';
import { recordAudit } from '../audit-log/record';
import { requireSiteRole } from '../sites/service';
import { countryCodesNamed } from './country-names';
import { listCursorOf, subscriberListPage, subscriberListPageAt, subscriberListTotal } from './list-page';
import { resolveSearch } from './search';
import { runSubscriberCreatedHooks, runSubscriberRemovedHooks, type ConcernedSites, type SubscriberRemovedHook } from './hooks';
import { endpointHash } from '../../delivery/push-endpoints';
import { checkPushSubscription, knownTimezone, languageTag } from './push-subscription';
import * as repo from './repository';
import { groupCommit } from '../../db/group-commit';
import { SubscribeTally } from './subscribe-batches';
import { USER_AGENT_MAX_LENGTH, describeUserAgent } from './user-agent';
import { tagsOfSubscribers } from '../../db/subscriber-tags';

type Db = Kysely<Database> | Transaction<Database>;

/** PostgreSQL's deadlock_detected: the transaction was rolled back and may simply be tried again. */
export function isDeadlock(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '40P01';
}

/** The API shape of a subscriber (spec §3). Endpoint and keys never leave the server. */
export function toSubscriberResponse(row: SubscriberRow, tags: string[]): Subscriber {
  return {
    id: row.id,
    browser: row.browser ?? UNKNOWN,
    os: row.os ?? UNKNOWN,
    country: row.country ?? UNKNOWN,
    metadata: { user_agent: row.user_agent },
    language: row.language,
    timezone: row.timezone,
    subscribed_at: iso(row.subscribed_at),
    last_seen_at: isoOrNull(row.last_seen_at),
    unsubscribed_at: isoOrNull(row.unsubscribed_at),
    is_active: row.is_active === 1,
    tags,
    test_device: row.test_device === 1,
    test_device_name: row.test_device === 1 ? row.test_device_name : null,
  };
}

// ---------------------------------------------------------------------------
// Active-state changes. Each one keeps sites.active_subscriber_count exact and
// adds to stats_hourly, in the transaction that made the change (subscribes
// add theirs up and write them at the end of it: subscribe-batches.ts). The change
// itself is a conditional UPDATE (… WHERE is_active = 0/1), so of two
// concurrent calls only one sees a row change and counts it.

async function countDeactivation(trx: Db, siteId: string, now: number): Promise<void> {
  await adjustActiveSubscriberCount(trx, siteId, -1);
  await addToHourlyStats(trx, siteId, now, { unsubscribed: 1 });
}

/** Runs `work` in a transaction, or inside the caller's when `db` already is one. */
function inTransaction<T>(db: Db, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db as Transaction<Database>) : (db as Kysely<Database>).transaction().execute(work);
}

/** Why a subscriber is deactivated, and who is told (subscriber-removed hooks, in the same transaction). */
interface Removal {
  cause: SubscriberRemovedCause;
  hooks: readonly SubscriberRemovedHook[] | undefined;
}

/** Marks a subscriber inactive if it is active; true when this call did it (counters adjusted, removed hooks run). */
async function deactivate(db: Db, subscriberId: string, now: number, removal: Removal, expectedEndpointHash?: string): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    const changed = await repo.deactivateSubscriber(trx, subscriberId, now, expectedEndpointHash);
    if (!changed) return false;
    await countDeactivation(trx, changed.siteId, now);
    await runSubscriberRemovedHooks(removal.hooks, trx, { subscriberId, siteId: changed.siteId, cause: removal.cause, removedAt: now });
    return true;
  });
}

/**
 * For the delivery engine's result transaction: markSubscriberGone for many
 * subscribers of one site at once, except that the counting
 * (sites.active_subscriber_count, stats_hourly.unsubscribed) is left to the
 * caller, who adds it with the run's counters (addToRunCounters) so the
 * transaction takes its rows in the one order every writer uses. Returns how
 * many it deactivated.
 */
export async function deactivateGoneSubscribers(
  trx: Transaction<Database>,
  gone: Array<{ subscriberId: string; endpointHashSentTo: string }>,
  now: number,
  removedHooks?: readonly SubscriberRemovedHook[],
): Promise<number> {
  let deactivated = 0;
  for (const { subscriberId, endpointHashSentTo } of gone) {
    const changed = await repo.deactivateSubscriber(trx, subscriberId, now, endpointHashSentTo);
    if (!changed) continue;
    deactivated += 1;
    await runSubscriberRemovedHooks(removedHooks, trx, { subscriberId, siteId: changed.siteId, cause: 'gone', removedAt: now });
  }
  return deactivated;
}

// ---------------------------------------------------------------------------

/** The list's filters (spec §2 Subscribers: status and search), as the list and the CSV export apply them. */
export function subscriberFilters(query: { is_active?: boolean; search?: string }): repo.SubscriberFilters {
  const search = query.search?.trim().toLowerCase() || undefined;
  return { isActive: query.is_active, search, searchCountryCodes: search ? countryCodesNamed(search) : undefined };
}

export interface SubscribeClient {
  /** request.ip: the socket address, or the forwarded client behind a trusted proxy. */
  address: string;
  userAgent: string | undefined;
}

export interface SubscribeResult {
  subscriber: { id: string };
  /** True when this call stored a new subscriber (answered 201, subscriber-created hooks ran). */
  created: boolean;
}

/** A checked subscription, ready to be stored. */
interface SubscriptionWrite {
  siteId: string;
  endpoint: string;
  hash: string;
  /** The endpoint the browser had before (pushsubscriptionchange), hashed. */
  previousHash: string | undefined;
  refresh: repo.SubscriberRefresh;
  now: number;
  prompt: string | undefined;
  /** The VAPID public key the browser named (base64url), if it named one; else the site's primary key. */
  namedKey: string | undefined;
}

/** The key a subscription is made with: a row of site_vapid_keys, and whether the browser named it. */
interface VapidKeyChoice {
  id: string;
  named: boolean;
}

/** What a subscribe transaction wrote, answer by answer, and the sites each subscriber-created hook has work for. */
interface Written {
  results: Array<SubscribeResult | HttpError>;
  concerned: ConcernedSites;
}

/** A key as the browser may give it (standard base64, padded or not) in the stored base64url form. */
function base64url(key: string): string {
  return key.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

const DAY_MS = 86_400_000;
/** Stale subscribers are deactivated this many per transaction: a big clean-up never holds the table long. */
const STALE_CLEANUP_BATCH = 1000;

export function createSubscribersService(ctx: AppContext) {
  const { db, clock, config } = ctx;

  async function staleSummary(siteId: string, now: number): Promise<StaleSubscribersSummary> {
    const since = now - STALE_SUBSCRIBER_DAYS * DAY_MS;
    const [active, stale] = await Promise.all([repo.countActiveSubscribers(db, siteId), repo.countStaleSubscribers(db, siteId, since)]);
    return { days: STALE_SUBSCRIBER_DAYS, since: iso(since), active, stale };
  }

  /**
   * The key each subscription is made with, or why it cannot be stored (404:
   * no such site; 400: a key the site does not have), and the sites each
   * subscriber-created hook has work for: one statement for all their sites.
   */
  async function chooseKeys(trx: Db, subscriptions: readonly SubscriptionWrite[]): Promise<{ keys: Array<VapidKeyChoice | HttpError>; concerned: ConcernedSites }> {
    const { keysBySite, concerned } = await repo.sitesAndKeys(trx, [...new Set(subscriptions.map((subscription) => subscription.siteId))], ctx.subscriberCreatedHooks ?? []);
    const keys = subscriptions.map(({ siteId, namedKey }) => {
      const keys = keysBySite.get(siteId);
      if (!keys) return notFound('Site');
      const key = namedKey === undefined ? keys.find((candidate) => candidate.isPrimary) : keys.find((candidate) => candidate.publicKey === namedKey);
      if (key) return { id: key.id, named: namedKey !== undefined };
      if (namedKey !== undefined) return badRequest('vapid_public_key is not one of this site’s VAPID keys: subscribe with the key in the snippet (data-vapid-key)', 'unknown_vapid_key');
      return notFound('Site');
    });
    return { keys, concerned };
  }

  /** The row a subscription stores when its endpoint is new to the site: it takes the key it was made with. */
  function newSubscriberRow(subscription: SubscriptionWrite, vapidKey: VapidKeyChoice): repo.NewSubscriber {
    const { siteId, endpoint, hash, refresh, now } = subscription;
    return {
      id: crypto.randomUUID(),
      site_id: siteId,
      endpoint,
      endpoint_hash: hash,
      ...refresh,
      vapid_key_id: vapidKey.id,
      external_id: null,
      external_id_verified: 0,
      is_active: 1,
      subscribed_at: now,
      unsubscribed_at: null,
    };
  }

  /** A subscriber came in (new, or back after unsubscribing): the active count, the hour, and the prompt's conversion; a refresh is not one. */
  function countArrival(subscription: SubscriptionWrite, tally: SubscribeTally): void {
    tally.activation(subscription.siteId, subscription.now);
    if (subscription.prompt) tally.conversion(subscription.siteId, subscription.now, subscription.prompt);
  }

  /**
   * A subscription whose endpoint the site has: reactivated if inactive, else
   * refreshed. A known endpoint changes key only when the browser named it
   * (an endpoint is bound to the key it was made with).
   */
  async function updateKnownSubscription(trx: Db, subscription: SubscriptionWrite, vapidKey: VapidKeyChoice, tally: SubscribeTally): Promise<SubscribeResult> {
    const { siteId, hash, refresh } = subscription;
    const known = vapidKey.named ? { ...refresh, vapid_key_id: vapidKey.id } : refresh;
    const reactivatedId = await repo.reactivateSubscriber(trx, siteId, hash, known);
    if (reactivatedId) {
      countArrival(subscription, tally);
      return { subscriber: { id: reactivatedId }, created: false };
    }
    const refreshedId = await repo.refreshSubscriber(trx, siteId, hash, known);
    // Only a concurrent deletion of the site (cascading to its subscribers) gets here.
    if (!refreshedId) throw notFound('Site');
    return { subscriber: { id: refreshedId }, created: false };
  }

  /**
   * Several subscriptions (no endpoint moves) in the caller's transaction,
   * stored as they would be one after another: the first subscription of
   * each endpoint is offered to one multi-row insert (a statement for all the
   * batch's new subscribers, in key order), then the others (endpoints the
   * site had, and repeats in the batch) are updated in order.
   */
  async function writeSubscriptions(
    trx: Db,
    subscriptions: readonly SubscriptionWrite[],
    keys: ReadonlyArray<VapidKeyChoice | HttpError>,
    tally: SubscribeTally,
  ): Promise<Array<SubscribeResult | HttpError>> {
    const firstRows = new Map<string, repo.NewSubscriber>();
    subscriptions.forEach((subscription, index) => {
      const key = keys[index]!;
      const endpointKey = `${subscription.siteId}\u0000${subscription.hash}`;
      if (!(key instanceof HttpError) && !firstRows.has(endpointKey)) firstRows.set(endpointKey, newSubscriberRow(subscription, key));
    });
    const inserted = await repo.insertSubscribersIfNew(trx, ctx.dbKind, [...firstRows.values()]);
    const results = new Array<SubscribeResult | HttpError>(subscriptions.length);
    const offered = new Set<string>();
    const updates: Array<{ index: number; subscription: SubscriptionWrite; key: VapidKeyChoice }> = [];
    for (const [index, subscription] of subscriptions.entries()) {
      const key = keys[index]!;
      if (key instanceof HttpError) {
        results[index] = key;
        continue;
      }
      const endpointKey = `${subscription.siteId}\u0000${subscription.hash}`;
      const row = firstRows.get(endpointKey)!;
      if (!offered.has(endpointKey) && inserted.has(row.id)) {
        offered.add(endpointKey);
        countArrival(subscription, tally);
        results[index] = { subscriber: { id: row.id }, created: true };
        continue;
      }
      offered.add(endpointKey);
      updates.push({ index, subscription, key });
    }
    if (updates.length && ctx.dbKind === 'postgres') {
      // The known subscribers are locked by number first (lock-order.ts), as a batch of beacons locks them: two
      // batches refreshing the same subscribers in their arrival orders waited on each other crosswise.
      await repo.lockSubscribersByEndpoint(trx, updates.map(({ subscription }) => ({ siteId: subscription.siteId, hash: subscription.hash })));
    }
    // In arrival order: repeats of an endpoint in the batch are written one after the other.
    for (const { index, subscription, key } of updates) results[index] = await updateKnownSubscription(trx, subscription, key, tally);
    return results;
  }

  async function upsertSubscription(trx: Db, subscription: SubscriptionWrite, vapidKey: VapidKeyChoice, tally: SubscribeTally): Promise<SubscribeResult> {
    const { siteId, endpoint, hash, previousHash, refresh, now } = subscription;
    if (previousHash && previousHash !== hash) {
      const previous = await repo.findSubscriberByEndpointHash(trx, siteId, previousHash);
      if (previous) {
        const current = await repo.findSubscriberByEndpointHash(trx, siteId, hash);
        if (current) {
          // The new endpoint was stored already (the page re-subscribed before
          // the worker reported the change). The old endpoint is dead: the
          // push service replaced it, so that subscriber goes inactive, and
          // what the browser was (its tags, who it is, a test device) goes on
          // with the new one, as a move keeps it (docs/web-push.md).
          if (previous.id !== current.id) {
            await repo.carryOverIdentity(trx, previous, current);
            await deactivate(trx, previous.id, now, { cause: 'gone', hooks: ctx.subscriberRemovedHooks }, previousHash);
          }
        } else if (await repo.moveSubscriberEndpoint(trx, previous.id, endpoint, hash, { ...refresh, vapid_key_id: vapidKey.id })) {
          // pushsubscriptionchange: the same subscriber, a new endpoint (and the key it was made with).
          if (await repo.activateSubscriber(trx, previous.id)) tally.activation(siteId, now);
          return { subscriber: { id: previous.id }, created: false };
        }
        // Else (a new endpoint already stored, or the subscriber erased meanwhile: its row gone once the erasure
        // committed) the new endpoint is stored or refreshed below.
      }
    }

    const row = newSubscriberRow(subscription, vapidKey);
    if ((await repo.insertSubscribersIfNew(trx, ctx.dbKind, [row])).has(row.id)) {
      countArrival(subscription, tally);
      return { subscriber: { id: row.id }, created: true };
    }
    return updateKnownSubscription(trx, subscription, vapidKey, tally);
  }

  /** One subscription in its own transaction, with its counters. */
  async function writeSubscription(subscription: SubscriptionWrite): Promise<Written> {
    const attempt = () =>
      db.transaction().execute(async (trx): Promise<Written> => {
        const { keys, concerned } = await chooseKeys(trx, [subscription]);
        const key = keys[0]!;
        if (key instanceof HttpError) return { results: [key], concerned };
        const tally = new SubscribeTally();
        const result = await upsertSubscription(trx, subscription, key, tally);
        await tally.write(trx, ctx.dbKind);
        return { results: [result], concerned };
      });
    try {
      return await attempt();
    } catch (error) {
      // PostgreSQL only: a concurrent call stored the new endpoint between
      // our read and our move, or two calls for the same browser's old and
      // new endpoints locked rows in opposite order. The retry sees the
      // committed state and takes the other branch.
      if (!isUniqueViolation(error) && !isDeadlock(error)) throw error;
      return attempt();
    }
  }

  /**
   * After a write committed: the subscriber-created hooks, once for the new
   * subscribers among these (hooks.ts; a failing hook is logged, never fails
   * the subscribes, which are stored).
   */
  async function afterCommit(subscriptions: readonly SubscriptionWrite[], { results, concerned }: Written): Promise<ReadonlyArray<SubscribeResult | HttpError>> {
    const created = results.flatMap((result, index) =>
      !(result instanceof HttpError) && result.created ? [{ subscriberId: result.subscriber.id, siteId: subscriptions[index]!.siteId, subscribedAt: subscriptions[index]!.now }] : [],
    );
    await runSubscriberCreatedHooks(ctx.subscriberCreatedHooks, created, concerned, ctx.log);
    return results;
  }

  async function writeAlone(subscription: SubscriptionWrite): Promise<SubscribeResult | HttpError> {
    return (await afterCommit([subscription], await writeSubscription(subscription)))[0]!;
  }

  /** Subscriptions arriving together, in one transaction with their counters added up (subscribe-batches.ts). */
  const writeInBatch = groupCommit<SubscriptionWrite, SubscribeResult | HttpError>(
    async (subscriptions) => {
      const written = await db.transaction().execute(async (trx): Promise<Written> => {
        const { keys, concerned } = await chooseKeys(trx, subscriptions);
        const tally = new SubscribeTally();
        const results = await writeSubscriptions(trx, subscriptions, keys, tally);
        await tally.write(trx, ctx.dbKind);
        return { results, concerned };
      });
      return [...(await afterCommit(subscriptions, written))];
    },
    writeAlone,
    // PostgreSQL: a few batches at once on the pool's connections; a batch
    // locks the shared counter rows only at its end, until its commit.
    // SQLite has one connection: one batch at a time.
    { concurrency: ctx.dbKind === 'postgres' ? 4 : 1 },
  );

  return {
    /**
     * Public subscribe (called by the SDK): stores a new subscriber, or
     * refreshes the known endpoint (keys, metadata, last seen; reactivated if
     * inactive), or moves the subscriber of `previous_endpoint` to the new
     * endpoint keeping its id. Subscriber-created hooks run after commit.
     */
    async subscribe(siteId: string, input: SubscribeBody, client: SubscribeClient): Promise<SubscribeResult> {
      const checked = checkPushSubscription(input.subscription, config.extraPushOrigins);
      const namedKey = input.vapid_public_key?.trim() ? base64url(input.vapid_public_key.trim()) : undefined;

      const now = clock.now();
      const userAgent = client.userAgent?.slice(0, USER_AGENT_MAX_LENGTH) || null;
      const { browser, os } = describeUserAgent(userAgent ?? undefined);
      const refresh: repo.SubscriberRefresh = {
        p256dh: checked.p256dh,
        auth: checked.auth,
        browser,
        os,
        country: countryOfAddress(client.address) ?? UNKNOWN,
        language: languageTag(input.language),
        timezone: knownTimezone(input.timezone),
        user_agent: userAgent,
        last_seen_at: now,
        updated_at: now,
      };
      const hash = endpointHash(checked.endpoint);
      const previousEndpoint = input.previous_endpoint?.trim();
      const previousHash = previousEndpoint ? endpointHash(previousEndpoint) : undefined;

      const subscription: SubscriptionWrite = { siteId, endpoint: checked.endpoint, hash, previousHash, refresh, now, prompt: input.prompt ?? undefined, namedKey };
      // A moved endpoint (rare) may deactivate another subscriber, changing counters mid-transaction: it goes alone.
      // The site and its key are read with the write (chooseKeys): a site that is not there answers 404 from there.
      const result = previousHash ? await writeAlone(subscription) : await writeInBatch(subscription);
      if (result instanceof HttpError) throw result;
      return result;
    },

    /** Public unsubscribe by endpoint (the SDK after `PushSubscription.unsubscribe()`). Already inactive is fine. */
    async unsubscribeByEndpoint(siteId: string, endpoint: string): Promise<{ id: string }> {
      if (!(await repo.siteExists(db, siteId))) throw notFound('Site');
      const hash = endpointHash(endpoint.trim());
      const row = await repo.findSubscriberByEndpointHash(db, siteId, hash);
      if (!row) throw notFound('Subscriber');
      // Only while it still has this endpoint: a subscriber moved to a new one meanwhile (pushsubscriptionchange) stays.
      await deactivate(db, row.id, clock.now(), { cause: 'unsubscribed', hooks: ctx.subscriberRemovedHooks }, hash);
      return { id: row.id };
    },

    async list(
      userId: string,
      siteId: string,
      query: { is_active?: boolean; search?: string; page: number; limit: number; after?: string; before?: string },
    ): Promise<SubscribersList> {
      await requireSiteRole(ctx, userId, siteId, 'viewer');
      const filters = await resolveSearch(db, siteId, subscriberFilters(query));
      const total = await subscriberListTotal(db, siteId, filters);
      const rows =
        query.after || query.before
          ? await subscriberListPageAt(db, siteId, filters, query, query.limit)
          : await subscriberListPage(db, siteId, filters, (query.page - 1) * query.limit, query.limit, total);
      const tags = await tagsOfSubscribers(
        db,
        rows.map((row) => row.id),
      );
      const cursors = { next: rows.length ? listCursorOf(rows[rows.length - 1]!) : null, previous: rows.length ? listCursorOf(rows[0]!) : null };
      return { subscribers: rows.map((row) => toSubscriberResponse(row, tags.get(row.id) ?? [])), total, page: query.page, limit: query.limit, cursors };
    },

    async get(userId: string, siteId: string, subscriberId: string): Promise<Subscriber> {
      await requireSiteRole(ctx, userId, siteId, 'viewer');
      const row = await repo.findSubscriberById(db, subscriberId);
      if (!row || row.site_id !== siteId) throw notFound('Subscriber');
      return withTags(row);
    },

    /** Spec §9 best practice: how many active subscribers got no delivered push for 90+ days. */
    async staleSubscribers(userId: string, siteId: string): Promise<StaleSubscribersSummary> {
      await requireSiteRole(ctx, userId, siteId, 'viewer');
      return staleSummary(siteId, clock.now());
    },

    /**
     * The one-click clean-up: deactivates the stale subscribers, in batches,
     * each batch with its counters (active count, hourly unsubscribed) in its
     * own transaction. Answers the counts before and after.
     */
    async deactivateStaleSubscribers(userId: string, siteId: string): Promise<StaleCleanup> {
      // Removing subscribers is the admin's, as for DELETE /subscribers/{id}.
      const site = await requireSiteRole(ctx, userId, siteId, 'admin');
      const now = clock.now();
      const before = await staleSummary(siteId, now);
      const since = now - STALE_SUBSCRIBER_DAYS * DAY_MS;
      let deactivated = 0;
      // Bounded: at most as many batches as there were stale subscribers to begin with, plus one.
      for (let batch = 0; batch <= Math.ceil(before.stale / STALE_CLEANUP_BATCH); batch++) {
        const count = await db.transaction().execute(async (trx) => {
          const changedIds = await repo.deactivateStaleSubscribers(trx, siteId, since, now, STALE_CLEANUP_BATCH);
          const changed = changedIds.length;
          if (changed) {
            await adjustActiveSubscriberCount(trx, siteId, -changed);
            await addToHourlyStats(trx, siteId, now, { unsubscribed: changed });
          }
          for (const subscriberId of changedIds) await runSubscriberRemovedHooks(ctx.subscriberRemovedHooks, trx, { subscriberId, siteId, cause: 'removed', removedAt: now });
          return changed;
        });
        deactivated += count;
        if (count < STALE_CLEANUP_BATCH) break;
      }
      await recordAudit(ctx, { siteId, actor: { userId }, action: 'deleted', subject: { type: 'subscriber', id: null, label: `Stale subscribers of ${site.name}` }, detail: { deactivated } });
      return { deactivated, before, after: await staleSummary(siteId, now) };
    },

    /** Spec §4: removal is an unsubscribe — the row stays, inactive. Admin or higher: it is the audience itself. */
    async remove(userId: string, subscriberId: string): Promise<Subscriber> {
      const row = checkSiteRole(await repo.findSubscriberOfUser(db, userId, subscriberId), 'admin', 'Subscriber');
      await db.transaction().execute(async (trx) => {
        // Recorded with the change, and only when there was one: removing an inactive subscriber again changes nothing.
        if (!(await deactivate(trx, row.id, clock.now(), { cause: 'removed', hooks: ctx.subscriberRemovedHooks }))) return;
        await recordAudit(ctx, { siteId: row.site_id, actor: { userId }, action: 'deleted', subject: { type: 'subscriber', id: row.id } }, trx);
      });
      return withTags((await repo.findSubscriberById(db, row.id)) ?? row);
    },

    async replaceTags(userId: string, subscriberId: string, tags: string[]): Promise<Subscriber> {
      const row = checkSiteRole(await repo.findSubscriberOfUser(db, userId, subscriberId), 'editor', 'Subscriber');
      await db.transaction().execute(async (trx) => {
        // The subscriber's row first: on PostgreSQL two replacements at once then take turns (each deletes what the
        // other inserted) instead of merging their tags or colliding on the (subscriber, tag) key.
        await repo.touchSubscriber(trx, row.id, clock.now());
        await repo.replaceSubscriberTags(trx, row.id, row.site_id, tags);
        await recordAudit(ctx, { siteId: row.site_id, actor: { userId }, action: 'updated', subject: { type: 'subscriber', id: row.id }, changedFields: ['tags'], detail: { tags } }, trx);
      });
      return withTags((await repo.findSubscriberById(db, row.id)) ?? row);
    },
  };

  async function withTags(row: SubscriberRow): Promise<Subscriber> {
    const tags = await tagsOfSubscribers(db, [row.id]);
    return toSubscriberResponse(row, tags.get(row.id) ?? []);
  }
}

export type SubscribersService = ReturnType<typeof createSubscribersService>;
