// Issue 17, item 4: `herald backup` while a send is under way, `herald
// restore` into a new, empty folder, and a Herald started on the restored
// data finds every subscriber, the notification and consistent counts, then
// finishes the send. On PostgreSQL the database goes through pg_dump and
// pg_restore as README's "Backups" says; the archive holds the rest.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database';
import { readTarGz } from '../../src/platform/tar';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from '../support/delivery-harness';
import { HeraldProcess, stopAll, waitUntil } from '../scale/herald-processes';
import { runSeqsOfNotification } from '../../src/db/run-seq';

const SUBSCRIBERS = 300;
const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  await stopAll(10_000);
  for (const cleanup of cleanups.reverse()) await cleanup();
});

function tempDir(label: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `herald-${label}-`));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function seedSubscribers(h: DeliveryHarness, count: number): Promise<void> {
  const now = Date.now();
  const rows = Array.from({ length: count }, () => {
    const s = h.push.createSubscription({ applicationServerKey: h.site.vapid_public_key });
    return {
      id: crypto.randomUUID(),
      site_id: h.site.id,
      endpoint: s.endpoint,
      endpoint_hash: crypto.createHash('sha256').update(s.endpoint).digest('hex'),
      p256dh: s.keys.p256dh,
      auth: s.keys.auth,
      browser: 'Firefox',
      os: 'Linux',
      country: 'Unknown',
      language: null,
      timezone: null,
      user_agent: null,
      external_id: null,
      is_active: 1 as const,
      subscribed_at: now,
      last_seen_at: null,
      unsubscribed_at: null,
      updated_at: now,
    };
  });
  for (let i = 0; i < rows.length; i += 100) await h.t.ctx.db.insertInto('subscribers').values(rows.slice(i, i + 100)).execute();
  await h.t.ctx.db.updateTable('sites').set({ active_subscriber_count: count }).where('id', '=', h.site.id).execute();
}

/** pg_dump/pg_restore as the operator runs them (README, "Backups"). */
function pgTool(tool: 'pg_dump' | 'pg_restore', args: string[], url: string): void {
  const u = new URL(url);
  execFileSync(tool, ['-h', u.hostname, '-p', u.port, '-U', u.username, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
}

describe('backup during a send, restore, start again', () => {
  it('finds every subscriber, the notification and its counts, and finishes the send', async () => {
    const h = await createDeliveryHarness({ env: { PUSH_CONCURRENCY: '4' } });
    cleanups.push(() => h.close());
    const database = h.t.config.database;
    await seedSubscribers(h, SUBSCRIBERS);
    // An uploaded image and the generated secret: both must come back.
    const image = crypto.randomBytes(2048);
    fs.mkdirSync(path.join(h.t.dataDir, 'uploads'), { recursive: true });
    fs.writeFileSync(path.join(h.t.dataDir, 'uploads', `${crypto.randomUUID()}.png`), image);
    const secret = fs.readFileSync(path.join(h.t.dataDir, 'secret.key'));

    // Each push takes a while, so the send is still running when the backup is taken.
    h.push.setAnswer({ status: 201, delayMs: 15 });
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput({ title: 'Backed up mid-send' }) });
    const id = created.body.data.notification.id;
    expect((await h.t.request('POST', `/api/notifications/${id}/send`, { token: h.owner.token })).status).toBe(200);
    await waitUntil('a third of the pushes accepted', () => h.push.stats().accepted >= SUBSCRIBERS / 3, 30_000, 10);

    const archive = path.join(tempDir('backups'), 'herald.tar.gz');
    const env: Record<string, string> = { DATA_DIR: h.t.dataDir, ...(database.kind === 'postgres' ? { DATABASE_URL: database.url } : {}) };
    const backup = await HeraldProcess.start('backup', 'backup', env, ['--out', archive]);
    expect(await backup.exited, backup.output()).toBe(0);
    let dump: string | undefined;
    if (database.kind === 'postgres') {
      dump = path.join(path.dirname(archive), 'herald.pgdump');
      pgTool('pg_dump', ['--format=custom', '--file', dump, new URL(database.url).pathname.slice(1)], database.url);
    }
    const acceptedAtBackup = h.push.stats().accepted;
    expect(acceptedAtBackup, 'the send was still under way').toBeLessThan(SUBSCRIBERS);
    expect(backup.output()).toContain(`Backup written to ${archive}: `);
    expect(fs.statSync(archive).mode & 0o777).toBe(0o600);
    const names: string[] = [];
    await readTarGz(archive, (entry) => {
      names.push(entry.name);
      return undefined;
    });
    expect(names).toEqual(expect.arrayContaining(['herald-backup.json', 'secret.key', expect.stringMatching(/^uploads\/.+\.png$/)]));
    expect(names.includes('database/herald.db')).toBe(database.kind === 'sqlite');
    await h.waitForStatus(id, ['completed'], 60_000);

    // Restore into a new, empty folder (and, on PostgreSQL, a new database).
    const restoredDir = path.join(tempDir('restored'), 'data');
    const restoredEnv: Record<string, string> = { DATA_DIR: restoredDir };
    if (database.kind === 'postgres') {
      const admin = new URL(database.url);
      admin.pathname = '/postgres';
      const client = new pg.Client({ connectionString: admin.toString() });
      await client.connect();
      const name = `herald_restored_${crypto.randomBytes(4).toString('hex')}`;
      await client.query(`CREATE DATABASE ${name}`);
      await client.end();
      const restoredUrl = new URL(database.url);
      restoredUrl.pathname = `/${name}`;
      pgTool('pg_restore', ['--no-owner', '--dbname', name, dump!], restoredUrl.toString());
      restoredEnv.DATABASE_URL = restoredUrl.toString();
    }
    const restore = await HeraldProcess.start('restore', 'restore', restoredEnv, [archive]);
    expect(await restore.exited, restore.output()).toBe(0);
    expect(restore.output()).toContain(`into ${restoredDir}`);
    expect(restore.output()).not.toContain('another secret');
    expect(fs.readFileSync(path.join(restoredDir, 'secret.key'))).toEqual(secret);
    const restoredUploads = fs.readdirSync(path.join(restoredDir, 'uploads'));
    expect(fs.readFileSync(path.join(restoredDir, 'uploads', restoredUploads[0]!))).toEqual(image);
    // A second restore into the same folder is refused: it is not empty any more.
    const again = await HeraldProcess.start('restore-2', 'restore', restoredEnv, [archive]);
    expect(await again.exited).toBe(1);
    expect(again.output()).toContain('is not empty');

    // The snapshot is consistent: every counter matches the rows it counts.
    const restoredDb = openDatabase(restoredEnv.DATABASE_URL ? { kind: 'postgres', url: restoredEnv.DATABASE_URL } : { kind: 'sqlite', file: path.join(restoredDir, 'herald.db') });
    try {
      const notification = await restoredDb.db.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      const sentRows = await restoredDb.db.selectFrom('deliveries').select((eb) => eb.fn.countAll<number>().as('n')).where('run_seq', 'in', runSeqsOfNotification(id)).where('status', '=', 'sent').executeTakeFirstOrThrow();
      const allRows = await restoredDb.db.selectFrom('deliveries').select((eb) => eb.fn.countAll<number>().as('n')).where('run_seq', 'in', runSeqsOfNotification(id)).executeTakeFirstOrThrow();
      expect(notification.sent_count).toBe(Number(sentRows.n));
      expect(notification.total_count).toBe(Number(allRows.n));
      expect(notification.sent_count).toBeGreaterThan(0);
      expect(notification.sent_count).toBeLessThan(SUBSCRIBERS);
    } finally {
      await restoredDb.close();
    }

    // Herald on the restored data: same owner, same site, every subscriber, the send resumed and finished.
    const serve = await HeraldProcess.start('restored', 'serve', {
      ...restoredEnv,
      EXTRA_PUSH_ORIGINS: h.push.origin,
      DELIVERY_LEASE_SECONDS: '2',
      SCHEDULER_INTERVAL_MS: '100',
    });
    const api = async (url: string, init: RequestInit = {}) => {
      const response = await fetch(`${serve.url}/api${url}`, init);
      return { status: response.status, body: (await response.json()) as any };
    };
    const login = await api('/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: h.owner.email, password: h.owner.password }) });
    expect(login.status).toBe(200);
    const auth = { authorization: `Bearer ${login.body.data.token}` };
    const subscribers = await api(`/sites/${h.site.id}/subscribers?limit=10`, { headers: auth });
    expect(subscribers.body.data.total).toBe(SUBSCRIBERS);
    const site = await api(`/sites/${h.site.id}`, { headers: auth });
    expect(site.status).toBe(200);
    const finished = await waitUntil(
      'the restored send to finish',
      async () => {
        const n = (await api(`/notifications/${id}`, { headers: auth })).body.data.notification;
        return n.status === 'completed' ? n : undefined;
      },
      60_000,
      200,
    );
    expect(finished.stats).toMatchObject({ total: SUBSCRIBERS, sent: SUBSCRIBERS, failed: 0 });
    expect(finished.title).toBe('Backed up mid-send');
    await serve.stop();
  }, 180_000);
});
