// Subscribes that arrive together are written together (docs/storage.md,
// "Subscribes are group-committed"). A subscribe is a handful of small
// statements plus three counter rows every subscribe of a site shares (the
// site's active count, the hourly rollup, the prompt's hourly row). Written
// one transaction each, a burst of subscribes paid a commit apiece and, on
// PostgreSQL, queued on those rows' locks. Here the first call is written at
// once; calls arriving while a batch is being written wait for it and go
// together in the next transaction, with each counter row changed once per
// batch. Nothing waits when traffic is light.
import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema';
import { addToHourlyStats, addToPromptStats, adjustActiveSubscriberCount, hourStart } from '../analytics/site-counters';

/** Subscribes per transaction at most: a batch stays a short transaction. */
const MAX_BATCH = 200;

/**
 * What a batch of subscribes adds to the counters, written once at the end
 * of its transaction: sites rows first, then the hourly rows, each in key
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

  async write(trx: Transaction<Database>): Promise<void> {
    const byKey = <T>(rows: Map<string, T>) => [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
    for (const site of byKey(this.activated)) await adjustActiveSubscriberCount(trx, site.siteId, site.count);
    for (const hour of byKey(this.subscribedHourly)) await addToHourlyStats(trx, hour.siteId, hour.at, { subscribed: hour.count });
    for (const row of byKey(this.converted)) await addToPromptStats(trx, row.siteId, row.at, row.prompt, { subscribed: row.count });
  }
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

interface Waiting<Item, Result> {
  item: Item;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit. `writeBatch` writes several items in one transaction;
 * `writeOne` writes one alone (with its own retries); up to `concurrency`
 * batches are written at once (a database with several connections). A batch that fails is
 * rolled back as a whole, so each of its items is then written alone, one
 * after another, and fails or succeeds on its own.
 */
export function groupCommit<Item, Result>(
  writeBatch: (items: Item[]) => Promise<Result[]>,
  writeOne: (item: Item) => Promise<Result>,
  options: { concurrency?: number } = {},
): (item: Item) => Promise<Result> {
  const queue: Array<Waiting<Item, Result>> = [];
  /** Batches written at once, each taking what is queued when it starts. */
  const concurrency = Math.max(1, options.concurrency ?? 1);
  let writing = 0;

  const settle = async (waiting: Waiting<Item, Result>) => {
    try {
      waiting.resolve(await writeOne(waiting.item));
    } catch (error) {
      waiting.reject(error);
    }
  };

  const drain = async () => {
    try {
      while (queue.length) {
        const batch = queue.splice(0, MAX_BATCH);
        if (batch.length === 1) {
          await settle(batch[0]!);
          continue;
        }
        let results: Result[] | undefined;
        try {
          results = await writeBatch(batch.map((waiting) => waiting.item));
        } catch {
          // Rolled back as a whole: nothing of it is stored.
          results = undefined;
        }
        if (results) batch.forEach((waiting, index) => waiting.resolve(results[index]!));
        else for (const waiting of batch) await settle(waiting);
        await nextTurn();
      }
    } finally {
      writing -= 1;
    }
  };

  return (item) =>
    new Promise<Result>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (writing >= concurrency) return;
      writing += 1;
      // Started on the event loop's next turn, not now: on SQLite a batch runs
      // to its end without giving the loop a turn (the driver is synchronous), so
      // requests already read from sockets could otherwise never join it.
      void nextTurn().then(drain);
    });
}
