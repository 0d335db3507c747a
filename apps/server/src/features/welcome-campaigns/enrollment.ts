// A new subscriber enters the site's active welcome campaign (spec §2 "campaigns
// trigger when a new user subscribes"; §4 "changes affect only future subscribers").
import crypto from 'node:crypto';
import type { AppContext } from '../../context';
import { insertRun } from '../../delivery/runs';
import type { DueWorkSource } from '../../jobs/scheduler';
import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema';
import type { SubscriberCreatedEvent, SubscriberCreatedHook, SubscribersImportedHook } from '../subscribers/hooks';
import * as repo from './repository';

const MINUTE_MS = 60_000;

/**
 * Enrols a new subscriber in the site's active campaign, with the campaign's
 * current version of the steps, and creates one run per step right away:
 * step 1 due at subscription, each later step its delay after the one before.
 * Each run targets only this subscriber (`subscriber_id`) and has the dedupe
 * key `drip:<enrollmentId>:<NN>:<stepId>`, so it exists, and is sent, at most once;
 * the enrolment itself is unique per (campaign, subscriber).
 *
 * Creating the runs up front keeps the schedule in the database, where the
 * scheduler claims due runs exactly once; stopping a campaign cancels its
 * pending runs (service.ts), and an unsubscribed subscriber's due steps are
 * cancelled by `dripStepGuard` below.
 */
export function enrolInWelcomeCampaign(ctx: AppContext): SubscriberCreatedHook {
  return {
    // Most sites have no active campaign: the subscribe's own read tells which do.
    concerns: repo.hasActiveCampaign,
    run: async (events) => {
      let enrolled = 0;
      // The campaign is read again under the site's lock (it may have stopped since).
      for (const siteId of [...new Set(events.map((event) => event.siteId))].sort()) {
        const ofSite = events.filter((event) => event.siteId === siteId);
        enrolled += await ctx.db.transaction().execute((trx) => enrolNewSubscribers(ctx, trx, siteId, ofSite));
      }
      // Step 1 is due now: let this process's scheduler pick it up without waiting for its next tick.
      if (enrolled) ctx.wakeScheduler();
    },
  };
}

/**
 * An import's new subscribers, enrolled inside the transaction that stores
 * their batch (docs/product.md, "Importing subscribers"): the enrolments
 * commit with the rows, so a crash between the two cannot lose them. The
 * caller wakes the scheduler once the batch committed.
 */
export function enrolImportedSubscribers(ctx: Pick<AppContext, 'dbKind' | 'clock'>): SubscribersImportedHook {
  return async (trx, siteId, subscribers) => {
    await enrolNewSubscribers(ctx, trx, siteId, subscribers);
  };
}

/** Enrols these new subscribers of one site in its active campaign (the site read once); how many were enrolled. */
async function enrolNewSubscribers(ctx: Pick<AppContext, 'dbKind' | 'clock'>, trx: Transaction<Database>, siteId: string, subscribers: readonly SubscriberCreatedEvent[]): Promise<number> {
  if (!subscribers.length || !(await repo.lockSite(trx, ctx.dbKind, siteId, 'enrol'))) return 0;
  const campaign = await repo.findActiveCampaignOfSite(trx, siteId);
  if (!campaign) return 0;
  const steps = (await repo.stepsOfVersions(trx, [{ campaignId: campaign.id, version: campaign.steps_version }])).get(campaign.id) ?? [];
  if (!steps.length) return 0;

  const now = ctx.clock.now();
  let enrolled = 0;
  for (const event of subscribers) {
    const enrollmentId = crypto.randomUUID();
    const isNew = await repo.insertEnrollmentIfNew(trx, {
      id: enrollmentId,
      campaign_id: campaign.id,
      site_id: siteId,
      subscriber_id: event.subscriberId,
      steps_version: campaign.steps_version,
      enrolled_at: now,
    });
    if (!isNew) continue;
    enrolled += 1;

    let dueAt = event.subscribedAt;
    let previousRunId: string | null = null;
    for (const step of steps) {
      dueAt += step.delay_minutes * MINUTE_MS;
      const runId = crypto.randomUUID();
      await insertRun(trx, {
        id: runId,
        // Each step waits for the one before it to be sent (docs/delivery.md, "Runs that follow another run").
        after_run_id: previousRunId,
        notification_id: step.notification_id,
        site_id: siteId,
        dedupe_key: repo.dripRunKey(enrollmentId, step.sequence_order, step.id),
        due_at: dueAt,
        // The campaign's target segment as it is now; the audience check applies it when the step is due.
        segment_id: campaign.segment_id,
        subscriber_id: event.subscriberId,
        created_at: now,
      });
      previousRunId = runId;
    }
  }
  return enrolled;
}

/**
 * Before the scheduler claims due runs (sources run first on every tick):
 * drip steps whose subscriber has unsubscribed are cancelled, so they say
 * why nothing was sent. A conditional UPDATE on pending runs, like the claim
 * itself, so several schedulers may run it at once. (The order of a
 * subscriber's steps is kept by the claim: each run follows the one before.)
 */
export function dripStepGuard(ctx: Pick<AppContext, 'db' | 'log'>): DueWorkSource {
  return {
    name: 'welcome-campaign-drip-guard',
    async runDue(now: number) {
      const cancelled = await repo.cancelDueDripRunsOfInactiveSubscribers(ctx.db, now);
      if (cancelled) ctx.log.info({ cancelled }, 'cancelled drip steps of unsubscribed subscribers');
    },
  };
}
