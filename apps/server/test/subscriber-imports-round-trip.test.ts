import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { multipart } from './security/support/fixtures';
import { createDeliveryHarness, type DeliveryHarness } from './support/delivery-harness';
import { waitFor } from './support/test-app';

// Moving in with one's subscribers (docs/product.md, "Importing
// subscribers"): what Herald's own export says survives the round trip (who
// had left stays gone), a stray quote in one cell costs at most that row, a
// subscriber never ends with more tags than the tags API allows, and epoch
// seconds are read as seconds.
describe('subscriber imports: the round trip and real-world files', () => {
  let h: DeliveryHarness;

  beforeAll(async () => {
    h = await createDeliveryHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  const api = (method: string, url: string, body?: unknown, token = h.owner.token) => h.t.request(method, url, { token, ...(body !== undefined ? { body } : {}) });

  async function upload(siteId: string, fileName: string, content: string | Buffer, fields: Record<string, string> = {}) {
    const body = multipart([...Object.entries(fields).map(([name, data]) => ({ name, data })), { name: 'file', filename: fileName, contentType: 'text/csv', data: content }]);
    const response = await h.t.app.inject({ method: 'POST', url: `/api/sites/${siteId}/subscriber-imports`, headers: { 'content-type': body.contentType, authorization: `Bearer ${h.owner.token}` }, payload: body.payload });
    return { status: response.statusCode, body: response.json() };
  }

  async function imported(siteId: string, fileName: string, content: string, fields: Record<string, string> = {}) {
    const created = await upload(siteId, fileName, content, fields);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return waitFor(async () => {
      const response = await api('GET', `/api/subscriber-imports/${created.body.data.import.id}`);
      return ['done', 'failed'].includes(response.body.data.import.status) ? response.body.data.import : undefined;
    }, { timeoutMs: 20_000 });
  }

  const csvOf = (header: string[], rows: string[][]) => [header.join(','), ...rows.map((row) => row.join(','))].join('\n') + '\n';

  async function subscribeTo(site: any, i: number) {
    const s = h.push.createSubscription({ applicationServerKey: site.vapid_public_key });
    const response = await h.t.request('POST', `/api/public/sites/${site.id}/subscribers`, {
      body: { subscription: { endpoint: s.endpoint, keys: s.keys } },
      headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0' },
      remoteAddress: `203.0.113.${i}`,
    });
    expect(response.status).toBe(201);
    return { id: response.body.data.subscriber.id as string, subscription: s };
  }

  async function movePairTo(from: any, to: any) {
    const privateKey = (await h.t.ctx.db.selectFrom('site_vapid_keys').select('private_key').where('site_id', '=', from.id).where('is_primary', '=', 1).executeTakeFirstOrThrow()).private_key;
    expect((await api('POST', `/api/sites/${to.id}/vapid-keys`, { public_key: from.vapid_public_key, private_key: privateKey })).status).toBe(201);
  }

  it('export-then-import round trip: a subscriber the owner removed (exported as status inactive) does not come back active', async () => {
    const from = await h.t.createSite(h.owner.token, { name: 'Old Inactive', url: 'https://old-inactive.example' });
    const to = await h.t.createSite(h.owner.token, { name: 'New Inactive', url: 'https://new-inactive.example' });
    const staying = await subscribeTo(from, 41);
    const removed = await subscribeTo(from, 42);
    expect((await api('DELETE', `/api/subscribers/${removed.id}`)).status).toBe(200);

    const exported = await api('GET', `/api/sites/${from.id}/subscribers/export?include_keys=true`);
    expect(exported.status).toBe(200);
    expect(exported.body as string).toContain(',inactive');
    await movePairTo(from, to);

    const result = await imported(to.id, 'herald-export.csv', exported.body as string);
    expect(result.status).toBe('done');
    const rows = await h.t.ctx.db.selectFrom('subscribers').select(['endpoint', 'is_active']).where('site_id', '=', to.id).execute();
    const byEndpoint = new Map(rows.map((r) => [r.endpoint, r.is_active]));
    expect(byEndpoint.get(staying.subscription.endpoint)).toBe(1);
    // The removed subscriber must not be active (and counted, and sent to) on the new site.
    expect(byEndpoint.get(removed.subscription.endpoint) ?? 0).toBe(0);
    expect((await api('GET', `/api/sites/${to.id}`)).body.data.site.subscriber_count).toBe(1);
  });

  it('a stray quote inside one unquoted CSV cell rejects at most that row; the rows after it are still imported', async () => {
    const site = await h.t.createSite(h.owner.token, { name: 'Quote Shop', url: 'https://quote.example' });
    const subs = [0, 1, 2, 3].map(() => h.push.createSubscription({ applicationServerKey: site.vapid_public_key }));
    const csv = csvOf(
      ['endpoint', 'p256dh', 'auth', 'browser'],
      subs.map((s, i) => [s.endpoint, s.keys.p256dh, s.keys.auth, i === 1 ? 'Chrome 5" tablet' : 'Chrome']),
    );
    const result = await imported(site.id, 'other-platform.csv', csv);
    expect(result.status).toBe('done');
    // 4 data rows: at worst the odd one is rejected, the 3 others must be there.
    expect(result.rows_read).toBe(4);
    expect(result.imported).toBeGreaterThanOrEqual(3);
  });

  it('an import never leaves a subscriber with more tags than the 50 a subscriber can have', async () => {
    const site = await h.t.createSite(h.owner.token, { name: 'Tags Shop', url: 'https://tags.example' });
    const one = await subscribeTo(site, 61);
    const own = Array.from({ length: 50 }, (_, i) => `own${i}`);
    expect((await api('PATCH', `/api/subscribers/${one.id}/tags`, { tags: own })).status).toBe(200);
    const more = Array.from({ length: 10 }, (_, i) => `imported${i}`).join('|');
    const csv = csvOf(['endpoint', 'p256dh', 'auth', 'tags'], [[one.subscription.endpoint, one.subscription.keys.p256dh, one.subscription.keys.auth, more]]);
    const result = await imported(site.id, 'tags.csv', csv);
    expect(result).toMatchObject({ status: 'done', updated: 1 });
    const tags = (await api('GET', `/api/sites/${site.id}/subscribers/${one.id}`)).body.data.subscriber.tags;
    expect(tags.length).toBeLessThanOrEqual(50);
  });

  it('created_at in epoch seconds (10 digits) is not stored as a date in January 1970', async () => {
    const site = await h.t.createSite(h.owner.token, { name: 'Epoch Shop', url: 'https://epoch.example' });
    const s = h.push.createSubscription({ applicationServerKey: site.vapid_public_key });
    const csv = csvOf(['endpoint', 'p256dh', 'auth', 'created_at'], [[s.endpoint, s.keys.p256dh, s.keys.auth, '1735689600']]);
    const result = await imported(site.id, 'seconds.csv', csv);
    expect(result).toMatchObject({ status: 'done', imported: 1 });
    const row = await h.t.ctx.db.selectFrom('subscribers').select('subscribed_at').where('site_id', '=', site.id).executeTakeFirstOrThrow();
    expect(Number(row.subscribed_at)).toBeGreaterThan(Date.UTC(2000, 0, 1));
  });
});
