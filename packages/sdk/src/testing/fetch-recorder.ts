/**
 * Test support: records every fetch at the network boundary and answers like
 * Herald's public API. Not part of the bundles.
 */
export interface RecordedRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  /** The parsed JSON body. */
  body: unknown;
  init: RequestInit;
}

export type Responder = (request: RecordedRequest) => Response | Promise<Response> | 'network-error';

export function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
}

/** Herald's answers: 201 with a subscriber id for subscribe, `{ success: true }` for the rest. */
export const heraldResponder: Responder = (request) => {
  if (/\/subscribers$/.test(new URL(request.url).pathname)) {
    return json(201, { success: true, data: { subscriber: { id: 'sub_1' } } });
  }
  return json(200, { success: true, data: {} });
};

export interface FetchRecorder {
  requests: RecordedRequest[];
  /** Requests whose URL path ends with `suffix`. */
  to(suffix: string): RecordedRequest[];
  respondWith(responder: Responder): void;
  restore(): void;
}

export function recordFetch(responder: Responder = heraldResponder): FetchRecorder {
  const original = globalThis.fetch;
  let current = responder;
  const requests: RecordedRequest[] = [];
  globalThis.fetch = async (input: RequestInfo | URL, init: RequestInit = {}) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    const request: RecordedRequest = {
      url,
      method: init.method ?? 'GET',
      headers,
      body: typeof init.body === 'string' ? JSON.parse(init.body) : init.body,
      init,
    };
    requests.push(request);
    const answer = await current(request);
    if (answer === 'network-error') throw new TypeError('Failed to fetch');
    return answer;
  };
  return {
    requests,
    to: (suffix) => requests.filter((request) => new URL(request.url).pathname.endsWith(suffix)),
    respondWith: (next) => {
      current = next;
    },
    restore: () => {
      globalThis.fetch = original;
    },
  };
}
