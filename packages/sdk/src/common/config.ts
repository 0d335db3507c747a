/** What both halves of the SDK need to talk to Herald about one site. */
export interface HeraldConfig {
  siteId: string;
  /** Herald's base URL without a trailing slash, e.g. `https://push.example.com`. */
  api: string;
  /** The site's VAPID public key, base64url (RFC 8292 §3.2). */
  vapidKey: string;
}

/**
 * The worker URL carries the configuration (`/herald-sw.js?site=…&api=…&key=…`)
 * so Herald's own worker knows its site before any page has written IndexedDB.
 */
export function configToQuery(config: HeraldConfig): string {
  return new URLSearchParams({ site: config.siteId, api: config.api, key: config.vapidKey }).toString();
}

export function configFromQuery(search: string): HeraldConfig | null {
  const params = new URLSearchParams(search);
  const siteId = params.get('site');
  const api = params.get('api');
  const vapidKey = params.get('key');
  if (!siteId || !vapidKey || !api || !isHttpUrl(api)) return null;
  return { siteId, api: trimTrailingSlash(api), vapidKey };
}

export function isConfig(value: unknown): value is HeraldConfig {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return typeof candidate.siteId === 'string' && typeof candidate.api === 'string' && typeof candidate.vapidKey === 'string';
}

export function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'https:' || protocol === 'http:';
  } catch {
    return false;
  }
}

export function trimTrailingSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/** `{api}/api/public/sites/{siteId}/{path}` — the public, CORS-open endpoints. */
export function siteEndpoint(config: HeraldConfig, path: string): string {
  return `${config.api}/api/public/sites/${encodeURIComponent(config.siteId)}/${path}`;
}
