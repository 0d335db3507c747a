import { z } from 'zod';
import { defineJob } from '../jobs/queue';
import { abFanOutFor } from './ab-split';
import type { DeliveryDeps } from './engine-deps';
import {
  completeRunIfFinished,
  extendRunLease,
  insertPendingDeliveries,
  loadRunForSending,
  markFanoutDone,
  pendingDeliveryIds,
  recordFanoutPage,
  setRunError,
} from './runs';
import { sendBatchJob } from './send-batch';
import { splitByZone } from './zone-runs';

export const fanOutRunJob = defineJob('fanout-run', z.object({ runId: z.string(), recover: z.boolean().default(false) }));

const AUDIENCE_PAGE_SIZE = 1000;
export const BATCH_SIZE = 250;
/** Fan-out waits while this many batches are queued, so memory stays flat in audience size. */
const MAX_QUEUED_BATCHES = 16;

function chunk<T>(items: T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

/**
 * Turns a claimed run into delivery rows and batch jobs. Pages through the
 * audience by subscriber id (keyset pagination: memory is flat in audience
 * size), inserts one pending delivery per subscriber (unique per run, so a
 * re-run skips what exists) and enqueues the pending ones in batches.
 * With `recover`, first re-enqueues pending deliveries a lost job held.
 */
export async function fanOutRun(deps: DeliveryDeps, payload: { runId: string; recover: boolean }): Promise<void> {
  const { db, clock, queue, config, log } = deps;
  const loaded = await loadRunForSending(db, payload.runId);
  if (!loaded || loaded.run.status !== 'sending') return;
  // Local time and quiet hours: a send may first become one run per zone instant (docs/delivery.md, "Local-time delivery").
  const run = await splitByZone(deps, loaded);
  if (!run) return;
  // A throttled send's batches are enqueued by the scheduler, minute by minute (docs/delivery.md, "Throttled sends").
  const throttled = loaded.notification.throttle_per_minute !== null;

  const stopping = () => deps.stopping?.aborted === true;
  const waitForRoom = async () => {
    for (let waited = 0; !stopping() && (await queue.backlog(sendBatchJob)) > MAX_QUEUED_BATCHES; waited++) {
      if (waited % 40 === 0) await extendRunLease(db, run.id, clock.now() + config.deliveryLeaseMs);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const enqueueBatches = async (deliveryIds: number[]) => {
    if (throttled) return;
    for (const ids of chunk(deliveryIds, BATCH_SIZE)) {
      await waitForRoom();
      await queue.enqueue(sendBatchJob, { runId: run.id, deliveryIds: ids });
    }
  };
  /**
   * The process is shutting down (SIGTERM): the batches of the pages done so
   * far are queued and the cursor is stored, so the rest of the fan-out goes
   * back on the queue for another worker (or this one, restarted) instead of
   * holding the shutdown up while the backlog drains. If that enqueue is
   * lost, the run's lease runs out and the recovery sweep resumes it.
   */
  const handBack = async (recover: boolean) => {
    await queue.enqueue(fanOutRunJob, { runId: run.id, recover });
    log.info({ runId: run.id }, 'shutting down: the rest of the fan-out goes back to the queue');
  };

  if (payload.recover && !throttled) {
    for (let afterId = 0; ; ) {
      const ids = await pendingDeliveryIds(db, run.id, { afterId, limit: AUDIENCE_PAGE_SIZE });
      if (!ids.length) break;
      await enqueueBatches(ids);
      afterId = ids[ids.length - 1]!;
      await extendRunLease(db, run.id, clock.now() + config.deliveryLeaseMs);
      if (stopping()) return handBack(true);
    }
  }

  if (!run.fanout_done) {
    // An A/B notification's run takes its sample, everyone, or the rest, each with a variant (docs/delivery.md, "A/B tests").
    const ab = await abFanOutFor(deps, run);
    let cursor = run.fanout_cursor;
    for (;;) {
      const page = await deps.deliveryPorts.selectAudiencePage(db, run, cursor, AUDIENCE_PAGE_SIZE);
      if ('nobodyBecause' in page) {
        await setRunError(db, run.id, page.nobodyBecause);
        break;
      }
      const { subscribers } = page;
      if (!subscribers.length) break;
      const now = clock.now();
      cursor = subscribers[subscribers.length - 1]!.id;
      const pageCursor = cursor;
      const picked = await ab?.pick(subscribers);
      const recipients = (picked?.subscribers ?? subscribers).map((subscriber) => ({ seq: subscriber.seq, variant: picked?.variantOf.get(subscriber.id) ?? null }));
      // The rows a page inserted are enqueued after its commit, which also stores the cursor past it. A crash between
      // the two leaves them pending and unqueued: the run's lease runs out and the recovery above enqueues them.
      const inserted = await db.transaction().execute(async (trx) => {
        const ids = await insertPendingDeliveries(trx, deps.dbKind, run, recipients, now);
        await picked?.commit(trx);
        await recordFanoutPage(trx, run, pageCursor, ids.length, now + config.deliveryLeaseMs);
        return ids;
      });
      await enqueueBatches(inserted);
      if (subscribers.length < AUDIENCE_PAGE_SIZE) break;
      if (stopping()) return handBack(false);
    }
    await markFanoutDone(db, run.id);
  }
  // A run with nobody (left) to send to finishes here; otherwise the last batch finishes it.
  await completeRunIfFinished(db, deps.dbKind, run.id, clock.now(), deps.deliveryPorts.runFinished);
}
