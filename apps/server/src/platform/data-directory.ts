// DATA_DIR holds the server secret (secret.key), the SQLite database with the
// sites' VAPID private keys (herald.db and its -wal/-shm files), the mail
// outbox with reset links, and uploads. Only Herald's own user may read it
// (docs/security.md, "Secrets on disk").
import fs from 'node:fs';
import path from 'node:path';
import { isMainThread } from 'node:worker_threads';
import type { Config } from '../config';

/** Files created from now on: owner read/write only (0600), folders 0700. */
export const PRIVATE_UMASK = 0o077;
export const PRIVATE_DIRECTORY_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

export interface TightenedPath {
  path: string;
  /** The permission bits it had, e.g. 0o644. */
  from: number;
  to: number;
}

/** The secret files of a configuration: what must not be readable by other local users. */
export function secretFilesOf(config: Pick<Config, 'dataDir' | 'database'>): string[] {
  const files = [path.join(config.dataDir, 'secret.key')];
  if (config.database.kind === 'sqlite') {
    const db = config.database.file;
    files.push(db, `${db}-wal`, `${db}-shm`, `${db}-journal`);
  }
  return files;
}

/** Removes group and other permissions from an existing path; undefined when it was already private or is missing. */
function tighten(target: string, mode: number): TightenedPath | undefined {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const current = stat.mode & 0o777;
  if ((current & 0o077) === 0) return undefined;
  fs.chmodSync(target, mode);
  return { path: target, from: current, to: mode };
}

const octal = (mode: number) => `0${mode.toString(8)}`;

/**
 * Run at the start of every role, before the database or the secret is
 * opened: sets the process umask so every file Herald creates afterwards
 * (database, WAL, mail, uploads) is private, creates DATA_DIR 0700, and
 * tightens DATA_DIR and the secret files when an older version or an
 * administrator left them readable by others. Logs one line when it changed
 * anything; a path it may not change (owned by another user) is a warning,
 * not a failure.
 */
export function protectDataDirectory(config: Pick<Config, 'dataDir' | 'database'>, log: { warn(msg: string): void }): TightenedPath[] {
  // Worker threads share the process umask and may not set it.
  if (isMainThread) process.umask(PRIVATE_UMASK);
  fs.mkdirSync(config.dataDir, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
  const tightened: TightenedPath[] = [];
  const refused: string[] = [];
  const attempt = (target: string, mode: number) => {
    try {
      const changed = tighten(target, mode);
      if (changed) tightened.push(changed);
    } catch (error) {
      refused.push(`${target} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  };
  attempt(config.dataDir, PRIVATE_DIRECTORY_MODE);
  for (const file of secretFilesOf(config)) attempt(file, PRIVATE_FILE_MODE);

  if (tightened.length) {
    // warn, not info: `migrate` and `user` run at warn level, and whichever role starts first is the one that tightens.
    log.warn(`Tightened permissions so only Herald's user can read its secrets: ${tightened.map((t) => `${t.path} ${octal(t.from)} → ${octal(t.to)}`).join(', ')}`);
  }
  if (refused.length) log.warn(`Could not make these private (change their owner or mode by hand): ${refused.join(', ')}`);
  return tightened;
}
