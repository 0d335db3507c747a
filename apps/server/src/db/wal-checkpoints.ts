// WAL checkpoints on another thread while an import or a process role holds
// them (docs/storage.md, "SQLite checkpoints on another thread").
//
// In WAL mode SQLite copies committed pages back into the database file
// ("checkpoint") on the connection that commits, by default once the WAL
// holds 1,000 pages, and with synchronous=NORMAL it syncs the WAL and the
// file to disk each time. A million-row import dirties thousands of index
// pages per batch, so nearly every commit paid a checkpoint and two fsyncs
// on the main thread: bench:import measured about a third of the SQLite
// import in those commits. While something holds it, a worker thread with
// its own connection checkpoints (PASSIVE: never blocks the writer) every
// CHECKPOINT_EVERY_MS, and the main connection checkpoints itself only past
// SAFETY_NET_PAGES, should that thread fall behind or die.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';

/** SQLite's own default for wal_autocheckpoint, in pages. */
const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;
/** While checkpoints run on the worker, the main connection checkpoints itself only past this many WAL pages (about 100 MB). */
const SAFETY_NET_PAGES = 25_000;
const CHECKPOINT_EVERY_MS = 100;

/** The worker: a connection of its own that checkpoints on a timer until told to stop. CommonJS, run with `eval`, so it needs no bundle entry. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 1000');
// NORMAL: the WAL is synced before each checkpoint and the file after it, as on the main connection.
db.pragma('synchronous = NORMAL');
const checkpoint = () => { try { db.pragma('wal_checkpoint(PASSIVE)'); } catch { /* busy or locked: the next tick tries again */ } };
const timer = setInterval(checkpoint, workerData.everyMs);
parentPort.on('message', () => { clearInterval(timer); checkpoint(); db.close(); parentPort.close(); });
`;

export interface WalCheckpoints {
  /** Checkpoints run on another thread until the returned function is called; holds nest. */
  hold(): () => void;
  /** Ends the thread if one runs (the database is closing). */
  close(): Promise<void>;
}

/** `onError`: told when the thread fails (it is then not restarted until the next hold). */
export function walCheckpointsFor(sqlite: Pick<SQLite.Database, 'pragma'>, file: string, onError: (error: unknown) => void = () => undefined): WalCheckpoints {
  let holders = 0;
  let running: { worker: Worker; exited: Promise<void> } | undefined;
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');

  /** Threads told to stop and not yet ended: closing the database waits for them (their connections write the files). */
  const ending = new Set<Promise<void>>();
  const stop = async () => {
    const thread = running;
    running = undefined;
    if (thread) {
      sqlite.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
      // Unreferenced while it runs; referenced now so that the process waits for its last checkpoint and close.
      thread.worker.ref();
      thread.worker.postMessage('stop');
      ending.add(thread.exited);
      void thread.exited.then(() => ending.delete(thread.exited));
    }
    await Promise.all(ending);
  };

  return {
    hold() {
      holders += 1;
      if (holders === 1) {
        const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, file, everyMs: CHECKPOINT_EVERY_MS }, name: 'herald-wal-checkpoints' });
        const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
        // The thread is a help, not a duty: if it fails, the main connection's own checkpoints (at SAFETY_NET_PAGES) still bound the WAL.
        worker.on('error', onError);
        worker.unref();
        running = { worker, exited };
        sqlite.pragma(`wal_autocheckpoint = ${SAFETY_NET_PAGES}`);
      }
      let released = false;
      return () => {
        if (released) return;
        released = true;
        // A hold released after close() (an import ending as the server stops) finds nothing left to stop.
        if (holders === 0) return;
        holders -= 1;
        if (holders === 0) void stop();
      };
    },
    async close() {
      holders = 0;
      await stop();
    },
  };
}
