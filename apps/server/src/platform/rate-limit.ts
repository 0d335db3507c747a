import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema';

/**
 * Fixed-window counters kept in the database, so the limit holds across
 * processes and restarts (login attempts, password-reset mails).
 */
export class DatabaseRateLimiter {
  constructor(private readonly db: Kysely<Database>) {}

  /** Hits in the current window, without counting a new one. */
  async current(key: string, windowMs: number, now: number): Promise<{ hits: number; retryAfterMs: number }> {
    const row = await this.db.selectFrom('rate_limits').select(['hits', 'window_start']).where('key', '=', key).executeTakeFirst();
    if (!row || row.window_start + windowMs <= now) return { hits: 0, retryAfterMs: 0 };
    return { hits: row.hits, retryAfterMs: row.window_start + windowMs - now };
  }

  /** Counts one hit and returns the hits in the current window. */
  async hit(key: string, windowMs: number, now: number): Promise<number> {
    const expired = now - windowMs;
    const row = await this.db
      .insertInto('rate_limits')
      .values({ key, window_start: now, hits: 1 })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          hits: sql<number>`case when rate_limits.window_start <= ${expired} then 1 else rate_limits.hits + 1 end`,
          window_start: sql<number>`case when rate_limits.window_start <= ${expired} then ${now} else rate_limits.window_start end`,
        }),
      )
      .returning('hits')
      .executeTakeFirstOrThrow();
    return row.hits;
  }

  async reset(key: string): Promise<void> {
    await this.db.deleteFrom('rate_limits').where('key', '=', key).execute();
  }
}
