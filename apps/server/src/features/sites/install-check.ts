// POST /api/sites/{id}/install-check (issue 12): Herald fetches the site's
// page, its service-worker file and its web app manifest through the SSRF-safe
// outbound client (private addresses refused unless OUTBOUND_ALLOW_HOSTS names
// them; docs/security.md, "Outbound requests") and says, check by check, what
// stops push from working and how to fix it. Nothing here throws: every
// failure becomes a check that is not ok.
import type { InstallCheck, InstallCheckId } from '@herald/contracts';
import { INSTALL_CHECK_IDS } from '@herald/contracts';
import type { SiteRow } from '../../db/schema';
import { OutboundError } from '../../platform/outbound-errors';
import type { OutboundHttp, OutboundResponse } from '../../platform/outbound-http';
import { SERVICE_WORKER_FILE_NAME } from './install-code';

/** A page larger than this is not read to the end; the snippet belongs before </body>, but pages this large are rare. */
const PAGE_MAX_BYTES = 2 * 1024 * 1024;
const WORKER_MAX_BYTES = 512 * 1024;
const MANIFEST_MAX_BYTES = 256 * 1024;
const FETCH_TIMEOUT_MS = 10_000;

/**
 * Push SDKs whose own service worker would sit on the same scope as Herald's:
 * two workers cannot share a scope, so one replaces the other, and sites that
 * chain them show every notification twice. Matched in the page's markup.
 */
const OTHER_PUSH_SERVICES: Array<[RegExp, string]> = [
  [/onesignal/i, 'OneSignal'],
  [/firebase-messaging|firebase\/messaging/i, 'Firebase Cloud Messaging'],
  [/pushengage/i, 'PushEngage'],
  [/webpushr/i, 'Webpushr'],
  [/izooto/i, 'iZooto'],
  [/pushowl/i, 'PushOwl'],
  [/pushalert/i, 'PushAlert'],
  [/pushwoosh/i, 'Pushwoosh'],
  [/aimtell/i, 'Aimtell'],
  [/sendpulse/i, 'SendPulse'],
];

/** Content types browsers accept for a service worker script (Service Workers §Update, step 9). */
const JAVASCRIPT_TYPES = new Set(['text/javascript', 'application/javascript', 'application/x-javascript', 'application/ecmascript', 'text/ecmascript']);

export interface InstallCheckDeps {
  outbound: OutboundHttp;
  /** Herald's PUBLIC_URL: where the snippet and the worker load Herald from. */
  publicUrl: string;
  /** The site's VAPID public keys besides the primary one (not retired): a snippet carrying one is out of date, not foreign. */
  otherVapidKeys?: string[];
}

type Fetched = { ok: true; response: OutboundResponse } | { ok: false; error: OutboundError | Error };

async function fetchQuietly(deps: InstallCheckDeps, url: string, subject: string, accept: string, maxBytes: number): Promise<Fetched> {
  try {
    return { ok: true, response: await deps.outbound.get(url, { subject, accept, maxBytes, timeoutMs: FETCH_TIMEOUT_MS }) };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error : new Error(String(error)) };
  }
}

const pass = (id: InstallCheckId, severity: InstallCheck['severity'], message: string): InstallCheck => ({ id, ok: true, severity, message, fix: null });
const fail = (id: InstallCheckId, severity: InstallCheck['severity'], message: string, fix: string): InstallCheck => ({ id, ok: false, severity, message, fix });

/** RFC 6761 localhost names and loopback addresses: browsers treat http on these as secure while testing. */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** What to do when Herald could not fetch something from the site. */
function fetchFix(error: Error, host: string): string {
  if (error instanceof OutboundError && error.code === 'forbidden_address') {
    return `Herald does not fetch private network addresses. If this site is on your own network, add ${host} to OUTBOUND_ALLOW_HOSTS in Herald's configuration and restart Herald.`;
  }
  if (error instanceof OutboundError && error.code === 'tls_failed') {
    return "Give the site a valid HTTPS certificate: browsers refuse to register a service worker on a page whose certificate they cannot verify.";
  }
  return "Check that the site is online and that Herald's server can reach it (DNS, firewall, the address in Settings → General).";
}

// ---------------------------------------------------------------------------
// Reading the page's markup. Not a full HTML parser: tags are found by their
// opening `<name …>`, attributes by the HTML attribute syntax. Good enough to
// find a pasted snippet; a check that misses an exotic page says "not found"
// and the owner can still test with a real browser.

interface Tag {
  attributes: Map<string, string>;
  /** For <script>: the inline code up to </script>. */
  body: string;
}

function decodeEntities(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

function readAttributes(text: string): Map<string, string> {
  const attributes = new Map<string, string>();
  const pattern = /([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;
  for (const match of text.matchAll(pattern)) {
    const name = match[1]!.toLowerCase();
    if (!attributes.has(name)) attributes.set(name, decodeEntities(match[2] ?? match[3] ?? match[4] ?? ''));
  }
  return attributes;
}

function findTags(html: string, name: 'script' | 'link'): Tag[] {
  const tags: Tag[] = [];
  const pattern = new RegExp(`<${name}\\b([^>]*)>`, 'gi');
  for (const match of html.matchAll(pattern)) {
    let body = '';
    if (name === 'script') {
      const start = (match.index ?? 0) + match[0].length;
      const end = html.toLowerCase().indexOf('</script', start);
      body = html.slice(start, end === -1 ? undefined : end);
    }
    tags.push({ attributes: readAttributes(match[1] ?? ''), body });
  }
  return tags;
}

function resolve(url: string, base: string): URL | null {
  try {
    return new URL(url, base);
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------

interface SnippetFound {
  check: InstallCheck;
  /** The worker the snippet registers: data-worker, or Herald's /herald-sw.js. */
  workerPath: string;
}

/** An http(s) address without its query, fragment and trailing slashes, host and default port as the URL parser writes them. */
function baseOf(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`.replace(/\/+$/, '');
  } catch {
    return null;
  }
}

/** Where the SDK on the page talks to (its `data-api`, else the address it was loaded from), as packages/sdk's script-settings reads it. */
function sdkServerOf(tag: { attributes: Map<string, string> }, pageUrl: string): string | null {
  const explicit = tag.attributes.get('data-api')?.trim();
  const base = explicit ? resolve(explicit, pageUrl) : resolve(tag.attributes.get('src') ?? '', pageUrl);
  if (!base) return null;
  if (explicit) return base.href.replace(/\/+$/, '');
  const prefix = base.pathname.replace(/\/sdk\/herald(\.min)?\.js$/, '');
  return (base.origin + (prefix === base.pathname ? '' : prefix)).replace(/\/+$/, '');
}

function checkSnippet(site: SiteRow, html: string, pageUrl: string, otherVapidKeys: string[], publicUrl: string): SnippetFound {
  const defaultWorker = `/${SERVICE_WORKER_FILE_NAME}`;
  const heraldScripts = findTags(html, 'script').filter((tag) => {
    const src = resolve(tag.attributes.get('src') ?? '', pageUrl);
    return src !== null && /\/sdk\/herald(\.min)?\.js$/.test(src.pathname);
  });
  const ours = heraldScripts.find((tag) => tag.attributes.get('data-site-id')?.trim() === site.id);
  if (!ours) {
    const other = heraldScripts[0]?.attributes.get('data-site-id');
    if (other !== undefined) {
      return {
        check: fail('snippet', 'error', `The page has a Herald snippet for another site (data-site-id="${other.slice(0, 100)}").`, "Replace it with this site's snippet from step 1."),
        workerPath: defaultWorker,
      };
    }
    return {
      check: fail(
        'snippet',
        'error',
        `The Herald snippet is not on ${pageUrl}.`,
        'Paste the snippet from step 1 just before </body> on this page. If you added it already, clear your site’s cache or CDN and check again.',
      ),
      workerPath: defaultWorker,
    };
  }
  const dataWorker = ours.attributes.get('data-worker')?.trim();
  const worker = dataWorker ? resolve(dataWorker, pageUrl) : null;
  const workerPath = worker ? worker.pathname + worker.search : defaultWorker;
  // A snippet copied while Herald had another address (or from another Herald) talks to that server, not this one.
  const server = sdkServerOf(ours, pageUrl);
  if (baseOf(server) !== baseOf(publicUrl)) {
    return {
      check: fail(
        'snippet',
        'error',
        `The snippet on the page loads Herald from ${server ?? 'an address that cannot be read'}, not from this server (${publicUrl}): browsers would subscribe there.`,
        'Copy the snippet from step 1 again and replace the one on your page.',
      ),
      workerPath,
    };
  }
  const snippetKey = ours.attributes.get('data-vapid-key')?.trim();
  if (snippetKey !== undefined && snippetKey !== site.vapid_public_key && otherVapidKeys.includes(snippetKey)) {
    return {
      check: fail(
        'snippet',
        'error',
        "The snippet on the page carries an older VAPID key of this site, not the primary one: browsers still subscribe and are moved to the primary key on a later visit, but the snippet is out of date.",
        'Copy the snippet from step 1 again and replace the one on your page.',
      ),
      workerPath,
    };
  }
  if (snippetKey !== site.vapid_public_key) {
    return {
      check: fail('snippet', 'error', "The snippet on the page does not carry this site's VAPID key (data-vapid-key).", 'Copy the snippet from step 1 again and replace the one on your page.'),
      workerPath,
    };
  }
  return { check: pass('snippet', 'error', `The snippet for this site is on ${pageUrl}.`), workerPath };
}

function checkWorker(fetched: Fetched, workerUrl: string, host: string, publicUrl: string): InstallCheck {
  const importLine = `importScripts("${publicUrl}/sdk/herald-sw.js");`;
  if (!fetched.ok) return fail('service_worker', 'error', `${workerUrl} could not be fetched: ${fetched.error.message}.`, fetchFix(fetched.error, host));
  const { response } = fetched;
  if (response.finalUrl !== workerUrl) {
    return fail(
      'service_worker',
      'error',
      `${workerUrl} redirects to ${response.finalUrl}; browsers refuse to register a service worker from a redirect.`,
      `Serve the file at ${workerUrl} itself, without a redirect.`,
    );
  }
  if (response.status !== 200) {
    return fail('service_worker', 'error', `${workerUrl} answered HTTP ${response.status}.`, `Create ${new URL(workerUrl).pathname} at your site root with this one line: ${importLine}`);
  }
  const type = (response.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (!JAVASCRIPT_TYPES.has(type)) {
    return fail(
      'service_worker',
      'error',
      `${workerUrl} is served as ${type || 'an unknown type'}; browsers only register a service worker served as JavaScript.`,
      'Serve the file with Content-Type: text/javascript (or application/javascript).',
    );
  }
  const code = response.body.toString('utf8');
  // The address it imports, resolved as the browser does, must be this server's worker (not an old PUBLIC_URL's).
  const heraldWorker = baseOf(`${publicUrl.replace(/\/+$/, '')}/sdk/herald-sw.js`);
  const imported = [...code.matchAll(/importScripts\s*\(([^)]*)\)/g)].flatMap((call) => [...call[1]!.matchAll(/(['"`])([^'"`]+)\1/g)].map((literal) => resolve(literal[2]!, workerUrl)?.href));
  // Compared without a query (`?v=3` to bust a cache is fine); an address kept in a variable is found as text.
  if (!imported.some((url) => baseOf(url) === heraldWorker) && !(/importScripts\s*\(/.test(code) && code.includes(`${publicUrl.replace(/\/+$/, '')}/sdk/herald-sw.js`))) {
    const other = imported.find((url) => url?.endsWith('/sdk/herald-sw.js'));
    return fail(
      'service_worker',
      'error',
      other ? `${workerUrl} imports Herald's worker from ${other}, not from this server.` : `${workerUrl} does not import Herald's worker.`,
      other ? `Replace that line with: ${importLine}` : `Add this line to it: ${importLine}`,
    );
  }
  // The SDK registers the worker for the whole site (scope "/"): from a subfolder the browser refuses that unless
  // the worker's answer allows it (Service Workers, "Service-Worker-Allowed").
  const folder = new URL('./', workerUrl).pathname;
  const allowedHeader = response.headers['service-worker-allowed']?.trim();
  const allowed = allowedHeader ? resolve(allowedHeader, workerUrl)?.pathname : undefined;
  if (folder !== '/' && allowed !== '/') {
    return fail(
      'service_worker',
      'error',
      `${workerUrl} is not at the site root, so browsers refuse to register it for the whole site.`,
      `Move it to the site root (and set data-worker to /${new URL(workerUrl).pathname.split('/').pop()}), or serve it with the header Service-Worker-Allowed: /.`,
    );
  }
  return pass('service_worker', 'error', `${workerUrl} is JavaScript and imports Herald's worker.`);
}

function checkSingleWorker(html: string, pageUrl: string, workerPath: string): InstallCheck {
  const scripts = findTags(html, 'script');
  const markup = scripts.map((tag) => `${tag.attributes.get('src') ?? ''}\n${tag.body}`).join('\n');
  const others = OTHER_PUSH_SERVICES.filter(([pattern]) => pattern.test(markup)).map(([, name]) => name);
  if (others.length) {
    return fail(
      'single_service_worker',
      'warning',
      `Another push service is installed on this page (${others.join(', ')}). A site has one service worker per scope: two push services replace each other's worker or show every notification twice.`,
      `Keep one push service: remove ${others.join(' and ')} (its code and its worker file) from your site.`,
    );
  }
  const ownPath = resolve(workerPath, pageUrl)?.pathname;
  for (const match of markup.matchAll(/serviceWorker\s*\.\s*register\s*\(\s*(["'`])([^"'`]+)\1/g)) {
    const registered = resolve(match[2]!, pageUrl);
    if (!registered || registered.pathname === ownPath || registered.pathname === `/${SERVICE_WORKER_FILE_NAME}`) continue;
    return fail(
      'single_service_worker',
      'warning',
      `The page registers another service worker (${registered.pathname}). A site root holds one service worker, so it and Herald's replace each other.`,
      `Add Herald's importScripts line to ${registered.pathname} and set data-worker="${registered.pathname}" on the Herald snippet, so one worker does both.`,
    );
  }
  return pass('single_service_worker', 'warning', 'No other push service or service worker found on the page.');
}

async function checkManifest(deps: InstallCheckDeps, html: string, pageUrl: string, host: string): Promise<InstallCheck> {
  const fix =
    'Add <link rel="manifest" href="/manifest.webmanifest"> to your pages, serving a manifest such as {"name": "Your shop", "display": "standalone", "start_url": "/", "icons": [{"src": "/icon-192.png", "sizes": "192x192", "type": "image/png"}]}. Visitors on iPhone and iPad then add the site to their Home Screen and subscribe there.';
  const link = findTags(html, 'link').find((tag) => (tag.attributes.get('rel') ?? '').toLowerCase().split(/\s+/).includes('manifest'));
  const manifestUrl = link ? resolve(link.attributes.get('href') ?? '', pageUrl) : null;
  if (!manifestUrl) {
    return fail('manifest', 'warning', 'The page links no web app manifest: on iPhone and iPad, web push works only in a web app added to the Home Screen, which needs one.', fix);
  }
  const fetched = await fetchQuietly(deps, manifestUrl.href, 'Manifest', 'application/manifest+json, application/json', MANIFEST_MAX_BYTES);
  if (!fetched.ok) return fail('manifest', 'warning', `The manifest at ${manifestUrl.href} could not be fetched: ${fetched.error.message}.`, fetchFix(fetched.error, host));
  if (fetched.response.status !== 200) return fail('manifest', 'warning', `The manifest at ${manifestUrl.href} answered HTTP ${fetched.response.status}.`, fix);
  let display: unknown;
  try {
    display = (JSON.parse(fetched.response.body.toString('utf8')) as { display?: unknown }).display;
  } catch {
    return fail('manifest', 'warning', `The manifest at ${manifestUrl.href} is not valid JSON.`, fix);
  }
  // iOS opens a home-screen web app on its own (and lets it ask for push) only with standalone or fullscreen.
  if (display !== 'standalone' && display !== 'fullscreen') {
    const shown = typeof display === 'string' ? `"${display.slice(0, 40)}"` : 'not set';
    return fail('manifest', 'warning', `The manifest's display is ${shown}; iOS offers web push only to web apps that open standalone.`, 'Set "display": "standalone" in the manifest.');
  }
  return pass('manifest', 'warning', `The manifest has display "${display}": visitors on iPhone and iPad can subscribe once they add the site to their Home Screen.`);
}

/** Runs every check against the site as it is now; answers them in INSTALL_CHECK_IDS order. */
export async function runInstallCheck(site: SiteRow, deps: InstallCheckDeps): Promise<InstallCheck[]> {
  const siteUrl = new URL(site.url);
  const host = siteUrl.hostname.replace(/^\[|\]$/g, '');
  const loopback = isLoopbackHost(siteUrl.hostname);
  const siteOnHttps = siteUrl.protocol === 'https:';
  const checks = new Map<InstallCheckId, InstallCheck>();

  checks.set(
    'site_https',
    siteOnHttps
      ? pass('site_https', 'error', `${siteUrl.origin} is served over HTTPS.`)
      : fail(
          'site_https',
          loopback ? 'warning' : 'error',
          loopback
            ? `${siteUrl.origin} is not HTTPS. Browsers allow push on http://localhost only while testing; visitors will need HTTPS.`
            : `${siteUrl.origin} is not HTTPS: browsers only allow service workers and push on secure pages.`,
          'Serve the site over HTTPS and change its address in Settings → General to the https:// one.',
        ),
  );
  const heraldOnHttps = new URL(deps.publicUrl).protocol === 'https:';
  checks.set(
    'public_url_https',
    heraldOnHttps
      ? pass('public_url_https', 'error', `Herald is served over HTTPS (${deps.publicUrl}).`)
      : fail(
          'public_url_https',
          siteOnHttps ? 'error' : 'warning',
          `Herald's own address is ${deps.publicUrl}: pages on https block its script and worker as mixed content.`,
          "Serve Herald over HTTPS (behind a reverse proxy with a certificate) and set PUBLIC_URL to that https:// address; then copy the snippet and the worker line again.",
        ),
  );

  // The page first: its snippet says which worker to fetch (data-worker) and links the manifest.
  const page = await fetchQuietly(deps, site.url, 'Site', 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5', PAGE_MAX_BYTES);

  const notChecked = (id: InstallCheckId, severity: InstallCheck['severity']) =>
    fail(id, severity, 'Not checked: the page could not be loaded.', 'Fix the problem with loading the page, then check again.');
  let html: string | null = null;
  if (!page.ok) {
    checks.set('reachable', fail('reachable', 'error', `${site.url} could not be loaded: ${page.error.message}.`, fetchFix(page.error, host)));
  } else if (page.response.status < 200 || page.response.status > 299) {
    checks.set(
      'reachable',
      fail('reachable', 'error', `${site.url} answered HTTP ${page.response.status}.`, 'The page must load for visitors: check the site, or its address in Settings → General.'),
    );
  } else {
    html = page.response.body.toString('utf8');
    checks.set('reachable', pass('reachable', 'error', `Herald loaded ${page.response.finalUrl} (HTTP ${page.response.status}).`));
  }

  const pageUrl = page.ok ? page.response.finalUrl : site.url;
  const snippet = html === null ? null : checkSnippet(site, html, pageUrl, deps.otherVapidKeys ?? [], deps.publicUrl);
  checks.set('snippet', snippet ? snippet.check : notChecked('snippet', 'error'));

  // Registered at the root scope, the worker lives on the origin the page is served from (after its redirects:
  // example.com → www.example.com), which is where browsers register it.
  const workerUrl = new URL(snippet?.workerPath ?? `/${SERVICE_WORKER_FILE_NAME}`, new URL(pageUrl).origin).href;
  const [worker, manifest] = await Promise.all([
    fetchQuietly(deps, workerUrl, 'Service worker', 'text/javascript, application/javascript, */*;q=0.5', WORKER_MAX_BYTES),
    html === null ? Promise.resolve(notChecked('manifest', 'warning')) : checkManifest(deps, html, pageUrl, host),
  ]);
  checks.set('service_worker', checkWorker(worker, workerUrl, host, deps.publicUrl));
  checks.set('single_service_worker', html === null ? notChecked('single_service_worker', 'warning') : checkSingleWorker(html, pageUrl, snippet?.workerPath ?? ''));
  checks.set('manifest', manifest);

  return INSTALL_CHECK_IDS.map((id) => checks.get(id)!);
}

/** Passed: nothing failed that stops push from working (warnings may remain). */
export function installCheckPassed(checks: InstallCheck[]): boolean {
  return checks.every((check) => check.ok || check.severity === 'warning');
}
