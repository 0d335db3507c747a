// Delivery retention (docs/storage.md, "Retention"; docs/delivery.md,
// "Retention"): the delivery rows of runs finished more than
// DELIVERY_RETENTION_DAYS ago are compacted into per-run counts a little at
// a time, and then the runs made for one subscriber go too, so storage
// stops growing with every push sent while every figure a screen shows
// stays what it was.
import type { AppContext } from '../../context';
import type { DueWorkSource } from '../../jobs/scheduler';
import * as repo from './repository';

const DAY_MS = 86_400_000;

export interface DeliveryRetentionOptions {
  /** How often a scheduler sweeps (not every tick: the work is never urgent). */
  everyMs: number;
  /**
   * Rows per transaction: short enough never to hold up a send's writes for
   * long (on SQLite a transaction holds the one writer lock; bench:storage
   * measured 2,000 rows at 60–130 ms on a busy 2-core machine, so 1,000).
   */
  batchSize: number;
  /** Transactions per sweep: at the defaults up to 40,000 rows a minute, many times what a busy site adds (150 million a month is ~3,500 a minute). */
  maxBatches: number;
}

/** Runs a step takes rows from: a send's runs have thousands of rows each, a trigger's or a welcome step's one. */
const RUNS_PER_STEP = 500;

const RETENTION_DEFAULTS: DeliveryRetentionOptions = { everyMs: 60_000, batchSize: 1_000, maxBatches: 40 };

/**
 * Compacts what is past the retention, up to `maxBatches` steps that remove
 * rows; returns how many delivery rows it removed (0: nothing is left to
 * do). Two schedulers doing it at once take turns on the same runs (each
 * row is deleted once), so nothing is counted twice.
 */
export async function compactOldDeliveries(ctx: Pick<AppContext, 'db' | 'dbKind' | 'config'>, now: number, options: DeliveryRetentionOptions = RETENTION_DEFAULTS): Promise<number> {
  const cutoff = now - ctx.config.deliveryRetentionDays * DAY_MS;
  let removed = 0;
  let steps = 0;
  while (steps < options.maxBatches) {
    const runs = await repo.runsToCompact(ctx.db, cutoff, RUNS_PER_STEP, now);
    if (!runs.length) break;
    for (;;) {
      const step = await repo.compactStep(ctx.db, ctx.dbKind, runs, cutoff, options.batchSize, now);
      // A step that found no row but marked runs done costs nothing against the budget; one that did neither
      // (rows another transaction was deleting meanwhile) does, so a sweep always ends.
      if (step.removed > 0 || step.marked === 0) steps += 1;
      removed += step.removed;
      if (step.removed < options.batchSize || steps >= options.maxBatches) break;
    }
  }
  return removed;
}

/**
 * Removes the one-subscriber runs compaction has emptied (trigger firings,
 * welcome steps: a run each), `batchSize` per transaction, at most
 * `maxBatches` transactions; returns how many it removed.
 */
export async function removeCompactedRuns(ctx: Pick<AppContext, 'db'>, options: DeliveryRetentionOptions = RETENTION_DEFAULTS): Promise<number> {
  let removed = 0;
  for (let step = 0; step < options.maxBatches; step++) {
    const count = await repo.removeCompactedPersonalRuns(ctx.db, options.batchSize);
    removed += count;
    if (count < options.batchSize) break;
  }
  return removed;
}

/** The due-work source: a sweep at most every `everyMs` per scheduler. */
export function deliveryRetentionSource(ctx: Pick<AppContext, 'db' | 'dbKind' | 'config' | 'log'>, options: DeliveryRetentionOptions = RETENTION_DEFAULTS): DueWorkSource {
  let lastSweepAt = -Infinity;
  return {
    name: 'delivery-retention',
    async runDue(now) {
      if (now - lastSweepAt < options.everyMs) return;
      lastSweepAt = now;
      const removed = await compactOldDeliveries(ctx, now, options);
      if (removed > 0) ctx.log.info({ removed }, 'compacted old delivery rows');
      const removedRuns = await removeCompactedRuns(ctx, options);
      if (removedRuns > 0) ctx.log.info({ removedRuns }, 'removed compacted one-subscriber runs');
    },
  };
}
