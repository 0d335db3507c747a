import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { protectDataDirectory } from '../../src/platform/data-directory';
import { openRuntime } from '../../src/runtime';

// docs/security.md "Secrets on disk": DATA_DIR holds secret.key and (with
// SQLite) the database with every site's VAPID private key. Every role opens
// its runtime through openRuntime (roles.ts, main.ts `migrate` and `user`),
// so that is the path tested here. Always SQLite: the files are the point.

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-perm-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

let savedUmask: number;
beforeEach(() => {
  // The usual login umask, under which Herald used to leave its files world-readable.
  savedUmask = process.umask(0o022);
});
afterEach(() => {
  process.umask(savedUmask);
});

describe('data folder permissions (issue 10 item 8)', () => {
  it('a fresh start creates DATA_DIR 0700 and the database, its WAL/SHM and secret.key 0600', async () => {
    const dataDir = path.join(root, 'fresh', 'data');
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    const runtime = await openRuntime(config);
    try {
      // A write, so SQLite has its -wal and -shm files open.
      await runtime.ctx.mailer.send({ to: 'owner@example.com', subject: 'Reset', text: 'https://herald.test/reset?token=secret' });
      await runtime.database.db.insertInto('rate_limits').values({ key: 'probe', window_start: 1, hits: 1, expires_at: 2 }).execute();

      expect(modeOf(dataDir).toString(8)).toBe('700');
      for (const file of ['herald.db', 'herald.db-wal', 'herald.db-shm', 'secret.key']) {
        expect(fs.existsSync(path.join(dataDir, file)), file).toBe(true);
        expect(modeOf(path.join(dataDir, file)).toString(8), file).toBe('600');
      }
      // Files made later by the running process (the mail outbox holds reset links) are private too.
      const mailDir = path.join(dataDir, 'mail');
      expect(modeOf(mailDir).toString(8)).toBe('700');
      for (const mail of fs.readdirSync(mailDir)) expect(modeOf(path.join(mailDir, mail)).toString(8)).toBe('600');
    } finally {
      await runtime.close();
    }
  });

  it('tightens an existing 0755 folder, a 0644 secret.key and 0644 database files, and says so in one line', async () => {
    const dataDir = path.join(root, 'old');
    fs.mkdirSync(dataDir, { mode: 0o755 });
    fs.chmodSync(dataDir, 0o755);
    const secret = path.join(dataDir, 'secret.key');
    fs.writeFileSync(secret, `${'k'.repeat(48)}\n`, { mode: 0o644 });
    // A database left by an older version: SQLite files under umask 022.
    const old = new SQLite(path.join(dataDir, 'herald.db'));
    old.pragma('journal_mode = WAL');
    old.exec('create table t (x integer); insert into t values (1)');
    for (const file of ['herald.db', 'herald.db-wal', 'herald.db-shm']) expect(modeOf(path.join(dataDir, file)).toString(8)).toBe('644');
    old.close();

    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    const lines: string[] = [];
    const tightened = protectDataDirectory(config, { warn: (line) => lines.push(line) });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`${secret} 0644 → 0600`);
    expect(lines[0]).toContain(`${dataDir} 0755 → 0700`);
    expect(tightened.map((t) => path.basename(t.path)).sort()).toEqual(['herald.db', 'old', 'secret.key'].sort());

    expect(modeOf(dataDir).toString(8)).toBe('700');
    expect(modeOf(secret).toString(8)).toBe('600');
    expect(modeOf(path.join(dataDir, 'herald.db')).toString(8)).toBe('600');

    // Already private: nothing to say the next time.
    const again: string[] = [];
    expect(protectDataDirectory(config, { warn: (line) => again.push(line) })).toEqual([]);
    expect(again).toEqual([]);
  });

  it('openRuntime tightens what an older version left open, and keeps using the existing secret', async () => {
    const dataDir = path.join(root, 'upgrade');
    fs.mkdirSync(dataDir, { mode: 0o755 });
    fs.chmodSync(dataDir, 0o755);
    const secretText = 's'.repeat(48);
    fs.writeFileSync(path.join(dataDir, 'secret.key'), `${secretText}\n`, { mode: 0o644 });
    fs.chmodSync(path.join(dataDir, 'secret.key'), 0o644);

    const runtime = await openRuntime(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }));
    try {
      expect(runtime.ctx.secret.toString('utf8')).toBe(secretText);
      expect(modeOf(dataDir).toString(8)).toBe('700');
      expect(modeOf(path.join(dataDir, 'secret.key')).toString(8)).toBe('600');
      expect(modeOf(path.join(dataDir, 'herald.db')).toString(8)).toBe('600');
    } finally {
      await runtime.close();
    }
  });
});
