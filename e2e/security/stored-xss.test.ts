import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, recordDialogs, type BrowserSession, type Page } from '../support/browser';
import { startHerald, type HeraldProcess } from '../support/herald-server';

// docs/security.md, "Untrusted content" › "Stored XSS", in a real browser: script
// payloads go into every text field an owner, a subscriber's browser or a
// feed can set, through the API, and every page that shows them is opened in
// headless Chromium. Nothing may run (window.__xss stays undefined, no dialog
// opens), the payloads show as text, `javascript:` URLs are refused when
// saved, and the dashboard's Content-Security-Policy is present, forbids
// inline script and is enforced (an injected inline script is blocked and
// reported as a violation).

const P = {
  img: '<img src=x onerror=window.__xss=1>',
  script: '<script>window.__xss=1</script>',
  svg: '"><svg onload=window.__xss=1>',
  svgShort: '<svg/onload=window.__xss=1>',
  iframe: '<iframe srcdoc="<script>parent.__xss=1</script>">',
  anchor: '<a href="javascript:window.__xss=1">x</a>',
  template: "{{constructor.constructor('window.__xss=1')()}}",
};
const PAYLOAD_URL = 'https://xss.example/?q="><img src=x onerror=window.__xss=1>';
const JAVASCRIPT_URLS = ['javascript:window.__xss=1', ' javascript:window.__xss=1', 'JaVaScRiPt:window.__xss=1', 'java\tscript:window.__xss=1', 'data:text/html,<script>window.__xss=1</script>', 'vbscript:msgbox(1)'];

describe('stored XSS (headless Chromium)', () => {
  let herald: HeraldProcess;
  let browser: BrowserSession;
  let feedServer: http.Server;
  let feedOrigin = '';
  let feedItems = '';
  let token = '';
  const ids: Record<string, string> = {};

  const api = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${herald.url}/api${path}`, {
      method,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const created = async (method: string, path: string, body: unknown, status = 201) => {
    const response = await api(method, path, body);
    expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBe(status);
    return response.body.data;
  };

  beforeAll(async () => {
    feedServer = http.createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/rss+xml' });
      response.end(`<?xml version="1.0"?><rss version="2.0"><channel><title>${escapeXml(P.script)}</title><link>https://xss.example/</link>${feedItems}</channel></rss>`);
    });
    await new Promise<void>((resolve) => feedServer.listen(0, '127.0.0.1', resolve));
    feedOrigin = `http://127.0.0.1:${(feedServer.address() as AddressInfo).port}`;

    herald = await startHerald({
      ADMIN_EMAIL: 'owner@example.com',
      ADMIN_PASSWORD: 'owner-password',
      // The owner's own name is a payload too (shown in the sidebar).
      ADMIN_NAME: `${P.img}${P.svg}`,
      OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
    });
    token = (await api('POST', '/auth/login', { email: 'owner@example.com', password: 'owner-password' })).body.data.token;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await herald?.stop();
    herald?.cleanUp();
    await new Promise((resolve) => feedServer?.close(resolve));
  });

  it('refuses javascript: and other non-http URLs wherever a URL is saved', async () => {
    const site = await created('POST', '/sites', { name: 'Probe', url: 'https://probe.example' });
    const content = { title: 'T', message: 'M', destination_url: 'https://probe.example/' };
    const notification = (await created('POST', `/sites/${site.site.id}/notifications`, content)).notification;
    const campaign = (await created('POST', `/sites/${site.site.id}/welcome-campaigns`, { name: 'C', is_active: false, steps: [{ sequence_order: 1, delay_minutes: 0, notification: content }] })).campaign;
    const feed = (await created('POST', `/sites/${site.site.id}/rss-feeds`, { name: 'F', url: 'https://probe.example/feed', is_active: false })).feed;
    for (const url of JAVASCRIPT_URLS) {
      const attempts: Array<[string, string, unknown]> = [
        ['POST', '/sites', { name: 'S', url }],
        ['PATCH', `/sites/${site.site.id}`, { url }],
        ['PATCH', `/sites/${site.site.id}`, { settings: { icon: url } }],
        ['POST', `/sites/${site.site.id}/notifications`, { ...content, destination_url: url }],
        ['POST', `/sites/${site.site.id}/notifications`, { ...content, icon_url: url }],
        ['POST', `/sites/${site.site.id}/notifications`, { ...content, image_url: url }],
        ['POST', `/sites/${site.site.id}/notifications`, { ...content, actions: [{ title: 'Go', url }] }],
        ['POST', `/sites/${site.site.id}/welcome-campaigns`, { name: 'C', is_active: false, steps: [{ sequence_order: 1, delay_minutes: 0, notification: { ...content, destination_url: url } }] }],
        ['POST', `/sites/${site.site.id}/welcome-campaigns`, { name: 'C', is_active: false, icon_url: url, steps: [{ sequence_order: 1, delay_minutes: 0, notification: content }] }],
        ['POST', `/sites/${site.site.id}/rss-feeds`, { name: 'F', url }],
        ['POST', `/sites/${site.site.id}/rss-feeds`, { name: 'F', url: 'https://probe.example/feed', iconUrl: url }],
        ['PATCH', `/notifications/${notification.id}`, { destination_url: url }],
        ['PATCH', `/notifications/${notification.id}`, { actions: [{ title: 'Go', url }] }],
        ['PATCH', `/welcome-campaigns/${campaign.id}`, { steps: [{ sequence_order: 1, delay_minutes: 0, notification: { ...content, destination_url: url } }] }],
        ['PATCH', `/welcome-campaigns/${campaign.id}`, { icon_url: url }],
        ['PATCH', `/rss-feeds/${feed.id}`, { url }],
      ];
      for (const [method, path, body] of attempts) {
        const response = await api(method, path, body);
        expect(response.status, `${method} ${path} ${JSON.stringify(body)} → ${JSON.stringify(response.body)}`).toBe(400);
        expect(response.body.success).toBe(false);
      }
    }
    expect((await api('DELETE', `/sites/${site.site.id}`)).status).toBe(200);
  });

  it('stores payloads in every text field through the API', async () => {
    const site = (await created('POST', '/sites', { name: `${P.img}${P.svg}`, url: PAYLOAD_URL, settings: { icon: 'https://xss.example/icon.png?"><svg onload=window.__xss=1>' } })).site;
    ids.site = site.id;
    const segment = (await created('POST', `/sites/${site.id}/segments`, { name: `${P.img}${P.svg}`, rules: { tags: [P.img, P.svg] } })).segment;
    ids.segment = segment.id;

    const actions = [
      { title: P.svg, url: 'https://xss.example/a?<script>window.__xss=1</script>' },
      { title: P.svgShort, url: PAYLOAD_URL },
    ];
    ids.draft = (
      await created('POST', `/sites/${site.id}/notifications`, {
        title: P.img,
        message: `${P.script} ${P.svg} ${P.anchor}`,
        destination_url: PAYLOAD_URL,
        icon_url: 'https://xss.example/i.png?"><svg onload=window.__xss=1>',
        image_url: 'https://xss.example/big.png?"><img src=x onerror=window.__xss=1>',
        segment_id: segment.id,
        actions,
      })
    ).notification.id;
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    ids.scheduled = (await created('POST', `/sites/${site.id}/notifications`, { title: P.script, message: `${P.img}${P.template}`, destination_url: PAYLOAD_URL, scheduled_at: tomorrow, actions })).notification.id;
    ids.recurring = (
      await created('POST', `/sites/${site.id}/notifications`, {
        type: 'RECURRING',
        title: P.svg,
        message: P.iframe,
        destination_url: PAYLOAD_URL,
        recurring_schedule: { interval_type: 'DAILY', interval_value: 1, start_date: tomorrow },
      })
    ).notification.id;
    ids.triggered = (await created('POST', `/sites/${site.id}/notifications`, { type: 'TRIGGERED', title: P.iframe, message: P.anchor, destination_url: PAYLOAD_URL, trigger: { event: 'never_sent', delay_minutes: 5 } })).notification.id;
    // Event names cannot carry markup at all (the automation page lists them).
    expect((await api('POST', `/sites/${site.id}/notifications`, { type: 'TRIGGERED', title: 't', message: 'm', destination_url: 'https://x.example', trigger: { event: P.img } })).status).toBe(400);

    ids.campaign = (
      await created('POST', `/sites/${site.id}/welcome-campaigns`, {
        name: `${P.img}${P.script}`,
        is_active: false,
        utm_params: { utm_source: P.svgShort, utm_medium: 'push', utm_campaign: P.img },
        steps: [
          { sequence_order: 1, delay_minutes: 0, notification: { title: P.svg, message: `${P.img}${P.iframe}`, destination_url: PAYLOAD_URL, actions } },
          { sequence_order: 2, delay_minutes: 60, notification: { title: P.script, message: P.anchor, destination_url: PAYLOAD_URL } },
        ],
      })
    ).campaign.id;

    const key = await created('POST', `/sites/${site.id}/api-keys`, { name: `${P.img}${P.svg}` });

    // A subscriber: its browser says who it is, the site's page and backend tag and identify it.
    const ecdh = crypto.createECDH('prime256v1');
    const endpoint = `https://fcm.googleapis.com/fcm/send/${crypto.randomBytes(16).toString('base64url')}`;
    const subscribed = await api(
      'POST',
      `/public/sites/${site.id}/subscribers`,
      { subscription: { endpoint, keys: { p256dh: ecdh.generateKeys().toString('base64url'), auth: crypto.randomBytes(16).toString('base64url') } }, timezone: P.img, language: P.svg },
      { 'user-agent': `Mozilla/5.0 ${P.img}` },
    );
    expect(subscribed.status).toBe(201);
    const subscriberId = subscribed.body.data.subscriber.id;
    await created('PATCH', `/subscribers/${subscriberId}/tags`, { tags: [P.img, P.svg, P.script] }, 200);
    await created('POST', `/public/sites/${site.id}/tags`, { endpoint, add: [P.svgShort] }, 200);
    const { secret } = await created('GET', `/sites/${site.id}/identity-secret`, undefined, 200);
    const identityHash = crypto.createHmac('sha256', secret).update(P.img).digest('hex');
    await created('POST', `/public/sites/${site.id}/identify`, { endpoint, external_id: P.img, identity_hash: identityHash }, 200);
    await created('POST', `/public/sites/${site.id}/track`, { endpoint, event: 'viewed_product', data: { note: P.img, nested: { html: P.script } }, idempotency_key: P.svg }, 202);
    expect((await api('POST', `/public/sites/${site.id}/track`, { endpoint, event: P.svg })).status).toBe(400);
    expect((await api('POST', `/v1/sites/${site.id}/events`, { event: P.script, external_id: 'x' }, { authorization: `Bearer ${key.key}` })).status).toBe(400);
    const v1 = await api('POST', `/v1/sites/${site.id}/events`, { event: 'viewed_cart', external_id: P.script, data: { [P.img]: P.svg } }, { authorization: `Bearer ${key.key}` });
    expect(v1.status).toBe(202);

    // A feed whose channel and items are payloads (a guid shown in the list, a title that becomes a draft).
    const feed = (
      await created('POST', `/sites/${site.id}/rss-feeds`, {
        name: `${P.img}${P.svg}`,
        url: `${feedOrigin}/feed.xml?x="><svg/onload=window.__xss=1>`,
        utmParams: { utm_source: P.svgShort, utm_medium: null, utm_campaign: P.img },
        createDraft: true,
        maxPushesPerDay: 5,
      })
    ).feed;
    ids.feed = feed.id;
    // The first check (started on creation) records what the feed lists; wait for it, then publish the payloads.
    await waitUntil(async () => (await api('GET', `/rss-feeds/${feed.id}`)).body.data.feed.last_fetched_at !== null);
    feedItems = [
      `<item><guid isPermaLink="false">${escapeXml(P.img)}</guid><title>${escapeXml(P.img)}</title><link>https://xss.example/item?"&gt;&lt;svg onload=window.__xss=1&gt;</link><description>${escapeXml(`${P.script}${P.iframe}`)}</description></item>`,
      `<item><guid>js-link</guid><title>${escapeXml(P.svg)}</title><link>javascript:window.__xss=1</link><description><![CDATA[<img src=x onerror=window.__xss=1><script>window.__xss=1</script>]]></description></item>`,
    ].join('');
    const checked = await waitUntil(async () => {
      const response = await api('POST', `/rss-feeds/${feed.id}/check`);
      return response.status === 200 ? response.body.data : undefined;
    });
    expect(checked.check).toMatchObject({ outcome: 'checked', drafted: 2 });
    for (const id of checked.check.notification_ids as string[]) {
      const draft = (await api('GET', `/notifications/${id}`)).body.data.notification;
      // A feed's `javascript:` link never becomes a destination.
      expect(draft.destination_url).toMatch(/^https?:\/\//);
    }
    ids.feedDraft = checked.check.notification_ids[0];
  });

  it('renders every payload as text on every page: nothing runs, no dialog opens', async () => {
    const page = await browser.context.newPage();
    await watchForViolations(page);
    const dialogs = recordDialogs(page);
    await page.goto(`${herald.url}/login`);
    await page.getByLabel('Email').fill('owner@example.com');
    await page.getByLabel('Password').fill('owner-password');
    await page.getByTestId('login-submit').click();
    await page.waitForURL(/\/dashboard/);

    /** Pages, and text (a payload) each must show, so the test knows the field really is on screen. */
    const visits: Array<{ path: string; shows: string[]; then?: (page: Page) => Promise<void> }> = [
      { path: '/dashboard', shows: [P.img] },
      { path: '/notifications', shows: [P.img, P.script, P.svg] },
      { path: `/notifications/${ids.draft}`, shows: [P.img, P.script, P.svg] },
      { path: `/notifications/${ids.scheduled}`, shows: [P.script] },
      { path: `/notifications/${ids.recurring}`, shows: [P.iframe] },
      { path: `/notifications/${ids.triggered}`, shows: [P.iframe] },
      { path: `/notifications/${ids.feedDraft}`, shows: [P.img] },
      { path: `/notifications/${ids.draft}/edit`, shows: [] },
      { path: '/notifications/new', shows: [] },
      { path: '/subscribers', shows: [P.img] },
      { path: '/segments', shows: [P.img] },
      { path: '/campaigns', shows: [P.img] },
      { path: `/campaigns/${ids.campaign}/edit`, shows: [] },
      { path: '/campaigns/new', shows: [] },
      { path: '/rss-feeds', shows: [P.img] },
      { path: '/settings', shows: [] },
      { path: '/settings?tab=installation', shows: [] },
      { path: '/settings?tab=vapid', shows: [] },
      { path: '/settings?tab=api-keys', shows: [P.img] },
      { path: '/settings?tab=automation', shows: [`User ${P.img}`, `User ${P.script}`] },
      { path: '/help', shows: [] },
    ];
    const zodEvalProbe = new RegExp(`^script-src eval ${herald.url.replace(/\./g, '\\.')}/assets/[\\w.-]+\\.js:\\d+$`);
    for (const visit of visits) {
      await page.goto(`${herald.url}${visit.path}`);
      await page.waitForLoadState('networkidle');
      // The sidebar shows the owner's name (a payload) on every page of the shell.
      await page.getByText(`${P.img}${P.svg}`, { exact: false }).filter({ visible: true }).first().waitFor({ timeout: 15_000 });
      for (const text of visit.shows) await page.getByText(text, { exact: false }).filter({ visible: true }).first().waitFor({ timeout: 15_000 });
      if (visit.path.endsWith('/edit')) expect(await page.locator('input, textarea').evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value).join(' '))).toContain('window.__xss=1');
      await page.mouse.move(10, 10);
      expect(await page.evaluate(() => (window as unknown as { __xss?: unknown }).__xss), `window.__xss after ${visit.path}`).toBeUndefined();
      expect(dialogs, `dialogs after ${visit.path}`).toEqual([]);
      // Nothing the payloads carried even tried to run: the CSP would have blocked it and reported a violation
      // (an XSS the CSP stops is still an XSS). The one report allowed is zod's feature probe (`Function('')` in
      // a try/catch, deciding whether it may compile validators): refused, as it should be, and zod validates
      // without compiling.
      expect((await violations(page)).filter((v) => !zodEvalProbe.test(v)), `CSP violations on ${visit.path}`).toEqual([]);
    }
    await page.close();
  });

  it('sends a CSP on the dashboard HTML that forbids inline script, and the browser enforces it', async () => {
    for (const path of ['/', '/login', '/dashboard', `/notifications/${ids.draft}`]) {
      const response = await fetch(`${herald.url}${path}`);
      expect(response.headers.get('content-type')).toContain('text/html');
      const csp = response.headers.get('content-security-policy');
      expect(csp, path).toBeTruthy();
      const directives = new Map(
        csp!
          .split(';')
          .map((d) => d.trim().split(/\s+/))
          .filter((parts) => parts[0])
          .map(([name, ...values]) => [name!, values]),
      );
      const scriptSources = directives.get('script-src') ?? directives.get('default-src') ?? [];
      expect(scriptSources.length, path).toBeGreaterThan(0);
      for (const forbidden of ["'unsafe-inline'", "'unsafe-eval'", "'unsafe-hashes'", '*', 'data:', 'http:', 'https:', 'blob:']) expect(scriptSources, `${path} script-src`).not.toContain(forbidden);
      expect(directives.get('object-src')).toEqual(["'none'"]);
      expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      const html = await response.text();
      // The page itself needs no inline script: every <script> has a src.
      expect(html.match(/<script\b(?![^>]*\bsrc=)[^>]*>/gi)).toBeNull();
    }

    const page = await browser.context.newPage();
    await watchForViolations(page);
    await page.goto(`${herald.url}/login`);
    await page.getByLabel('Email').waitFor();
    await page.evaluate(() => {
      const script = document.createElement('script');
      script.textContent = 'window.__inline = 1';
      document.head.append(script);
      document.body.insertAdjacentHTML('beforeend', '<img src="data:," onload="window.__handler = 1" alt="">');
      const link = document.createElement('a');
      link.href = 'javascript:window.__js=1';
      document.body.append(link);
      link.click();
    });
    await expect.poll(async () => (await violations(page)).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    const seen = await violations(page);
    expect(seen.some((v) => v.startsWith('script-src-elem'))).toBe(true);
    expect(seen.some((v) => v.startsWith('script-src-attr'))).toBe(true);
    const ran = await page.evaluate(() => {
      const w = window as unknown as Record<string, unknown>;
      return [w.__inline, w.__handler, w.__js];
    });
    expect(ran).toEqual([undefined, undefined, undefined]);
    await page.close();
  });
});

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

async function waitUntil<T>(probe: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Records every CSP violation the page reports (`securitypolicyviolation`), from its first script on. */
async function watchForViolations(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const w = window as unknown as { __cspViolations: string[] };
    w.__cspViolations = [];
    document.addEventListener('securitypolicyviolation', (event) => w.__cspViolations.push(`${event.violatedDirective} ${event.blockedURI} ${event.sourceFile}:${event.lineNumber}`));
  });
}

function violations(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as unknown as { __cspViolations?: string[] }).__cspViolations ?? []);
}
