import { decodeBase64Url } from '../common/base64url';
import { isHttpUrl, trimTrailingSlash, type HeraldConfig } from '../common/config';
import { HeraldError } from '../common/errors';

/** The worker file the install code asks site owners to create at their root. */
export const HERALD_WORKER_PATH = '/herald-sw.js';

export interface PageSettings extends HeraldConfig {
  /**
   * `data-worker`: the site's own worker that imports Herald's. It is registered
   * exactly as given (no query), so Herald never fights the site over its
   * registration; that worker reads the configuration from IndexedDB.
   * null: Herald's own `/herald-sw.js`, registered with the configuration in its query.
   */
  ownWorker: string | null;
  /** `data-prompt`: `auto` shows the soft prompt, `manual` leaves it to the site's own button. */
  prompt: 'auto' | 'manual';
}

/**
 * Herald's base URL: `data-api` when given, otherwise where the script was
 * loaded from (`https://push.example.com/sdk/herald.js` → `https://push.example.com`;
 * a Herald served under a path prefix keeps its prefix).
 */
function apiBase(script: HTMLScriptElement): string {
  const explicit = script.getAttribute('data-api');
  if (explicit) return trimTrailingSlash(new URL(explicit, document.baseURI).href);
  const source = new URL(script.src, document.baseURI);
  const prefix = source.pathname.replace(/\/sdk\/herald(\.min)?\.js$/, '');
  return trimTrailingSlash(source.origin + (prefix === source.pathname ? '' : prefix));
}

/** An uncompressed P-256 point: 65 bytes starting with 0x04 (RFC 8292 §3.2). */
function isVapidKey(value: string): boolean {
  try {
    const bytes = decodeBase64Url(value.replace(/=+$/, ''));
    return /^[A-Za-z0-9_-]+={0,2}$/.test(value) && bytes.length === 65 && bytes[0] === 4;
  } catch {
    return false;
  }
}

/** A service worker must be same-origin with the page (Service Workers §register). */
function ownWorkerPath(value: string | undefined): string | null {
  if (!value) return null;
  const url = new URL(value, location.href);
  if (url.origin !== location.origin) throw new HeraldError('invalid-argument', 'data-worker must be a path on this site.');
  return url.pathname + url.search;
}

export function readScriptSettings(script: HTMLScriptElement): PageSettings {
  const siteId = script.getAttribute('data-site-id')?.trim();
  const vapidKey = script.getAttribute('data-vapid-key')?.trim();
  if (!siteId || !vapidKey) {
    throw new HeraldError('invalid-argument', 'The Herald script tag needs data-site-id and data-vapid-key attributes.');
  }
  if (!isVapidKey(vapidKey)) throw new HeraldError('invalid-argument', 'data-vapid-key is not a VAPID public key.');
  const api = apiBase(script);
  if (!isHttpUrl(api)) throw new HeraldError('invalid-argument', 'data-api must be an http(s) URL.');
  return {
    siteId,
    vapidKey,
    api,
    ownWorker: ownWorkerPath(script.getAttribute('data-worker')?.trim()),
    prompt: script.getAttribute('data-prompt')?.trim().toLowerCase() === 'manual' ? 'manual' : 'auto',
  };
}
