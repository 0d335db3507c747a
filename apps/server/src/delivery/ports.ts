// What the delivery engine needs from the features above it, declared here and
// wired at the composition root (runtime.ts), so delivery/ never imports a
// feature: who a run reaches (segments), what happens to a subscriber a push
// service says is gone (subscribers), and the site-level counters a send adds
// to (analytics). See ARCHITECTURE.md, "Layers".
import type { FailureReason, PushServiceName } from '@herald/contracts';
import type { Kysely, Transaction } from 'kysely';
import type { Database, DeliveryHealthOutcome, RunRow } from '../db/schema';

type Db = Kysely<Database> | Transaction<Database>;

export type AudienceRun = Pick<RunRow, 'id' | 'site_id' | 'subscriber_id' | 'segment_id' | 'started_at' | 'due_at' | 'zones'>;

/** A subscriber of a run's audience: its id, and its number, which its delivery row names it by (migration 0036). */
export interface AudienceMember {
  id: string;
  seq: number;
}

/** One page of a run's audience, or why the run reaches nobody (its segment is gone or unreadable). */
export type AudiencePage = { subscribers: AudienceMember[] } | { nobodyBecause: string };

/**
 * The next page of a run's audience, by subscriber id after `cursor`, at most
 * `limit` subscribers in ascending id order (keyset pagination keeps memory flat).
 */
export type SelectAudiencePage = (db: Db, run: AudienceRun, cursor: string | null, limit: number) => Promise<AudiencePage>;

/**
 * The run's audience (its `zones` aside) counted by subscriber time zone (null:
 * none given), to split a send by zone (docs/delivery.md, "Local-time
 * delivery"); empty when it reaches nobody.
 */
export type AudienceZones = (db: Db, run: AudienceRun) => Promise<Array<{ zone: string | null; subscribers: number }>>;

export interface GoneSubscriber {
  subscriberId: string;
  /** The endpoint the message went to: a subscriber that re-subscribed since is not gone. */
  endpointHashSentTo: string;
}

/**
 * Deactivates subscribers a push service answered 404/410 for (or named
 * invalid), inside the result transaction; returns how many it deactivated
 * (the caller counts them).
 */
export type DeactivateGoneSubscribers = (trx: Transaction<Database>, gone: GoneSubscriber[], now: number) => Promise<number>;

/** `lost_at_push_service`: of `unsubscribed`, those deactivated because their push service said so. */
export type SiteCounterIncrements = Partial<Record<'sent' | 'failed' | 'delivered' | 'clicked' | 'unsubscribed' | 'lost_at_push_service', number>>;

/** Adds a send's or a beacon's counts to its site (hourly rollup, active subscribers), in the caller's transaction. */
export type AddToSiteCounters = (db: Db, siteId: string, at: number, counters: SiteCounterIncrements) => Promise<void>;

/** One result of a send for the Delivery section: accepted (with the time from due to accepted), failed with its reason, or expired. */
export interface DeliveryHealthEntry {
  pushService: PushServiceName;
  outcome: DeliveryHealthOutcome;
  reason: FailureReason | null;
  /** Accepted only. */
  latencyMs?: number;
}

/** Adds results to the site's per push service hourly rollup (delivery_stats_hourly), in the caller's transaction. */
export type AddToDeliveryHealth = (db: Db, siteId: string, at: number, entries: readonly DeliveryHealthEntry[]) => Promise<void>;

/**
 * A run reached its final status (completed, completed_with_errors, failed):
 * called inside the transaction that set it, with the run as finished, so
 * what it writes (webhooks' outbox) commits with the status.
 */
export type RunFinished = (trx: Transaction<Database>, run: RunRow, now: number) => Promise<void>;

export interface DeliveryPorts {
  selectAudiencePage: SelectAudiencePage;
  countAudienceByZone: AudienceZones;
  deactivateGoneSubscribers: DeactivateGoneSubscribers;
  addToSiteCounters: AddToSiteCounters;
  addToDeliveryHealth: AddToDeliveryHealth;
  runFinished: RunFinished;
}
