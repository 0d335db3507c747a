// The scheduler's side of RSS feeds: a due-work source that claims feeds
// whose check is due (moving `next_check_at` one interval ahead in the same
// statement) and a job that checks one claimed feed.
import { z } from 'zod';
import type { AppContext } from '../../context';
import { createOutboundHttpFromConfig } from '../../platform/outbound-http';
import { defineJob, type JobQueue } from '../../jobs/queue';
import type { DueWorkSource } from '../../jobs/scheduler';
import { checkFeed, type CheckDeps } from './feed-check';
import { claimDueFeeds } from './repository';

export const pollRssFeedJob = defineJob('rss-poll', z.object({ feedId: z.string() }));

const CLAIM_BATCH = 100;

/**
 * Every RSS_POLL_INTERVAL_SECONDS per active feed (spec §9: 15 minutes). A
 * feed whose check failed is due again at the normal interval; a lost job
 * only delays the feed to its next interval.
 */
export function rssFeedsDueWork(ctx: Pick<AppContext, 'db' | 'config'>, queue: JobQueue): DueWorkSource {
  return {
    name: 'rss-feeds',
    async runDue(now) {
      const intervalMs = ctx.config.rssPollIntervalSeconds * 1000;
      for (;;) {
        const claimed = await claimDueFeeds(ctx.db, now, now + intervalMs, CLAIM_BATCH);
        for (const feedId of claimed) await queue.enqueue(pollRssFeedJob, { feedId });
        if (claimed.length < CLAIM_BATCH) return;
      }
    },
  };
}

/** Takes poll jobs in a worker process. */
export function registerRssFeedJobs(ctx: AppContext, queue: JobQueue): void {
  // wakeScheduler is looked up on each call: the engine connects it after registering jobs.
  const deps: CheckDeps = { db: ctx.db, clock: ctx.clock, config: ctx.config, log: ctx.log, wakeScheduler: () => ctx.wakeScheduler(), outbound: createOutboundHttpFromConfig(ctx.config) };
  queue.work(pollRssFeedJob, async ({ feedId }) => {
    let attempt: Awaited<ReturnType<typeof checkFeed>>;
    try {
      attempt = await checkFeed(deps, feedId, 'schedule');
    } catch (error) {
      ctx.metrics.feedPolled('failed');
      throw error;
    }
    ctx.metrics.feedPolled(attempt.status === 'done' ? attempt.check.outcome : attempt.status);
    if (attempt.status === 'done' && attempt.check.outcome === 'error') ctx.log.info({ feedId, error: attempt.check.error }, 'feed check failed');
  }, { concurrency: 4 });
}
