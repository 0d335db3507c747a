import { AUDIT_ACTIONS } from '@herald/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogRetentionSource } from '../src/features/audit-log/service';
import { ManualClock } from '../src/platform/clock';
import { addMember, documentedRoutes, dumpDatabase } from './security/support/fixtures';
import { createTestApp, type TestApp } from './support/test-app';

// The audit log (docs/product.md, "Teams"; docs/security.md, "Audit log").

const DAY = 86_400_000;

describe('audit log: the trail of a team’s journey', () => {
  const clock = new ManualClock(Date.UTC(2026, 4, 4, 8));
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ clock });
  });
  afterAll(async () => t?.close());

  it('records who did what, when and from where, newest first, with filters, keyset pages and a CSV export', async () => {
    const owner = await t.createUser({ name: 'Olga Owner' });
    const as = (token: string, method: string, url: string, body?: unknown, remoteAddress = '203.0.113.7') =>
      t.request(method, url, { token, remoteAddress, ...(body !== undefined ? { body } : {}) });
    // A site name a spreadsheet would run as a formula.
    const site = await t.createSite(owner.token, { name: '=HYPERLINK("http://evil.example","x")' });
    clock.advance(1000);
    const editor = await addMember(t, { site, user: owner }, 'editor');
    clock.advance(1000);
    const viewer = await addMember(t, { site, user: owner }, 'viewer');
    clock.advance(1000);

    const created = await as(editor.token, 'POST', `/api/sites/${site.id}/notifications`, { title: 'Spring sale', message: 'All in', destination_url: 'https://shop.example/sale' });
    expect(created.status).toBe(201);
    const id = created.body.data.notification.id;
    clock.advance(1000);
    expect((await as(editor.token, 'PATCH', `/api/notifications/${id}`, { title: 'Spring sale!', message: 'All in' })).status).toBe(200);
    clock.advance(1000);
    const before = await dumpDatabase(t.ctx.db);
    const refused = await as(viewer.token, 'POST', `/api/notifications/${id}/send`);
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toBe('This needs the editor role or higher.');
    expect(await dumpDatabase(t.ctx.db)).toEqual(before);
    expect((await as(editor.token, 'POST', `/api/notifications/${id}/send`, undefined, '198.51.100.9')).status).toBe(200);
    clock.advance(1000);
    expect((await as(owner.token, 'PATCH', `/api/sites/${site.id}/members/${viewer.id}`, { role: 'editor' })).status).toBe(200);
    clock.advance(1000);
    const key = await as(owner.token, 'POST', `/api/sites/${site.id}/api-keys`, { name: 'Backend' });
    clock.advance(1000);
    const subscriber = await t.request('POST', `/api/public/sites/${site.id}/subscribers`, {
      body: { subscription: { endpoint: 'https://fcm.googleapis.com/fcm/send/audit-1', keys: { p256dh: 'BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM', auth: 'tBHItJI5svbpez7KI4CCXg' } } },
      remoteAddress: '192.0.2.1',
    });
    expect(subscriber.status).toBe(201);
    const tagged = await t.request('POST', `/api/v1/sites/${site.id}/subscribers/tags`, {
      headers: { authorization: `Bearer ${key.body.data.key}` },
      body: { subscriber_id: subscriber.body.data.subscriber.id, add: ['vip'] },
    });
    expect(tagged.status).toBe(200);
    clock.advance(1000);
    expect((await as(owner.token, 'DELETE', `/api/api-keys/${key.body.data.api_key.id}`)).status).toBe(200);
    clock.advance(1000);
    expect((await as(owner.token, 'PATCH', `/api/sites/${site.id}`, { settings: { timezone: 'Europe/Paris' } })).status).toBe(200);

    // Editors and viewers do not read the audit log.
    expect((await as(editor.token, 'GET', `/api/sites/${site.id}/audit-log`)).status).toBe(403);

    const log = await as(owner.token, 'GET', `/api/sites/${site.id}/audit-log?limit=100`);
    expect(log.status).toBe(200);
    const trail = log.body.data.entries.map((e: any) => `${e.actor.type}:${e.actor.label.split(' <')[0]} ${e.action} ${e.subject.type}${e.changed_fields.length ? ` [${e.changed_fields.join(',')}]` : ''}`);
    expect(trail).toEqual([
      'user:Olga Owner settings_changed site [timezone]',
      'user:Olga Owner key_revoked api_key',
      'api_key:API key Backend updated subscriber [tags]',
      'user:Olga Owner key_created api_key',
      'user:Olga Owner role_changed member',
      expect.stringMatching(/^user:Member \d+ sent notification$/),
      expect.stringMatching(/^user:Member \d+ updated notification \[title\]$/),
      expect.stringMatching(/^user:Member \d+ created notification$/),
      expect.stringMatching(/^user:Member \d+ member_joined member$/),
      'user:Olga Owner member_invited invitation',
      expect.stringMatching(/^user:Member \d+ member_joined member$/),
      'user:Olga Owner member_invited invitation',
      'user:Olga Owner created site',
    ]);
    const entries = log.body.data.entries;
    expect(entries[0].address).toBe('203.0.113.7');
    expect(entries[5].address).toBe('198.51.100.9');
    expect(entries[5].actor.id).toBe(editor.id);
    expect(entries[4].detail).toEqual({ from: 'viewer', to: 'editor' });
    expect(entries[2].actor.id).toBe(key.body.data.api_key.id);
    expect(Date.parse(entries[0].at)).toBe(clock.now());

    // Filters: by a member's email, by action, by time.
    const byEditor = await as(owner.token, 'GET', `/api/sites/${site.id}/audit-log?actor=${encodeURIComponent(editor.email.toUpperCase())}`);
    expect(byEditor.body.data.entries.map((e: any) => e.action)).toEqual(['sent', 'updated', 'created', 'member_joined']);
    const sends = await as(owner.token, 'GET', `/api/sites/${site.id}/audit-log?action=sent`);
    expect(sends.body.data.entries).toHaveLength(1);
    const window = await as(owner.token, 'GET', `/api/sites/${site.id}/audit-log?from=${new Date(entries[6].at).toISOString()}&to=${new Date(entries[5].at).toISOString()}`);
    expect(window.body.data.entries.map((e: any) => e.action)).toEqual(['sent', 'updated']);
    expect((await as(owner.token, 'GET', `/api/sites/${site.id}/audit-log?action=hacked`)).status).toBe(400);
    expect((await as(owner.token, 'GET', `/api/sites/${site.id}/audit-log?cursor=bm9wZQ`)).status).toBe(400);

    // Keyset pages: every entry once, in order.
    const paged: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 20; page++) {
      const response: any = await as(owner.token, 'GET', `/api/sites/${site.id}/audit-log?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      paged.push(...response.body.data.entries.map((e: any) => e.id));
      cursor = response.body.data.next_cursor;
      if (!cursor) break;
    }
    expect(paged).toEqual(entries.map((e: any) => e.id));

    // CSV: formula cells neutralised; the export itself is logged.
    const csv = await t.app.inject({ method: 'GET', url: `/api/sites/${site.id}/audit-log/export?action=created`, headers: { authorization: `Bearer ${owner.token}` } });
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toContain('text/csv');
    const lines = csv.body.trim().split('\r\n');
    expect(lines[0]).toBe('time,actor,actor_type,action,subject_type,subject,subject_id,changed_fields,detail,address');
    expect(lines).toHaveLength(3);
    expect(csv.body).toContain(`"'=HYPERLINK(""http://evil.example"",""x"")"`);
    expect(csv.body).not.toMatch(/,"=/);
    const exported = await as(owner.token, 'GET', `/api/sites/${site.id}/audit-log?action=export_run`);
    expect(exported.body.data.entries[0].detail).toMatchObject({ rows: 2, action: 'created' });
  });

  it('records the download of a notification’s CSV report as an export: who, which notification, from where', async () => {
    const owner = await t.createUser({ name: 'Nora Owner' });
    const site = await t.createSite(owner.token, { name: 'Report shop' });
    const viewer = await addMember(t, { site, user: owner }, 'viewer');
    const created = await t.request('POST', `/api/sites/${site.id}/notifications`, {
      token: owner.token,
      body: { title: 'Summer sale', message: 'All in', destination_url: 'https://shop.example/summer' },
    });
    expect(created.status).toBe(201);
    const id = created.body.data.notification.id;
    clock.advance(1000);

    const report = await t.request('GET', `/api/notifications/${id}/report.csv`, { token: viewer.token, remoteAddress: '203.0.113.8' });
    expect(report.status).toBe(200);
    expect(report.headers['content-type']).toMatch(/^text\/csv/);

    const exported = await t.request('GET', `/api/sites/${site.id}/audit-log?action=export_run`, { token: owner.token });
    expect(exported.body.data.entries).toHaveLength(1);
    expect(exported.body.data.entries[0]).toMatchObject({
      at: new Date(clock.now()).toISOString(),
      actor: { type: 'user', id: viewer.id },
      action: 'export_run',
      subject: { type: 'notification', id, label: 'Summer sale' },
      changed_fields: [],
      detail: { file: `herald-notification-${id}.csv` },
      address: '203.0.113.8',
    });
  });

  it('offers no way to change or delete an entry through the API', async () => {
    const { routes } = await documentedRoutes(t.app);
    const auditRoutes = routes.filter((r) => r.path.includes('audit-log'));
    expect(auditRoutes.map((r) => r.method).sort()).toEqual(['GET', 'GET']);
    expect(AUDIT_ACTIONS).toContain('import_run');
  });

  it('keeps entries AUDIT_LOG_RETENTION_DAYS (365) days: still there at 364 days, gone at 366, deleted in batches', async () => {
    expect(t.config.auditLogRetentionDays).toBe(365);
    const owner = await t.createUser();
    const site = await t.createSite(owner.token, { name: 'Old' });
    for (let i = 0; i < 5; i++) await t.request('PATCH', `/api/sites/${site.id}`, { token: owner.token, body: { name: `Old ${i}` } });
    clock.advance(200 * DAY);
    // Sessions last 30 days: sign in again.
    let token = (await t.request('POST', '/api/auth/login', { body: { email: owner.email, password: owner.password } })).body.data.token;
    expect((await t.request('PATCH', `/api/sites/${site.id}`, { token, body: { name: 'Recent' } })).status).toBe(200);
    const count = async () => (await t.ctx.db.selectFrom('audit_log').select('id').where('site_id', '=', site.id).execute()).length;
    expect(await count()).toBe(7);
    const sweep = auditLogRetentionSource(t.ctx, { everyMs: 0, batchSize: 2, maxBatches: 100 });
    await sweep.runDue(clock.now());
    expect(await count()).toBe(7);
    // The six old entries are 364 days old: a day short of the retention, kept.
    clock.advance(164 * DAY);
    await sweep.runDue(clock.now());
    expect(await count()).toBe(7);
    // 366 days: past it, deleted (three batches of two); the 166-day-old one stays.
    clock.advance(2 * DAY);
    await sweep.runDue(clock.now());
    expect(await count()).toBe(1);
    token = (await t.request('POST', '/api/auth/login', { body: { email: owner.email, password: owner.password } })).body.data.token;
    const kept = await t.request('GET', `/api/sites/${site.id}/audit-log`, { token });
    expect(kept.body.data.entries.map((e: any) => e.subject.label)).toEqual(['Recent']);
  });
});
