// A throwaway PostgreSQL cluster from the machine's binaries (initdb, pg_ctl),
// in a temp folder on a free port, listening on 127.0.0.1 only.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

export interface PgCluster {
  /** postgres://… URL of the `postgres` database (for CREATE DATABASE). */
  adminUrl: string;
  port: number;
  dataDir: string;
  stop(): void;
  /** Stops and starts the server on the same port (fault tests). */
  restart(): void;
  /** Stops the server, keeping its data, until start() (fault tests). */
  pause(): void;
  start(): void;
}

/**
 * Creates an empty database `name` on the cluster of `adminUrl` (dropped
 * first when `replace` is set) and returns its URL.
 */
export async function createDatabase(adminUrl: string, name: string, options: { replace?: boolean } = {}): Promise<string> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    if (options.replace) await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** initdb refuses to run as root; run the cluster as the `postgres` user then. */
function asClusterUser(command: string, args: string[]): [string, string[]] {
  if (process.getuid?.() === 0) return ['runuser', ['-u', 'postgres', '--', command, ...args]];
  return [command, args];
}

function run(command: string, args: string[]): void {
  const [cmd, fullArgs] = asClusterUser(command, args);
  const result = spawnSync(cmd, fullArgs, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed:\n${result.stdout}\n${result.stderr}`);
}

export interface PgClusterOptions {
  /**
   * `fast` (tests, the default): no fsync, asynchronous commit, no full-page
   * images in the WAL, so suites run quickly; a crash may lose data, which a
   * throwaway test cluster does not mind.
   * `production` (benches): PostgreSQL's own defaults for durability (fsync,
   * synchronous_commit and full_page_writes on), so every commit waits for
   * its WAL to reach the disk and the WAL holds what a real server writes.
   * Figures that size a deployment are measured this way (docs/storage.md,
   * "Benchmarks measure a durable PostgreSQL").
   */
  durability?: 'fast' | 'production';
  /** More server settings, `name=value` each (a bench's diagnostics). */
  settings?: string[];
}

export async function startPgCluster(clusterOptions: PgClusterOptions = {}): Promise<PgCluster> {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-pg-'));
  const dataDir = path.join(base, 'data');
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres', base]);
  run('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync']);
  const port = await freePort();
  const options = [
    `-p ${port}`,
    `-k ${base}`,
    "-c listen_addresses=127.0.0.1",
    ...(clusterOptions.durability === 'production' ? [] : ['-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off']),
    '-c max_connections=300',
    '-c shared_buffers=256MB',
    ...(clusterOptions.settings ?? []).map((setting) => `-c ${setting}`),
  ].join(' ');
  const start = () => run('pg_ctl', ['-D', dataDir, '-o', options, '-l', path.join(base, 'server.log'), '-w', '-t', '60', 'start']);
  const stop = () => run('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', 'stop']);
  start();
  return {
    adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dataDir,
    stop() {
      try {
        stop();
      } finally {
        fs.rmSync(base, { recursive: true, force: true });
      }
    },
    restart() {
      stop();
      start();
    },
    pause: stop,
    start,
  };
}
