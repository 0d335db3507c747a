import dns from 'node:dns';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRssFeedsService } from '../../src/features/rss-feeds/service';
import { classifyAddress } from '../../src/platform/ip-address-policy';
import { createOutboundHttp, type ResolvedAddress } from '../../src/platform/outbound-http';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from '../support/delivery-harness';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app';
import { Canary, expectErrorBody, fcmEndpoint, nextAddress, pushKeys } from './support/fixtures';

// docs/security.md, "Outbound requests (SSRF)": everything Herald fetches or
// POSTs to, driven through the product's own doors — feed URLs saved through
// the API and checked with "Check now", redirects a feed server sends, and
// push endpoints a browser hands the public subscribe API. A canary server
// on a loopback address proves that nothing was contacted.

const FORBIDDEN_ADDRESS = /^Feed address (points|redirects) to a (private|reserved) network address$/;
const RSS = '<?xml version="1.0"?><rss version="2.0"><channel><title>Local</title><link>https://local.example/</link><item><guid>1</guid><title>One</title></item></channel></rss>';

const serveRss: Parameters<Canary['on']>[1] = (_request, response) => {
  response.writeHead(200, { 'content-type': 'application/rss+xml' });
  response.end(RSS);
};

describe('feed fetches refuse private, loopback, link-local, CGNAT and unique-local addresses in every spelling', () => {
  let t: TestApp;
  let owner: TestUser;
  let site: any;
  let canary: Canary;

  beforeAll(async () => {
    canary = await Canary.start('127.0.0.1');
    canary.on('/feed.xml', serveRss);
    // Every spelling is checked with "Check now", far more than one user's hourly allowance (rss-feeds-limits.test.ts tests that).
    t = await createTestApp({ env: { RSS_CHECKS_PER_USER_PER_HOUR: '1000' } });
    owner = await t.createUser();
    site = await t.createSite(owner.token);
  });
  afterAll(async () => {
    await t?.close();
    await canary?.close();
  });

  const api = (method: string, url: string, body?: unknown) => t.request(method, url, { token: owner.token, ...(body !== undefined ? { body } : {}) });
  const p = () => canary.port;

  /** Each spelling of "this machine" or "a private network", all pointing at the canary where a port matters. */
  const forbidden = () => [
    `http://127.0.0.1:${p()}/feed.xml`,
    `http://2130706433:${p()}/feed.xml`,
    `http://0x7f.1:${p()}/feed.xml`,
    `http://0x7f000001:${p()}/feed.xml`,
    `http://0177.0.0.1:${p()}/feed.xml`,
    `http://127.1:${p()}/feed.xml`,
    `http://127.000.000.001:${p()}/feed.xml`,
    `http://[::ffff:127.0.0.1]:${p()}/feed.xml`,
    `http://[::ffff:7f00:1]:${p()}/feed.xml`,
    `http://[::1]:${p()}/feed.xml`,
    `http://[::]:${p()}/feed.xml`,
    `http://0.0.0.0:${p()}/feed.xml`,
    `http://localhost:${p()}/feed.xml`,
    `http://LocalHost.:${p()}/feed.xml`,
    `http://feeds.localhost:${p()}/feed.xml`,
    'http://169.254.169.254/latest/meta-data/',
    'http://[fe80::1]/feed.xml',
    'http://100.64.0.1/feed.xml',
    'http://10.0.0.1/feed.xml',
    'http://172.16.0.1/feed.xml',
    'http://192.168.1.1/feed.xml',
    'http://[fd00::1]/feed.xml',
    'http://[64:ff9b::a9fe:a9fe]/feed.xml', // NAT64 of 169.254.169.254
    'http://[2002:7f00:1::]/feed.xml', // 6to4 of 127.0.0.1
  ];

  async function check(feedId: string) {
    const response = await api('POST', `/api/rss-feeds/${feedId}/check`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body.data as { check: { outcome: string; error: string | null }; feed: { last_error: string | null } };
  }

  it('refuses each form when a feed is created with it and checked now, with a clear last_error', async () => {
    for (const url of forbidden()) {
      const created = await api('POST', `/api/sites/${site.id}/rss-feeds`, { name: 'Probe', url });
      expect(created.status, `${url}: ${JSON.stringify(created.body)}`).toBe(201);
      const { check: result, feed } = await check(created.body.data.feed.id);
      expect(result.outcome, url).toBe('error');
      expect(result.error, url).toMatch(FORBIDDEN_ADDRESS);
      expect(feed.last_error, url).toBe(result.error);
    }
    expect(canary.requests).toEqual([]);
  });

  it('refuses each form when an existing feed is changed to it (PATCH) and checked now', async () => {
    const created = await api('POST', `/api/sites/${site.id}/rss-feeds`, { name: 'Edited', url: 'https://blog.example/feed.xml' });
    for (const url of forbidden()) {
      expect((await api('PATCH', `/api/rss-feeds/${created.body.data.feed.id}`, { url })).status).toBe(200);
      const { check: result } = await check(created.body.data.feed.id);
      expect(result.error, url).toMatch(FORBIDDEN_ADDRESS);
    }
    expect(canary.requests).toEqual([]);
  });

  it('refuses a DNS name that resolves to this machine (the host name, through the system resolver)', async () => {
    const name = os.hostname();
    const answers = await dns.promises.lookup(name, { all: true });
    // Precondition: on this machine the host name resolves (through /etc/hosts or DNS) to a non-public address.
    expect(answers.length).toBeGreaterThan(0);
    expect(answers.every((a) => classifyAddress(a.address) !== null), JSON.stringify(answers)).toBe(true);
    const created = await api('POST', `/api/sites/${site.id}/rss-feeds`, { name: 'By name', url: `http://${name}:${p()}/feed.xml` });
    const { check: result } = await check(created.body.data.feed.id);
    expect(result.error).toMatch(FORBIDDEN_ADDRESS);
    expect(canary.requests).toEqual([]);
  });

  it('refuses other schemes and credentials in the address at save time or at the fetch, clearly', async () => {
    for (const url of ['file:///etc/passwd', 'gopher://127.0.0.1:70/_GET', 'ftp://127.0.0.1/feed.xml', 'javascript:alert(1)', 'data:text/xml,<rss/>', 'dict://127.0.0.1:11211/stat']) {
      const refused = await api('POST', `/api/sites/${site.id}/rss-feeds`, { name: 'Scheme', url });
      expect(refused.status, url).toBe(400);
      expectErrorBody(refused.body, url);
      expect(refused.body.error.message).toMatch(/https?:\/\//);
    }
    const withCredentials = await api('POST', `/api/sites/${site.id}/rss-feeds`, { name: 'Creds', url: `http://user:secret@127.0.0.1:${p()}/feed.xml` });
    const { check: result } = await check(withCredentials.body.data.feed.id);
    expect(result.error).toBe('Feed address must not contain a user name or password');
    expect(canary.requests).toEqual([]);
  });

  it('refuses names whose DNS answers are private (resolver injected into the outbound client the check uses)', async () => {
    const zone: Record<string, ResolvedAddress[]> = {
      'intranet.example': [{ address: '127.0.0.1', family: 4 }],
      'metadata.example': [{ address: '169.254.169.254', family: 4 }],
      'cgnat.example': [{ address: '100.64.0.1', family: 4 }],
      'ula.example': [{ address: 'fd00::1', family: 6 }],
      'loopback6.example': [{ address: '::1', family: 6 }],
      'mapped.example': [{ address: '::ffff:127.0.0.1', family: 6 }],
      // One private answer among public ones is enough to refuse (the connection could pick it).
      'mixed.example': [
        { address: '93.184.216.34', family: 4 },
        { address: '10.0.0.1', family: 4 },
      ],
    };
    const looked: string[] = [];
    const resolve = async (hostname: string) => {
      looked.push(hostname);
      const answer = zone[hostname];
      if (!answer) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      return answer;
    };
    const feeds = createRssFeedsService(t.ctx, { outbound: createOutboundHttp({ resolve }) });
    for (const name of Object.keys(zone)) {
      const created = await api('POST', `/api/sites/${site.id}/rss-feeds`, { name, url: `http://${name}:${p()}/feed.xml` });
      const { check: result, feed } = await feeds.checkNow(owner.id, created.body.data.feed.id);
      expect(result.error, name).toMatch(FORBIDDEN_ADDRESS);
      expect(feed.last_error, name).toBe(result.error);
    }
    expect(looked.sort()).toEqual(Object.keys(zone).sort());
    expect(canary.requests).toEqual([]);

    // The same name works once an administrator lists it (OUTBOUND_ALLOW_HOSTS).
    const allowed = createRssFeedsService(t.ctx, { outbound: createOutboundHttp({ resolve, allowHosts: ['intranet.example'] }) });
    const created = await api('POST', `/api/sites/${site.id}/rss-feeds`, { name: 'Allowed', url: `http://intranet.example:${p()}/feed.xml` });
    const { check: result } = await allowed.checkNow(owner.id, created.body.data.feed.id);
    expect(result.outcome).toBe('baseline');
    expect(canary.requests.map((r) => r.url)).toEqual(['/feed.xml']);
  });
});

describe('feed redirects are checked hop by hop; OUTBOUND_ALLOW_HOSTS opens only the hosts it lists', () => {
  let t: TestApp;
  let owner: TestUser;
  let site: any;
  /** The feed server, on the allowed 127.0.0.1. */
  let origin: Canary;
  /** Must never be reached: 127.0.0.2 is loopback too, but not listed. */
  let hidden: Canary;

  beforeAll(async () => {
    origin = await Canary.start('127.0.0.1');
    hidden = await Canary.start('127.0.0.2');
    origin.on('/feed.xml', serveRss);
    t = await createTestApp({ env: { OUTBOUND_ALLOW_HOSTS: '127.0.0.1' } });
    owner = await t.createUser();
    site = await t.createSite(owner.token);
  });
  afterAll(async () => {
    await t?.close();
    await origin?.close();
    await hidden?.close();
  });

  const api = (method: string, url: string, body?: unknown) => t.request(method, url, { token: owner.token, ...(body !== undefined ? { body } : {}) });
  const redirect = (path: string, location: string, status = 302) =>
    origin.on(path, (_request, response) => {
      response.writeHead(status, { location });
      response.end();
    });

  async function checkUrl(url: string) {
    const created = await api('POST', `/api/sites/${site.id}/rss-feeds`, { name: 'Redirected', url });
    expect(created.status).toBe(201);
    const response = await api('POST', `/api/rss-feeds/${created.body.data.feed.id}/check`);
    expect(response.status).toBe(200);
    return response.body.data.check as { outcome: string; error: string | null };
  }

  it('fetches the listed local host', async () => {
    expect((await checkUrl(origin.url('/feed.xml'))).outcome).toBe('baseline');
  });

  it('refuses a redirect to any unlisted private address, in any spelling, at any hop', async () => {
    const hp = hidden.port;
    const targets: Array<[string, string, RegExp]> = [
      ['/r/loopback-2', `http://127.0.0.2:${hp}/feed.xml`, FORBIDDEN_ADDRESS],
      ['/r/hex', `http://0x7f.0.0.2:${hp}/feed.xml`, FORBIDDEN_ADDRESS],
      ['/r/mapped', `http://[::ffff:127.0.0.2]:${hp}/feed.xml`, FORBIDDEN_ADDRESS],
      ['/r/localhost', `http://localhost:${hp}/feed.xml`, FORBIDDEN_ADDRESS],
      ['/r/ipv6-loopback', `http://[::1]:${hp}/feed.xml`, FORBIDDEN_ADDRESS],
      ['/r/metadata', 'http://169.254.169.254/latest/meta-data/iam/security-credentials/', FORBIDDEN_ADDRESS],
      ['/r/cgnat', 'http://100.64.0.1/', FORBIDDEN_ADDRESS],
      ['/r/ula', 'http://[fd00::1]/', FORBIDDEN_ADDRESS],
      ['/r/protocol-relative', `//127.0.0.2:${hp}/feed.xml`, FORBIDDEN_ADDRESS],
      ['/r/file', 'file:///etc/passwd', /^Feed address must start with http:\/\/ or https:\/\/$/],
      ['/r/gopher', `gopher://127.0.0.2:${hp}/_x`, /^Feed address must start with http:\/\/ or https:\/\/$/],
    ];
    for (const [path, location, expected] of targets) {
      redirect(path, location);
      const result = await checkUrl(origin.url(path));
      expect(result.outcome, location).toBe('error');
      expect(result.error, location).toMatch(expected);
    }
    // A chain that turns private only at its third hop, with 301, 307 and 308.
    redirect('/chain/1', origin.url('/chain/2'), 301);
    redirect('/chain/2', '/chain/3', 307);
    redirect('/chain/3', `http://127.0.0.2:${hp}/feed.xml`, 308);
    expect((await checkUrl(origin.url('/chain/1'))).error).toMatch(/^Feed address redirects to a private network address$/);
    // An endless loop stops.
    redirect('/loop', '/loop');
    expect((await checkUrl(origin.url('/loop'))).error).toBe('Too many redirects (more than 5)');
    expect(hidden.requests).toEqual([]);
  });
});

describe('push endpoints: only https on known push services, refused at subscribe time', () => {
  let t: TestApp;
  let owner: TestUser;
  let site: any;
  let canary: Canary;

  beforeAll(async () => {
    canary = await Canary.start('127.0.0.1');
    t = await createTestApp();
    owner = await t.createUser();
    site = await t.createSite(owner.token);
  });
  afterAll(async () => {
    await t?.close();
    await canary?.close();
  });

  const subscribe = (app: TestApp, siteId: string, endpoint: string) =>
    app.request('POST', `/api/public/sites/${siteId}/subscribers`, { body: { subscription: { endpoint, keys: pushKeys() } }, remoteAddress: nextAddress() });

  it('refuses every forbidden form with a clear 400 and stores nothing', async () => {
    const endpoints = [
      `http://127.0.0.1:${canary.port}/push`,
      'http://fcm.googleapis.com/fcm/send/abc',
      'https://2130706433/push',
      'https://0x7f.1/push',
      'https://0177.0.0.1/push',
      'https://127.1/push',
      'https://[::ffff:127.0.0.1]/push',
      'https://[::1]/push',
      'https://169.254.169.254/latest/meta-data/',
      'https://100.64.0.1/push',
      'https://[fd00::1]/push',
      'https://localhost/push',
      `https://${os.hostname()}/push`,
      'https://10.0.0.1/push',
      'https://fcm.googleapis.com.evil.example/fcm/send/abc',
      'https://evilfcm.googleapis.com/fcm/send/abc',
      'https://evil.example/fcm.googleapis.com/fcm/send/abc',
      'https://fcm.googleapis.com@127.0.0.1/fcm/send/abc',
      'https://user:secret@fcm.googleapis.com/fcm/send/abc',
      'https://fcm.googleapis.com:8443/fcm/send/abc',
      'https://fcm.googleapis.com\\@127.0.0.1/fcm/send/abc',
      'https://fcm.googleapis.com\t.evil.example/fcm/send/abc',
      'https://fcm.googleapis.com%2F@127.0.0.1/abc',
      'javascript:alert(1)',
      'file:///etc/passwd',
      'ws://fcm.googleapis.com/fcm/send/abc',
      'not a url',
    ];
    for (const endpoint of endpoints) {
      const response = await subscribe(t, site.id, endpoint);
      expect(response.status, `${endpoint}: ${JSON.stringify(response.body)}`).toBe(400);
      expectErrorBody(response.body, endpoint);
      expect(response.body.error.message, endpoint).toMatch(/^subscription\.endpoint/);
    }
    const rows = await t.ctx.db.selectFrom('subscribers').select('endpoint').execute();
    expect(rows).toEqual([]);
    expect(canary.requests).toEqual([]);
    // The real thing is accepted.
    expect((await subscribe(t, site.id, fcmEndpoint())).status).toBe(201);
  });

  it('accepts a local test push service only when EXTRA_PUSH_ORIGINS lists its exact origin', async () => {
    const listed = await createTestApp({ env: { EXTRA_PUSH_ORIGINS: canary.origin } });
    try {
      const user = await listed.createUser();
      const localSite = await listed.createSite(user.token);
      expect((await subscribe(listed, localSite.id, canary.url('/push/1'))).status).toBe(201);
      // Same host, another port or scheme: not the listed origin.
      expect((await subscribe(listed, localSite.id, `http://127.0.0.1:${canary.port + 1}/push/1`)).status).toBe(400);
      expect((await subscribe(listed, localSite.id, `http://localhost:${canary.port}/push/1`)).status).toBe(400);
    } finally {
      await listed.close();
    }
  });
});

describe('what is sent is not fetched: image, icon and button URLs reach the browser, not the server', () => {
  let h: DeliveryHarness;
  let canary: Canary;

  beforeAll(async () => {
    canary = await Canary.start('127.0.0.1');
    h = await createDeliveryHarness();
  });
  afterAll(async () => {
    await h?.close();
    await canary?.close();
  });

  it('sends a notification with canary image URLs without contacting them, and refuses a stored endpoint the policy no longer allows', async () => {
    const { subscriberId } = await h.subscribe();
    const tampered = await h.subscribe();
    // A row written under a looser policy (or by hand): the push client checks the origin again when sending.
    await h.t.ctx.db.updateTable('subscribers').set({ endpoint: canary.url('/push/tampered') }).where('id', '=', tampered.subscriberId).execute();

    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, {
      token: h.owner.token,
      body: notificationInput({
        icon_url: canary.url('/icon.png'),
        image_url: canary.url('/image.png'),
        actions: [{ title: 'Open', url: canary.url('/action') }],
        destination_url: canary.url('/landing'),
      }),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.data.notification.id;
    expect((await h.t.request('POST', `/api/notifications/${id}/send`, { token: h.owner.token })).status).toBe(200);
    const done = await h.waitForStatus(id, ['completed', 'completed_with_errors', 'failed']);
    expect(done.stats).toMatchObject({ sent: 1, failed: 1 });
    // Herald itself refused the stored endpoint: a rejected delivery, named as such.
    const performance = await h.t.request('GET', `/api/notifications/${id}/performance`, { token: h.owner.token });
    expect(performance.body.data.failures).toEqual([{ reason: 'rejected', push_service: 'other', count: 1, sample_error: `${new URL(canary.url('/')).origin} is not a known push service` }]);

    const payload = h.push.messages.map((m) => m.payload as Record<string, unknown>).find((m) => JSON.stringify(m).includes('/image.png'));
    expect(payload, 'the legitimate subscriber got the URLs to load itself').toBeDefined();
    expect(subscriberId).toBeTruthy();
    expect(canary.requests).toEqual([]);
  });
});
