import type { SubscriberRemovedCause } from '@herald/contracts';
import type { FastifyBaseLogger } from 'fastify';
import type { Expression, SqlBool, Transaction } from 'kysely';
import type { Database } from '../../db/schema';

/**
 * "A new subscriber was created": the hook point for features that act on
 * new subscribers, first of all welcome campaigns enrolling them (spec §4:
 * campaign changes "affect only future subscribers").
 *
 * Fired once per subscriber row created by the public subscribe API — not for
 * a known endpoint coming back, not for a reactivation, not for an endpoint
 * moved by `pushsubscriptionchange` (the subscriber keeps its id and is not
 * new). It runs after the subscriber's transaction committed, so the row is
 * visible to the hook's own queries.
 *
 * Subscribes are group-committed (docs/storage.md), so a hook is called once
 * per batch with the new subscribers of that batch (one or more, of one or
 * more sites): what it reads per call, it reads once for the batch, not once
 * per subscriber.
 */
export interface SubscriberCreatedEvent {
  subscriberId: string;
  siteId: string;
  /** Epoch milliseconds of the subscription, from the service's clock. */
  subscribedAt: number;
}

/**
 * Which sites a hook has work for, as a condition on a site's id: true
 * when the site's new subscribers concern the hook (an active welcome
 * campaign, a webhook that wants the event). The subscribe evaluates every
 * hook's condition in the read it makes anyway (the sites and their keys), so
 * a batch of subscribes to sites no hook cares about costs no statement more
 * (docs/storage.md, "Subscribes are group-committed").
 */
export type SiteCondition = (siteId: Expression<string>) => Expression<SqlBool>;

export interface SubscriberCreatedHook {
  /** The sites it has work for; absent: every site. */
  concerns?: SiteCondition;
  /**
   * Called with the new subscribers of the sites `concerns` held true for
   * when the subscribe read them; never with none. The hook re-reads what it
   * acts on in its own transaction (a campaign may have stopped since).
   */
  run: (events: readonly SubscriberCreatedEvent[]) => Promise<void>;
}

/** For each hook, in order, the sites its `concerns` held true for (repository.ts, sitesAndKeys); ignored for a hook without `concerns`. */
export type ConcernedSites = ReadonlyArray<ReadonlySet<string>>;

/**
 * "An import created these subscribers" (one batch of one site), inside the
 * batch's transaction: what a hook writes commits with the rows, and a
 * failing hook rolls the batch back (the import fails and can be started
 * again). Fired only when the uploader asked to enrol them.
 */
export type SubscribersImportedHook = (trx: Transaction<Database>, siteId: string, subscribers: readonly SubscriberCreatedEvent[]) => Promise<void>;

/**
 * "A subscriber left the audience": deactivated by the browser's unsubscribe
 * (`unsubscribed`), by a push service's 404/410 or a replaced endpoint
 * (`gone`), or by a member removing it, the stale clean-up or an erasure
 * (`removed`). Fired once per subscriber this call deactivated (an already
 * inactive one is not removed again; an erased one is, with `erased`), inside
 * the transaction that made the change: what a hook writes commits with it
 * (webhooks' outbox), and a failing hook rolls the change back.
 */
export interface SubscriberRemovedEvent {
  subscriberId: string;
  siteId: string;
  cause: SubscriberRemovedCause;
  removedAt: number;
  erased?: boolean;
}

export type SubscriberRemovedHook = (trx: Transaction<Database>, event: SubscriberRemovedEvent) => Promise<void>;

/** Runs every removed hook in the caller's transaction. */
export async function runSubscriberRemovedHooks(hooks: readonly SubscriberRemovedHook[] | undefined, trx: Transaction<Database>, event: SubscriberRemovedEvent): Promise<void> {
  for (const hook of hooks ?? []) await hook(trx, event);
}

// Hooks are registered on the AppContext the process builds (runtime.ts), e.g.
//   ctx.subscriberCreatedHooks = [enrolInWelcomeCampaign(ctx), webhooksOnSubscriberCreated(ctx)];
// The property is declared here so the subscribers feature owns its contract;
// it can move into context.ts unchanged.
declare module '../../context' {
  interface AppContext {
    /** Called, in order, after each batch of new subscribers is stored. See SubscriberCreatedEvent. */
    subscriberCreatedHooks?: SubscriberCreatedHook[];
    /** Called, in order, inside the transaction that removed a subscriber. See SubscriberRemovedEvent. */
    subscriberRemovedHooks?: SubscriberRemovedHook[];
  }
}

/**
 * Runs every hook, in order, with the new subscribers of the sites it
 * concerns (`concerned`, read with the subscribe). A failing hook is logged
 * and does not fail the subscribe call: the browser has already subscribed
 * and will not retry, so losing the subscriber over a campaign error would
 * be worse than a missed enrolment, which the log names.
 */
export async function runSubscriberCreatedHooks(
  hooks: readonly SubscriberCreatedHook[] | undefined,
  events: readonly SubscriberCreatedEvent[],
  concerned: ConcernedSites,
  log: FastifyBaseLogger,
): Promise<void> {
  for (const [index, hook] of (hooks ?? []).entries()) {
    const sites = concerned[index];
    const ofHook = hook.concerns && sites ? events.filter((event) => sites.has(event.siteId)) : events;
    if (!ofHook.length) continue;
    try {
      await hook.run(ofHook);
    } catch (error) {
      log.error({ err: error, subscriberIds: ofHook.map((event) => event.subscriberId), siteIds: [...new Set(ofHook.map((event) => event.siteId))] }, 'a subscriber-created hook failed');
    }
  }
}
