// Beacons are counted by the fold about every second (docs/delivery.md, "How
// beacons are counted"); a test that reads counters after beacons folds first.
import type { AppContext } from '../../src/context';
import { foldAllBeaconCounts } from '../../src/features/tracking/fold';

/**
 * Folds every beacon recorded so far into the counters. When a scheduler of
 * the test folds at the same moment (PostgreSQL: it holds its rows, ours
 * skips them), this goes on until its transaction has committed too, so the
 * counters read next include every beacon answered before the call.
 */
export async function foldBeacons(ctx: AppContext): Promise<void> {
  const waiting = async () => (await ctx.db.selectFrom('uncounted_beacons').select('id').limit(1).executeTakeFirst()) !== undefined;
  while (await waiting()) await foldAllBeaconCounts(ctx);
}
