import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import zlib from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { OutboundError } from '../../src/platform/outbound-errors';
import { createOutboundHttp, type HostResolver } from '../../src/platform/outbound-http';

// Real HTTP servers on the loopback interface; DNS is simulated by injecting a
// resolver. A tripwire on net/tls.connect fails the test if the client ever
// tries to open a connection outside 127.0.0.0/8, so a broken policy can
// never send traffic off this machine.
const tripwire: string[] = [];
const connectHosts: string[] = [];
const realNetConnect = net.connect;
const realTlsConnect = tls.connect;
function guardConnect(options: unknown): void {
  const host = typeof options === 'object' && options !== null ? String((options as { host?: unknown }).host ?? '') : '';
  connectHosts.push(host);
  if (net.isIP(host) && !host.startsWith('127.')) {
    tripwire.push(host);
    throw new Error(`test tripwire: connection to ${host} attempted`);
  }
}
beforeAll(() => {
  vi.spyOn(net, 'connect').mockImplementation(((...args: Parameters<typeof net.connect>) => {
    guardConnect(args[0]);
    return (realNetConnect as (...a: unknown[]) => net.Socket)(...args);
  }) as typeof net.connect);
  vi.spyOn(tls, 'connect').mockImplementation(((...args: Parameters<typeof tls.connect>) => {
    guardConnect(args[0]);
    return (realTlsConnect as (...a: unknown[]) => tls.TLSSocket)(...args);
  }) as typeof tls.connect);
});
afterEach(() => {
  expect(tripwire).toEqual([]);
});
afterAll(() => {
  vi.restoreAllMocks();
});

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;
interface TestServer {
  port: number;
  host: string;
  origin: string;
  requests: http.IncomingMessage[];
  close(): Promise<void>;
}

async function startServer(handler: Handler, host = '127.0.0.1', port = 0): Promise<TestServer> {
  const requests: http.IncomingMessage[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    requests.push(req);
    handler(req, res);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    port: actual,
    host,
    origin: `http://${host}:${actual}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Simulated DNS: a fixed table; anything else is NXDOMAIN. */
function fakeDns(table: Record<string, string[]>): HostResolver & { calls: string[] } {
  const calls: string[] = [];
  const resolver = async (hostname: string) => {
    calls.push(hostname);
    const answers = table[hostname];
    if (!answers) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return answers.map((address) => ({ address, family: (net.isIPv6(address) ? 6 : 4) as 4 | 6 }));
  };
  return Object.assign(resolver, { calls });
}

async function refusal(promise: Promise<unknown>): Promise<OutboundError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(OutboundError);
    return error as OutboundError;
  }
  throw new Error('expected the request to be refused');
}

const feed = { subject: 'Feed' } as const;
const feedXml = '<?xml version="1.0"?><rss version="2.0"><channel><title>Local</title></channel></rss>';

describe('outbound HTTP client: local servers and the allow list', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer((req, res) => {
      if (req.url === '/feed.xml') {
        res.writeHead(200, { 'content-type': 'application/rss+xml', etag: '"v1"', 'last-modified': 'Wed, 01 Jan 2025 00:00:00 GMT' });
        res.end(feedXml);
        return;
      }
      if (req.url === '/missing') {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('nope');
        return;
      }
      res.writeHead(500);
      res.end();
    });
  });
  afterAll(() => server.close());

  it('refuses 127.0.0.1 when it is not allowed, before any connection', async () => {
    const client = createOutboundHttp();
    const error = await refusal(client.get(`${server.origin}/feed.xml`, feed));
    expect(error.code).toBe('forbidden_address');
    expect(error.message).toBe('Feed address points to a private network address');
    expect(server.requests).toHaveLength(0);
  });

  it('fetches from 127.0.0.1 when OUTBOUND_ALLOW_HOSTS lists it, with Herald headers', async () => {
    const client = createOutboundHttp({ allowHosts: ['127.0.0.1'] });
    const response = await client.get(`${server.origin}/feed.xml#fragment`, { ...feed, accept: 'application/rss+xml' });
    expect(response.status).toBe(200);
    expect(response.body.toString('utf8')).toBe(feedXml);
    expect(response.finalUrl).toBe(`${server.origin}/feed.xml`);
    expect(response.headers['content-type']).toBe('application/rss+xml');
    expect(response.etag).toBe('"v1"');
    expect(response.lastModified).toBe('Wed, 01 Jan 2025 00:00:00 GMT');
    expect(response.notModified).toBe(false);
    expect(connectHosts).toContain('127.0.0.1'); // the tripwire sits on the client's connect path
    const seen = server.requests.at(-1)!;
    expect(seen.headers['user-agent']).toBe('Herald/1.0 (+feed fetcher)');
    expect(seen.headers.accept).toBe('application/rss+xml');
    expect(seen.headers['accept-encoding']).toContain('gzip');
  });

  it('allows a listed host name that resolves to loopback (localhost in OUTBOUND_ALLOW_HOSTS)', async () => {
    const dns = fakeDns({ localhost: ['127.0.0.1'] });
    const client = createOutboundHttp({ allowHosts: ['LOCALHOST'], resolve: dns });
    const response = await client.get(`http://localhost:${server.port}/feed.xml`, feed);
    expect(response.status).toBe(200);
    expect(dns.calls).toEqual(['localhost']);
  });

  it('returns non-2xx answers to the caller instead of throwing', async () => {
    const client = createOutboundHttp({ allowHosts: ['127.0.0.1'] });
    const response = await client.get(`${server.origin}/missing`, feed);
    expect(response.status).toBe(404);
    expect(response.body.toString()).toBe('nope');
  });

  it('reports a closed port as unreachable', async () => {
    const closed = await startServer(() => undefined);
    await closed.close();
    const client = createOutboundHttp({ allowHosts: ['127.0.0.1'] });
    const error = await refusal(client.get(`${closed.origin}/`, feed));
    expect(error.code).toBe('connect_failed');
    expect(error.message).toMatch(/^Feed server could not be reached/);
  });
});

describe('outbound HTTP client: forbidden addresses', () => {
  const noDns: HostResolver = async (hostname) => {
    throw new Error(`DNS must not be asked for ${hostname}`);
  };
  const client = createOutboundHttp({ resolve: noDns });
  const PRIVATE = 'Feed address points to a private network address';
  const RESERVED = 'Feed address points to a reserved network address';

  it.each([
    ['http://2130706433/', PRIVATE],
    ['http://0x7f.1/', PRIVATE],
    ['http://0x7f000001/', PRIVATE],
    ['http://0177.0.0.1/', PRIVATE],
    ['http://127.1/', PRIVATE],
    ['http://127.0.0.1:8080/feed', PRIVATE],
    ['http://[::ffff:127.0.0.1]/', PRIVATE],
    ['http://[::ffff:7f00:1]/', PRIVATE],
    ['http://[::127.0.0.1]/', PRIVATE],
    ['http://[64:ff9b::127.0.0.1]/', PRIVATE],
    ['http://[::1]/', PRIVATE],
    ['http://10.0.0.1/', PRIVATE],
    ['http://172.16.5.4/', PRIVATE],
    ['http://192.168.1.1/', PRIVATE],
    ['http://100.64.0.1/', PRIVATE],
    ['http://169.254.169.254/latest/meta-data/', PRIVATE],
    ['http://[fe80::1]/', PRIVATE],
    ['http://[fc00::1]/', PRIVATE],
    ['http://[fd00:ec2::254]/', PRIVATE],
    ['https://localhost/', PRIVATE],
    ['http://LOCALHOST./', PRIVATE],
    ['http://admin.localhost/', PRIVATE],
    ['http://0.0.0.0/', RESERVED],
    ['http://0/', RESERVED],
    ['http://[::]/', RESERVED],
    ['http://224.0.0.1/', RESERVED],
    ['http://255.255.255.255/', RESERVED],
    ['http://192.0.2.10/', RESERVED],
    ['http://198.18.0.1/', RESERVED],
    ['http://[2001:db8::1]/', RESERVED],
    ['http://[ff02::1]/', RESERVED],
  ])('%s is refused', async (url, message) => {
    const error = await refusal(client.get(url, feed));
    expect(error.code).toBe('forbidden_address');
    expect(error.message).toBe(message);
  });

  it('refuses a name whose DNS answer is loopback, private or CGNAT', async () => {
    const dns = fakeDns({
      'feeds.example.com': ['127.0.0.1'],
      'mixed.example.com': ['93.184.216.34', '10.0.0.7'],
      'cgnat.example.com': ['100.100.1.1'],
      'metadata.example.com': ['169.254.169.254'],
      'v6.example.com': ['::ffff:127.0.0.1'],
    });
    const viaDns = createOutboundHttp({ resolve: dns });
    for (const host of ['feeds.example.com', 'mixed.example.com', 'cgnat.example.com', 'metadata.example.com', 'v6.example.com']) {
      const error = await refusal(viaDns.get(`https://${host}/rss`, feed));
      expect(error.code, host).toBe('forbidden_address');
      expect(error.message).toBe(PRIVATE);
    }
    expect(dns.calls).toHaveLength(5);
  });

  it('reports a name that does not resolve', async () => {
    const error = await refusal(createOutboundHttp({ resolve: fakeDns({}) }).get('https://no-such-host.example/rss', feed));
    expect(error.code).toBe('dns_failed');
    expect(error.message).toBe('Feed address could not be found (no DNS record for no-such-host.example)');
  });

  it.each([
    ['file:///etc/passwd', 'unsupported_scheme', 'Feed address must start with http:// or https://'],
    ['ftp://ftp.example.com/feed.xml', 'unsupported_scheme', 'Feed address must start with http:// or https://'],
    ['gopher://127.0.0.1:70/', 'unsupported_scheme', 'Feed address must start with http:// or https://'],
    ['javascript:alert(1)', 'unsupported_scheme', 'Feed address must start with http:// or https://'],
    ['data:text/xml,<rss/>', 'unsupported_scheme', 'Feed address must start with http:// or https://'],
    ['not a url', 'invalid_url', 'Feed address is not a valid URL'],
    ['http://user:secret@example.com/feed', 'credentials_in_url', 'Feed address must not contain a user name or password'],
  ])('%s is refused', async (url, code, message) => {
    const error = await refusal(client.get(url, feed));
    expect(error.code).toBe(code);
    expect(error.message).toBe(message);
  });

  it('uses the subject the caller names in its messages', async () => {
    const error = await refusal(client.get('http://127.0.0.1/cat.png', { subject: 'Image' }));
    expect(error.message).toBe('Image address points to a private network address');
  });
});

describe('outbound HTTP client: redirects', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const hop = /^\/hop\/(\d+)$/.exec(url.pathname);
      if (hop) {
        const n = Number(hop[1]);
        res.writeHead(n > 0 ? 302 : 200, n > 0 ? { location: `/hop/${n - 1}` } : { 'content-type': 'text/plain' });
        res.end(n > 0 ? '' : 'arrived');
        return;
      }
      if (url.pathname === '/to') {
        res.writeHead(301, { location: url.searchParams.get('target') ?? '/' });
        res.end();
        return;
      }
      if (url.pathname === '/no-location') {
        res.writeHead(302);
        res.end();
        return;
      }
      res.writeHead(200);
      res.end('secret');
    });
  });
  afterAll(() => server.close());

  const allowed = () => createOutboundHttp({ allowHosts: ['127.0.0.1'], resolve: fakeDns({ 'internal.example.com': ['10.1.2.3'] }) });

  it('follows up to 5 redirects, re-resolving relative locations', async () => {
    const response = await allowed().get(`${server.origin}/hop/5`, feed);
    expect(response.status).toBe(200);
    expect(response.body.toString()).toBe('arrived');
    expect(response.finalUrl).toBe(`${server.origin}/hop/0`);
  });

  it('refuses a sixth redirect', async () => {
    const error = await refusal(allowed().get(`${server.origin}/hop/6`, feed));
    expect(error.code).toBe('too_many_redirects');
    expect(error.message).toBe('Too many redirects (more than 5)');
  });

  it.each([
    ['http://169.254.169.254/latest/meta-data/', 'forbidden_address', 'Feed address redirects to a private network address'],
    ['http://[::ffff:127.0.0.1]/secret', 'forbidden_address', 'Feed address redirects to a private network address'],
    ['http://localhost/secret', 'forbidden_address', 'Feed address redirects to a private network address'],
    ['http://internal.example.com/secret', 'forbidden_address', 'Feed address redirects to a private network address'],
    ['http://224.0.0.251/', 'forbidden_address', 'Feed address redirects to a reserved network address'],
    ['file:///etc/passwd', 'unsupported_scheme', 'Feed address must start with http:// or https://'],
    ['http://[bad', 'bad_redirect', 'Feed server sent a redirect without a valid address'],
  ])('a redirect from an allowed host to %s is refused', async (target, code, message) => {
    const before = server.requests.length;
    const error = await refusal(allowed().get(`${server.origin}/to?target=${encodeURIComponent(target)}`, feed));
    expect(error.code).toBe(code);
    expect(error.message).toBe(message);
    expect(server.requests.length - before).toBe(1);
  });

  it('refuses a redirect without a Location', async () => {
    const error = await refusal(allowed().get(`${server.origin}/no-location`, feed));
    expect(error.code).toBe('bad_redirect');
  });
});

describe('outbound HTTP client: DNS rebinding', () => {
  // "public" stands in for a public server: 127.0.0.2 is made acceptable through
  // the allow list, while 127.0.0.1 on the same port plays the private target.
  let publicServer: TestServer;
  let privateServer: TestServer;
  beforeAll(async () => {
    for (let attempt = 0; attempt < 10 && !privateServer; attempt += 1) {
      publicServer = await startServer((req, res) => {
        if (req.url === '/again') {
          res.writeHead(302, { location: `http://rebind.example:${publicServer.port}/second` });
          res.end();
          return;
        }
        res.end('public content');
      }, '127.0.0.2');
      try {
        privateServer = await startServer((_req, res) => res.end('private secret'), '127.0.0.1', publicServer.port);
      } catch {
        await publicServer.close();
      }
    }
  });
  afterAll(async () => {
    await publicServer.close();
    await privateServer.close();
  });

  /** Answers 127.0.0.2 (acceptable) the first time, 127.0.0.1 (private) after that. */
  function rebindingDns() {
    const state = { calls: 0 };
    const resolve: HostResolver = async () => {
      state.calls += 1;
      return [{ address: state.calls === 1 ? '127.0.0.2' : '127.0.0.1', family: 4 }];
    };
    return { resolve, state };
  }

  it('connects to the address it validated, never to a second DNS answer', async () => {
    const dns = rebindingDns();
    const client = createOutboundHttp({ allowHosts: ['127.0.0.2'], resolve: dns.resolve });
    const response = await client.get(`http://rebind.example:${publicServer.port}/`, feed);
    expect(response.body.toString()).toBe('public content');
    expect(dns.state.calls).toBe(1);
    expect(privateServer.requests).toHaveLength(0);
    expect(publicServer.requests.at(-1)!.headers.host).toBe(`rebind.example:${publicServer.port}`);
  });

  it('re-resolves and refuses when a redirect lands on the rebound private answer', async () => {
    const dns = rebindingDns();
    const client = createOutboundHttp({ allowHosts: ['127.0.0.2'], resolve: dns.resolve });
    const error = await refusal(client.get(`http://rebind.example:${publicServer.port}/again`, feed));
    expect(error.code).toBe('forbidden_address');
    expect(error.message).toBe('Feed address redirects to a private network address');
    expect(dns.state.calls).toBe(2);
    expect(privateServer.requests).toHaveLength(0);
  });
});

describe('outbound HTTP client: time cap', () => {
  let server: TestServer;
  const timers = new Set<NodeJS.Timeout>();
  beforeAll(async () => {
    server = await startServer((req, res) => {
      if (req.url === '/trickle') {
        res.writeHead(200, { 'content-type': 'application/rss+xml' });
        res.write('<rss>');
        // One byte every 100 ms, for at most 10 s, stopping when the client hangs up.
        let sent = 0;
        const timer = setInterval(() => {
          sent += 1;
          if (sent > 100 || res.destroyed) {
            clearInterval(timer);
            res.end();
            return;
          }
          res.write(' ');
        }, 100);
        timers.add(timer);
        res.on('close', () => clearInterval(timer));
        return;
      }
      if (req.url === '/silent') {
        const timer = setTimeout(() => res.end('too late'), 10_000);
        timers.add(timer);
        res.on('close', () => clearTimeout(timer));
        return;
      }
      res.end('ok');
    });
  });
  afterAll(async () => {
    for (const t of timers) clearTimeout(t);
    await server.close();
  });

  it('stops a body that trickles past the deadline', async () => {
    const client = createOutboundHttp({ allowHosts: ['127.0.0.1'] });
    const started = Date.now();
    const error = await refusal(client.get(`${server.origin}/trickle`, { ...feed, timeoutMs: 800 }));
    const elapsed = Date.now() - started;
    expect(error.code).toBe('timeout');
    expect(error.message).toBe('Feed took longer than 0.8 s');
    expect(elapsed).toBeGreaterThanOrEqual(700);
    expect(elapsed).toBeLessThan(3000);
  });

  it('stops a server that never answers, with the default message at 10 s scaled down by the option', async () => {
    const client = createOutboundHttp({ allowHosts: ['127.0.0.1'], timeoutMs: 1000 });
    const started = Date.now();
    const error = await refusal(client.get(`${server.origin}/silent`, feed));
    expect(error.code).toBe('timeout');
    expect(error.message).toBe('Feed took longer than 1 s');
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('gives up when the caller aborts', async () => {
    const client = createOutboundHttp({ allowHosts: ['127.0.0.1'] });
    const controller = new AbortController();
    const call = client.get(`${server.origin}/silent`, { ...feed, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('caller gave up')), 200);
    await expect(call).rejects.toThrow('caller gave up');
  });
});

describe('outbound HTTP client: byte cap and compression', () => {
  const MB = 1024 * 1024;
  const bigText = Buffer.alloc(2 * MB, 'a');
  const gzipBomb = zlib.gzipSync(Buffer.alloc(64 * MB)); // ~64 KB on the wire
  const smallXml = Buffer.from(feedXml.repeat(200));
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer((req, res) => {
      switch (req.url) {
        case '/big-with-length':
          res.writeHead(200, { 'content-length': String(bigText.length) });
          res.end(bigText);
          return;
        case '/big-chunked':
          res.writeHead(200, { 'transfer-encoding': 'chunked' });
          for (let i = 0; i < 8; i += 1) res.write(bigText.subarray(i * (bigText.length / 8), (i + 1) * (bigText.length / 8)));
          res.end();
          return;
        case '/bomb':
          res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': String(gzipBomb.length) });
          res.end(gzipBomb);
          return;
        case '/gzip':
          res.writeHead(200, { 'content-encoding': 'gzip' });
          res.end(zlib.gzipSync(smallXml));
          return;
        case '/deflate':
          res.writeHead(200, { 'content-encoding': 'deflate' });
          res.end(zlib.deflateSync(smallXml));
          return;
        case '/br':
          res.writeHead(200, { 'content-encoding': 'br' });
          res.end(zlib.brotliCompressSync(smallXml));
          return;
        case '/corrupt-gzip':
          res.writeHead(200, { 'content-encoding': 'gzip' });
          res.end(Buffer.from('this is not gzip at all'));
          return;
        case '/zstd-unknown':
          res.writeHead(200, { 'content-encoding': 'compress' });
          res.end('x');
          return;
        default:
          res.end();
      }
    });
  });
  afterAll(() => server.close());
  const client = () => createOutboundHttp({ allowHosts: ['127.0.0.1'] });

  it('refuses a declared Content-Length over the per-call cap', async () => {
    const error = await refusal(client().get(`${server.origin}/big-with-length`, { ...feed, maxBytes: 1 * MB }));
    expect(error.code).toBe('too_large');
    expect(error.message).toBe('Feed is larger than 1 MB');
  });

  it('refuses a chunked body while streaming once it passes the cap', async () => {
    const error = await refusal(client().get(`${server.origin}/big-chunked`, { ...feed, maxBytes: 1 * MB }));
    expect(error.code).toBe('too_large');
  });

  it('accepts the same body under a larger per-call cap', async () => {
    const response = await client().get(`${server.origin}/big-chunked`, { ...feed, maxBytes: 3 * MB });
    expect(response.body.length).toBe(bigText.length);
  });

  it('stops a gzip bomb at the default 5 MB cap after decompression', async () => {
    const error = await refusal(client().get(`${server.origin}/bomb`, feed));
    expect(error.code).toBe('too_large');
    expect(error.message).toBe('Feed is larger than 5 MB');
  });

  it.each(['/gzip', '/deflate', '/br'])('decodes %s bodies', async (path) => {
    const response = await client().get(`${server.origin}${path}`, feed);
    expect(response.body.equals(smallXml)).toBe(true);
  });

  it('refuses a body that is not the compression it claims', async () => {
    const error = await refusal(client().get(`${server.origin}/corrupt-gzip`, feed));
    expect(error.code).toBe('bad_encoding');
    expect(error.message).toBe('Feed response could not be decompressed');
  });

  it('refuses an unknown content coding', async () => {
    const error = await refusal(client().get(`${server.origin}/zstd-unknown`, feed));
    expect(error.code).toBe('bad_encoding');
    expect(error.message).toBe('Feed server used an unsupported compression (compress)');
  });
});

describe('outbound HTTP client: conditional GET', () => {
  const etag = '"feed-42"';
  const lastModified = 'Tue, 10 Jun 2025 08:00:00 GMT';
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer((req, res) => {
      const fresh = req.headers['if-none-match'] === etag || (!req.headers['if-none-match'] && req.headers['if-modified-since'] === lastModified);
      if (fresh) {
        res.writeHead(304, { etag, 'last-modified': lastModified });
        res.end();
        return;
      }
      res.writeHead(200, { etag, 'last-modified': lastModified, 'content-type': 'application/rss+xml' });
      res.end(feedXml);
    });
  });
  afterAll(() => server.close());

  it('returns the validators, then 304 when they still match', async () => {
    const client = createOutboundHttp({ allowHosts: ['127.0.0.1'] });
    const first = await client.get(`${server.origin}/feed`, feed);
    expect(first).toMatchObject({ status: 200, notModified: false, etag, lastModified });

    const byEtag = await client.get(`${server.origin}/feed`, { ...feed, ifNoneMatch: first.etag, ifModifiedSince: first.lastModified });
    expect(byEtag).toMatchObject({ status: 304, notModified: true, etag, lastModified });
    expect(byEtag.body.length).toBe(0);
    expect(server.requests.at(-1)!.headers['if-none-match']).toBe(etag);
    expect(server.requests.at(-1)!.headers['if-modified-since']).toBe(lastModified);

    const byDate = await client.get(`${server.origin}/feed`, { ...feed, ifModifiedSince: lastModified });
    expect(byDate.notModified).toBe(true);

    const stale = await client.get(`${server.origin}/feed`, { ...feed, ifNoneMatch: '"old"' });
    expect(stale.status).toBe(200);
    expect(stale.body.toString()).toBe(feedXml);
  });
});

describe('outbound HTTP client: HTTPS with a pinned address', () => {
  // A throwaway self-signed certificate for the name feeds.test, made with openssl for this run.
  let server: https.Server;
  let port = 0;
  let certificate = '';
  beforeAll(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-tls-'));
    const keyFile = path.join(dir, 'key.pem');
    const certFile = path.join(dir, 'cert.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=feeds.test', '-addext', 'subjectAltName=DNS:feeds.test'], { stdio: 'ignore' });
    certificate = fs.readFileSync(certFile, 'utf8');
    server = https.createServer({ key: fs.readFileSync(keyFile), cert: certificate }, (_req, res) => res.end('secure feed'));
    fs.rmSync(dir, { recursive: true, force: true });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('verifies the certificate against the host name while connecting to the pinned address', async () => {
    const client = createOutboundHttp({ allowHosts: ['feeds.test'], resolve: fakeDns({ 'feeds.test': ['127.0.0.1'] }), extraCaCertificates: [certificate] });
    const response = await client.get(`https://feeds.test:${port}/`, feed);
    expect(response.body.toString()).toBe('secure feed');
  });

  it('refuses a certificate it cannot verify', async () => {
    const untrusting = createOutboundHttp({ allowHosts: ['feeds.test'], resolve: fakeDns({ 'feeds.test': ['127.0.0.1'] }) });
    const error = await refusal(untrusting.get(`https://feeds.test:${port}/`, feed));
    expect(error.code).toBe('tls_failed');
    expect(error.message).toBe("Feed server's HTTPS certificate could not be verified");
  });

  it('refuses a certificate issued for another name', async () => {
    const client = createOutboundHttp({ allowHosts: ['127.0.0.1'], extraCaCertificates: [certificate] });
    const error = await refusal(client.get(`https://127.0.0.1:${port}/`, feed));
    expect(error.code).toBe('tls_failed');
  });
});

describe('outbound HTTP client: slow DNS', () => {
  it('counts DNS in the time cap', async () => {
    const client = createOutboundHttp({ resolve: () => new Promise(() => undefined), timeoutMs: 300 });
    const started = Date.now();
    const error = await refusal(client.get('https://slow-dns.example/feed', feed));
    expect(error.code).toBe('timeout');
    expect(error.message).toBe('Feed took longer than 0.3 s');
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

// Webhooks POST through the same client (docs/security.md, "Webhooks").
describe('outbound HTTP client: POST', () => {
  it('sends the body and headers as given, answers a redirect as it is without following it, and refuses a private address unless listed', async () => {
    const bodies: string[] = [];
    const server = await startServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        bodies.push(Buffer.concat(chunks).toString('utf8'));
        if (req.url === '/moved') {
          res.writeHead(307, { location: '/elsewhere' });
          res.end();
          return;
        }
        res.writeHead(204);
        res.end();
      });
    });
    try {
      const post = { subject: 'Webhook', body: '{"type":"webhook.test"}', contentType: 'application/json', headers: { 'webhook-id': 'msg_1', 'user-agent': 'Herald-Webhooks/1.0' } };
      const refused = await refusal(createOutboundHttp().post(`${server.origin}/hook`, post));
      expect(refused.message).toBe('Webhook address points to a private network address');
      expect(server.requests).toHaveLength(0);

      const client = createOutboundHttp({ allowHosts: ['127.0.0.1'] });
      expect((await client.post(`${server.origin}/hook`, post)).status).toBe(204);
      const seen = server.requests.at(-1)!;
      expect(seen.method).toBe('POST');
      expect(seen.headers['content-type']).toBe('application/json');
      expect(seen.headers['webhook-id']).toBe('msg_1');
      expect(seen.headers['user-agent']).toBe('Herald-Webhooks/1.0');
      expect(bodies.at(-1)).toBe('{"type":"webhook.test"}');

      const moved = await client.post(`${server.origin}/moved`, post);
      expect(moved.status).toBe(307);
      expect(server.requests.map((r) => r.url)).toEqual(['/hook', '/moved']);
    } finally {
      await server.close();
    }
  });
});
