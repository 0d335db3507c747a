// The one HTTP client for every URL a user types (RSS feeds, the install
// check, webhooks). docs/security.md, "Outbound requests (SSRF)": only
// http(s); DNS is resolved here and every answer must be a public address; the
// validated address is pinned into the connection (undici's connector gets a
// `lookup` that can only answer with it) and the socket's remote address is
// checked again once connected, so DNS rebinding cannot swap in a private
// address; GET redirects are followed by hand and every hop is checked the
// same way (a POST's redirect is answered as it is, never followed); one
// deadline covers DNS, connect, headers and a trickling body; the byte cap
// holds on the wire and after gzip/deflate/br decoding (a gzip bomb stops at
// the cap; outbound-body.ts). Hosts listed in OUTBOUND_ALLOW_HOSTS skip only
// the address check. Refusals and failures are OutboundErrors
// (outbound-errors.ts).
import dns from 'node:dns';
import net from 'node:net';
import tls from 'node:tls';
import { Agent, buildConnector, request } from 'undici';
import type { Config } from '../config';
import { classifyAddress, PRIVATE_NETWORK_BLOCKS } from './ip-address-policy';
import { discard, flattenHeaders, readCappedBody } from './outbound-body';
import { OutboundError, toOutboundError } from './outbound-errors';

export const DEFAULT_OUTBOUND_TIMEOUT_MS = 10_000;
export const DEFAULT_OUTBOUND_MAX_BYTES = 5 * 1024 * 1024;
export const DEFAULT_OUTBOUND_MAX_REDIRECTS = 5;
export const OUTBOUND_USER_AGENT = 'Herald/1.0 (+feed fetcher)';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has. Injected in tests to simulate DNS. */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: HostResolver = async (hostname) => {
  const answers = await dns.promises.lookup(hostname, { all: true, order: 'verbatim' });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

export interface OutboundHttpOptions {
  /** Host names or addresses that may be private (OUTBOUND_ALLOW_HOSTS). */
  allowHosts?: readonly string[];
  resolve?: HostResolver;
  userAgent?: string;
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
  /** PEM certificates trusted in addition to Node's public roots (an intranet CA; tests). */
  extraCaCertificates?: readonly string[];
}

export interface OutboundRequest {
  /** What is fetched, as the user calls it ("Feed", "Image"): starts every error message. */
  subject: string;
  accept?: string;
  /** Conditional GET (RFC 9110 §13.1): the ETag and Last-Modified of the previous fetch. */
  ifNoneMatch?: string | null;
  ifModifiedSince?: string | null;
  /** Caps for this call; the client's defaults otherwise. */
  maxBytes?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** False: the status line decides, the body is discarded unread (a webhook's answer: its body says nothing Herald uses). */
  readBody?: boolean;
}

export interface OutboundResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** Decoded (gunzipped…) body; empty for 304. */
  body: Buffer;
  /** The address that answered, after redirects. */
  finalUrl: string;
  notModified: boolean;
  etag: string | null;
  lastModified: string | null;
}

/** A POST (webhooks): the body as it is, extra headers; a redirect is answered as it is, never followed. */
export interface OutboundPostRequest extends Omit<OutboundRequest, 'ifNoneMatch' | 'ifModifiedSince'> {
  body: string;
  contentType: string;
  headers?: Record<string, string>;
}

export interface OutboundHttp {
  get(url: string, request: OutboundRequest): Promise<OutboundResponse>;
  post(url: string, request: OutboundPostRequest): Promise<OutboundResponse>;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

/** Lower-cases, drops IPv6 brackets and a trailing dot, and writes IP addresses the way the URL parser does. */
export function normaliseHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.endsWith('.')) h = h.slice(0, -1);
  try {
    const parsed = new URL(`http://${net.isIPv6(h) ? `[${h}]` : h}/`).hostname;
    return parsed.startsWith('[') ? parsed.slice(1, -1) : parsed;
  } catch {
    return h;
  }
}

interface Target {
  url: URL;
  /** URL host as the allow list compares it. */
  host: string;
}

/** Builds an OUTBOUND_ALLOW_HOSTS-aware client. */
export function createOutboundHttp(options: OutboundHttpOptions = {}): OutboundHttp {
  const allowHosts = new Set((options.allowHosts ?? []).map(normaliseHost));
  const resolve = options.resolve ?? systemResolver;
  const userAgent = options.userAgent ?? OUTBOUND_USER_AGENT;
  const defaultTimeoutMs = options.timeoutMs ?? DEFAULT_OUTBOUND_TIMEOUT_MS;
  const defaultMaxBytes = options.maxBytes ?? DEFAULT_OUTBOUND_MAX_BYTES;
  const maxRedirects = options.maxRedirects ?? DEFAULT_OUTBOUND_MAX_REDIRECTS;
  const ca = options.extraCaCertificates?.length ? [...tls.rootCertificates, ...options.extraCaCertificates] : undefined;

  /** Null when the address may be connected to for this host, otherwise the refusal. */
  function refusalFor(host: string, address: string, subject: string, redirected: boolean): OutboundError | null {
    if (allowHosts.has(host) || allowHosts.has(normaliseHost(address))) return null;
    const block = classifyAddress(address);
    if (block === null) return null;
    const verb = redirected ? 'redirects to' : 'points to';
    const kind = PRIVATE_NETWORK_BLOCKS.has(block) ? 'a private network address' : 'a reserved network address';
    return new OutboundError('forbidden_address', `${subject} address ${verb} ${kind}`);
  }

  function parseTarget(raw: string, subject: string, base?: URL): Target {
    let url: URL;
    try {
      url = base ? new URL(raw, base) : new URL(raw.trim());
    } catch {
      if (base) throw new OutboundError('bad_redirect', `${subject} server sent a redirect without a valid address`);
      throw new OutboundError('invalid_url', `${subject} address is not a valid URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new OutboundError('unsupported_scheme', `${subject} address must start with http:// or https://`);
    }
    if (url.username || url.password) {
      throw new OutboundError('credentials_in_url', `${subject} address must not contain a user name or password`);
    }
    url.hash = '';
    return { url, host: normaliseHost(url.hostname) };
  }

  /** Every address the host has, each one checked; the WHATWG parser has already turned numeric forms (`0x7f.1`) into dotted quads. */
  async function resolveTarget(target: Target, subject: string, redirected: boolean, signal: AbortSignal): Promise<ResolvedAddress[]> {
    const literal = net.isIP(target.host);
    if (literal) {
      const refusal = refusalFor(target.host, target.host, subject, redirected);
      if (refusal) throw refusal;
      return [{ address: target.host, family: literal === 6 ? 6 : 4 }];
    }
    // RFC 6761 §6.3: localhost names are loopback whatever DNS says.
    if ((target.host === 'localhost' || target.host.endsWith('.localhost')) && !allowHosts.has(target.host)) {
      throw new OutboundError('forbidden_address', `${subject} address ${redirected ? 'redirects to' : 'points to'} a private network address`);
    }
    let answers: ResolvedAddress[];
    try {
      answers = await abortable(resolve(target.host), signal);
    } catch (error) {
      if (signal.aborted) throw error;
      throw new OutboundError('dns_failed', `${subject} address could not be found (no DNS record for ${target.host})`, { cause: error });
    }
    if (answers.length === 0) throw new OutboundError('dns_failed', `${subject} address could not be found (no DNS record for ${target.host})`);
    for (const answer of answers) {
      const refusal = refusalFor(target.host, answer.address, subject, redirected);
      if (refusal) throw refusal;
    }
    return answers;
  }

  /** An undici agent whose every connection goes to the validated addresses and is checked once open. */
  function pinnedAgent(target: Target, addresses: ResolvedAddress[], subject: string, redirected: boolean, connectTimeoutMs: number): Agent {
    // The connection may only ever go to an address checked above: no second DNS lookup happens.
    const pinnedLookup = ((_hostname: string, lookupOptions: dns.LookupOptions, callback: (error: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void) => {
      const first = addresses[0] as ResolvedAddress;
      if (lookupOptions.all) callback(null, addresses.map((a) => ({ address: a.address, family: a.family })));
      else callback(null, first.address, first.family);
    }) as net.LookupFunction;
    // TLS still verifies the certificate against the URL's host name (SNI and
    // identity come from the name; only the address is pinned).
    const connector = buildConnector({ timeout: connectTimeoutMs, lookup: pinnedLookup, ...(ca ? { ca } : {}) });
    return new Agent({
      pipelining: 0,
      connections: 1,
      connect: (connectOptions, callback) => {
        connector(connectOptions, (error, socket) => {
          if (error || !socket) {
            callback(error ?? new Error('connect failed'), null);
            return;
          }
          const remote = socket.remoteAddress;
          const refusal = remote ? refusalFor(target.host, remote, subject, redirected) : new OutboundError('connect_failed', `${subject} server could not be reached`);
          if (refusal) {
            socket.destroy();
            callback(refusal, null);
            return;
          }
          callback(null, socket);
        });
      },
    });
  }

  async function send(method: 'GET' | 'POST', rawUrl: string, call: OutboundRequest & Partial<Pick<OutboundPostRequest, 'body' | 'contentType' | 'headers'>>): Promise<OutboundResponse> {
    const subject = call.subject;
    const timeoutMs = call.timeoutMs ?? defaultTimeoutMs;
    const maxBytes = call.maxBytes ?? defaultMaxBytes;
    const deadline = Date.now() + timeoutMs;
    const timedOut = new OutboundError('timeout', `${subject} took longer than ${formatSeconds(timeoutMs)}`);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(timedOut), timeoutMs);
    const onCallerAbort = () => controller.abort(call.signal?.reason);
    call.signal?.addEventListener('abort', onCallerAbort, { once: true });
    if (call.signal?.aborted) onCallerAbort();
    const agents: Agent[] = [];

    const headers: Record<string, string> = {
      'user-agent': userAgent,
      accept: call.accept ?? '*/*',
      'accept-encoding': 'gzip, deflate, br',
      ...call.headers,
    };
    if (call.contentType) headers['content-type'] = call.contentType;
    if (call.ifNoneMatch) headers['if-none-match'] = call.ifNoneMatch;
    if (call.ifModifiedSince) headers['if-modified-since'] = call.ifModifiedSince;

    try {
      let target = parseTarget(rawUrl, subject);
      for (let redirects = 0; ; ) {
        const redirected = redirects > 0;
        const addresses = await resolveTarget(target, subject, redirected, controller.signal);
        const agent = pinnedAgent(target, addresses, subject, redirected, Math.max(1, deadline - Date.now()));
        agents.push(agent);
        const remaining = Math.max(1, deadline - Date.now());
        const response = await request(target.url, {
          dispatcher: agent,
          method,
          headers,
          ...(call.body !== undefined ? { body: call.body } : {}),
          signal: controller.signal,
          headersTimeout: remaining,
          bodyTimeout: remaining,
        });
        const responseHeaders = flattenHeaders(response.headers);

        if (method === 'GET' && REDIRECT_STATUSES.has(response.statusCode)) {
          discard(response.body);
          if (redirects >= maxRedirects) throw new OutboundError('too_many_redirects', `Too many redirects (more than ${maxRedirects})`);
          const location = responseHeaders.location;
          if (!location) throw new OutboundError('bad_redirect', `${subject} server sent a redirect without a valid address`);
          target = parseTarget(location, subject, target.url);
          redirects += 1;
          continue;
        }

        const base = {
          status: response.statusCode,
          headers: responseHeaders,
          finalUrl: target.url.href,
          etag: responseHeaders.etag ?? null,
          lastModified: responseHeaders['last-modified'] ?? null,
        };
        if (response.statusCode === 304) {
          discard(response.body);
          return { ...base, body: Buffer.alloc(0), notModified: true };
        }
        if (call.readBody === false) {
          discard(response.body);
          return { ...base, body: Buffer.alloc(0), notModified: false };
        }
        const body = await readCappedBody(response.body, responseHeaders, maxBytes, subject, controller.signal);
        return { ...base, body, notModified: false };
      }
    } catch (error) {
      throw toOutboundError(error, subject, controller.signal, timedOut, call.signal);
    } finally {
      clearTimeout(timer);
      call.signal?.removeEventListener('abort', onCallerAbort);
      for (const agent of agents) void agent.destroy().catch(() => undefined);
    }
  }

  return {
    get: (rawUrl, call) => send('GET', rawUrl, call),
    post: (rawUrl, call) => send('POST', rawUrl, call),
  };
}

/** The client the product uses: OUTBOUND_ALLOW_HOSTS from the configuration, system DNS. */
export function createOutboundHttpFromConfig(config: Pick<Config, 'outboundAllowHosts'>): OutboundHttp {
  return createOutboundHttp({ allowHosts: config.outboundAllowHosts });
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolvePromise, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolvePromise(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error as Error);
      },
    );
  });
}
