import crypto from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expiredRecordsPurgeSource } from '../../src/features/auth/expired-records-purge';
import { featureDueWorkSources } from '../../src/engine';
import { InProcessQueue } from '../../src/jobs/in-process-queue';
import { Scheduler } from '../../src/jobs/scheduler';
import { ManualClock } from '../../src/platform/clock';
import { createTestApp, waitFor, type TestApp } from '../support/test-app';

// docs/security.md, "Expired records": sessions, emailed links and rate
// counters are deleted once they have expired, by a due-work source the
// scheduler runs, claimed once per period across schedulers, in bounded batches.

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

describe('expired sessions, links and rate counters are purged on a schedule', () => {
  const clock = new ManualClock(Date.UTC(2026, 6, 1, 9, 0));
  let t: TestApp;
  let scheduler: Scheduler;
  beforeAll(async () => {
    t = await createTestApp({ clock });
    const queue = new InProcessQueue(t.ctx.log);
    scheduler = new Scheduler(t.ctx, queue, featureDueWorkSources(t.ctx, queue));
  });
  afterAll(async () => t?.close());

  const count = async (table: 'sessions' | 'user_tokens' | 'rate_limits') =>
    Number((await t.ctx.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const expiredRows = async (table: 'sessions' | 'user_tokens' | 'rate_limits') => {
    let query = t.ctx.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('expires_at', '<=', clock.now());
    // The sweep's own claim on its period lives in rate_limits too; claiming renews it.
    if (table === 'rate_limits') query = query.where(sql.ref('key'), '!=', 'job:expired-records-purge');
    return Number((await query.executeTakeFirstOrThrow()).n);
  };

  it("deletes what has expired on a scheduler tick and keeps what is live", async () => {
    const owner = await t.createUser();
    expect((await t.request('POST', '/api/auth/login', { body: { email: owner.email, password: 'wrong password' }, remoteAddress: '198.51.100.9' })).status).toBe(401);
    const before = t.outbox().length;
    expect((await t.request('POST', '/api/auth/forgot-password', { body: { email: owner.email } })).status).toBe(200);
    await waitFor(() => t.outbox().length > before);

    // Two hours on: the reset link (1 h), the sign-in counters (15 min) and the mail counter (1 h) have expired.
    clock.advance(2 * 60 * MINUTE);
    expect(await expiredRows('user_tokens')).toBeGreaterThan(0);
    expect(await expiredRows('rate_limits')).toBeGreaterThan(0);
    const sessions = await count('sessions');
    await scheduler.tick();
    expect(await expiredRows('user_tokens')).toBe(0);
    expect(await expiredRows('rate_limits')).toBe(0);
    // Live things stay: the sessions, and the owner's trusted address (30 days).
    expect(await count('sessions')).toBe(sessions);
    expect(await count('rate_limits')).toBeGreaterThan(0);
    expect((await t.request('GET', '/api/auth/me', { token: owner.token })).status).toBe(200);

    // A month on, the sessions have expired too.
    clock.advance(31 * DAY);
    expect(await expiredRows('sessions')).toBeGreaterThan(0);
    await scheduler.tick();
    expect(await expiredRows('sessions')).toBe(0);
    expect(await expiredRows('rate_limits')).toBe(0);
    expect((await t.request('GET', '/api/auth/me', { token: owner.token })).status).toBe(401);
  });

  it('one scheduler sweeps per period, and a sweep deletes in bounded batches', async () => {
    clock.advance(16 * MINUTE); // past the period the first test's sweeps claimed
    const owner = await t.createUser();
    const now = clock.now();
    const expired = (i: number) => ({ created_at: now - 2 * DAY, expires_at: now - DAY + i });
    await t.ctx.db
      .insertInto('sessions')
      .values(Array.from({ length: 100 }, (_, i) => ({ token_hash: crypto.randomBytes(32).toString('hex'), user_id: owner.id, ...expired(i) })))
      .execute();
    await t.ctx.db
      .insertInto('user_tokens')
      .values(Array.from({ length: 100 }, (_, i) => ({ token_hash: crypto.randomBytes(32).toString('hex'), purpose: 'reset' as const, user_id: owner.id, email: owner.email, used_at: null, ...expired(i) })))
      .execute();
    await t.ctx.db
      .insertInto('rate_limits')
      .values(Array.from({ length: 100 }, (_, i) => ({ key: `login:address:203.0.113.${i}`, window_start: now - DAY, hits: 3, expires_at: now - DAY + i })))
      .execute();

    const options = { everyMs: 15 * MINUTE, batchSize: 10, maxBatches: 3 };
    const tables = ['sessions', 'user_tokens', 'rate_limits'] as const;
    const expiredPerTable = async () => Promise.all(tables.map((table) => expiredRows(table)));
    const first = expiredRecordsPurgeSource(t.ctx, options);
    const second = expiredRecordsPurgeSource(t.ctx, options);

    let before = await expiredPerTable();
    await first.runDue(clock.now());
    // At most batchSize × maxBatches rows per table per sweep.
    expect(await expiredPerTable()).toEqual(before.map((n) => n - 30));
    // Another scheduler in the same period finds the sweep claimed.
    before = await expiredPerTable();
    await second.runDue(clock.now());
    expect(await expiredPerTable()).toEqual(before);
    // The next period, whoever asks first sweeps, once.
    clock.advance(15 * MINUTE);
    before = await expiredPerTable();
    await second.runDue(clock.now());
    await first.runDue(clock.now());
    expect(await expiredPerTable()).toEqual(before.map((n) => n - 30));
    // The owner's own live session is never touched.
    expect((await t.request('GET', '/api/auth/me', { token: owner.token })).status).toBe(200);
  });
});
