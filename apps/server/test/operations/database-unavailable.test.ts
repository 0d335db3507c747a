// Issue 17, 7c: while PostgreSQL is down or restarting, the API answers 503
// with Retry-After (the client comes back), never 500; once it is back,
// the same requests succeed without restarting Herald.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { isDatabaseUnavailable } from '../../src/db/database';
import { createAuthService } from '../../src/features/auth/service';
import { openRuntime, type Runtime } from '../../src/runtime';
import { startPgCluster, type PgCluster } from '../support/pg-cluster';

describe('the database out of reach', () => {
  let cluster: PgCluster;
  let runtime: Runtime;
  let app: FastifyInstance;
  let token: string;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-unavailable-'));

  beforeAll(async () => {
    // A cluster of its own: this test stops it.
    cluster = await startPgCluster();
    const admin = new pg.Client({ connectionString: cluster.adminUrl });
    await admin.connect();
    await admin.query('CREATE DATABASE herald');
    await admin.end();
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', DATABASE_URL: cluster.adminUrl.replace(/\/postgres$/, '/herald') });
    runtime = await openRuntime(config);
    app = await buildApp(runtime.ctx, { staticDirs: { web: path.join(dataDir, 'no-web'), sdk: path.join(dataDir, 'no-sdk') } });
    await createAuthService(runtime.ctx).createUser({ name: 'Owner', email: 'owner@example.com', password: 'a long password', verified: true });
    const login = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: 'owner@example.com', password: 'a long password' } });
    token = login.json().data.token;
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await runtime?.close();
    cluster?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const me = () => app.inject({ method: 'GET', url: '/api/auth/me', headers: { authorization: `Bearer ${token}` } });

  it('answers 503 with Retry-After while PostgreSQL is stopped, and 200 again once it is back', async () => {
    expect((await me()).statusCode).toBe(200);
    cluster.pause();
    try {
      for (const response of [await me(), await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: 'owner@example.com', password: 'a long password' } })]) {
        expect(response.statusCode).toBe(503);
        expect(response.headers['retry-after']).toBe('5');
        expect(response.json()).toEqual({
          success: false,
          error: { message: 'The database is unavailable right now. Please try again in a few seconds.', code: 'database_unavailable' },
        });
      }
      const ready = await app.inject({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(503);
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      cluster.start();
    }
    expect((await me()).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  }, 60_000);

  it('answers 503 when the server ends a connection mid-session (restart, administrator shutdown)', async () => {
    // Every connection of the pool is ended by the server, as a restart does: the next query on each fails.
    const admin = new pg.Client({ connectionString: cluster.adminUrl });
    await admin.connect();
    try {
      expect((await me()).statusCode).toBe(200);
      await admin.query("select pg_terminate_backend(pid) from pg_stat_activity where datname = 'herald' and pid <> pg_backend_pid()");
    } finally {
      await admin.end();
    }
    const statuses = new Set<number>();
    for (let i = 0; i < 3; i++) statuses.add((await me()).statusCode);
    // A pooled connection the server ended answers 503 (or pg has already replaced it: 200); never 500.
    expect([...statuses].every((status) => status === 200 || status === 503)).toBe(true);
    expect((await me()).statusCode).toBe(200);
  });

  it('tells database outages from other errors, on both engines', () => {
    expect(isDatabaseUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('the database system is shutting down'), { code: '57P03' }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toBe(true);
    expect(isDatabaseUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isDatabaseUnavailable(new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })]))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
    expect(isDatabaseUnavailable(Object.assign(new Error('syntax error'), { code: '42601' }))).toBe(false);
    expect(isDatabaseUnavailable(new TypeError("Cannot read properties of undefined (reading 'id')"))).toBe(false);
  });
});
