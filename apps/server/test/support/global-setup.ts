import type { TestProject } from 'vitest/node';
import { startPgCluster, type PgCluster } from './pg-cluster';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string | undefined;
  }
}

let cluster: PgCluster | undefined;

/** With HERALD_TEST_DB=postgres, one throwaway cluster serves the whole run; each test file gets its own database. */
export async function setup(project: TestProject): Promise<void> {
  if (process.env.HERALD_TEST_DB !== 'postgres') {
    project.provide('pgAdminUrl', undefined);
    return;
  }
  if (process.env.HERALD_TEST_PG_URL) {
    project.provide('pgAdminUrl', process.env.HERALD_TEST_PG_URL);
    return;
  }
  cluster = await startPgCluster();
  project.provide('pgAdminUrl', cluster.adminUrl);
}

export async function teardown(): Promise<void> {
  cluster?.stop();
}
