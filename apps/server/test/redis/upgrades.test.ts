// Issue 17, item 5: upgrades. Three processes of the built product started at
// the same moment on an empty database migrate it once (PostgreSQL: an
// advisory lock; SQLite: a lock file), and `migrate --dry-run` lists what is
// pending without applying it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationsFor } from '../../src/db/migrations';
import { freePort, startPgCluster, type PgCluster } from '../support/pg-cluster';
import { HeraldProcess, stopAll } from '../scale/herald-processes';

const ALL_MIGRATIONS = Object.keys(migrationsFor('sqlite'));

describe('migrations when several processes start together', () => {
  let cluster: PgCluster;
  const dataDirs: string[] = [];
  const newDataDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-upgrade-'));
    dataDirs.push(dir);
    return dir;
  };

  beforeAll(async () => {
    cluster = await startPgCluster();
  }, 60_000);
  afterAll(async () => {
    await stopAll(10_000);
    cluster?.stop();
    for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  async function newPgDatabase(name: string): Promise<string> {
    const admin = new pg.Client({ connectionString: cluster.adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    return cluster.adminUrl.replace(/\/postgres$/, `/${name}`);
  }

  async function startThree(env: Record<string, string>): Promise<HeraldProcess[]> {
    const ports = await Promise.all([freePort(), freePort(), freePort()]);
    return Promise.all(ports.map((port, i) => HeraldProcess.start(`serve-${i + 1}`, 'serve', { ...env, PORT: String(port), SCHEDULER_INTERVAL_MS: '500' })));
  }

  function expectMigratedOnce(processes: HeraldProcess[]) {
    const migrated = processes.map((p) => p.logs('database migrated'));
    expect(migrated.filter((lines) => lines.length > 0), 'processes that applied migrations').toHaveLength(1);
    expect(migrated.flat()[0]!.applied).toEqual(ALL_MIGRATIONS);
  }

  it('PostgreSQL: three processes start together, the schema migrates once, all of them become ready', async () => {
    const databaseUrl = await newPgDatabase('herald_together');
    const processes = await startThree({ DATABASE_URL: databaseUrl, DATA_DIR: newDataDir(), SECRET_KEY: 'k'.repeat(40) });
    expectMigratedOnce(processes);
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query('select name from kysely_migration order by name');
      expect(rows.map((r) => r.name)).toEqual(ALL_MIGRATIONS);
    } finally {
      await client.end();
    }
    for (const p of processes) expect((await fetch(`${p.url}/readyz`)).status).toBe(200);
    await Promise.all(processes.map((p) => p.stop()));
  }, 120_000);

  it('SQLite: three processes on one data folder start together, the schema migrates once', async () => {
    const processes = await startThree({ DATA_DIR: newDataDir() });
    expectMigratedOnce(processes);
    for (const p of processes) expect((await fetch(`${p.url}/readyz`)).status).toBe(200);
    await Promise.all(processes.map((p) => p.stop()));
  }, 120_000);

  it('migrate --dry-run lists the pending migrations and applies none; migrate then applies them', async () => {
    const databaseUrl = await newPgDatabase('herald_dry_run');
    const env = { DATABASE_URL: databaseUrl, DATA_DIR: newDataDir() };
    const dryRun = await HeraldProcess.start('dry-run', 'migrate', env, ['--dry-run']);
    expect(await dryRun.exited).toBe(0);
    expect(dryRun.output()).toContain(`Pending migrations (${ALL_MIGRATIONS.length}), not applied:\n${ALL_MIGRATIONS.map((name) => `  ${name}`).join('\n')}`);
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query("select count(*)::int as n from information_schema.tables where table_schema = 'public' and table_name in ('users', 'sites', 'notifications')");
      expect(rows[0].n).toBe(0);
      await HeraldProcess.migrate(env);
      const after = await client.query('select count(*)::int as n from kysely_migration');
      expect(after.rows[0].n).toBe(ALL_MIGRATIONS.length);
    } finally {
      await client.end();
    }
    const upToDate = await HeraldProcess.start('dry-run-2', 'migrate', env, ['--dry-run']);
    expect(await upToDate.exited).toBe(0);
    expect(upToDate.output()).toContain('Database is up to date');
  }, 120_000);
});
