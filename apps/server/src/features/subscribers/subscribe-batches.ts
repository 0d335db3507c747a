// Subscribes that arrive together are written together (docs/storage.md,
// "Subscribes are group-committed"). A subscribe is a handful of small
// statements plus three counter rows every subscribe of a site shares (the
// site's active count, the hourly rollup, the prompt's hourly row). Written
// one transaction each, a burst of subscribes paid a commit apiece and, on
// PostgreSQL, queued on those rows' locks. With db/group-commit.ts, calls
// arriving while a batch is being written go together in the next
// transaction, with each counter row changed once per batch (the tally here).
import type { Transaction } from 'kysely';
import type { DatabaseKind } from '../../db/database';
import type { Database } from '../../db/schema';
import { addSubscribedToPromptStats, addToHourlyStatsOfSites, adjustActiveSubscriberCounts, hourStart } from '../analytics/site-counters';

/**
 * What a batch of subscribes adds to the counters, written once at the end
 * of its transaction, a statement or two per table whatever the number of
 * sites in the batch: sites rows first, then the hourly rows, each in key
 * order, the order every writer of these rows follows (delivery/run-counters.ts),
 * so two processes' batches cannot deadlock on them.
 */
export class SubscribeTally {
  private readonly activated = new Map<string, { siteId: string; count: number }>();
  private readonly subscribedHourly = new Map<string, { siteId: string; at: number; count: number }>();
  private readonly converted = new Map<string, { siteId: string; at: number; prompt: string; count: number }>();

  /** A subscriber became active: the site's active count and the hour's subscribed count. */
  activation(siteId: string, at: number): void {
    const site = this.activated.get(siteId) ?? { siteId, count: 0 };
    site.count += 1;
    this.activated.set(siteId, site);
    const key = `${siteId}\u0000${hourStart(at)}`;
    const hour = this.subscribedHourly.get(key) ?? { siteId, at, count: 0 };
    hour.count += 1;
    this.subscribedHourly.set(key, hour);
  }

  /** The prompt that brought a subscriber in (subscriber analytics: conversion). */
  conversion(siteId: string, at: number, prompt: string): void {
    const key = `${siteId}\u0000${hourStart(at)}\u0000${prompt}`;
    const row = this.converted.get(key) ?? { siteId, at, prompt, count: 0 };
    row.count += 1;
    this.converted.set(key, row);
  }

  async write(trx: Transaction<Database>, kind: DatabaseKind): Promise<void> {
    await adjustActiveSubscriberCounts(trx, kind, [...this.activated.values()].map((site) => ({ siteId: site.siteId, delta: site.count })));
    await addToHourlyStatsOfSites(trx, 'subscribed', [...this.subscribedHourly.values()]);
    await addSubscribedToPromptStats(trx, [...this.converted.values()]);
  }
}
