// The delivery engine's audience resolver (delivery/ports.ts SelectAudiencePage):
// who a run reaches, decided at send time from the segment's current rules.
import type { AudiencePage, AudienceRun, AudienceZones } from '../../delivery/ports';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema';
import { countActiveSubscribersByZone, findSegmentOfSite, selectActiveSubscribers } from './repository';
import { parseStoredRules } from './segment-rules';

type Db = Kysely<Database> | Transaction<Database>;

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
 * everybody — and says why.
 */
export async function selectAudiencePage(db: Db, run: AudienceRun, cursor: string | null, limit: number): Promise<AudiencePage> {
  const rules = await rulesOfRun(db, run);
  if (typeof rules === 'string') return { nobodyBecause: rules };
  const subscribers = await selectActiveSubscribers(db, {
    siteId: run.site_id,
    subscriberId: run.subscriber_id,
    rules,
    rulesAt: run.started_at ?? run.due_at,
    afterId: cursor,
    limit,
    ...(run.zones !== null ? { zones: parseRunZones(run.zones) } : {}),
  });
  return { subscribers };
}

/** The same audience counted by subscriber time zone, to split a send by zone (docs/delivery.md, "Local-time delivery"). */
export const countAudienceByZone: AudienceZones = async (db, run) => {
  const rules = await rulesOfRun(db, run);
  if (typeof rules === 'string') return [];
  return countActiveSubscribersByZone(db, { siteId: run.site_id, subscriberId: run.subscriber_id, rules, rulesAt: run.started_at ?? run.due_at });
};

/** The run's segment rules, none for the whole site, or why it reaches nobody. */
async function rulesOfRun(db: Db, run: AudienceRun) {
  if (!run.segment_id) return undefined;
  const segment = await findSegmentOfSite(db, run.site_id, run.segment_id);
  const rules = segment && parseStoredRules(segment.rules);
  return rules || (segment ? SEGMENT_UNREADABLE_ERROR : SEGMENT_DELETED_ERROR);
}

function parseRunZones(json: string): Array<string | null> {
  const parsed: unknown = JSON.parse(json);
  // A run naming no readable zone reaches nobody, never everybody.
  return Array.isArray(parsed) ? parsed.filter((zone): zone is string | null => zone === null || typeof zone === 'string') : [];
}
