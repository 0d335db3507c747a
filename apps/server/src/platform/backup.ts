// `herald backup --out FILE` and `herald restore FILE` (README, "Backups").
//
// A backup is one .tar.gz holding:
//   herald-backup.json   what it holds (format, time, schema, secret fingerprint)
//   database/herald.db   the SQLite database, copied with SQLite's online
//                        backup API while Herald runs (PostgreSQL: pg_dump,
//                        outside this archive)
//   secret.key           DATA_DIR's generated secret, when there is one
//   uploads/…            uploaded images
// Restore goes into an empty data folder only: it never mixes two states.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import type { Config } from '../config';
import { secretFingerprint } from './secrets';
import { readTarGz, writeTarGz, type TarEntry } from './tar';

const MANIFEST = 'herald-backup.json';
const DATABASE_ENTRY = 'database/herald.db';
const SECRET_ENTRY = 'secret.key';
const UPLOADS = 'uploads';

export interface BackupManifest {
  format: 1;
  createdAt: string;
  /** `sqlite`: the database is in the archive; `postgres`: it is not (pg_dump it). */
  database: 'sqlite' | 'postgres';
  /** Migrations the database had (SQLite). */
  migrations: string[];
  /** Fingerprint of the secret Herald used (secret.key or SECRET_KEY); restore checks the new one against it. */
  secretFingerprint: string | null;
  secretKeyFile: boolean;
  uploads: number;
}

export class BackupError extends Error {}

/** The secret Herald uses with this configuration, without creating one. */
function currentSecret(config: Pick<Config, 'secretKey' | 'dataDir'>): Buffer | undefined {
  if (config.secretKey) return Buffer.from(config.secretKey, 'utf8');
  try {
    return Buffer.from(fs.readFileSync(path.join(config.dataDir, 'secret.key'), 'utf8').trim(), 'utf8');
  } catch {
    return undefined;
  }
}

function* filesUnder(root: string, prefix: string): Generator<{ file: string; name: string }> {
  if (!fs.existsSync(root)) return;
  for (const entry of fs.readdirSync(root, { withFileTypes: true })) {
    const file = path.join(root, entry.name);
    if (entry.isDirectory()) yield* filesUnder(file, `${prefix}${entry.name}/`);
    else if (entry.isFile()) yield { file, name: `${prefix}${entry.name}` };
  }
}

/**
 * Makes a consistent backup while Herald runs. The SQLite copy is taken in
 * one step of the online backup API (one read transaction: a snapshot, not
 * restarted by the writes of a send in progress).
 */
export async function createBackup(config: Pick<Config, 'dataDir' | 'database' | 'secretKey'>, out: string): Promise<BackupManifest> {
  const target = path.resolve(out);
  if (fs.existsSync(target)) throw new BackupError(`${target} exists already: choose a new file name`);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const staging = fs.mkdtempSync(path.join(path.dirname(target), '.herald-backup-'));
  try {
    const entries: TarEntry[] = [];
    let migrations: string[] = [];
    if (config.database.kind === 'sqlite') {
      if (!fs.existsSync(config.database.file)) throw new BackupError(`No database at ${config.database.file}: check DATA_DIR and DATABASE_URL`);
      const copy = path.join(staging, 'herald.db');
      const source = new SQLite(config.database.file, { fileMustExist: true });
      try {
        source.pragma('busy_timeout = 10000');
        // The first step copies nothing; the progress callback then asks for every page at once.
        await source.backup(copy, { progress: () => 0x7fffffff });
      } finally {
        source.close();
      }
      const snapshot = new SQLite(copy, { readonly: true });
      try {
        migrations = (snapshot.prepare('select name from kysely_migration order by name').all() as Array<{ name: string }>).map((r) => r.name);
      } finally {
        snapshot.close();
      }
      const stat = fs.statSync(copy);
      entries.push({ name: DATABASE_ENTRY, size: stat.size, mode: 0o600, mtimeMs: stat.mtimeMs, source: { file: copy } });
    }
    const secretFile = path.join(config.dataDir, 'secret.key');
    const hasSecretFile = !config.secretKey && fs.existsSync(secretFile);
    if (hasSecretFile) {
      const bytes = fs.readFileSync(secretFile);
      entries.push({ name: SECRET_ENTRY, size: bytes.length, mode: 0o600, mtimeMs: Date.now(), source: { bytes } });
    }
    let uploads = 0;
    for (const { file, name } of filesUnder(path.join(config.dataDir, UPLOADS), `${UPLOADS}/`)) {
      // Read whole (images are at most 5 MB): a file deleted meanwhile is simply left out.
      let bytes: Buffer;
      try {
        bytes = fs.readFileSync(file);
      } catch {
        continue;
      }
      entries.push({ name, size: bytes.length, mode: 0o600, mtimeMs: Date.now(), source: { bytes } });
      uploads++;
    }
    const secret = currentSecret(config);
    const manifest: BackupManifest = {
      format: 1,
      createdAt: new Date().toISOString(),
      database: config.database.kind,
      migrations,
      secretFingerprint: secret ? secretFingerprint(secret) : null,
      secretKeyFile: hasSecretFile,
      uploads,
    };
    const manifestBytes = Buffer.from(JSON.stringify(manifest, null, 2) + '\n');
    entries.unshift({ name: MANIFEST, size: manifestBytes.length, mode: 0o600, mtimeMs: Date.now(), source: { bytes: manifestBytes } });
    const partial = path.join(staging, 'backup.tar.gz');
    await writeTarGz(partial, entries);
    // Whole or not at all: the file appears under its name once complete.
    fs.renameSync(partial, target);
    return manifest;
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

function isEmptyOrMissing(folder: string): boolean {
  try {
    return fs.readdirSync(folder).length === 0;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw error;
  }
}

/** `uploads/a/b.png` stays inside uploads/; anything with `..`, a leading `/` or a backslash is refused. */
function safeUploadPath(name: string): boolean {
  const parts = name.split('/');
  return parts[0] === UPLOADS && parts.length > 1 && parts.every((part) => part !== '' && part !== '.' && part !== '..' && !part.includes('\\'));
}

export interface RestoreResult {
  manifest: BackupManifest;
  databaseFile: string | undefined;
  /** The secret the restored Herald will use differs from the one the backup was made with. */
  secretMismatch: boolean;
}

/** Restores a backup into this configuration's DATA_DIR, which must be empty (or not exist yet). */
export async function restoreBackup(config: Pick<Config, 'dataDir' | 'database' | 'secretKey'>, file: string): Promise<RestoreResult> {
  const archive = path.resolve(file);
  if (!fs.existsSync(archive)) throw new BackupError(`No backup at ${archive}`);
  if (!isEmptyOrMissing(config.dataDir)) throw new BackupError(`DATA_DIR ${config.dataDir} is not empty: restore into an empty folder (move the old one aside first)`);
  if (config.database.kind === 'sqlite' && fs.existsSync(config.database.file)) throw new BackupError(`A database exists at ${config.database.file}: restore into an empty data folder`);
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-restore-'));
  let manifest: BackupManifest | undefined;
  let databaseFile: string | undefined;
  try {
    await readTarGz(archive, (entry) => {
      if (entry.name === MANIFEST) return path.join(scratch, MANIFEST);
      manifest ??= readManifest(path.join(scratch, MANIFEST));
      if (entry.name === DATABASE_ENTRY) {
        if (config.database.kind !== 'sqlite') {
          throw new BackupError('This backup holds a SQLite database, but DATABASE_URL points at PostgreSQL: restore with DATABASE_URL unset (or sqlite:…)');
        }
        databaseFile = config.database.file;
        return databaseFile;
      }
      if (entry.name === SECRET_ENTRY) return path.join(config.dataDir, 'secret.key');
      if (safeUploadPath(entry.name)) return path.join(config.dataDir, ...entry.name.split('/'));
      throw new BackupError(`Unexpected file in the backup: ${entry.name} (not a Herald backup?)`);
    });
    manifest ??= readManifest(path.join(scratch, MANIFEST));
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  const secret = currentSecret(config);
  return {
    manifest,
    databaseFile,
    secretMismatch: manifest.secretFingerprint !== null && (!secret || secretFingerprint(secret) !== manifest.secretFingerprint),
  };
}

function readManifest(file: string): BackupManifest {
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as BackupManifest;
  } catch {
    throw new BackupError(`The archive does not start with ${MANIFEST}: not a Herald backup`);
  }
  if (manifest.format !== 1) throw new BackupError(`This backup has format ${String(manifest.format)}; this Herald reads format 1`);
  return manifest;
}
