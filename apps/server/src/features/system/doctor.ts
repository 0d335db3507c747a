// `herald doctor` and the dashboard's System panel (README, "herald doctor"):
// one line per check, OK / WARN / FAIL, with what was found and what to do.
// Read-only: it changes nothing, so it can run from cron or CI at any time.
import fs from 'node:fs';
import type { DoctorCheck, DoctorStatus } from '@herald/contracts';
import { Redis } from 'ioredis';
import nodemailer from 'nodemailer';
import type { AppContext } from '../../context';
import { pendingMigrations } from '../../db/migrate';
import { PUSH_SERVICE_HOSTS, pushServiceOf, type PushServiceHost } from '../../delivery/push-services';
import { vapidSubject } from '../../delivery/vapid';
import { databaseClock, secretFingerprintsSeenSince, selectOne, sitesWithOwnerEmail } from './repository';
import { probePushHost } from './push-reachability';
import { secretFingerprint } from '../../platform/secrets';
import { FINGERPRINT_FRESH_MS } from './secret-fingerprint';

export type DoctorDeps = Pick<AppContext, 'config' | 'db' | 'dbKind' | 'secret' | 'clock'>;

export interface DoctorOptions {
  /** Push-service hosts to connect to; default: DOCTOR_PUSH_HOSTS, else one per push service. */
  pushHosts?: readonly PushServiceHost[];
  /** Extra CAs the TLS handshakes trust (tests). */
  ca?: string | Buffer;
  /** Time each network step gets (default 5 s). */
  timeoutMs?: number;
}

const check = (id: string, title: string, status: DoctorStatus, detail: string, action: string | null = null): DoctorCheck => ({
  id,
  title,
  status,
  detail,
  action: status === 'ok' ? null : action,
});

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

function publicUrlHttps(publicUrl: string): DoctorCheck {
  const url = new URL(publicUrl);
  const title = 'PUBLIC_URL uses https';
  if (url.protocol === 'https:') return check('public-url-https', title, 'ok', publicUrl);
  if (LOCAL_HOSTS.has(url.hostname)) {
    return check('public-url-https', title, 'warn', `${publicUrl} is plain http on this machine: fine for a trial`, 'Browsers allow push only on https (or localhost): put Herald behind TLS (deploy/nginx/herald.conf) and set PUBLIC_URL to its https:// address before going live.');
  }
  return check('public-url-https', title, 'fail', `${publicUrl} is plain http`, 'Browsers allow push and service workers only on https: put Herald behind TLS (deploy/nginx/herald.conf) and set PUBLIC_URL to its https:// address.');
}

async function publicUrlReachable(publicUrl: string, timeoutMs: number): Promise<DoctorCheck> {
  const target = `${publicUrl}/healthz`;
  const title = 'PUBLIC_URL is reachable';
  const started = performance.now();
  try {
    const response = await fetch(target, { signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' });
    const ms = Math.round(performance.now() - started);
    if (response.status === 200) return check('public-url-reachable', title, 'ok', `GET ${target} answered 200 in ${ms} ms`);
    return check('public-url-reachable', title, 'fail', `GET ${target} answered ${response.status} in ${ms} ms`, 'PUBLIC_URL must lead to this Herald: check the proxy in front of it and that PUBLIC_URL is the address browsers use.');
  } catch (error) {
    return check('public-url-reachable', title, 'fail', `GET ${target} failed: ${errorText(error)}`, 'Herald must be reachable at PUBLIC_URL (the SDK, the service worker and the links in mails use it): check DNS, the proxy and the firewall, and that `serve` is running.');
  }
}

function errorText(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause;
  const message = error instanceof Error ? error.message : String(error);
  return cause instanceof Error ? `${message} (${(cause as NodeJS.ErrnoException).code ?? cause.message})` : message;
}

function secretKeyPresent(deps: DoctorDeps): DoctorCheck {
  const title = 'SECRET_KEY is set';
  const fingerprint = secretFingerprint(deps.secret);
  if (deps.config.secretKey) return check('secret-key', title, 'ok', `set (fingerprint ${fingerprint})`);
  if (deps.dbKind === 'postgres') {
    return check('secret-key', title, 'warn', `not set: this machine uses its own DATA_DIR/secret.key (fingerprint ${fingerprint})`, 'With PostgreSQL, processes usually run on several machines: set SECRET_KEY (at least 32 characters), the same for every process, so a beacon or link signed by one is accepted by all.');
  }
  return check('secret-key', title, 'ok', `not set: the secret is kept in DATA_DIR/secret.key (fingerprint ${fingerprint}); keep it in your backups`);
}

async function secretKeySame(deps: DoctorDeps): Promise<DoctorCheck> {
  const title = 'Every process uses the same secret';
  const own = secretFingerprint(deps.secret);
  const seen = await secretFingerprintsSeenSince(deps.db, deps.clock.now() - FINGERPRINT_FRESH_MS);
  const minutes = FINGERPRINT_FRESH_MS / 60_000;
  if (!seen.length) return check('secret-key-same', title, 'ok', `no Herald process recorded its secret in the last ${minutes} minutes; this one's fingerprint is ${own}`);
  const all = new Set([...seen, own]);
  if (all.size === 1) return check('secret-key-same', title, 'ok', `every process of the last ${minutes} minutes uses the secret with fingerprint ${own}`);
  const others = seen.filter((f) => f !== own);
  return check(
    'secret-key-same',
    title,
    'fail',
    `${all.size} different secrets in use in the last ${minutes} minutes: this one ${own}, others ${others.join(', ')}`,
    'Set the same SECRET_KEY for every Herald process (serve, scheduler, workers) and restart them: a delivery or click beacon signed by one process is refused by another.',
  );
}

async function smtpLogin(deps: DoctorDeps, timeoutMs: number): Promise<DoctorCheck> {
  const title = 'SMTP login';
  const smtpUrl = deps.config.smtpUrl;
  if (!smtpUrl) {
    return check('smtp', title, 'warn', 'SMTP_URL is not set: mails (password resets, email verification) are written to DATA_DIR/mail instead of sent', 'Set SMTP_URL (smtps://user:password@host:465) so people get their reset and verification mails.');
  }
  const transport = nodemailer.createTransport({ url: smtpUrl, connectionTimeout: timeoutMs, greetingTimeout: timeoutMs, socketTimeout: timeoutMs });
  const started = performance.now();
  try {
    await transport.verify();
    return check('smtp', title, 'ok', `${new URL(smtpUrl).host} accepted the login in ${Math.round(performance.now() - started)} ms`);
  } catch (error) {
    return check('smtp', title, 'fail', `${new URL(smtpUrl).host}: ${errorText(error)}`, 'Check SMTP_URL: host, port (465 for smtps://, 587 for smtp:// with STARTTLS), user and password.');
  } finally {
    transport.close();
  }
}

async function vapidSubjects(deps: DoctorDeps): Promise<DoctorCheck> {
  const title = 'VAPID subjects are valid';
  const sites = await sitesWithOwnerEmail(deps.db);
  const problems: string[] = [];
  for (const site of sites) {
    try {
      vapidSubject(site.url, site.ownerEmail);
    } catch (error) {
      problems.push(`${site.name}: ${errorText(error)}`);
    }
  }
  if (!sites.length) return check('vapid-subject', title, 'ok', 'no sites yet');
  if (!problems.length) return check('vapid-subject', title, 'ok', `${sites.length} site(s), each with an https: or mailto: subject push services accept`);
  return check('vapid-subject', title, 'fail', problems.join('; '), 'Give these sites an https:// URL (Settings → General), or their owner an email address at a real domain: push services refuse every push otherwise.');
}

async function pushService(host: PushServiceHost, options: Required<Pick<DoctorOptions, 'timeoutMs'>> & Pick<DoctorOptions, 'ca'>): Promise<DoctorCheck> {
  const id = host.service === 'other' ? `push-${host.host}:${host.port}` : `push-${host.service}`;
  const title = `Push service ${host.service === 'other' ? host.host : host.service} (${host.host}:${host.port}) is reachable`;
  const result = await probePushHost(host.host, host.port, { timeoutMs: options.timeoutMs, ca: options.ca });
  if (result.ok) return check(id, title, 'ok', `DNS ${result.dnsMs} ms (${result.address}), TCP ${host.port} ${result.tcpMs} ms, TLS ${result.tlsMs} ms`);
  const done = [result.dnsMs !== undefined ? `DNS ${result.dnsMs} ms (${result.address})` : '', result.tcpMs !== undefined ? `TCP ${host.port} ${result.tcpMs} ms` : ''].filter(Boolean);
  const step = { dns: 'DNS lookup', tcp: `TCP connection to port ${host.port}`, tls: 'TLS handshake' }[result.failedAt];
  const action = {
    dns: `This machine cannot resolve ${host.host}: check its DNS resolver (/etc/resolv.conf, the container's DNS).`,
    tcp: `Allow outbound TCP ${host.port} from this machine to ${host.host} (firewall, security group, egress proxy).`,
    tls: `The TLS handshake with ${host.host} failed: a proxy that intercepts TLS, or an outdated CA store, breaks every push; let Herald connect directly or add the proxy's CA with NODE_EXTRA_CA_CERTS.`,
  }[result.failedAt];
  return check(id, title, 'fail', `${[...done, `${step} failed after ${result.afterMs} ms: ${result.error}`].join(', ')}`, action);
}

async function median(times: number, run: () => Promise<void>): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    const started = performance.now();
    await run();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}

/** OK under 20 ms (same machine or network), WARN above 200 ms: every send and API call waits for it many times. */
function latencyStatus(ms: number): DoctorStatus {
  return ms > 200 ? 'warn' : 'ok';
}

async function databaseLatency(deps: DoctorDeps): Promise<DoctorCheck> {
  const title = `Database (${deps.dbKind === 'postgres' ? 'PostgreSQL' : 'SQLite'}) latency`;
  try {
    const ms = await median(5, () => selectOne(deps.db));
    return check('database', title, latencyStatus(ms), `median of 5 queries: ${ms.toFixed(1)} ms`, 'The database is slow to answer: put it near Herald (same network), check its load and disk.');
  } catch (error) {
    return check('database', title, 'fail', `no answer: ${errorText(error)}`, 'Check DATABASE_URL and that the database server runs and accepts connections from this machine.');
  }
}

async function migrationsCurrent(deps: DoctorDeps): Promise<DoctorCheck> {
  const title = 'Database schema is current';
  const pending = await pendingMigrations({ db: deps.db, kind: deps.dbKind });
  if (!pending.length) return check('migrations', title, 'ok', 'every migration of this version has run');
  return check('migrations', title, 'fail', `${pending.length} pending: ${pending.join(', ')}`, 'Run `herald migrate` (README, "Upgrades"), then start the other roles.');
}

async function redisLatency(deps: DoctorDeps, timeoutMs: number): Promise<DoctorCheck> {
  const title = 'Redis latency';
  const redisUrl = deps.config.redisUrl;
  if (!redisUrl) return check('redis', title, 'ok', 'not used: REDIS_URL is unset, jobs run in the `serve` process');
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, connectTimeout: timeoutMs, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    const ms = await median(5, async () => {
      await redis.ping();
    });
    return check('redis', title, latencyStatus(ms), `median of 5 PINGs: ${ms.toFixed(1)} ms`, 'Redis is slow to answer: put it near Herald and check its memory (maxmemory-policy noeviction).');
  } catch (error) {
    return check('redis', title, 'fail', `no answer: ${errorText(error)}`, 'Check REDIS_URL and that redis-server runs and accepts connections from this machine: without it no worker takes delivery jobs.');
  } finally {
    redis.disconnect();
  }
}

/** Skew between this machine's clock and the database server's: leases and due times compare clocks of several machines. */
async function clockSkew(deps: DoctorDeps): Promise<DoctorCheck> {
  const title = 'Clock agrees with the database server';
  if (deps.dbKind !== 'postgres') return check('clock-skew', title, 'ok', 'SQLite runs inside this process: one clock');
  try {
    const before = Date.now();
    const server = await databaseClock(deps.db, deps.dbKind);
    const after = Date.now();
    const skew = server! - (before + after) / 2;
    const detail = `this machine is ${Math.abs(skew).toFixed(0)} ms ${skew > 0 ? 'behind' : 'ahead of'} the database server (±${Math.ceil((after - before) / 2)} ms)`;
    const status: DoctorStatus = Math.abs(skew) > 30_000 ? 'fail' : Math.abs(skew) > 2_000 ? 'warn' : 'ok';
    return check('clock-skew', title, status, detail, 'Run NTP (systemd-timesyncd, chrony) on every Herald machine and the database server: scheduled sends and delivery leases compare their clocks.');
  } catch (error) {
    return check('clock-skew', title, 'fail', `could not read the database clock: ${errorText(error)}`, 'Check that the database answers (see the database check).');
  }
}

const MiB = 1024 * 1024;

/** FAIL under 100 MiB or 2 % free, WARN under 1 GiB or 10 %. */
export function diskSpaceStatus(freeBytes: number, totalBytes: number): DoctorStatus {
  const share = totalBytes > 0 ? freeBytes / totalBytes : 0;
  if (freeBytes < 100 * MiB || share < 0.02) return 'fail';
  if (freeBytes < 1024 * MiB || share < 0.1) return 'warn';
  return 'ok';
}

const human = (bytes: number) => (bytes >= 1024 * MiB ? `${(bytes / 1024 / MiB).toFixed(1)} GiB` : `${Math.round(bytes / MiB)} MiB`);

async function diskSpace(deps: DoctorDeps): Promise<DoctorCheck> {
  const title = 'Disk space of DATA_DIR';
  try {
    const stats = await fs.promises.statfs(deps.config.dataDir);
    const free = stats.bavail * stats.bsize;
    const total = stats.blocks * stats.bsize;
    return check('disk-space', title, diskSpaceStatus(free, total), `${human(free)} free of ${human(total)} (${total ? Math.round((free / total) * 100) : 0} %) at ${deps.config.dataDir}`, `Free space where DATA_DIR is (${deps.config.dataDir}): the database, uploads and backups grow there; a full disk stops every write.`);
  } catch (error) {
    return check('disk-space', title, 'fail', `${deps.config.dataDir}: ${errorText(error)}`, 'DATA_DIR must exist and be readable by Herald.');
  }
}

/** Runs every check, the slow network ones side by side; never throws. */
export async function runDoctor(deps: DoctorDeps, options: DoctorOptions = {}): Promise<DoctorCheck[]> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const configured = deps.config.doctorPushHosts.map(({ host, port }) => ({ service: pushServiceOf(`https://${host}`), host, port }));
  const hosts = options.pushHosts ?? (configured.length ? configured : PUSH_SERVICE_HOSTS);
  const guarded = (id: string, title: string, run: () => Promise<DoctorCheck>) =>
    run().catch((error: unknown) => check(id, title, 'fail', `the check itself failed: ${errorText(error)}`, 'Run `herald doctor` again; if it keeps failing, report it with this line.'));
  return Promise.all([
    Promise.resolve(publicUrlHttps(deps.config.publicUrl)),
    publicUrlReachable(deps.config.publicUrl, timeoutMs),
    Promise.resolve(secretKeyPresent(deps)),
    guarded('secret-key-same', 'Every process uses the same secret', () => secretKeySame(deps)),
    smtpLogin(deps, timeoutMs),
    guarded('vapid-subject', 'VAPID subjects are valid', () => vapidSubjects(deps)),
    ...hosts.map((host) => pushService(host, { timeoutMs, ca: options.ca })),
    databaseLatency(deps),
    guarded('migrations', 'Database schema is current', () => migrationsCurrent(deps)),
    redisLatency(deps, timeoutMs),
    clockSkew(deps),
    diskSpace(deps),
  ]);
}

/** `herald doctor`'s text: one line per check, the action indented below a WARN or FAIL. */
export function formatDoctorReport(checks: readonly DoctorCheck[]): string {
  const label = { ok: 'OK  ', warn: 'WARN', fail: 'FAIL' } as const;
  const lines = checks.flatMap((c) => [`${label[c.status]}  ${c.title}: ${c.detail}`, ...(c.action ? [`      → ${c.action}`] : [])]);
  const count = (status: DoctorStatus) => checks.filter((c) => c.status === status).length;
  lines.push('', `${count('ok')} OK, ${count('warn')} WARN, ${count('fail')} FAIL`);
  return lines.join('\n');
}
