// Sending webhook events (docs/delivery.md, "Webhooks"). The database says
// what is due: webhook_deliveries.next_attempt_at. The scheduler's due-work
// source claims due rows with one conditional UPDATE (the claim moves
// next_attempt_at to the end of a lease, so two schedulers never both take a
// row) and the queue spreads the attempts over workers. Each attempt is
// signed anew (its own webhook-timestamp) over the same body and webhook-id,
// goes through the SSRF-safe outbound client, and is written to the delivery
// log. A 2xx ends it; anything else is tried again with exponential backoff
// until 24 hours after the event, then given up; the log keeps finished
// events 30 days. At least once: a worker that dies mid-attempt leaves the
// claim to run out and the row is sent again.
import { WEBHOOK_CLICK_BATCH_MS, WEBHOOK_RETRY_WINDOW_MS } from '@herald/contracts';
import crypto from 'node:crypto';
import type { Transaction } from 'kysely';
import { z } from 'zod';
import type { AppContext } from '../../context';
import type { Database } from '../../db/schema';
import { defineJob, type JobQueue } from '../../jobs/queue';
import type { DueWorkSource } from '../../jobs/scheduler';
import type { Clock } from '../../platform/clock';
import { createOutboundHttpFromConfig, type OutboundHttp } from '../../platform/outbound-http';
import { newOutboxRow } from './events';
import * as repo from './repository';
import { signWebhook } from './signing';

/**
 * One attempt at a claimed delivery. `claimedUntil` is the claim's end (the
 * delivery's next_attempt_at while claimed): a job that runs after the
 * delivery was claimed again, or attempted since, does nothing (absent in
 * jobs queued by an older version).
 */
export const deliverWebhookJob = defineJob('webhook-deliver', z.object({ deliveryId: z.string(), claimedUntil: z.number().int().optional() }));

/** How long a claimed attempt may take before the row is due again (the outbound client gives up after 10 s). */
export const WEBHOOK_ATTEMPT_LEASE_MS = 60_000;
const FIRST_RETRY_MS = 30_000;
const LONGEST_WAIT_MS = 6 * 60 * 60 * 1000;
const ATTEMPT_TIMEOUT_MS = 10_000;
const CLAIM_BATCH = 100;
/** The delivery log keeps a finished event (and its attempts) this long. */
const WEBHOOK_LOG_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
/**
 * The log is purged at most this often per scheduler (not every tick: once a
 * second would be a delete statement a second for rows that fall due a few a
 * minute), PURGE_BATCH rows at a time, at most PURGE_BATCHES_MAX of them.
 */
export const WEBHOOK_PURGE_INTERVAL_MS = 5 * 60_000;
const PURGE_BATCH = 1000;
const PURGE_BATCHES_MAX = 100;
const USER_AGENT = 'Herald-Webhooks/1.0';

/** The wait after the n-th failed attempt: 30 s, 1 min, 2 min … doubling, at most 6 hours. */
export function retryDelayMs(failedAttempts: number): number {
  return Math.min(FIRST_RETRY_MS * 2 ** Math.max(0, failedAttempts - 1), LONGEST_WAIT_MS);
}

export interface AttemptDeps {
  db: AppContext['db'];
  clock: Clock;
  outbound: OutboundHttp;
}

export interface AttemptResult {
  attemptId: string;
  statusCode: number | null;
  error: string | null;
}

/**
 * One attempt at a delivery the caller has claimed until `claimedUntil`:
 * sign, POST, record. Undefined when there is nothing to send (delivered,
 * given up, or deleted with its webhook) or the claim is no longer this
 * caller's: the delivery was claimed again after this job waited past its
 * claim in a busy queue (the new claim has a job of its own), or an attempt
 * since set the next one (its backoff stands). Without that check a job
 * that waited past its claim POSTed beside the new claim's job, a second
 * after a failure that asked for 30 s. The claim is compared by value, not
 * against this process's clock: a worker's clock may differ from the
 * scheduler's that set it.
 */
export async function attemptDelivery(deps: AttemptDeps, deliveryId: string, claimedUntil?: number): Promise<AttemptResult | undefined> {
  const delivery = await repo.findDeliveryToSend(deps.db, deliveryId);
  if (!delivery || delivery.status !== 'pending') return undefined;
  if (claimedUntil !== undefined && delivery.next_attempt_at !== claimedUntil) return undefined;
  const startedAt = deps.clock.now();
  const headers = signWebhook(delivery.secret, delivery.id, Math.floor(startedAt / 1000), delivery.payload);
  let statusCode: number | null = null;
  let error: string | null = null;
  try {
    const response = await deps.outbound.post(delivery.url, {
      subject: 'Webhook',
      body: delivery.payload,
      contentType: 'application/json',
      headers: { ...headers, 'user-agent': USER_AGENT },
      timeoutMs: ATTEMPT_TIMEOUT_MS,
      // A 2xx ends the delivery (docs/delivery.md, "Webhooks") whatever its body: a large, compressed or broken one
      // must not turn an accepted event into a failure that is sent again for a day.
      readBody: false,
    });
    statusCode = response.status;
    if (statusCode < 200 || statusCode > 299) error = `The endpoint answered ${statusCode}`;
  } catch (failure) {
    error = failure instanceof Error ? failure.message : String(failure);
  }

  const now = deps.clock.now();
  const attempt = delivery.attempts + 1;
  const giveUpAt = delivery.created_at + WEBHOOK_RETRY_WINDOW_MS;
  let next: { status: 'pending' | 'delivered' | 'failed'; nextAttemptAt: number | null; finishedAt: number | null };
  if (error === null) next = { status: 'delivered', nextAttemptAt: null, finishedAt: now };
  else if (now >= giveUpAt) next = { status: 'failed', nextAttemptAt: null, finishedAt: now };
  else next = { status: 'pending', nextAttemptAt: Math.min(now + retryDelayMs(attempt), giveUpAt), finishedAt: null };

  const attemptId = `${now.toString(36).padStart(9, '0')}${crypto.randomBytes(6).toString('hex')}`;
  await repo.recordAttempt(
    deps.db,
    { id: attemptId, delivery_id: delivery.id, webhook_id: delivery.webhook_id, attempt, attempted_at: now, status_code: statusCode, error: error?.slice(0, 500) ?? null },
    next,
  );
  return { attemptId, statusCode, error };
}

/**
 * The scheduler's side: the click batches that may go (one delivery per
 * webhook per minute with the clicks per notification since the last one),
 * then the attempts that are due.
 */
export function webhooksDueWork(ctx: Pick<AppContext, 'db'>, queue: JobQueue): DueWorkSource {
  /** When this scheduler last purged the log (undefined: not yet). */
  let purgedAt: number | undefined;
  return {
    name: 'webhooks',
    async runDue(now) {
      for (;;) {
        const claimed = await repo.claimClickBatches(ctx.db, now, now + WEBHOOK_CLICK_BATCH_MS, CLAIM_BATCH);
        for (const webhook of claimed) {
          await ctx.db.transaction().execute(async (trx) => {
            const tallies = await repo.takeClickTallies(trx, webhook.id);
            if (!tallies.length) return;
            tallies.sort((a, b) => a.notification_id.localeCompare(b.notification_id));
            await emitClickBatch(trx, webhook.id, webhook.site_id, now, tallies);
          });
        }
        if (claimed.length < CLAIM_BATCH) break;
      }
      for (;;) {
        const claimedUntil = now + WEBHOOK_ATTEMPT_LEASE_MS;
        const due = await repo.claimDueDeliveries(ctx.db, now, claimedUntil, CLAIM_BATCH);
        if (due.length) await queue.enqueueMany(deliverWebhookJob, due.map((deliveryId) => ({ deliveryId, claimedUntil })));
        if (due.length < CLAIM_BATCH) break;
      }
      // Deleting twice is harmless, so two schedulers need no claim here; the partial index keeps it cheap.
      // A clock set back counts as due, so a purge is never put off by the jump.
      if (purgedAt === undefined || now < purgedAt || now >= purgedAt + WEBHOOK_PURGE_INTERVAL_MS) {
        purgedAt = now;
        for (let batch = 0; batch < PURGE_BATCHES_MAX; batch++) {
          if ((await repo.purgeFinishedDeliveries(ctx.db, now - WEBHOOK_LOG_RETENTION_MS, PURGE_BATCH)) < PURGE_BATCH) break;
        }
      }
    },
  };
}

/** One notification.clicked delivery for one webhook (not through emitWebhookEvent: only this webhook's tallies are in it). */
async function emitClickBatch(trx: Transaction<Database>, webhookId: string, siteId: string, now: number, tallies: Array<{ notification_id: string; clicks: number }>): Promise<void> {
  const row = newOutboxRow(webhookId, 'notification.clicked', now, {
    site_id: siteId,
    clicks: tallies.map((tally) => ({ notification_id: tally.notification_id, clicks: Number(tally.clicks) })),
    total: tallies.reduce((sum, tally) => sum + Number(tally.clicks), 0),
  });
  await repo.insertDeliveries(trx, [row]);
}

/** Takes attempt jobs in a worker process. */
export function registerWebhookJobs(ctx: AppContext, queue: JobQueue): void {
  const deps: AttemptDeps = { db: ctx.db, clock: ctx.clock, outbound: createOutboundHttpFromConfig(ctx.config) };
  queue.work(
    deliverWebhookJob,
    async ({ deliveryId, claimedUntil }) => {
      const result = await attemptDelivery(deps, deliveryId, claimedUntil);
      if (result?.error) ctx.log.info({ deliveryId, statusCode: result.statusCode, error: result.error }, 'webhook attempt failed');
    },
    { concurrency: 4 },
  );
}
