import crypto from 'node:crypto';
import { roleNeededMessage, subscriberExportColumns } from '@herald/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointHash } from '../src/delivery/push-endpoints';
import { ManualClock } from '../src/platform/clock';
import { addMember, identityHashFor } from './security/support/fixtures';
import { createTestApp, type TestApp, type TestUser } from './support/test-app';

// "Move in and out freely": the audience as CSV (GET
// /sites/{siteId}/subscribers/export), with the push keys when the site moves
// to another push server. docs/product.md, "Subscribers"; docs/security.md,
// "CSV injection" and "Tenancy".

const UA = {
  chromeWindows: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
  firefoxLinux: 'Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0',
};
const GB = '81.2.69.142';
const US = '8.8.8.8';

function subscription(auth = crypto.randomBytes(16).toString('base64url')) {
  const ecdh = crypto.createECDH('prime256v1');
  return {
    endpoint: `https://fcm.googleapis.com/fcm/send/${crypto.randomBytes(16).toString('base64url')}`,
    keys: { p256dh: ecdh.generateKeys().toString('base64url'), auth },
  };
}

/** An auth secret whose base64url starts with "-": a spreadsheet would take it for a formula, an importer needs it exact. */
function authStartingWithMinus(): string {
  for (;;) {
    const auth = crypto.randomBytes(16).toString('base64url');
    if (auth.startsWith('-')) return auth;
  }
}

/** RFC 4180: fields separated by commas, lines by CRLF, quoted fields may hold both and "" for a quote. */
function parseCsv(text: string): string[][] {
  expect(text.startsWith('\uFEFF'), 'a byte order mark first, for spreadsheets').toBe(true);
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  const body = text.slice(1);
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (quoted) {
      if (c === '"' && body[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && body[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  expect(field === '' && row.length === 0, 'every line ends with CRLF').toBe(true);
  return rows;
}

/** The lines as objects keyed by the header's names. */
function records(text: string): Array<Record<string, string>> {
  const [header, ...lines] = parseCsv(text);
  return lines.map((cells) => {
    expect(cells).toHaveLength(header!.length);
    return Object.fromEntries(header!.map((name, i) => [name, cells[i]!]));
  });
}

describe('subscriber CSV export', () => {
  let t: TestApp;
  let owner: TestUser;
  const clock = new ManualClock(Date.UTC(2026, 4, 1, 8));
  let address = 0;

  async function addSubscriber(siteId: string, userAgent: string, ip: string, sub = subscription()) {
    clock.advance(60_000);
    const response = await t.request('POST', `/api/public/sites/${siteId}/subscribers`, {
      headers: { 'user-agent': userAgent },
      remoteAddress: ip,
      body: { subscription: sub, language: 'en-US', timezone: 'Europe/London' },
    });
    expect(response.status).toBe(201);
    return { id: response.body.data.subscriber.id as string, subscription: sub, subscribedAt: new Date(clock.now()).toISOString() };
  }

  async function identify(siteId: string, endpoint: string, externalId: string) {
    const { secret } = (await t.request('GET', `/api/sites/${siteId}/identity-secret`, { token: owner.token })).body.data;
    address += 1;
    const response = await t.request('POST', `/api/public/sites/${siteId}/identify`, {
      body: { endpoint, external_id: externalId, identity_hash: identityHashFor(secret, externalId) },
      remoteAddress: `192.0.2.${address}`,
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
  }

  const exportCsv = (siteId: string, query = '', token = owner.token) => t.request('GET', `/api/sites/${siteId}/subscribers/export${query ? `?${query}` : ''}`, { token });

  beforeAll(async () => {
    t = await createTestApp({ clock });
    owner = await t.createUser();
  });
  afterAll(async () => t.close());

  it('answers text/csv, oldest first, with the import’s column names; endpoint and keys only with include_keys=true', async () => {
    const site = await t.createSite(owner.token);
    const chrome = await addSubscriber(site.id, UA.chromeWindows, GB);
    const firefox = await addSubscriber(site.id, UA.firefoxLinux, US);
    const gone = await addSubscriber(site.id, UA.firefoxLinux, US);
    expect((await t.request('PATCH', `/api/subscribers/${chrome.id}/tags`, { token: owner.token, body: { tags: ['vip', 'newsletter'] } })).status).toBe(200);
    await identify(site.id, chrome.subscription.endpoint, 'customer-1');
    expect((await t.request('DELETE', `/api/subscribers/${gone.id}`, { token: owner.token })).status).toBe(200);

    const plain = await exportCsv(site.id);
    expect(plain.status).toBe(200);
    expect(plain.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(plain.headers['content-disposition']).toBe(`attachment; filename="herald-subscribers-${site.id}.csv"`);
    expect(plain.headers['cache-control']).toBe('no-store');
    const text = plain.body as unknown as string;
    expect(parseCsv(text)[0]).toEqual(['id', 'created_at', 'browser', 'os', 'country', 'language', 'timezone', 'tags', 'external_id', 'status']);
    expect(parseCsv(text)[0]).toEqual(subscriberExportColumns(false));
    expect(records(text)).toEqual([
      { id: chrome.id, created_at: chrome.subscribedAt, browser: 'Chrome', os: 'Windows', country: 'GB', language: 'en-US', timezone: 'Europe/London', tags: 'newsletter|vip', external_id: 'customer-1', status: 'active' },
      { id: firefox.id, created_at: firefox.subscribedAt, browser: 'Firefox', os: 'Linux', country: 'US', language: 'en-US', timezone: 'Europe/London', tags: '', external_id: '', status: 'active' },
      { id: gone.id, created_at: gone.subscribedAt, browser: 'Firefox', os: 'Linux', country: 'US', language: 'en-US', timezone: 'Europe/London', tags: '', external_id: '', status: 'inactive' },
    ]);
    // Without include_keys nothing in the file can reach a browser.
    for (const sub of [chrome, firefox, gone]) {
      expect(text).not.toContain(sub.subscription.endpoint);
      expect(text).not.toContain(sub.subscription.keys.p256dh);
      expect(text).not.toContain(sub.subscription.keys.auth);
    }
    expect(text).not.toContain(site.vapid_public_key);
    expect((await exportCsv(site.id, 'include_keys=false')).body).toBe(text);

    const withKeys = await exportCsv(site.id, 'include_keys=true');
    expect(withKeys.status).toBe(200);
    expect(withKeys.headers['content-disposition']).toBe(`attachment; filename="herald-subscribers-${site.id}-with-keys.csv"`);
    const keyed = withKeys.body as unknown as string;
    expect(parseCsv(keyed)[0]).toEqual(['id', 'endpoint', 'p256dh', 'auth', 'vapid_public_key', 'created_at', 'browser', 'os', 'country', 'language', 'timezone', 'tags', 'external_id', 'status']);
    const rows = records(keyed);
    expect(rows.map((row) => row.id)).toEqual([chrome.id, firefox.id, gone.id]);
    for (const [i, sub] of [chrome, firefox, gone].entries()) {
      expect(rows[i]).toMatchObject({ endpoint: sub.subscription.endpoint, p256dh: sub.subscription.keys.p256dh, auth: sub.subscription.keys.auth, vapid_public_key: site.vapid_public_key });
    }
    expect(rows[0]).toMatchObject({ tags: 'newsletter|vip', external_id: 'customer-1', status: 'active', created_at: chrome.subscribedAt });
  });

  it('applies the Subscribers list’s filters: status and search (browser, OS, country code or name)', async () => {
    const site = await t.createSite(owner.token);
    const chrome = await addSubscriber(site.id, UA.chromeWindows, GB);
    const firefox = await addSubscriber(site.id, UA.firefoxLinux, US);
    const gone = await addSubscriber(site.id, UA.chromeWindows, US);
    expect((await t.request('DELETE', `/api/subscribers/${gone.id}`, { token: owner.token })).status).toBe(200);
    const ids = async (query: string) => {
      const response = await exportCsv(site.id, query);
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return records(response.body as unknown as string).map((row) => row.id);
    };
    expect(await ids('')).toEqual([chrome.id, firefox.id, gone.id]);
    expect(await ids('is_active=true')).toEqual([chrome.id, firefox.id]);
    expect(await ids('is_active=false')).toEqual([gone.id]);
    expect(await ids('search=CHROME')).toEqual([chrome.id, gone.id]);
    expect(await ids('search=chrome&is_active=true&include_keys=true')).toEqual([chrome.id]);
    expect(await ids('search=linux')).toEqual([firefox.id]);
    expect(await ids('search=united%20kingdom')).toEqual([chrome.id]);
    expect(await ids('search=%25')).toEqual([]);
    // Another site's subscribers are never in the file.
    const other = await t.createSite(owner.token);
    await addSubscriber(other.id, UA.chromeWindows, GB);
    expect(await ids('search=chrome')).toEqual([chrome.id, gone.id]);
    expect((await exportCsv(site.id, 'is_active=yes')).status).toBe(400);
    expect((await exportCsv(site.id, 'include_keys=1')).status).toBe(400);
  });

  it('neutralises cells a spreadsheet would run as formulas, but never changes a key', async () => {
    const site = await t.createSite(owner.token);
    const hostile = await addSubscriber(site.id, UA.chromeWindows, GB, subscription(authStartingWithMinus()));
    expect(hostile.subscription.keys.auth.startsWith('-')).toBe(true);
    expect((await t.request('PATCH', `/api/subscribers/${hostile.id}/tags`, { token: owner.token, body: { tags: ['=HYPERLINK("http://evil.example","x")', '@SUM(1)'] } })).status).toBe(200);
    await identify(site.id, hostile.subscription.endpoint, '+cmd|/C calc!A0');

    const [row] = records((await exportCsv(site.id, 'include_keys=true')).body as unknown as string);
    expect(row!.tags).toBe(`'=HYPERLINK("http://evil.example","x")|@SUM(1)`);
    expect(row!.external_id).toBe(`'+cmd|/C calc!A0`);
    // The auth secret goes as it is: with the apostrophe, an importer would encrypt for a key the browser does not have.
    expect(row!.auth).toBe(hostile.subscription.keys.auth);
  });

  it('pages through a large audience oldest first without skipping or repeating anyone, subscribers of one instant included', async () => {
    const site = await t.createSite(owner.token);
    const total = 2345;
    const instant = Date.UTC(2026, 0, 1);
    const rows = Array.from({ length: total }, (_, i) => {
      const endpoint = `https://fcm.googleapis.com/fcm/send/bulk-${i}-${crypto.randomBytes(6).toString('hex')}`;
      return {
        id: crypto.randomUUID(),
        site_id: site.id,
        endpoint,
        endpoint_hash: endpointHash(endpoint),
        p256dh: `BPkey${i}`,
        auth: `auth${i}`,
        browser: 'Chrome',
        os: 'Android',
        country: 'DE',
        language: null,
        timezone: null,
        user_agent: null,
        external_id: i % 500 === 0 ? `person-${i}` : null,
        external_id_verified: 0,
        is_active: i % 7 === 0 ? 0 : 1,
        // 1,500 subscribed in one instant: two page boundaries fall inside it.
        subscribed_at: i < 1500 ? instant : instant + i,
        last_seen_at: null,
        unsubscribed_at: null,
        updated_at: instant,
      };
    });
    for (let i = 0; i < rows.length; i += 200) await t.ctx.db.insertInto('subscribers').values(rows.slice(i, i + 200)).execute();
    const tagged = rows[2300]!;
    await t.ctx.db.insertInto('subscriber_tags').values({ subscriber_id: tagged.id, site_id: site.id, tag: 'late-page' }).execute();

    const exported = records((await exportCsv(site.id, 'include_keys=true')).body as unknown as string);
    expect(exported).toHaveLength(total);
    const expectedOrder = [...rows].sort((a, b) => a.subscribed_at - b.subscribed_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map((row) => row.id);
    expect(exported.map((row) => row.id)).toEqual(expectedOrder);
    const byId = new Map(exported.map((row) => [row.id, row]));
    expect(byId.get(tagged.id)).toMatchObject({ tags: 'late-page', p256dh: tagged.p256dh, auth: tagged.auth, endpoint: tagged.endpoint });
    expect(byId.get(rows[500]!.id)).toMatchObject({ external_id: 'person-500' });

    const inactive = records((await exportCsv(site.id, 'is_active=false')).body as unknown as string);
    expect(inactive.map((row) => row.id).sort()).toEqual(rows.filter((row) => row.is_active === 0).map((row) => row.id).sort());
  });

  it('is an admin’s (403 naming the role below it, 404 for a stranger), and each export is in the audit log with whether keys went with it', async () => {
    const site = await t.createSite(owner.token);
    await addSubscriber(site.id, UA.chromeWindows, GB);
    const tenant = { site, user: owner };
    const editor = await addMember(t, tenant, 'editor');
    const viewer = await addMember(t, tenant, 'viewer');
    const admin = await addMember(t, tenant, 'admin');
    const stranger = await t.createUser();

    for (const member of [editor, viewer]) {
      const refused = await exportCsv(site.id, 'include_keys=true', member.token);
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toBe(roleNeededMessage('admin'));
    }
    const unknown = await exportCsv(crypto.randomUUID(), '', stranger.token);
    const foreign = await exportCsv(site.id, '', stranger.token);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(unknown.body);

    const before = (await t.request('GET', `/api/sites/${site.id}/audit-log?action=export_run`, { token: owner.token })).body.data.entries;
    expect(before).toEqual([]);
    expect((await exportCsv(site.id, 'include_keys=true&is_active=true', admin.token)).status).toBe(200);
    expect((await exportCsv(site.id, 'search=chrome')).status).toBe(200);
    const entries = (await t.request('GET', `/api/sites/${site.id}/audit-log?action=export_run`, { token: owner.token })).body.data.entries;
    expect(entries.map((entry: any) => ({ actor: entry.actor.id, subject: entry.subject, detail: entry.detail }))).toEqual([
      { actor: owner.id, subject: { type: 'subscriber', id: null, label: null }, detail: { export: 'subscribers', include_keys: false, search: 'chrome' } },
      { actor: admin.id, subject: { type: 'subscriber', id: null, label: null }, detail: { export: 'subscribers', include_keys: true, is_active: true } },
    ]);
  });
});
