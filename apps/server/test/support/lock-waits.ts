// Race tests on PostgreSQL hold one transaction open and wait until another
// is blocked on its locks before letting it go: this says how many sessions
// of the test's database are waiting on a lock now.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/db/schema';

export async function sessionsWaitingOnLocks(db: Kysely<Database>): Promise<number> {
  const result = await sql<{ n: string }>`select count(*) as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`.execute(db);
  return Number(result.rows[0]!.n);
}
