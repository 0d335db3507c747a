// "Local time 09:00 — 7 of 24 zones sent" (docs/product.md, "Local-time
// delivery"): a local-time send is one run per due instant, each naming its
// subscriber zones (docs/delivery.md, "Local-time delivery"). A zone counts as
// sent once its run finished; cancelled and waiting zones do not.
import type { LocalTimeProgress } from '@herald/contracts';
import type { Kysely, Transaction } from 'kysely';
import type { Database, RunRow } from '../../db/schema';

type Db = Kysely<Database> | Transaction<Database>;

const FINISHED = new Set(['completed', 'completed_with_errors', 'failed']);

/** The zone progress of each notification's latest local-time send: one query for any number of notifications. */
export async function localTimeProgressOf(db: Db, notificationIds: string[]): Promise<Map<string, LocalTimeProgress>> {
  const progress = new Map<string, LocalTimeProgress>();
  if (!notificationIds.length) return progress;
  const runs = await db
    .selectFrom('notification_runs')
    .innerJoin('sites', 'sites.id', 'notification_runs.site_id')
    .select(['notification_runs.notification_id', 'notification_runs.zone_send_id', 'notification_runs.zones', 'notification_runs.status', 'notification_runs.created_at', 'sites.timezone'])
    .where('notification_runs.notification_id', 'in', notificationIds)
    .where('notification_runs.zone_send_id', 'is not', null)
    .execute();
  // The latest send of each notification (a recurring one has one per occurrence): the one whose first run was created last.
  const latest = new Map<string, { sendId: string; createdAt: number }>();
  for (const run of runs) {
    const seen = latest.get(run.notification_id);
    if (!seen || run.created_at > seen.createdAt || (run.created_at === seen.createdAt && run.zone_send_id! > seen.sendId)) {
      latest.set(run.notification_id, { sendId: run.zone_send_id!, createdAt: run.created_at });
    }
  }
  const zonesOf = new Map<string, { all: Set<string>; sent: Set<string> }>();
  for (const run of runs) {
    if (latest.get(run.notification_id)?.sendId !== run.zone_send_id) continue;
    const entry = zonesOf.get(run.notification_id) ?? { all: new Set<string>(), sent: new Set<string>() };
    zonesOf.set(run.notification_id, entry);
    // Subscribers without a zone are the site's zone.
    for (const zone of parseZones(run.zones)) {
      const effective = zone ?? run.timezone;
      entry.all.add(effective);
      if (FINISHED.has(run.status)) entry.sent.add(effective);
    }
  }
  for (const [id, { all, sent }] of zonesOf) progress.set(id, { zones: all.size, zones_sent: sent.size });
  return progress;
}

/** Every run of one send split by zone (to retry what failed in each). */
export function runsOfZoneSend(db: Db, zoneSendId: string): Promise<RunRow[]> {
  return db.selectFrom('notification_runs').selectAll().where('zone_send_id', '=', zoneSendId).orderBy('due_at').execute();
}

function parseZones(json: string | null): Array<string | null> {
  if (json === null) return [];
  const parsed: unknown = JSON.parse(json);
  return Array.isArray(parsed) ? parsed.filter((zone): zone is string | null => zone === null || typeof zone === 'string') : [];
}
