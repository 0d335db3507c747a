// Splitting a send by subscriber time zone (docs/delivery.md, "Local-time
// delivery" and "Quiet hours"). When a run of a local-time notification, or of
// a site with quiet hours, starts, its audience's zones are read and it
// becomes one run per due instant: each zone is due at the notification's
// local time in that zone, or — when that falls inside the site's quiet
// hours — at the window's end there. Zones due at the same instant share a
// run; the run that started takes the earliest group (and goes on at once if
// that is due now), the others are new pending runs the scheduler claims like
// any other. Each run names its zones in `zones`, so its fan-out reads only
// those subscribers.
import crypto from 'node:crypto';
import { insideQuietHours, nextWallTimeAfter, quietHoursEndAfter, type QuietHours } from '@herald/contracts';
import type { NotificationRow, RunRow, SiteRow } from '../db/schema';
import { hasAbTest } from './ab-split';
import type { DeliveryDeps } from './engine-deps';
import { delayFollowingRuns, insertRun, type RunForSending } from './runs';

export interface ZoneCount {
  zone: string | null;
  subscribers: number;
}

export interface ZoneGroup {
  dueAt: number;
  /** The subscriber zones (null: none given) due at `dueAt`. */
  zones: Array<string | null>;
  /** Of its subscribers, those held for the end of quiet hours. */
  deferred: number;
}

export interface ZonePlanInput {
  zones: readonly ZoneCount[];
  /** When the send was due (a local time is the next one at or after it). */
  dueAt: number;
  now: number;
  siteZone: string;
  localTime: string | null;
  /** The site's window, or null when it has none or this notification is exempt from it. */
  quietHours: QuietHours | null;
  ttlSeconds: number;
}

/** A zone name the runtime knows, else null: its subscribers go with the site's zone. */
function knownZone(zone: string | null): string | null {
  if (zone === null) return null;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/**
 * Each zone's due instant, grouped, earliest first. Pure: the tests and the
 * docs' rules are about this. A zone inside quiet hours waits for the
 * window's end unless its TTL would run out first (then it goes when due:
 * a push held past its TTL would be dropped by the push service anyway).
 */
export function planZoneRuns(input: ZonePlanInput): ZoneGroup[] {
  const zones = input.zones.length ? input.zones : [{ zone: null, subscribers: 0 }];
  const groups = new Map<number, ZoneGroup>();
  for (const { zone, subscribers } of zones) {
    const effective = knownZone(zone) ?? input.siteZone;
    let dueAt = input.localTime === null ? input.now : Math.max(input.now, nextWallTimeAfter(input.dueAt, input.localTime, effective));
    let deferred = 0;
    if (input.quietHours && insideQuietHours(dueAt, input.quietHours, effective)) {
      const end = quietHoursEndAfter(dueAt, input.quietHours, effective);
      if (end - dueAt <= input.ttlSeconds * 1000) {
        dueAt = end;
        deferred = subscribers;
      }
    }
    const group = groups.get(dueAt) ?? { dueAt, zones: [], deferred: 0 };
    group.zones.push(zone);
    group.deferred += deferred;
    groups.set(dueAt, group);
  }
  return [...groups.values()].sort((a, b) => a.dueAt - b.dueAt);
}

/** Whether the site's quiet hours hold this notification back: not when marked "send anyway", nor at high urgency. */
export function quietHoursFor(site: Pick<SiteRow, 'quiet_hours_start' | 'quiet_hours_end'>, notification: Pick<NotificationRow, 'quiet_hours_exempt' | 'urgency'>): QuietHours | null {
  if (site.quiet_hours_start === null || site.quiet_hours_end === null) return null;
  if (notification.quiet_hours_exempt === 1 || notification.urgency === 'high') return null;
  return { start: site.quiet_hours_start, end: site.quiet_hours_end };
}

/**
 * Splits a started run by zone when its notification asks for local time or
 * its site's quiet hours apply; returns the run to fan out now, or undefined
 * when its first zones are due later (it is pending again until then). A run
 * already split (`zones` set), or one nothing splits, is returned as it is.
 */
export async function splitByZone(deps: DeliveryDeps, loaded: RunForSending): Promise<RunRow | undefined> {
  const { run, notification, site } = loaded;
  if (run.zones !== null) return run;
  const quietHours = quietHoursFor(site, notification);
  const localTime = notification.delivery_mode === 'subscriber_local_time' ? notification.local_time : null;
  if (localTime === null && quietHours === null) return run;
  // An A/B send goes to its whole audience at once: a sample split by zone would not be random (docs/delivery.md, "A/B tests").
  if (await hasAbTest(deps.db, run.notification_id)) return run;

  const { db, clock } = deps;
  const now = clock.now();
  const groups = planZoneRuns({
    zones: await deps.deliveryPorts.countAudienceByZone(db, run),
    dueAt: run.due_at,
    now,
    siteZone: site.timezone,
    localTime,
    quietHours,
    ttlSeconds: notification.ttl_seconds,
  });
  const [first, ...rest] = groups as [ZoneGroup, ...ZoneGroup[]];
  const startsNow = first.dueAt <= now;
  const split = await db.transaction().execute(async (trx) => {
    // The notification's row lock first, as a cancel takes it: a notification
    // cancelled meanwhile gets no zone runs (its run is cancelled instead), and
    // a cancel waiting for this split sees the runs it creates.
    const live = await trx
      .updateTable('notifications')
      .set((eb) => ({ updated_at: eb.ref('updated_at') }))
      .where('id', '=', run.notification_id)
      .where('status', '!=', 'cancelled')
      .executeTakeFirst();
    if (!Number(live.numUpdatedRows)) {
      await trx.updateTable('notification_runs').set({ status: 'cancelled', finished_at: now, lease_until: null }).where('id', '=', run.id).where('status', '=', 'sending').execute();
      return false;
    }
    // Compare-and-set on `zones is null`: a recovered fan-out of the same run never splits it twice.
    const updated = await trx
      .updateTable('notification_runs')
      .set({
        zones: JSON.stringify(first.zones),
        zone_send_id: run.id,
        ...(startsNow ? {} : { status: 'pending' as const, due_at: first.dueAt, started_at: null, lease_owner: null, lease_until: null }),
      })
      .where('id', '=', run.id)
      .where('status', '=', 'sending')
      .where('zones', 'is', null)
      .executeTakeFirst();
    if (!Number(updated.numUpdatedRows)) return false;
    // A welcome step held for quiet hours keeps its gap to the steps after it: each is due its delay after the one
    // before (docs/delivery.md, "Quiet hours"), so they move by the same wait.
    if (!startsNow) await delayFollowingRuns(trx, run, first.dueAt - run.due_at);
    for (const group of rest) {
      await insertRun(trx, {
        id: crypto.randomUUID(),
        notification_id: run.notification_id,
        site_id: run.site_id,
        dedupe_key: `${run.dedupe_key}@${group.dueAt}`,
        due_at: group.dueAt,
        segment_id: run.segment_id,
        subscriber_id: run.subscriber_id,
        zones: JSON.stringify(group.zones),
        zone_send_id: run.id,
        created_at: now,
      });
    }
    const deferred = groups.reduce((sum, group) => sum + group.deferred, 0);
    if (deferred) {
      await trx
        .updateTable('notifications')
        .set((eb) => ({ quiet_hours_deferred_count: eb('quiet_hours_deferred_count', '+', deferred) }))
        .where('id', '=', run.notification_id)
        .execute();
    }
    return true;
  });
  if (!split) return undefined;
  deps.log.info({ runId: run.id, runs: groups.length, zones: groups.reduce((sum, group) => sum + group.zones.length, 0) }, 'send split by subscriber zone');
  return startsNow ? { ...run, zones: JSON.stringify(first.zones), zone_send_id: run.id } : undefined;
}
