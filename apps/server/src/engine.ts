import type { AppContext } from './context';
import type { DeliveryDeps } from './delivery/engine-deps';
import { fanOutRun, fanOutRunJob } from './delivery/fan-out';
import type { PushClient } from './delivery/push-client';
import { sendBatch, sendBatchJob } from './delivery/send-batch';
import { throttledSendsSource } from './delivery/throttle';
import { BullmqQueue } from './jobs/bullmq-queue';
import { InProcessQueue } from './jobs/in-process-queue';
import type { JobQueue } from './jobs/queue';
import type { ReadinessCheck } from './platform/health';
import { auditLogRetentionSource } from './features/audit-log/service';
import { expiredRecordsPurgeSource } from './features/auth/expired-records-purge';
import { abTestDecisionSource } from './features/notifications/ab-test';
import { recurringScheduleSource } from './features/notifications/recurring-runs';
import { deliveryRetentionSource } from './features/retention/service';
import { registerRssFeedJobs, rssFeedsDueWork } from './features/rss-feeds/poll-job';
import { siteEventRetentionSource } from './features/site-events/service';
import { beaconCountsSource } from './features/tracking/fold';
import { registerSubscriberImportJobs, subscriberImportsDueWork } from './features/subscriber-imports/job';
import { dripStepGuard } from './features/welcome-campaigns/enrollment';
import { registerWebhookJobs, webhooksDueWork } from './features/webhooks/deliver';
import { Scheduler, type DueWorkSource } from './jobs/scheduler';

// What features add to the background engine (see ARCHITECTURE.md, "Adding a
// feature"): their job handlers, on processes that take jobs, and their
// due-work sources — things the scheduler checks on every tick, each claiming
// what it acts on (recurring schedules, feeds to poll, drip ordering, retention).

export function registerFeatureJobs(ctx: AppContext, queue: JobQueue): void {
  registerRssFeedJobs(ctx, queue);
  registerWebhookJobs(ctx, queue);
  registerSubscriberImportJobs(ctx, queue);
}

export function featureDueWorkSources(ctx: AppContext, queue: JobQueue): DueWorkSource[] {
  return [beaconCountsSource(ctx), dripStepGuard(ctx), recurringScheduleSource(ctx), rssFeedsDueWork(ctx, queue), siteEventRetentionSource(ctx), expiredRecordsPurgeSource(ctx), auditLogRetentionSource(ctx), deliveryRetentionSource(ctx), webhooksDueWork(ctx, queue), subscriberImportsDueWork(ctx, queue), throttledSendsSource(ctx, queue), abTestDecisionSource(ctx)];
}

export interface EngineOptions {
  /** Run the scheduler loop in this process. */
  scheduler: boolean;
  /** Take delivery jobs in this process. */
  worker: boolean;
  pushClient: PushClient;
}

export interface Engine {
  queue: JobQueue;
  scheduler: Scheduler | undefined;
  /** Redis answers (BullMQ), and this process's workers are taking jobs (GET /readyz). */
  readiness: ReadinessCheck[];
  /** Stops the scheduler, lets in-flight jobs finish and record, closes the queue and push pools. */
  close(): Promise<void>;
}

/**
 * The background half of Herald: the scheduler (what is due) and the delivery
 * workers (fan-out and batch sending), over the in-process queue by default or
 * BullMQ when REDIS_URL is set.
 */
export function startEngine(ctx: AppContext, options: EngineOptions): Engine {
  const queue: JobQueue = ctx.config.redisUrl ? new BullmqQueue(ctx.config.redisUrl, ctx.log) : new InProcessQueue(ctx.log);
  const stopping = new AbortController();
  const deps: DeliveryDeps = { ...ctx, queue, pushClient: options.pushClient, stopping: stopping.signal };

  if (options.worker) {
    queue.work(fanOutRunJob, (payload) => fanOutRun(deps, payload), { concurrency: 2 });
    queue.work(sendBatchJob, (payload) => sendBatch(deps, payload), { concurrency: ctx.config.workerConcurrency });
    registerFeatureJobs(ctx, queue);
  }

  let scheduler: Scheduler | undefined;
  if (options.scheduler) {
    scheduler = new Scheduler(ctx, queue, featureDueWorkSources(ctx, queue));
    scheduler.start();
    ctx.wakeScheduler = () => scheduler?.wake();
  }

  ctx.metrics.watchQueue(() => queue.jobCounts());
  const readiness: ReadinessCheck[] = [];
  if (queue.kind === 'bullmq') {
    readiness.push({
      name: 'redis',
      async check() {
        await queue.ping();
        return undefined;
      },
    });
  }
  if (options.worker) readiness.push({ name: 'queue', check: async () => (queue.consuming() ? undefined : 'the queue workers are not taking jobs') });

  return {
    queue,
    scheduler,
    readiness,
    async close() {
      // First, so a fan-out waiting for the batch backlog to drain hands its
      // run back instead of waiting for workers that are closing too.
      stopping.abort();
      await scheduler?.stop();
      await queue.close();
      await options.pushClient.close();
    },
  };
}
