import crypto from 'node:crypto';
import { inject } from 'vitest';
import type { Config } from '../../src/config';
import { createDatabase } from './pg-cluster';

/**
 * A fresh, empty database for one test file: a SQLite file in the test's data
 * folder, or (HERALD_TEST_DB=postgres) a new database on the throwaway cluster.
 */
export async function createTestDatabase(dataDir: string): Promise<Config['database']> {
  const adminUrl = inject('pgAdminUrl');
  if (!adminUrl) return { kind: 'sqlite', file: `${dataDir}/herald.db` };
  return { kind: 'postgres', url: await createDatabase(adminUrl, `herald_test_${crypto.randomBytes(6).toString('hex')}`) };
}
