// Group commit (docs/storage.md, "Group commit"): calls that arrive while a
// batch is being written wait for it and are written together in the next
// one, so a burst pays one transaction (and, on PostgreSQL, one round trip
// and one lock on each shared row) for many calls. The first call after a
// quiet moment is written on the event loop's next turn: nothing waits for
// a batch to fill when traffic is light. Used by public subscribes
// (features/subscribers/subscribe-batches.ts) and beacons
// (features/tracking/service.ts).

/** Items per batch at most: a batch stays a short transaction. */
const MAX_BATCH = 200;

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
