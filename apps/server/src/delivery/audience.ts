import type { Kysely } from 'kysely';
import type { Database, RunRow } from '../db/schema';
import { findSegmentOfSite } from '../features/segments/repository';
import { applySegmentRules, parseStoredRules } from '../features/segments/segment-rules';

/** Shown on a run whose segment is gone: it sent to nobody rather than to everyone. */
export const SEGMENT_DELETED_ERROR = 'The segment of this send was deleted, so it was sent to nobody';
export const SEGMENT_UNREADABLE_ERROR = 'The rules of this send’s segment could not be read, so it was sent to nobody';

/**
 * The next page of a run's audience, by subscriber id after `cursor`: the
 * site's active subscribers (or the one subscriber a single-target run
 * names), narrowed by the run's segment when it has one.
 *
 * A segment's rules are read on every page, so the audience is decided at
 * send time. "Subscribed N days ago" is measured from the run's start, so
 * every page (and a recovered fan-out) uses the same instant. A segment that
 * no longer exists, or belongs to another site, matches nobody — never
 * everybody — and the run's last_error says why.
 */
export async function selectAudiencePage(
  db: Kysely<Database>,
  run: Pick<RunRow, 'id' | 'site_id' | 'subscriber_id' | 'segment_id' | 'started_at' | 'due_at'>,
  cursor: string | null,
  limit: number,
): Promise<string[]> {
  let query = db.selectFrom('subscribers').select('subscribers.id').where('subscribers.site_id', '=', run.site_id).where('subscribers.is_active', '=', 1);
  if (run.subscriber_id) query = query.where('subscribers.id', '=', run.subscriber_id);
  if (run.segment_id) {
    const segment = await findSegmentOfSite(db, run.site_id, run.segment_id);
    const rules = segment && parseStoredRules(segment.rules);
    if (!rules) {
      await db
        .updateTable('notification_runs')
        .set({ last_error: segment ? SEGMENT_UNREADABLE_ERROR : SEGMENT_DELETED_ERROR })
        .where('id', '=', run.id)
        .execute();
      return [];
    }
    query = applySegmentRules(query, rules, run.started_at ?? run.due_at);
  }
  if (cursor) query = query.where('subscribers.id', '>', cursor);
  const rows = await query.orderBy('subscribers.id').limit(limit).execute();
  return rows.map((r) => r.id);
}
