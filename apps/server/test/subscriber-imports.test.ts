import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvCells } from '../src/features/subscriber-imports/import-file';
import { addMember, multipart } from './security/support/fixtures';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from './support/delivery-harness';
import type { TestSubscription } from './support/push-service';
import { waitFor } from './support/test-app';

// Importing subscribers (docs/product.md, "Importing subscribers"), through
// HTTP with the engine running: the scheduler claims the import and the job
// reads the file; sends go to the local push service, which verifies every
// VAPID JWT against the key each subscription was made with and decrypts
// every message.

/** A VAPID key pair made with node:crypto directly, not with Herald's code. */
function foreignPair(): { public_key: string; private_key: string } {
  const ecdh = crypto.createECDH('prime256v1');
  ecdh.generateKeys();
  return { public_key: ecdh.getPublicKey().toString('base64url'), private_key: ecdh.getPrivateKey().toString('base64url') };
}

describe('importing subscribers', () => {
  let h: DeliveryHarness;

  beforeAll(async () => {
    h = await createDeliveryHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  const api = (method: string, url: string, body?: unknown, token = h.owner.token) => h.t.request(method, url, { token, ...(body !== undefined ? { body } : {}) });

  async function upload(siteId: string, fileName: string, content: string | Buffer, fields: Record<string, string> = {}, token = h.owner.token) {
    const body = multipart([...Object.entries(fields).map(([name, data]) => ({ name, data })), { name: 'file', filename: fileName, contentType: 'text/csv', data: content }]);
    const response = await h.t.app.inject({ method: 'POST', url: `/api/sites/${siteId}/subscriber-imports`, headers: { 'content-type': body.contentType, authorization: `Bearer ${token}` }, payload: body.payload });
    return { status: response.statusCode, body: response.json() };
  }

  async function imported(siteId: string, fileName: string, content: string, fields: Record<string, string> = {}) {
    const created = await upload(siteId, fileName, content, fields);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.data.import).toMatchObject({ status: 'queued', file_name: fileName, report_url: null });
    return waitFor(async () => {
      const response = await api('GET', `/api/subscriber-imports/${created.body.data.import.id}`);
      return ['done', 'failed'].includes(response.body.data.import.status) ? response.body.data.import : undefined;
    }, { timeoutMs: 20_000 });
  }

  async function report(importId: string): Promise<string[][]> {
    const response = await api('GET', `/api/subscriber-imports/${importId}/report`);
    expect(response.status).toBe(200);
    expect(String(response.headers['content-type'])).toContain('text/csv');
    return (response.body as string).trim().split('\r\n').map(csvCells);
  }

  async function send(siteId: string, title: string) {
    const created = await api('POST', `/api/sites/${siteId}/notifications`, notificationInput({ title }));
    expect(created.status).toBe(201);
    const id: string = created.body.data.notification.id;
    expect((await api('POST', `/api/notifications/${id}/send`)).status).toBe(200);
    return h.waitForStatus(id, ['completed', 'completed_with_errors', 'failed']);
  }

  const csvOf = (header: string[], rows: string[][]) => [header.join(','), ...rows.map((row) => row.join(','))].join('\n') + '\n';

  it('imports subscriptions made with a foreign VAPID key from a CSV and a JSON Lines file, and every push is signed with that key and decrypts', async () => {
    const site = await h.t.createSite(h.owner.token, { name: 'Moved Shop', url: 'https://moved.example' });
    const pair = foreignPair();
    const key = await api('POST', `/api/sites/${site.id}/vapid-keys`, pair);
    expect(key.status).toBe(201);

    const inCsv = [0, 1, 2].map(() => h.push.createSubscription({ applicationServerKey: pair.public_key }));
    const inJsonl = [0, 1].map(() => h.push.createSubscription({ applicationServerKey: pair.public_key }));
    const csv = csvOf(
      ['endpoint', 'p256dh', 'auth', 'vapid_public_key', 'created_at', 'tags'],
      inCsv.map((s) => [s.endpoint, s.keys.p256dh, s.keys.auth, pair.public_key, '2025-03-01T10:00:00Z', 'onesignal|vip']),
    );
    const jsonl = inJsonl.map((s) => JSON.stringify({ endpoint: s.endpoint, keys: s.keys, created_at: 1735689600000, tags: ['pushengage'] })).join('\n');

    const fromCsv = await imported(site.id, 'onesignal.csv', csv);
    expect(fromCsv).toMatchObject({ status: 'done', rows_read: 3, imported: 3, updated: 0, rejected: 0, error: null, report_url: `/api/subscriber-imports/${fromCsv.id}/report` });
    expect(fromCsv.bytes_read).toBe(Buffer.byteLength(csv));
    // No vapid_public_key column: the form names the key.
    const fromJsonl = await imported(site.id, 'pushengage.jsonl', jsonl, { vapid_key_id: key.body.data.key.id });
    expect(fromJsonl).toMatchObject({ status: 'done', rows_read: 2, imported: 2, rejected: 0 });

    const list = await api('GET', `/api/sites/${site.id}/subscriber-imports`);
    expect(list.body.data.imports.map((i: any) => i.id)).toEqual([fromJsonl.id, fromCsv.id]);
    expect((await api('GET', `/api/sites/${site.id}`)).body.data.site.subscriber_count).toBe(5);

    h.push.reset();
    const done = await send(site.id, 'Hello from the new platform');
    expect(done.status).toBe('completed');
    const all: TestSubscription[] = [...inCsv, ...inJsonl];
    for (const subscription of all) {
      const messages = h.push.messages.filter((m) => m.subscriptionId === subscription.id);
      expect(messages).toHaveLength(1);
      expect(messages[0]!.vapidKey).toBe(pair.public_key);
      expect(messages[0]!.payload).toMatchObject({ title: 'Hello from the new platform' });
    }
    expect(h.push.stats().decryptionFailures).toBe(0);
  });

  it('rejects each bad row with its line, reason and detail, updates a known endpoint, keeps the counters true and enrols in the welcome campaign only when asked', async () => {
    const site = await h.t.createSite(h.owner.token, { name: 'Rules Shop', url: 'https://rules.example' });
    const campaign = await api('POST', `/api/sites/${site.id}/welcome-campaigns`, {
      name: 'Welcome',
      is_active: true,
      steps: [{ sequence_order: 1, delay_minutes: 0, notification: { title: 'Hi', message: 'Welcome', destination_url: 'https://rules.example/hi' } }],
    });
    expect(campaign.status, JSON.stringify(campaign.body)).toBe(201);
    const hook = await api('POST', `/api/sites/${site.id}/webhooks`, { url: 'http://127.0.0.1:9/hook', events: ['subscriber.created'] });
    expect(hook.status).toBe(201);
    const primary = (await api('GET', `/api/sites/${site.id}`)).body.data.site.vapid_public_key as string;
    // A subscriber already there, subscribed through the public API.
    const known = h.push.createSubscription({ applicationServerKey: primary });
    const subscribed = await h.t.request('POST', `/api/public/sites/${site.id}/subscribers`, { body: { subscription: { endpoint: known.endpoint, keys: known.keys } }, remoteAddress: '198.51.100.77' });
    expect(subscribed.status).toBe(201);
    const enrolmentsBefore = await h.t.ctx.db.selectFrom('welcome_campaign_enrollments').select('subscriber_id').where('site_id', '=', site.id).execute();
    expect(enrolmentsBefore).toHaveLength(1);
    const hooksBefore = await h.t.ctx.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', hook.body.data.webhook.id).execute();

    const a = h.push.createSubscription();
    const b = h.push.createSubscription();
    const c = h.push.createSubscription();
    const other = foreignPair();
    const header = ['endpoint', 'p256dh', 'auth', 'vapid_public_key', 'created_at', 'tags', 'country', 'language', 'timezone'];
    const csv = csvOf(header, [
      [a.endpoint, a.keys.p256dh, a.keys.auth, '', '2024-01-02T03:04:05Z', 'news|vip', 'fr', 'fr-FR', 'Europe/Paris'], // line 2
      [b.endpoint, '', b.keys.auth, '', '', '', '', '', ''], // 3: bad_row
      [b.endpoint, 'BAAA', b.keys.auth, '', '', '', '', '', ''], // 4: bad_key
      ['https://evil.example/push/1', b.keys.p256dh, b.keys.auth, '', '', '', '', '', ''], // 5: endpoint_not_allowed
      [a.endpoint, a.keys.p256dh, a.keys.auth, '', '', '', '', '', ''], // 6: duplicate of line 2
      [c.endpoint, c.keys.p256dh, c.keys.auth, other.public_key, '', '', '', '', ''], // 7: unknown_vapid_key
      [b.endpoint, b.keys.p256dh, b.keys.auth, primary, 'last tuesday', 'sports', '', '', ''], // 8: bad created_at → now
      [known.endpoint, known.keys.p256dh, known.keys.auth, '', '', 'imported', '', '', ''], // 9: known endpoint → updated
      ['only,three,cells'], // 10: bad_row
    ]);
    const before = h.t.ctx.clock.now();
    const result = await imported(site.id, 'mixed.csv', csv);
    expect(result).toMatchObject({ status: 'done', rows_read: 9, imported: 2, updated: 1, rejected: 6, enrol_in_welcome_campaign: false });

    const rows = await report(result.id);
    expect(rows[0]).toEqual(['line', 'reason', 'detail', 'endpoint']);
    const byLine = new Map(rows.slice(1).map((row) => [row[0], row]));
    expect([...byLine.keys()]).toEqual(['3', '4', '5', '6', '7', '10']);
    expect(byLine.get('3')!.slice(1, 3)).toEqual(['bad_row', 'p256dh is empty']);
    expect(byLine.get('4')![1]).toBe('bad_key');
    expect(byLine.get('4')![2]).toMatch(/^p256dh must be a 65-byte/);
    expect(byLine.get('5')![1]).toBe('endpoint_not_allowed');
    expect(byLine.get('5')![2]).toMatch(/not on a known push service/);
    expect(byLine.get('5')![3]).toBe('https://evil.example/push/1');
    expect(byLine.get('6')!.slice(1, 4)).toEqual(['duplicate', 'the same endpoint appears on line 2', a.endpoint]);
    expect(byLine.get('7')![1]).toBe('unknown_vapid_key');
    expect(byLine.get('7')![2]).toMatch(/^no VAPID key of this site has that public key/);
    expect(byLine.get('10')!.slice(1, 3)).toEqual(['bad_row', 'the row has 3 cells, the header 9']);

    const subscribers = await h.t.ctx.db.selectFrom('subscribers').selectAll().where('site_id', '=', site.id).execute();
    expect(subscribers).toHaveLength(3);
    const of = (s: TestSubscription) => subscribers.find((row) => row.endpoint === s.endpoint)!;
    expect(of(a)).toMatchObject({ subscribed_at: Date.parse('2024-01-02T03:04:05Z'), country: 'FR', language: 'fr-FR', timezone: 'Europe/Paris', is_active: 1 });
    expect(of(b).subscribed_at).toBeGreaterThanOrEqual(before);
    expect(of(known).id).toBe(subscribed.body.data.subscriber.id);
    const tags = async (id: string) => (await api('GET', `/api/sites/${site.id}/subscribers/${id}`)).body.data.subscriber.tags;
    expect(await tags(of(a).id)).toEqual(['news', 'vip']);
    expect(await tags(of(b).id)).toEqual(['sports']);
    expect(await tags(of(known).id)).toEqual(['imported']);
    expect((await api('GET', `/api/sites/${site.id}`)).body.data.site.subscriber_count).toBe(3);
    const counted = await h.t.ctx.db.selectFrom('sites').select('active_subscriber_count').where('id', '=', site.id).executeTakeFirstOrThrow();
    expect(Number(counted.active_subscriber_count)).toBe(3);
    // No enrolment and no webhook per imported row by default.
    expect(await h.t.ctx.db.selectFrom('welcome_campaign_enrollments').select('subscriber_id').where('site_id', '=', site.id).execute()).toHaveLength(1);
    expect(await h.t.ctx.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', hook.body.data.webhook.id).execute()).toHaveLength(hooksBefore.length);

    // Importing the same file again: nothing new, the three stored endpoints updated; asked to enrol, a new one is enrolled.
    const d = h.push.createSubscription();
    const again = await imported(site.id, 'again.csv', csv + `${d.endpoint},${d.keys.p256dh},${d.keys.auth},,,,,,\n`, { enrol_in_welcome_campaign: 'true' });
    expect(again).toMatchObject({ status: 'done', rows_read: 10, imported: 1, updated: 3, rejected: 6, enrol_in_welcome_campaign: true });
    const enrolled = await h.t.ctx.db.selectFrom('welcome_campaign_enrollments').innerJoin('subscribers', 'subscribers.id', 'welcome_campaign_enrollments.subscriber_id').select('subscribers.endpoint').where('welcome_campaign_enrollments.site_id', '=', site.id).execute();
    expect(enrolled.map((row) => row.endpoint).sort()).toEqual([known.endpoint, d.endpoint].sort());
    expect(Number((await h.t.ctx.db.selectFrom('sites').select('active_subscriber_count').where('id', '=', site.id).executeTakeFirstOrThrow()).active_subscriber_count)).toBe(4);
    // The seen endpoints are forgotten and the uploaded files deleted once an import finishes.
    expect(await h.t.ctx.db.selectFrom('subscriber_import_seen').select('import_id').where('import_id', 'in', [result.id, again.id]).execute()).toEqual([]);
    await waitFor(() => fs.readdirSync(path.join(h.t.dataDir, 'imports')).length === 0);
  });

  it('moves an audience exported with keys from one site to another that has the same VAPID key pair', async () => {
    const from = await h.t.createSite(h.owner.token, { name: 'Old Shop', url: 'https://old.example' });
    const to = await h.t.createSite(h.owner.token, { name: 'New Shop', url: 'https://new.example' });
    const subscriptions = [0, 1, 2, 3].map(() => h.push.createSubscription({ applicationServerKey: from.vapid_public_key }));
    for (const [i, s] of subscriptions.entries()) {
      const response = await h.t.request('POST', `/api/public/sites/${from.id}/subscribers`, {
        body: { subscription: { endpoint: s.endpoint, keys: s.keys }, timezone: 'Europe/Berlin', language: 'de-DE' },
        headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0' },
        remoteAddress: `203.0.113.${i + 10}`,
      });
      expect(response.status).toBe(201);
      // Tags a spreadsheet would take for formulas: the export guards them with an apostrophe, the import drops it.
      expect((await api('PATCH', `/api/subscribers/${response.body.data.subscriber.id}/tags`, { tags: [`-${i}`, '=sum', `plain${i}`] })).status).toBe(200);
    }
    const exported = await api('GET', `/api/sites/${from.id}/subscribers/export?include_keys=true`);
    expect(exported.status).toBe(200);
    expect(exported.body as string).toContain("'");

    const privateKey = (await h.t.ctx.db.selectFrom('site_vapid_keys').select('private_key').where('site_id', '=', from.id).where('is_primary', '=', 1).executeTakeFirstOrThrow()).private_key;
    expect((await api('POST', `/api/sites/${to.id}/vapid-keys`, { public_key: from.vapid_public_key, private_key: privateKey })).status).toBe(201);

    const result = await imported(to.id, 'herald-export.csv', exported.body as string);
    expect(result).toMatchObject({ status: 'done', rows_read: 4, imported: 4, rejected: 0 });
    const columns = ['endpoint', 'p256dh', 'auth', 'subscribed_at', 'browser', 'os', 'country', 'language', 'timezone', 'is_active'] as const;
    const audience = async (siteId: string) => {
      const rows = await h.t.ctx.db.selectFrom('subscribers').select([...columns, 'id']).where('site_id', '=', siteId).orderBy('endpoint').execute();
      return Promise.all(rows.map(async ({ id, ...row }) => ({ ...row, tags: (await api('GET', `/api/sites/${siteId}/subscribers/${id}`)).body.data.subscriber.tags })));
    };
    const original = await audience(from.id);
    expect(original[0]!.tags).toContain('=sum');
    expect(await audience(to.id)).toEqual(original);

    h.push.reset();
    expect((await send(to.id, 'Moved')).status).toBe('completed');
    const received = h.push.messages.filter((m) => subscriptions.some((s) => s.id === m.subscriptionId));
    expect(received).toHaveLength(4);
    for (const message of received) expect(message.vapidKey).toBe(from.vapid_public_key);
    expect(h.push.stats().decryptionFailures).toBe(0);
  });

  it('needs the admin role, hides other tenants’ imports, and answers a missing file, a bad key and a too large file with a clear message', async () => {
    const owner = { site: await h.t.createSite(h.owner.token, { name: 'Roles Shop', url: 'https://roles.example' }), user: h.owner };
    const s = h.push.createSubscription();
    const csv = csvOf(['endpoint', 'p256dh', 'auth'], [[s.endpoint, s.keys.p256dh, s.keys.auth]]);
    for (const role of ['viewer', 'editor']) {
      const member = await addMember(h.t, owner, role);
      const refused = await upload(owner.site.id, 'x.csv', csv, {}, member.token);
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toMatch(/admin/i);
      expect((await api('GET', `/api/sites/${owner.site.id}/subscriber-imports`, undefined, member.token)).status).toBe(403);
    }
    const admin = await addMember(h.t, owner, 'admin');
    const done = await upload(owner.site.id, 'x.csv', csv, {}, admin.token);
    expect(done.status).toBe(201);

    const stranger = await h.t.createUser();
    expect((await upload(owner.site.id, 'x.csv', csv, {}, stranger.token)).status).toBe(404);
    for (const url of [`/api/subscriber-imports/${done.body.data.import.id}`, `/api/subscriber-imports/${done.body.data.import.id}/report`, `/api/sites/${owner.site.id}/subscriber-imports`]) {
      expect((await api('GET', url, undefined, stranger.token)).status).toBe(404);
    }

    const noFile = await api('POST', `/api/sites/${owner.site.id}/subscriber-imports`, { some: 'json' });
    expect(noFile.status).toBe(400);
    expect(noFile.body.error.message).toMatch(/^Choose a CSV or JSON Lines file to import/);
    const onlyFields = multipart([{ name: 'enrol_in_welcome_campaign', data: 'true' }]);
    const fieldsOnly = await h.t.app.inject({ method: 'POST', url: `/api/sites/${owner.site.id}/subscriber-imports`, headers: { 'content-type': onlyFields.contentType, authorization: `Bearer ${h.owner.token}` }, payload: onlyFields.payload });
    expect(fieldsOnly.statusCode).toBe(400);
    expect(fieldsOnly.json().error.message).toMatch(/^Choose a CSV or JSON Lines file/);

    const badKey = await upload(owner.site.id, 'x.csv', csv, { vapid_key_id: 'no-such-key' });
    expect(badKey.status).toBe(400);
    expect(badKey.body.error.message).toMatch(/vapid_key_id is not one of this site/);

    h.t.ctx.subscriberImports = { maxBytes: 2000 };
    try {
      const big = await upload(owner.site.id, 'big.csv', csv + `${s.endpoint},${'x'.repeat(3000)},y\n`);
      expect(big.status).toBe(413);
      expect(big.body.error.message).toBe('The file is larger than 2000 bytes, the most one import reads: split it into smaller files');
    } finally {
      h.t.ctx.subscriberImports = undefined;
    }
    await waitFor(async () => (await h.t.ctx.db.selectFrom('subscriber_imports').select('id').where('status', 'in', ['queued', 'running']).execute()).length === 0, { timeoutMs: 10_000 });
    await waitFor(() => fs.readdirSync(path.join(h.t.dataDir, 'imports')).length === 0);
  });
});
