// Herald's command line. One program, several roles:
//   serve [--no-scheduler] [--no-worker]
//                                 API + dashboard (+ scheduler and delivery workers in-process)
//   scheduler                     claims due work (scheduled sends, recurring runs, feeds)
//   worker                        takes delivery jobs from Redis (REDIS_URL)
//   migrate [--dry-run]           bring the database schema up to date (--dry-run: list what is pending)
//   doctor [--json]               check configuration, push-service reachability, database,
//                                 Redis, clock and disk; exits 1 when a check FAILs
//   backup --out FILE             a consistent backup while Herald runs (SQLite database,
//                                 secret.key, uploads) in one .tar.gz
//   restore FILE                  restore a backup into an empty DATA_DIR
//   user create --email E --name N [--password P]
//   user reset-password --email E [--password P]
//   demo [--data-dir DIR] [--password P] [--serve]
//                                 fill an empty database with a demo site (--help for more)
// Passwords not given as flags are read from the HERALD_PASSWORD variable or stdin.
import readline from 'node:readline/promises';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from './config';
import { demoCommand } from './demo/command';
import { createAuthService } from './features/auth/service';
import { BackupError, createBackup, restoreBackup } from './platform/backup';
import { PRIVATE_UMASK } from './platform/data-directory';
import { StaticBuildError } from './platform/static-files';
import { RoleError, runRole } from './roles';
import { openRuntime } from './runtime';

async function readPassword(flag: string | undefined): Promise<string> {
  if (flag) return flag;
  if (process.env.HERALD_PASSWORD) return process.env.HERALD_PASSWORD;
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr, terminal: process.stdin.isTTY });
  try {
    return (await rl.question('Password: ')).trim();
  } finally {
    rl.close();
  }
}

async function userCommand(config: Config, args: string[]): Promise<number> {
  const [action, ...rest] = args;
  const { values } = parseArgs({ args: rest, options: { email: { type: 'string' }, name: { type: 'string' }, password: { type: 'string' } } });
  if (!values.email || (action !== 'create' && action !== 'reset-password')) {
    console.error('Usage: herald user create --email E --name N [--password P]\n       herald user reset-password --email E [--password P]');
    return 2;
  }
  const password = await readPassword(values.password);
  if (password.length < 8) {
    console.error('Password must be at least 8 characters long');
    return 2;
  }
  const runtime = await openRuntime({ ...config, logLevel: 'warn' });
  try {
    const auth = createAuthService(runtime.ctx);
    if (action === 'create') {
      const user = await auth.createUser({ name: values.name ?? values.email, email: values.email, password, verified: true });
      console.log(`Created user ${user.email}`);
    } else if (await auth.setPasswordByEmail(values.email, password)) {
      console.log(`Password reset for ${values.email}; their sessions were signed out.`);
    } else {
      console.error(`No user with email ${values.email}`);
      return 1;
    }
    return 0;
  } finally {
    await runtime.close();
  }
}

async function backupCommand(config: Config, args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { out: { type: 'string' } } });
  if (!values.out) {
    console.error('Usage: herald backup --out FILE   (e.g. herald-$(date +%F).tar.gz)');
    return 2;
  }
  // A backup holds the secret and the VAPID private keys: private, like DATA_DIR (docs/security.md).
  process.umask(PRIVATE_UMASK);
  try {
    const manifest = await createBackup(config, values.out);
    const parts = [
      manifest.database === 'sqlite' ? `the SQLite database (${manifest.migrations.length} migrations)` : undefined,
      manifest.secretKeyFile ? 'secret.key' : undefined,
      `${manifest.uploads} uploaded image(s)`,
    ].filter(Boolean);
    console.log(`Backup written to ${values.out}: ${parts.join(', ')}.`);
    if (manifest.database === 'postgres') console.log('The database is PostgreSQL and is not in this archive: dump it with pg_dump (README, "Backups").');
    if (!manifest.secretKeyFile && manifest.secretFingerprint) console.log(`SECRET_KEY is not in the archive: keep it with the backup (fingerprint ${manifest.secretFingerprint}).`);
    return 0;
  } catch (error) {
    if (error instanceof BackupError) {
      console.error(error.message);
      return 1;
    }
    throw error;
  }
}

async function restoreCommand(config: Config, args: string[]): Promise<number> {
  const { positionals } = parseArgs({ args, allowPositionals: true });
  if (positionals.length !== 1) {
    console.error('Usage: herald restore FILE   (into an empty DATA_DIR)');
    return 2;
  }
  process.umask(PRIVATE_UMASK);
  try {
    const restored = await restoreBackup(config, positionals[0]!);
    console.log(`Restored the backup of ${restored.manifest.createdAt} into ${config.dataDir}${restored.databaseFile ? ` (database: ${restored.databaseFile})` : ''}.`);
    if (restored.manifest.database === 'postgres') console.log('It holds no database: restore the PostgreSQL dump with pg_restore (README, "Backups").');
    if (restored.secretMismatch) {
      console.log(`Warning: the backup was made with another secret (fingerprint ${restored.manifest.secretFingerprint}). Set SECRET_KEY to the value used then, or beacons of notifications already sent will be refused.`);
    }
    console.log('Start Herald on it as usual; `herald migrate` brings an older backup up to date.');
    return 0;
  } catch (error) {
    if (error instanceof BackupError) {
      console.error(error.message);
      return 1;
    }
    throw error;
  }
}

/** Variables from ./.env, when present, for self-hosters; the real environment wins. */
function loadDotEnv(): void {
  try {
    process.loadEnvFile('.env');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

async function main(argv: string[]): Promise<number> {
  const [role = 'serve', ...args] = argv;
  loadDotEnv();
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      return 78; // EX_CONFIG
    }
    throw error;
  }

  switch (role) {
    case 'serve':
    case 'scheduler':
    case 'worker': {
      const { values } = parseArgs({ args, options: { 'no-scheduler': { type: 'boolean' }, 'no-worker': { type: 'boolean' } } });
      try {
        await runRole(config, role, { scheduler: !values['no-scheduler'], worker: !values['no-worker'] });
      } catch (error) {
        if (error instanceof RoleError || error instanceof StaticBuildError) {
          console.error(error.message);
          return 2;
        }
        throw error;
      }
      return -1; // keeps running until a signal
    }
    case 'migrate': {
      const { values } = parseArgs({ args, options: { 'dry-run': { type: 'boolean' } } });
      const runtime = await openRuntime({ ...config, logLevel: 'warn' }, { migrate: false });
      try {
        const { migrateToLatest, pendingMigrations } = await import('./db/migrate');
        if (values['dry-run']) {
          const pending = await pendingMigrations(runtime.database);
          console.log(pending.length ? `Pending migrations (${pending.length}), not applied:\n${pending.map((name) => `  ${name}`).join('\n')}` : 'Database is up to date');
          return 0;
        }
        const applied = await migrateToLatest(runtime.database);
        console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'Database is up to date');
        return 0;
      } finally {
        await runtime.close();
      }
    }
    case 'doctor': {
      const { values } = parseArgs({ args, options: { json: { type: 'boolean' } } });
      const runtime = await openRuntime({ ...config, logLevel: 'warn' }, { migrate: false });
      try {
        const { runDoctor, formatDoctorReport } = await import('./features/system/doctor');
        const checks = await runDoctor(runtime.ctx);
        console.log(values.json ? JSON.stringify({ checks }, null, 2) : formatDoctorReport(checks));
        // Non-zero on FAIL, so cron or CI notices; WARN alone passes.
        return checks.some((c) => c.status === 'fail') ? 1 : 0;
      } finally {
        await runtime.close();
      }
    }
    case 'backup':
      return backupCommand(config, args);
    case 'restore':
      return restoreCommand(config, args);
    case 'user':
      return userCommand(config, args);
    case 'demo':
      return demoCommand(args);
    default:
      console.error(`Unknown command "${role}". Commands: serve, scheduler, worker, migrate, doctor, backup, restore, user, demo`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
