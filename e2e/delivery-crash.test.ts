import crypto from 'node:crypto';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { PushService } from '../apps/server/test/support/push-service';
import { startHerald, type HeraldProcess } from './support/herald-server';

// docs/delivery.md, "Fault tests": a worker killed (SIGKILL) or stopped
// (SIGTERM) in the middle of a send, then started again. Every subscriber
// ends with exactly one terminal delivery; after SIGKILL the push service saw
// at most the in-flight pushes twice (same Topic); after SIGTERM none.
const SUBSCRIBERS = 2000;
/** Pushes in flight plus pushes sent but not yet recorded never exceed this (push-slots.ts), so neither do re-sends. */
const PUSH_CONCURRENCY = 20;

interface Setup {
  herald: HeraldProcess;
  push: PushService;
  token: string;
  notificationId: string;
  env: Record<string, string>;
}

async function api(herald: HeraldProcess, method: string, url: string, token?: string, body?: unknown) {
  const response = await fetch(`${herald.url}/api${url}`, {
    method,
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: response.status, body: (await response.json()) as any };
}

async function setUp(): Promise<Setup> {
  const push = await PushService.start();
  push.setAnswer({ status: 201, delayMs: 15 });
  const env = {
    ADMIN_EMAIL: 'owner@example.com',
    ADMIN_PASSWORD: 'owner-password',
    EXTRA_PUSH_ORIGINS: push.origin,
    PUSH_CONCURRENCY: String(PUSH_CONCURRENCY),
    DELIVERY_LEASE_SECONDS: '2',
    SCHEDULER_INTERVAL_MS: '200',
    LOG_LEVEL: 'warn',
  };
  const herald = await startHerald(env);
  const token = (await api(herald, 'POST', '/auth/login', undefined, { email: 'owner@example.com', password: 'owner-password' })).body.data.token;
  const site = (await api(herald, 'POST', '/sites', token, { name: 'Crash Shop', url: 'https://crash.example' })).body.data.site;

  // Seed the audience straight into the database (the public API is rate limited per address).
  const db = new SQLite(path.join(herald.dataDir, 'herald.db'));
  db.pragma('busy_timeout = 10000');
  const insert = db.prepare(
    `insert into subscribers (id, site_id, endpoint, endpoint_hash, p256dh, auth, browser, os, country, is_active, subscribed_at, updated_at)
     values (?, ?, ?, ?, ?, ?, 'Firefox', 'Linux', 'Unknown', 1, ?, ?)`,
  );
  db.transaction(() => {
    for (let i = 0; i < SUBSCRIBERS; i++) {
      const s = push.createSubscription({ applicationServerKey: site.vapid_public_key });
      const hash = crypto.createHash('sha256').update(s.endpoint).digest('hex');
      insert.run(crypto.randomUUID(), site.id, s.endpoint, hash, s.keys.p256dh, s.keys.auth, Date.now(), Date.now());
    }
  })();
  db.prepare('update sites set active_subscriber_count = ? where id = ?').run(SUBSCRIBERS, site.id);
  db.close();

  const body = { type: 'ONE_TIME', title: 'Flash sale', message: 'Only today', destination_url: 'https://crash.example/sale', status: 'DRAFT' };
  const notificationId = (await api(herald, 'POST', `/sites/${site.id}/notifications`, token, body)).body.data.notification.id;
  return { herald, push, token, notificationId, env };
}

async function waitUntil(probe: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function deliveryRows(herald: HeraldProcess, notificationId: string): Array<{ subscriber_seq: number; status: string; n: number }> {
  const db = new SQLite(path.join(herald.dataDir, 'herald.db'), { readonly: true });
  try {
    return db
      .prepare('select subscriber_seq, status, count(*) over (partition by subscriber_seq) as n from deliveries where run_seq in (select seq from notification_runs where notification_id = ?)')
      .all(notificationId) as Array<{ subscriber_seq: number; status: string; n: number }>;
  } finally {
    db.close();
  }
}

describe('a worker stopped in the middle of a send', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });

  for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
    it(`${signal}: resumes after restart, every subscriber ends with exactly one terminal delivery`, async () => {
      const s = await setUp();
      cleanups.push(() => s.push.close());
      cleanups.push(async () => {
        await s.herald.stop();
        s.herald.cleanUp();
      });

      expect((await api(s.herald, 'POST', `/notifications/${s.notificationId}/send`, s.token)).status).toBe(200);
      await waitUntil(() => s.push.stats().accepted >= 400, 60_000, 'the send to be under way');
      await s.herald.stop(signal);
      const acceptedAtStop = s.push.stats().accepted;
      expect(acceptedAtStop).toBeLessThan(SUBSCRIBERS);

      const restarted = await startHerald({ ...s.env, DATA_DIR: s.herald.dataDir, PORT: String(s.herald.port) });
      cleanups.push(() => restarted.stop());
      await waitUntil(
        async () => (await api(restarted, 'GET', `/notifications/${s.notificationId}`, s.token)).body.data?.notification.status === 'completed',
        90_000,
        'the send to complete after restart',
      ).catch((error: unknown) => {
        const db = new SQLite(path.join(restarted.dataDir, 'herald.db'), { readonly: true });
        const state = JSON.stringify({
          run: db.prepare('select status, fanout_done, lease_until, total_count, sent_count, failed_count from notification_runs').all(),
          deliveries: db.prepare('select status, count(*) n, min(lease_until) minLease, max(lease_until) maxLease, max(next_attempt_at) nextAt, max(attempts) att from deliveries group by status').all(),
          notification: db.prepare('select status, total_count, sent_count from notifications').all(),
          now: Date.now(),
        });
        db.close();
        throw new Error(`${String(error)}\n${state}\n--- after the restart:\n${restarted.output().slice(-3000)}`);
      });

      const rows = deliveryRows(restarted, s.notificationId);
      expect(rows).toHaveLength(SUBSCRIBERS);
      expect(rows.every((r) => r.n === 1 && r.status === 'sent')).toBe(true);

      const perSubscription = new Map<string, number>();
      const topics = new Set<string>();
      for (const m of s.push.messages) {
        perSubscription.set(m.subscriptionId, (perSubscription.get(m.subscriptionId) ?? 0) + 1);
        topics.add(String(m.headers['topic']));
      }
      expect(perSubscription.size).toBe(SUBSCRIBERS);
      const duplicates = [...perSubscription.values()].reduce((sum, n) => sum + (n - 1), 0);
      if (signal === 'SIGTERM') expect(duplicates).toBe(0);
      else expect(duplicates).toBeLessThanOrEqual(PUSH_CONCURRENCY);
      // Any re-sent push carried the same Topic, so push services collapse it.
      expect(topics.size).toBe(1);
    }, 180_000);
  }
});
