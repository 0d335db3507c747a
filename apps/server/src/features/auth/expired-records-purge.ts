import type { AppContext } from '../../context';
import type { DueWorkSource } from '../../jobs/scheduler';
import { DatabaseRateLimiter } from '../../platform/rate-limit';
import * as repo from './repository';

export interface ExpiredRecordsPurgeOptions {
  /** How often a sweep runs (claimed once per period across schedulers). */
  everyMs: number;
  /** Rows deleted per statement. */
  batchSize: number;
  /** Statements per table per sweep: what is left waits for the next sweep. */
  maxBatches: number;
}

export const EXPIRED_RECORDS_PURGE_DEFAULTS: ExpiredRecordsPurgeOptions = { everyMs: 15 * 60_000, batchSize: 1_000, maxBatches: 20 };

/**
 * A due-work source that deletes what has expired: sessions past their 30
 * days, emailed and setup links past their lifetime (used or not), and rate
 * counters whose window ended (docs/security.md, "Expired records"). Without
 * it these tables only grow, and an attacker spraying addresses or emails
 * grows them faster.
 *
 * Each period is claimed with one conditional upsert (the first scheduler to
 * ask wins), so with several schedulers one of them sweeps; each sweep deletes
 * in bounded batches, so a large backlog never holds the database for long.
 */
export function expiredRecordsPurgeSource(ctx: Pick<AppContext, 'db' | 'log'>, options: ExpiredRecordsPurgeOptions = EXPIRED_RECORDS_PURGE_DEFAULTS): DueWorkSource {
  const limiter = new DatabaseRateLimiter(ctx.db);
  const deleteInBatches = async (deleteBatch: (limit: number) => Promise<number>): Promise<number> => {
    let total = 0;
    for (let batch = 0; batch < options.maxBatches; batch++) {
      const deleted = await deleteBatch(options.batchSize);
      total += deleted;
      if (deleted < options.batchSize) break;
    }
    return total;
  };
  return {
    name: 'expired-records-purge',
    async runDue(now) {
      if (!(await limiter.claimWindow('job:expired-records-purge', options.everyMs, now))) return;
      const sessions = await deleteInBatches((limit) => repo.deleteExpiredSessions(ctx.db, now, limit));
      const userTokens = await deleteInBatches((limit) => repo.deleteExpiredUserTokens(ctx.db, now, limit));
      const rateLimits = await deleteInBatches((limit) => limiter.purgeExpired(now, limit));
      if (sessions + userTokens + rateLimits > 0) ctx.log.info({ sessions, userTokens, rateLimits }, 'purged expired records');
    },
  };
}
