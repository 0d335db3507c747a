// SQLite transactions take the write lock at BEGIN (db/database.ts,
// docs/storage.md "SQLite transactions take the write lock first"): a
// transaction that reads, then writes, while another process holds the
// write lock waits for it instead of failing with SQLITE_BUSY. A SQLite
// engine feature: it runs on SQLite whatever HERALD_TEST_DB says.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { sql } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database';

const cleanUps: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanUp of cleanUps.splice(0)) await cleanUp();
});

/**
 * Another connection (a thread of its own, as another process would be)
 * takes the write lock, writes a row, and holds the lock for `holdMs`
 * before it commits. Resolves once it holds the lock; `committed` once it
 * let it go.
 */
async function holdWriteLock(file: string, holdMs: number): Promise<{ committed: Promise<void> }> {
  const worker = new Worker(
    `
    const { parentPort, workerData } = require('node:worker_threads');
    const Database = require('better-sqlite3');
    const db = new Database(workerData.file);
    db.pragma('busy_timeout = 5000');
    db.exec('begin immediate');
    db.prepare('insert into counters (name, value) values (?, 1)').run('other process');
    parentPort.postMessage('locked');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, workerData.holdMs);
    db.exec('commit');
    db.close();
    parentPort.postMessage('committed');
    `,
    { eval: true, workerData: { file, holdMs } },
  );
  cleanUps.push(async () => void (await worker.terminate()));
  let committed!: () => void;
  const committedPromise = new Promise<void>((resolve) => (committed = resolve));
  await new Promise<void>((resolve, reject) => {
    worker.on('error', reject);
    worker.on('message', (message: string) => {
      if (message === 'locked') resolve();
      if (message === 'committed') committed();
    });
  });
  return { committed: committedPromise };
}

it('a transaction that reads and then writes waits for another process’s write lock instead of failing with SQLITE_BUSY', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-immediate-'));
  const file = path.join(dir, 'herald.db');
  const handle: DatabaseHandle = openDatabase({ kind: 'sqlite', file });
  cleanUps.push(async () => {
    await handle.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  await sql`create table counters (name text primary key, value integer not null)`.execute(handle.db);
  await sql`insert into counters (name, value) values ('ours', 0)`.execute(handle.db);

  const other = await holdWriteLock(file, 400);
  const started = Date.now();
  // The shape of a subscribe batch: a read (the sites and their keys), then writes.
  await handle.db.transaction().execute(async (trx) => {
    const before = await sql<{ value: number }>`select value from counters where name = 'ours'`.execute(trx);
    await sql`update counters set value = ${before.rows[0]!.value + 1} where name = 'ours'`.execute(trx);
  });
  await other.committed;

  // It waited for the other writer (the lock was held 400 ms), and both writes are there.
  expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  const rows = await sql<{ name: string; value: number }>`select name, value from counters order by name`.execute(handle.db);
  expect(rows.rows).toEqual([
    { name: 'other process', value: 1 },
    { name: 'ours', value: 1 },
  ]);
});
