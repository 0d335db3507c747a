// SQLite WAL checkpoints on another thread while an import or a process
// role holds them (db/wal-checkpoints.ts, docs/storage.md "SQLite
// checkpoints on another thread"). A SQLite engine feature: it runs on
// SQLite whatever HERALD_TEST_DB says.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database';
import { walCheckpointsFor } from '../../src/db/wal-checkpoints';

const opened: Array<{ handle: DatabaseHandle; dir: string }> = [];
afterEach(async () => {
  for (const { handle, dir } of opened.splice(0)) {
    await handle.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

function openFile(): { handle: DatabaseHandle; file: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-wal-'));
  const file = path.join(dir, 'herald.db');
  const handle = openDatabase({ kind: 'sqlite', file });
  opened.push({ handle, dir });
  return { handle, file };
}

const autocheckpointPages = async (handle: DatabaseHandle) => Number((await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(handle.db)).rows[0]!.wal_autocheckpoint);

/** About 8 MB of pages in one commit: far past SQLite's own 1,000-page checkpoint point, well under the safety net. */
async function writeBulk(handle: DatabaseHandle): Promise<void> {
  await sql`create table bulk (id integer primary key, body text not null)`.execute(handle.db);
  await handle.db.transaction().execute(async (trx) => {
    for (let i = 0; i < 2000; i += 1) await sql`insert into bulk (body) values (${'x'.repeat(4000)})`.execute(trx);
  });
}

async function waitFor(condition: () => boolean, ms: number): Promise<boolean> {
  for (const started = Date.now(); Date.now() - started < ms; ) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return condition();
}

describe('SQLite WAL checkpoints during a bulk write', () => {
  it('while held, the main connection leaves checkpoints to another thread, which copies the committed pages into the file', async () => {
    const { handle, file } = openFile();
    expect(await autocheckpointPages(handle)).toBe(1000);
    const release = handle.holdBackgroundCheckpoints();
    expect(await autocheckpointPages(handle)).toBe(25_000);
    const before = fs.statSync(file).size;
    await writeBulk(handle);
    // The commit itself left the pages in the WAL; the thread moves them into the database file.
    expect(await waitFor(() => fs.statSync(file).size > before + 7_000_000, 10_000)).toBe(true);
    release();
    expect(await autocheckpointPages(handle)).toBe(1000);
  });

  it('holds nest: checkpoints stay on the thread until the last holder releases, and releasing twice changes nothing', async () => {
    const { handle } = openFile();
    const first = handle.holdBackgroundCheckpoints();
    const second = handle.holdBackgroundCheckpoints();
    first();
    first();
    expect(await autocheckpointPages(handle)).toBe(25_000);
    second();
    expect(await autocheckpointPages(handle)).toBe(1000);
  });

  it('closing the database while held ends the thread and closes cleanly', async () => {
    const { handle } = openFile();
    handle.holdBackgroundCheckpoints();
    await writeBulk(handle);
    await handle.close();
    opened.pop();
  });

  it('without a hold, commits checkpoint on the main connection as SQLite does by default', async () => {
    const { handle, file } = openFile();
    const before = fs.statSync(file).size;
    await writeBulk(handle);
    // Checkpointed by the commit itself, before it returned.
    expect(fs.statSync(file).size).toBeGreaterThan(before + 7_000_000);
  });

  it('a thread that cannot start is reported, and the connection is set back when the hold ends', async () => {
    const pragmas: string[] = [];
    const failures: unknown[] = [];
    const checkpoints = walCheckpointsFor({ pragma: (source: string) => pragmas.push(source) } as never, path.join(os.tmpdir(), 'herald-no-such-folder', 'missing.db'), (error) => failures.push(error));
    const release = checkpoints.hold();
    expect(await waitFor(() => failures.length > 0, 10_000)).toBe(true);
    expect(String(failures[0])).toMatch(/directory does not exist|unable to open|SQLITE_CANTOPEN/i);
    release();
    await checkpoints.close();
    expect(pragmas).toEqual(['wal_autocheckpoint = 25000', 'wal_autocheckpoint = 1000']);
  });
});
