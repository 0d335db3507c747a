import type { Kysely, Transaction } from 'kysely';
import type { AppContext } from '../../context';
import type { Database } from '../../db/schema';
import { groupCommit } from '../../db/group-commit';
import { isTestPushToken, readDeliveryToken } from '../../delivery/delivery-token';
import { badRequest } from '../../platform/errors';
import * as repo from './repository';
import type { BeaconWrite } from './repository';

export type BeaconType = 'delivered' | 'clicked';

/** The runs a SQLite batch of beacons has read, by number (runCountedFor). */
type RunsOfBatch = Map<number, Awaited<ReturnType<typeof repo.runCountedFor>>>;

/**
 * Records a "delivered" or "clicked" beacon from the service worker. The token
 * is signed by the server (forged ones are refused); a replay counts once; a
 * click also counts as a delivery if none was seen, so clicks never exceed
 * deliveries (docs/security.md, public endpoints). A test push's token is
 * genuine but names no delivery: answered, never counted.
 *
 * The beacon marks its delivery and appends what it counts to
 * `uncounted_beacons`, in one transaction; the fold (fold.ts) adds those to
 * the run's, the notification's and the hourly counters about every second,
 * so beacons never wait for each other on those rows (docs/delivery.md, "How
 * beacons are counted").
 */
export function createTrackingService(ctx: Pick<AppContext, 'db' | 'dbKind' | 'clock' | 'secret'>) {
  const { db, clock, secret } = ctx;
  /**
   * PostgreSQL: beacons arriving together go in one statement (db/group-commit.ts):
   * a burst after a big send pays a round trip and a statement per batch, not
   * per beacon. A batch names each delivery once; a repeat in the same batch
   * (a click right behind its delivered beacon, a replay) is written after it,
   * alone, in the same transaction, so the batch still commits or rolls back whole.
   */
  const recordOnPostgres = groupCommit<BeaconWrite, boolean>(
    async (beacons) => {
      const seen = new Set<number>();
      const firsts = beacons.filter((beacon) => !seen.has(beacon.deliveryId) && seen.add(beacon.deliveryId));
      const write = async (trx: Kysely<Database> | Transaction<Database>) => {
        const counted = await repo.recordBeaconsInOneStatement(trx, firsts);
        const results: boolean[] = [];
        const written = new Set<number>();
        for (const beacon of beacons) {
          if (!written.has(beacon.deliveryId)) {
            written.add(beacon.deliveryId);
            results.push(counted.has(beacon.deliveryId));
          } else results.push((await repo.recordBeaconsInOneStatement(trx, [beacon])).has(beacon.deliveryId));
        }
        return results;
      };
      return firsts.length === beacons.length ? write(db) : db.transaction().execute(write);
    },
    async (beacon) => (await repo.recordBeaconsInOneStatement(db, [beacon])).has(beacon.deliveryId),
    // A few batches at once on the pool's connections; each locks only its own deliveries.
    { concurrency: 4 },
  );
  /**
   * SQLite (no data-modifying WITH): a beacon's steps in the caller's
   * transaction. A click whose delivered beacon never came counts the
   * delivery too. A genuine token whose delivery was deleted with its
   * notification matches no row: nothing to count.
   */
  const recordInTransaction = async (trx: Transaction<Database>, { type, deliveryId, at }: BeaconWrite, runs: RunsOfBatch): Promise<boolean> => {
    const delivered = await repo.markDelivered(trx, deliveryId, at);
    const clicked = type === 'clicked' ? await repo.markClicked(trx, deliveryId, at) : undefined;
    const delivery = delivered ?? clicked;
    if (!delivery) return false;
    if (delivered) await repo.recordDeliveredTo(trx, delivery.subscriber_seq, at);
    // The beacons of a batch mostly belong to one send: its run is read once.
    let run = runs.get(delivery.run_seq);
    if (!run) runs.set(delivery.run_seq, (run = await repo.runCountedFor(trx, delivery.run_seq)));
    await repo.addUncountedBeacon(trx, {
      site_id: run.site_id,
      notification_id: run.notification_id,
      run_id: run.id,
      at,
      delivered: delivered ? 1 : 0,
      clicked: clicked ? 1 : 0,
    });
    return true;
  };
  /** SQLite: beacons arriving together in one transaction, each written as if alone, in the order they came (one commit for the batch). */
  const recordOnSqlite = groupCommit<BeaconWrite, boolean>(
    (beacons) =>
      db.transaction().execute(async (trx) => {
        const results: boolean[] = [];
        const runs: RunsOfBatch = new Map();
        for (const beacon of beacons) results.push(await recordInTransaction(trx, beacon, runs));
        return results;
      }),
    (beacon) => db.transaction().execute((trx) => recordInTransaction(trx, beacon, new Map())),
  );
  return {
    async record(type: BeaconType, token: string): Promise<{ counted: boolean }> {
      // A test push's beacon is accepted and counts nowhere (delivery/test-push.ts).
      if (isTestPushToken(secret, token)) return { counted: false };
      const deliveryId = readDeliveryToken(secret, token);
      if (deliveryId === undefined) throw badRequest('Invalid token');
      const now = clock.now();
      const beacon = { type, deliveryId, at: now };
      return { counted: await (ctx.dbKind === 'postgres' ? recordOnPostgres(beacon) : recordOnSqlite(beacon)) };
    },
  };
}
