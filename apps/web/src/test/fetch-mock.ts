import { vi } from 'vitest';

/**
 * A fetch stand-in at the network boundary: routes are "METHOD /api/path"
 * (the query string is ignored for matching) and answer with a status and a
 * JSON body. Unknown requests fail the test loudly.
 */
export interface MockResponse {
  status?: number;
  body?: unknown;
  /** A raw (non-JSON) body, e.g. a proxy's HTML error page or a CSV file. */
  text?: string;
  /** Response headers besides the JSON content type, e.g. a file's content-disposition. */
  headers?: Record<string, string>;
}

export interface RecordedCall {
  method: string;
  path: string;
  url: URL;
  headers: Headers;
  body: unknown;
}

type Route = MockResponse | ((call: RecordedCall) => MockResponse | Promise<MockResponse>);

export const ok = (data: unknown, status = 200): MockResponse => ({ status, body: { success: true, data } });
export const fail = (status: number, message?: string): MockResponse => ({
  status,
  body: { success: false, error: message === undefined ? {} : { message } },
});

export function mockApi(routes: Record<string, Route>) {
  const calls: RecordedCall[] = [];
  const unmatched: string[] = [];
  const fetchMock = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(String(input), 'http://localhost');
    const method = (init?.method ?? 'GET').toUpperCase();
    const rawBody = init?.body;
    const call: RecordedCall = {
      method,
      path: url.pathname,
      url,
      headers: new Headers(init?.headers),
      // JSON parsed; a multipart upload as the FormData it is.
      body: typeof rawBody === 'string' ? JSON.parse(rawBody) : rawBody instanceof FormData ? rawBody : undefined,
    };
    calls.push(call);
    const route = routes[`${method} ${url.pathname}`];
    if (!route) {
      unmatched.push(`${method} ${url.pathname}`);
      return new Response(JSON.stringify({ success: false, error: { message: `No mock for ${method} ${url.pathname}` } }), { status: 501 });
    }
    const response = typeof route === 'function' ? await route(call) : route;
    const body = response.text ?? (response.body === undefined ? '' : JSON.stringify(response.body));
    return new Response(body, { status: response.status ?? 200, headers: { 'Content-Type': 'application/json', ...response.headers } });
  });
  vi.stubGlobal('fetch', fetchMock);
  return {
    calls,
    unmatched,
    /** The recorded calls to one route. */
    callsTo: (key: string) => calls.filter((c) => `${c.method} ${c.path}` === key),
  };
}

/** A response the test releases when it wants, to observe pending states. */
export function deferred<T = MockResponse>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
