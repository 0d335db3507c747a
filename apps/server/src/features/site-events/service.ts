import crypto from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import {
  SUBSCRIBER_TAG_MAX_COUNT,
  type ApiEventBody,
  type ApiSubscriberTagsBody,
  type EventReceipt,
  type PublicIdentifyBody,
  type PublicTagsBody,
  type PublicTrackBody,
  type SiteEvent,
} from '@herald/contracts';
import type { AppContext } from '../../context';
import type { Database, SiteEventRow, SiteEventSource, SiteRow } from '../../db/schema';
import type { DueWorkSource } from '../../jobs/scheduler';
import { badRequest, HttpError, notFound } from '../../platform/errors';
import { identityHashMatches } from '../../platform/identity-hash';
import { iso } from '../../platform/responses';
import { parseStringListColumn } from '../../platform/string-list-column';
import { recordAudit } from '../audit-log/record';
import { requireSiteRole } from '../sites/service';
import { endpointHash } from '../../delivery/push-endpoints';
import * as repo from './repository';

type Db = Kysely<Database> | Transaction<Database>;
type IdentityRules = Pick<SiteRow, 'identity_secret' | 'identity_verification' | 'server_only_tags'>;

/**
 * docs/security.md, "Identity verification": whether an external id claimed
 * from a browser is signed by the site's backend. A hash that is given must
 * match, whatever the site's setting (a wrong one is a bug the site wants to
 * hear about); no hash is refused only when the site verifies identities.
 * True when the claim is signed.
 */
function checkIdentityClaim(site: IdentityRules, externalId: string, claimedHash: string | undefined): boolean {
  if (claimedHash !== undefined) {
    if (!site.identity_secret || !identityHashMatches(site.identity_secret, externalId, claimedHash)) {
      throw new HttpError(
        403,
        'identity_hash does not match external_id: compute HMAC-SHA256 of the external id with the site’s current identity secret (Settings → Automation) on your server, as lowercase hex',
        'identity_hash_mismatch',
      );
    }
    return true;
  }
  if (site.identity_verification === 1) {
    throw new HttpError(
      401,
      'identity_hash is required: this site verifies identities. Compute HMAC-SHA256 of the external id with the site’s identity secret on your server and call herald.identify(id, hash)',
      'identity_hash_required',
    );
  }
  return false;
}

/** Tags the site keeps for its backend: the browser may neither add nor remove them. */
function refuseServerOnlyTags(site: IdentityRules, tags: string[]): void {
  const serverOnly = new Set(parseStringListColumn(site.server_only_tags));
  const refused = [...new Set(tags.filter((tag) => serverOnly.has(tag)))];
  if (!refused.length) return;
  throw new HttpError(
    403,
    `${refused.length === 1 ? 'This tag is' : 'These tags are'} set by the site’s server only: ${refused.join(', ')}. Set ${refused.length === 1 ? 'it' : 'them'} with POST /api/v1/sites/{siteId}/subscribers/tags and a site API key`,
    'server_only_tag',
  );
}

/** Removals first, then additions; refuses (rolling back with the caller's transaction) more than SUBSCRIBER_TAG_MAX_COUNT tags. */
async function applyTagChange(trx: Db, siteId: string, subscriberId: string, change: { add?: string[]; remove?: string[] }, now: number): Promise<{ tags: string[]; changed: boolean }> {
  // The subscriber's row first: two changes of its tags at once take turns on PostgreSQL, as the tags API's do.
  await repo.touchSubscriber(trx, subscriberId, now);
  const before = await repo.tagsOfSubscriber(trx, subscriberId);
  await repo.removeTags(trx, subscriberId, [...new Set(change.remove ?? [])]);
  await repo.addTags(trx, subscriberId, siteId, [...new Set(change.add ?? [])]);
  const tags = await repo.tagsOfSubscriber(trx, subscriberId);
  if (tags.length > SUBSCRIBER_TAG_MAX_COUNT) throw badRequest(`a subscriber can have at most ${SUBSCRIBER_TAG_MAX_COUNT} tags`);
  return { tags, changed: tags.length !== before.length || tags.some((tag, index) => tag !== before[index]) };
}

/** One person rarely has more browsers than this; an external id shared wider is a site bug, not an audience. */
const MAX_SUBSCRIBERS_PER_EXTERNAL_ID = 100;

export function toSiteEventResponse(row: SiteEventRow): SiteEvent {
  return {
    id: row.id,
    event: row.name,
    source: row.source,
    subscriber_id: row.subscriber_id,
    external_id: row.external_id,
    data: row.data ? (JSON.parse(row.data) as Record<string, unknown>) : null,
    idempotency_key: row.idempotency_key,
    subscribers: row.subscriber_count,
    triggered: row.triggered_count,
    received_at: iso(row.received_at),
  };
}

interface IncomingEvent {
  siteId: string;
  source: SiteEventSource;
  name: string;
  /** Who the event is about: the key an idempotency key is scoped to. */
  target: { subscriberId: string } | { externalId: string };
  subscriberIds: string[];
  subscriberId: string | null;
  externalId: string | null;
  data: Record<string, unknown> | undefined;
  idempotencyKey: string | undefined;
}

export function createSiteEventsService(ctx: Pick<AppContext, 'db' | 'clock' | 'wakeScheduler' | 'onSiteEvent'>) {
  const { db, clock } = ctx;

  async function requireSite(siteId: string): Promise<void> {
    if (!(await repo.siteExists(db, siteId))) throw notFound('Site');
  }

  async function identityRulesOf(siteId: string): Promise<IdentityRules> {
    const site = await repo.findSiteIdentityRules(db, siteId);
    if (!site) throw notFound('Site');
    return site;
  }

  /** The browser's push endpoint names an active subscriber of the site (checked to exist), else 404. */
  async function activeSubscriberOfEndpoint(siteId: string, endpoint: string) {
    const subscriber = await repo.findActiveSubscriberByEndpointHash(db, siteId, endpointHash(endpoint));
    if (!subscriber) throw notFound('Subscriber');
    return subscriber;
  }

  /** Who an external id names: on a site that verifies identities, only browsers whose claim was signed. */
  async function subscribersOfExternalId(siteId: string, externalId: string) {
    const site = await identityRulesOf(siteId);
    return repo.findActiveSubscribersByExternalId(db, siteId, externalId, MAX_SUBSCRIBERS_PER_EXTERNAL_ID, {
      verifiedOnly: site.identity_verification === 1,
    });
  }

  /**
   * Stores the event and creates the runs it triggers, in one transaction. An
   * event repeating an idempotency key for the same target and event name is
   * stored and acted on once; the repeat answers `duplicate: true`.
   */
  async function receive(event: IncomingEvent): Promise<EventReceipt> {
    const now = clock.now();
    const id = crypto.randomUUID();
    const target = 'subscriberId' in event.target ? ['subscriber', event.target.subscriberId] : ['external', event.target.externalId];
    // One key per target and event name: an order number used as the key of both "purchase" and "order_shipped" is
    // two events. A JSON list, so parts holding ':' cannot run into each other ("signup" + "step:2" ≠ "signup:step" + "2").
    const dedupeScope = event.idempotencyKey === undefined ? null : JSON.stringify([...target, event.name, event.idempotencyKey]);
    const outcome = await db.transaction().execute(async (trx) => {
      const stored = await repo.insertEventIfNew(trx, {
        id,
        site_id: event.siteId,
        name: event.name,
        source: event.source,
        subscriber_id: event.subscriberId,
        external_id: event.externalId,
        data: event.data === undefined ? null : JSON.stringify(event.data),
        idempotency_key: event.idempotencyKey ?? null,
        dedupe_scope: dedupeScope,
        subscriber_count: event.subscriberIds.length,
        triggered_count: 0,
        received_at: now,
      });
      if (!stored) {
        const first = await repo.findEventByDedupeScope(trx, event.siteId, dedupeScope!);
        return { receipt: { id: first?.id ?? id, event: event.name, duplicate: true, subscribers: first?.subscriber_count ?? 0, triggered: 0 }, earliestDueAt: null };
      }
      const fired = await ctx.onSiteEvent(trx, {
        siteId: event.siteId,
        eventName: event.name,
        subscriberIds: event.subscriberIds,
        eventKey: event.idempotencyKey ?? id,
        receivedAt: now,
      });
      if (fired.created) await repo.setTriggeredCount(trx, id, fired.created);
      return {
        receipt: { id, event: event.name, duplicate: false, subscribers: event.subscriberIds.length, triggered: fired.created },
        earliestDueAt: fired.earliestDueAt,
      };
    });
    if (outcome.earliestDueAt !== null && outcome.earliestDueAt <= now) ctx.wakeScheduler();
    return outcome.receipt;
  }

  return {
    /** Browser SDK `herald.track(event, data, { idempotencyKey })`. */
    async trackFromBrowser(siteId: string, body: PublicTrackBody): Promise<EventReceipt> {
      await requireSite(siteId);
      const subscriber = await activeSubscriberOfEndpoint(siteId, body.endpoint);
      return receive({
        siteId,
        source: 'browser',
        name: body.event,
        target: { subscriberId: subscriber.id },
        subscriberIds: [subscriber.id],
        subscriberId: subscriber.id,
        externalId: subscriber.external_id,
        data: body.data,
        idempotencyKey: body.idempotency_key,
      });
    },

    /**
     * v1 API: an event from the site's backend about a subscriber id (404 when
     * it is not an active subscriber of the site) or an external id (every
     * active subscriber with it; none is fine: the event is stored and sends nothing).
     */
    async receiveFromApi(siteId: string, body: ApiEventBody): Promise<EventReceipt> {
      if (body.subscriber_id !== undefined) {
        const subscriber = await repo.findActiveSubscriberById(db, siteId, body.subscriber_id);
        if (!subscriber) throw notFound('Subscriber');
        return receive({
          siteId,
          source: 'api',
          name: body.event,
          target: { subscriberId: subscriber.id },
          subscriberIds: [subscriber.id],
          subscriberId: subscriber.id,
          externalId: subscriber.external_id,
          data: body.data,
          idempotencyKey: body.idempotency_key,
        });
      }
      const externalId = body.external_id!;
      const subscribers = await subscribersOfExternalId(siteId, externalId);
      return receive({
        siteId,
        source: 'api',
        name: body.event,
        target: { externalId },
        subscriberIds: subscribers.map((s) => s.id),
        subscriberId: subscribers.length === 1 ? subscribers[0]!.id : null,
        externalId,
        data: body.data,
        idempotencyKey: body.idempotency_key,
      });
    },

    /**
     * Browser SDK `herald.identify(externalId, identityHash)`: the site's own
     * user id for this browser's subscriber. The claim is checked before the
     * endpoint is looked up, so a forged one learns nothing about subscribers.
     */
    async identify(siteId: string, body: PublicIdentifyBody): Promise<{ id: string; external_id: string; verified: boolean }> {
      const verified = checkIdentityClaim(await identityRulesOf(siteId), body.external_id, body.identity_hash);
      const subscriber = await activeSubscriberOfEndpoint(siteId, body.endpoint);
      await repo.setExternalId(db, subscriber.id, body.external_id, verified, clock.now());
      return { id: subscriber.id, external_id: body.external_id, verified };
    },

    /** Browser SDK `herald.addTags` / `removeTags`: removals first, then additions; server-only tags are refused. */
    async changeTags(siteId: string, body: PublicTagsBody): Promise<{ id: string; tags: string[] }> {
      refuseServerOnlyTags(await identityRulesOf(siteId), [...(body.add ?? []), ...(body.remove ?? [])]);
      const subscriber = await activeSubscriberOfEndpoint(siteId, body.endpoint);
      const { tags } = await db.transaction().execute((trx) => applyTagChange(trx, siteId, subscriber.id, body, clock.now()));
      return { id: subscriber.id, tags };
    },

    /**
     * v1 API: tags set by the site's backend, server-only ones included, for
     * one subscriber (404 when it is not an active subscriber of the site) or
     * every active subscriber of an external id. All or nothing.
     */
    async changeTagsFromApi(siteId: string, body: ApiSubscriberTagsBody, apiKeyId: string): Promise<Array<{ id: string; tags: string[] }>> {
      let subscriberIds: string[];
      if (body.subscriber_id !== undefined) {
        const subscriber = await repo.findActiveSubscriberById(db, siteId, body.subscriber_id);
        if (!subscriber) throw notFound('Subscriber');
        subscriberIds = [subscriber.id];
      } else {
        subscriberIds = (await subscribersOfExternalId(siteId, body.external_id!)).map((s) => s.id);
      }
      const now = clock.now();
      return db.transaction().execute(async (trx) => {
        const results: Array<{ id: string; tags: string[]; changed: boolean }> = [];
        for (const id of subscriberIds) results.push({ id, ...(await applyTagChange(trx, siteId, id, body, now)) });
        // A call that changed nothing (the tags were already so) is no change to log.
        for (const { id } of results.filter((result) => result.changed)) {
          const detail = { add: body.add ?? [], remove: body.remove ?? [] };
          await recordAudit(ctx, { siteId, actor: { apiKeyId }, action: 'updated', subject: { type: 'subscriber', id }, changedFields: ['tags'], detail }, trx);
        }
        return results.map(({ id, tags }) => ({ id, tags }));
      });
    },

    /** Settings → Automation: the site's latest events, newest first. */
    async listRecent(userId: string, siteId: string, limit: number): Promise<SiteEvent[]> {
      await requireSiteRole(ctx, userId, siteId, 'viewer');
      return (await repo.listRecentEvents(db, siteId, limit)).map(toSiteEventResponse);
    },
  };
}

export type SiteEventsService = ReturnType<typeof createSiteEventsService>;

const RETENTION_SWEEP_EVERY_MS = 60 * 60_000;
const RETENTION_DELETE_BATCH = 5_000;

/**
 * A due-work source that deletes events older than SITE_EVENT_RETENTION_DAYS
 * (kept for the "recent events" list; run dedupe keys, which make sends
 * idempotent, stay with the runs),
 * at most once an hour per scheduler and in bounded batches. Deleting is
 * idempotent, so two schedulers doing it at once is harmless.
 */
export function siteEventRetentionSource(ctx: Pick<AppContext, 'db' | 'config'>): DueWorkSource {
  let lastSweepAt = -Infinity;
  return {
    name: 'site-event-retention',
    async runDue(now) {
      if (now - lastSweepAt < RETENTION_SWEEP_EVERY_MS) return;
      lastSweepAt = now;
      for (let batch = 0; batch < 20; batch++) {
        const deleted = await repo.deleteEventsReceivedBefore(ctx.db, now - ctx.config.siteEventRetentionDays * 86_400_000, RETENTION_DELETE_BATCH);
        if (deleted < RETENTION_DELETE_BATCH) return;
      }
    },
  };
}
