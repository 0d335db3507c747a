import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema';

/**
 * Counters kept in the database, so a limit holds across processes and
 * restarts (login attempts, password-reset mails, sign-ups). Every method that
 * decides something is one statement: two requests (or two processes) never
 * both see "one attempt left" (docs/security.md, "Password guessing and
 * lockout").
 */
export class DatabaseRateLimiter {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Counts one hit in a fixed window and returns the hits in the window, this
   * one included, in one conditional upsert. Call it before the work it
   * limits, and refuse when `hits` is over the limit.
   */
  async hit(key: string, windowMs: number, now: number): Promise<{ hits: number; retryAfterMs: number }> {
    // A window that ended, or that starts after `now` (the clock was set back), starts over.
    const startsOver = sql<boolean>`(rate_limits.window_start <= ${now - windowMs} or rate_limits.window_start > ${now})`;
    const row = await this.db
      .insertInto('rate_limits')
      .values({ key, window_start: now, hits: 1, expires_at: now + windowMs })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          // Every SET expression sees the row as it was before this statement.
          hits: sql<number>`case when ${startsOver} then 1 else rate_limits.hits + 1 end`,
          window_start: sql<number>`case when ${startsOver} then ${now} else rate_limits.window_start end`,
          expires_at: sql<number>`case when ${startsOver} then ${now + windowMs} else rate_limits.window_start + ${windowMs} end`,
        }),
      )
      .returning(['hits', 'window_start'])
      .executeTakeFirstOrThrow();
    return { hits: Number(row.hits), retryAfterMs: Number(row.window_start) + windowMs - now };
  }

  /** Takes back one hit of a live window (the attempt it counted turned out legitimate). */
  async refund(key: string, now: number): Promise<void> {
    await this.db
      .updateTable('rate_limits')
      .set({ hits: sql<number>`hits - 1` })
      .where('key', '=', key)
      .where('hits', '>', 0)
      .where('expires_at', '>', now)
      .execute();
  }

  /**
   * Admits one attempt if enough time passed since the key's last admitted
   * attempt, in one conditional upsert, so of concurrent callers exactly the
   * allowed ones get in. `spacingsMs[n]` is the wait required after `n`
   * attempts were admitted in the current window (the last entry applies
   * beyond the list). The window starts with the first attempt and lasts
   * `windowMs`; then the count starts over (as it does when the clock was set
   * back behind the last admission).
   */
  async admitSpaced(key: string, windowMs: number, now: number, spacingsMs: readonly number[]): Promise<{ admitted: boolean; retryAfterMs: number }> {
    if (spacingsMs.length === 0 || spacingsMs.some((ms) => !Number.isSafeInteger(ms) || ms < 0)) throw new Error('admitSpaced: spacings must be non-negative integers');
    // window_start holds the time of the last admitted attempt, hits the attempts admitted in the window, expires_at its end.
    const spacingAfterHits = sql<number>`case ${sql.join(
      spacingsMs.slice(0, -1).map((ms, admitted) => sql`when rate_limits.hits = ${sql.lit(admitted)} then ${sql.lit(ms)}`),
      sql` `,
    )} else ${sql.lit(spacingsMs.at(-1)!)} end`;
    // The window ended, or the last admission lies after `now` (the clock was set back): the count starts over.
    const startsOver = sql<boolean>`(rate_limits.expires_at <= ${now} or rate_limits.window_start > ${now})`;
    const admitted = await this.db
      .insertInto('rate_limits')
      .values({ key, window_start: now, hits: 1, expires_at: now + windowMs })
      .onConflict((oc) =>
        oc
          .column('key')
          .doUpdateSet({
            hits: sql<number>`case when ${startsOver} then 1 else rate_limits.hits + 1 end`,
            window_start: now,
            expires_at: sql<number>`case when ${startsOver} then ${now + windowMs} else rate_limits.expires_at end`,
          })
          .where((eb) => eb.or([startsOver, eb(sql<number>`rate_limits.window_start + ${spacingAfterHits}`, '<=', now)])),
      )
      .returning('key')
      .executeTakeFirst();
    if (admitted) return { admitted: true, retryAfterMs: 0 };
    const row = await this.db.selectFrom('rate_limits').select(['window_start', 'hits']).where('key', '=', key).executeTakeFirst();
    const spacing = spacingsMs[Math.min(Number(row?.hits ?? 0), spacingsMs.length - 1)]!;
    return { admitted: false, retryAfterMs: Math.max(1, (row ? Number(row.window_start) : now) + spacing - now) };
  }

  /** Records a mark at `now`, kept `keepMs` (a trusted address, say), whatever came before. */
  async mark(key: string, now: number, keepMs: number): Promise<void> {
    await this.db
      .insertInto('rate_limits')
      .values({ key, window_start: now, hits: 1, expires_at: now + keepMs })
      .onConflict((oc) => oc.column('key').doUpdateSet({ window_start: now, expires_at: now + keepMs }))
      .execute();
  }

  /** Whether a mark (or a window) of the key is still live. */
  async isLive(key: string, now: number): Promise<boolean> {
    const row = await this.db.selectFrom('rate_limits').select('key').where('key', '=', key).where('expires_at', '>', now).executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Claims a window for a periodic task: true for the first caller of the
   * window, in any process, false for every other (one conditional upsert).
   */
  async claimWindow(key: string, windowMs: number, now: number): Promise<boolean> {
    return (await this.hit(key, windowMs, now)).hits === 1;
  }

  async reset(key: string): Promise<void> {
    await this.db.deleteFrom('rate_limits').where('key', '=', key).execute();
  }

  /** Deletes every counter whose key starts with `prefix` (compared by characters, so `%` and `_` are plain). */
  async resetPrefix(prefix: string): Promise<void> {
    await this.db
      .deleteFrom('rate_limits')
      .where(sql<string>`substr(key, 1, ${prefix.length})`, '=', prefix)
      .execute();
  }

  /** Deletes up to `limit` counters whose window has ended; returns how many. */
  async purgeExpired(now: number, limit: number): Promise<number> {
    const ended = this.db.selectFrom('rate_limits').select('key').where('expires_at', '<=', now).limit(limit);
    const result = await this.db.deleteFrom('rate_limits').where('key', 'in', ended).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
