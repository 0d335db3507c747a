import { HeraldError } from './errors';

/**
 * POSTs JSON to Herald's public API and returns the envelope's `data`.
 * No cookies are sent (`credentials: 'omit'`): the public endpoints are keyed
 * by site id and push endpoint, never by a session.
 */
export async function postJson(url: string, body: unknown, keepalive = false): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      mode: 'cors',
      credentials: 'omit',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      keepalive,
    });
  } catch {
    throw new HeraldError('api-error', `Could not reach Herald at ${new URL(url).origin}`);
  }
  const payload: unknown = await response.json().catch(() => undefined);
  const envelope = (typeof payload === 'object' && payload !== null ? payload : {}) as {
    success?: unknown;
    data?: unknown;
    error?: { message?: unknown; code?: unknown };
  };
  if (!response.ok || envelope.success === false) {
    const message = typeof envelope.error?.message === 'string' ? envelope.error.message : `HTTP ${response.status}`;
    throw new HeraldError('api-error', `Herald refused the request: ${message}`, typeof envelope.error?.code === 'string' ? envelope.error.code : undefined);
  }
  return envelope.data;
}

const BEACON_TIMEOUT_MS = 10_000;

/**
 * Reports a delivered/clicked event. Never rejects: a lost beacon costs one
 * count in analytics, while a rejection inside a push handler's waitUntil
 * would only add noise. Bounded so it cannot hold the worker awake.
 */
export async function sendEvent(api: string, type: 'delivered' | 'clicked', token: string): Promise<void> {
  try {
    await fetch(`${api}/api/public/events`, {
      method: 'POST',
      mode: 'cors',
      credentials: 'omit',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ type, token }),
      signal: typeof AbortSignal.timeout === 'function' ? AbortSignal.timeout(BEACON_TIMEOUT_MS) : undefined,
    });
  } catch {
    // Offline or Herald unreachable: nothing useful to do from a worker.
  }
}
