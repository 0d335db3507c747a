import { sql, type Kysely } from 'kysely';

// Steps of a welcome campaign go out in order (docs/delivery.md, "Runs that
// follow another run"): notification_runs.after_run_id names the run this one
// waits for; the scheduler does not claim a run while that run is pending or
// sending. Until now a due step was pushed back by a guard that ran before the
// claim, and a subscriber enrolled between the guard and the claim could have
// all their delay-0 steps claimed at once. Pending drip steps of existing
// enrolments get their previous step here: the same enrolment prefix of the
// dedupe key (`drip:<enrolmentId>:`, 42 characters), the largest smaller key.
// Shipped migrations are never edited: add a new file instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('notification_runs').addColumn('after_run_id', 'text').execute();
  await sql`
    update notification_runs set after_run_id = (
      select previous.id from notification_runs previous
      where previous.subscriber_id = notification_runs.subscriber_id
        and previous.dedupe_key like 'drip:%'
        and substr(previous.dedupe_key, 1, 42) = substr(notification_runs.dedupe_key, 1, 42)
        and previous.dedupe_key < notification_runs.dedupe_key
      order by previous.dedupe_key desc
      limit 1
    )
    where status = 'pending' and dedupe_key like 'drip:%'
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('notification_runs').dropColumn('after_run_id').execute();
}
