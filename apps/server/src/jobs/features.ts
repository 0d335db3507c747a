// What features add to the background engine: their jobs (name, zod payload,
// handler) and their due-work sources (things the scheduler checks on every
// tick, such as recurring schedules and feeds to poll). A feature adds one
// line to each list it needs (see ARCHITECTURE.md, "Adding a feature").
import type { AppContext } from '../context';
import { expiredRecordsPurgeSource } from '../features/auth/expired-records-purge';
import { recurringScheduleSource } from '../features/notifications/recurring-runs';
import { siteEventRetentionSource } from '../features/site-events/service';
import { registerRssFeedJobs, rssFeedsDueWork } from '../features/rss-feeds/poll-job';
import { dripStepGuard } from '../features/welcome-campaigns/enrollment';
import type { JobQueue } from './queue';
import type { DueWorkSource } from './scheduler';

/** Registers feature job handlers on a process that takes jobs. */
export function registerFeatureJobs(ctx: AppContext, queue: JobQueue): void {
  registerRssFeedJobs(ctx, queue);
}

/** The due-work sources a scheduler process checks on every tick. */
export function featureDueWorkSources(ctx: AppContext, queue: JobQueue): DueWorkSource[] {
  return [dripStepGuard(ctx), recurringScheduleSource(ctx), rssFeedsDueWork(ctx, queue), siteEventRetentionSource(ctx), expiredRecordsPurgeSource(ctx)];
}
