import crypto from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import type { Config } from '../../src/config';

/**
 * A fresh, empty database for one test file: a SQLite file in the test's data
 * folder, or (HERALD_TEST_DB=postgres) a new database on the throwaway cluster.
 */
export async function createTestDatabase(dataDir: string): Promise<Config['database']> {
  const adminUrl = inject('pgAdminUrl');
  if (!adminUrl) return { kind: 'sqlite', file: `${dataDir}/herald.db` };
  const name = `herald_test_${crypto.randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { kind: 'postgres', url: url.toString() };
}
