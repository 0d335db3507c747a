import type { Kysely } from 'kysely';
import type { Database, RunRow } from '../db/schema';

/**
 * The next page of a run's audience, by subscriber id after `cursor`: the
 * site's active subscribers (or the one subscriber a single-target run names).
 */
export async function selectAudiencePage(
  db: Kysely<Database>,
  run: Pick<RunRow, 'site_id' | 'subscriber_id' | 'segment_id'>,
  cursor: string | null,
  limit: number,
): Promise<string[]> {
  let query = db.selectFrom('subscribers').select('id').where('site_id', '=', run.site_id).where('is_active', '=', 1);
  if (run.subscriber_id) query = query.where('id', '=', run.subscriber_id);
  if (cursor) query = query.where('id', '>', cursor);
  const rows = await query.orderBy('id').limit(limit).execute();
  return rows.map((r) => r.id);
}
