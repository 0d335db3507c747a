// Can this machine reach a push service? Three steps, each timed: DNS,
// a TCP connection to port 443, a TLS handshake that verifies the
// certificate (a TLS-intercepting proxy fails here, as pushes would).
import dns from 'node:dns/promises';
import net from 'node:net';
import tls from 'node:tls';

export type ReachabilityStep = 'dns' | 'tcp' | 'tls';

export type Reachability =
  | { ok: true; address: string; dnsMs: number; tcpMs: number; tlsMs: number }
  | { ok: false; failedAt: ReachabilityStep; error: string; afterMs: number; address?: string; dnsMs?: number; tcpMs?: number };

export interface ReachabilityOptions {
  timeoutMs: number;
  /** Extra CAs to trust (tests); Node's defaults and NODE_EXTRA_CA_CERTS apply otherwise. */
  ca?: string | Buffer;
}

const elapsed = (since: number) => Math.round(performance.now() - since);

function describe(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const message = error instanceof Error ? error.message : String(error);
  return code && !message.includes(code) ? `${code} ${message}` : message;
}

function withTimeout<T>(work: Promise<T>, ms: number, what: string, onTimeout: () => void = () => undefined): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => {
        onTimeout();
        reject(new Error(`${what}: no answer within ${ms} ms`));
      }, ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

export async function probePushHost(host: string, port: number, options: ReachabilityOptions): Promise<Reachability> {
  let started = performance.now();
  let address: string;
  try {
    address = net.isIP(host) ? host : (await withTimeout(dns.lookup(host), options.timeoutMs, 'DNS lookup')).address;
  } catch (error) {
    return { ok: false, failedAt: 'dns', error: describe(error), afterMs: elapsed(started) };
  }
  const dnsMs = elapsed(started);

  started = performance.now();
  const socket = new net.Socket();
  try {
    await withTimeout(
      new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('error', reject);
        socket.connect(port, address);
      }),
      options.timeoutMs,
      'TCP connection',
      () => socket.destroy(),
    );
  } catch (error) {
    socket.destroy();
    return { ok: false, failedAt: 'tcp', error: describe(error), afterMs: elapsed(started), address, dnsMs };
  }
  const tcpMs = elapsed(started);

  started = performance.now();
  const secure = tls.connect({ socket, host, servername: net.isIP(host) ? undefined : host, ALPNProtocols: ['http/1.1'], ...(options.ca ? { ca: [...tls.rootCertificates, options.ca.toString()] } : {}) });
  try {
    await withTimeout(
      new Promise<void>((resolve, reject) => {
        secure.once('secureConnect', resolve);
        secure.once('error', reject);
      }),
      options.timeoutMs,
      'TLS handshake',
      () => secure.destroy(),
    );
    return { ok: true, address, dnsMs, tcpMs, tlsMs: elapsed(started) };
  } catch (error) {
    return { ok: false, failedAt: 'tls', error: describe(error), afterMs: elapsed(started), address, dnsMs, tcpMs };
  } finally {
    secure.destroy();
    socket.destroy();
  }
}
