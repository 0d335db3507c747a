// Every environment variable Herald reads, parsed and validated once at start.
// A bad value stops the process with one line per problem, naming the variable.
import path from 'node:path';
import { DELIVERY_RETENTION_DEFAULT_DAYS, DELIVERY_RETENTION_MIN_DAYS } from '@herald/contracts';
import { z } from 'zod';
import { DEFAULT_PUSH_CONCURRENCY, DEFAULT_PUSH_CONNECTIONS } from './delivery/push-client-options';
import { checkVapidSubject } from './delivery/vapid';

const booleanFlag = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => ['true', 'false', '1', '0', 'yes', 'no', ''].includes(v), {
    message: 'must be true or false',
  })
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const port = z.coerce
  .number({ message: 'must be a number' })
  .int('must be a whole number')
  .min(1, 'must be between 1 and 65535')
  .max(65535, 'must be between 1 and 65535');

const httpUrl = z
  .string()
  .trim()
  .refine((v) => {
    try {
      const u = new URL(v);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'must be an http:// or https:// URL')
  .transform((v) => v.replace(/\/+$/, ''));

/** A comma-separated list of origins such as `http://127.0.0.1:9911`. */
const originList = z
  .string()
  .trim()
  .transform((v, ctx) => {
    const origins: string[] = [];
    for (const part of v.split(',').map((s) => s.trim()).filter(Boolean)) {
      try {
        const u = new URL(part);
        if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
        origins.push(u.origin);
      } catch {
        ctx.addIssue({ code: 'custom', message: `"${part}" is not an http(s) origin` });
      }
    }
    return origins;
  });

/** A comma-separated list of host names or addresses, lower-cased. */
const hostList = z
  .string()
  .trim()
  .transform((v) =>
    v
      .split(',')
      .map((s) => s.trim().toLowerCase().replace(/^\[|\]$/g, ''))
      .filter(Boolean),
  );

const positiveInt = (label: string) =>
  z.coerce.number({ message: `must be a number (${label})` }).int('must be a whole number').positive('must be above 0');

const envSchema = z.object({
  PORT: port.default(3000),
  HOST: z.string().trim().min(1).default('0.0.0.0'),
  DATA_DIR: z.string().trim().min(1).default('./data'),
  DATABASE_URL: z
    .string()
    .trim()
    .refine((v) => v === '' || /^postgres(ql)?:\/\//.test(v) || v.startsWith('sqlite:'), {
      message: 'must start with postgres:// (PostgreSQL) or sqlite: (a SQLite file path); leave it unset for the embedded SQLite database',
    })
    .optional(),
  REDIS_URL: z
    .string()
    .trim()
    .refine((v) => v === '' || /^rediss?:\/\//.test(v), { message: 'must start with redis:// or rediss://' })
    .optional(),
  PUBLIC_URL: httpUrl.optional(),
  VAPID_SUBJECT: z.string().trim().optional(),
  SMTP_URL: z
    .string()
    .trim()
    .refine((v) => v === '' || /^smtps?:\/\//.test(v), { message: 'must start with smtp:// or smtps://' })
    .optional(),
  MAIL_FROM: z.string().trim().optional(),
  ALLOW_REGISTRATION: booleanFlag.default(false),
  ADMIN_EMAIL: z.string().trim().toLowerCase().email('must be an email address').optional().or(z.literal('')),
  ADMIN_PASSWORD: z.string().optional(),
  ADMIN_NAME: z.string().trim().optional(),
  SECRET_KEY: z.string().min(32, 'must be at least 32 characters').optional().or(z.literal('')),
  TRUST_PROXY: booleanFlag.default(false),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_FORMAT: z.enum(['auto', 'pretty', 'json'], { message: 'must be auto, pretty or json' }).default('auto'),
  EXTRA_PUSH_ORIGINS: originList.default([]),
  OUTBOUND_ALLOW_HOSTS: hostList.default([]),
  RSS_POLL_INTERVAL_SECONDS: positiveInt('seconds').default(900),
  SCHEDULER_INTERVAL_MS: positiveInt('milliseconds').default(1000),
  PUSH_CONCURRENCY: positiveInt('requests in flight per process').default(DEFAULT_PUSH_CONCURRENCY),
  // HTTP/1.1 carries one request at a time per connection: a process sends at most PUSH_CONNECTIONS ÷ round trip per push service (deploy/README.md, "Sizing").
  PUSH_CONNECTIONS: positiveInt('connections per push service').max(1024, 'must be at most 1024').default(DEFAULT_PUSH_CONNECTIONS),
  WORKER_CONCURRENCY: positiveInt('batch jobs per process').default(4),
  DELIVERY_LEASE_SECONDS: positiveInt('seconds').default(120),
  DELIVERY_RETRY_BASE_MS: positiveInt('milliseconds').default(2000),
  DELIVERY_MAX_ATTEMPTS: positiveInt('attempts').default(5),
  PUSH_TIMEOUT_MS: positiveInt('milliseconds').default(15000),
  RSS_FEEDS_PER_USER: positiveInt('feeds').max(100_000, 'must be at most 100000').default(50),
  RSS_CHECKS_PER_USER_PER_HOUR: positiveInt('checks').max(100_000, 'must be at most 100000').default(30),
  // The public subscribe API's flood limits, per process (docs/security.md, "Public endpoints").
  SUBSCRIBE_LIMIT_PER_SITE_PER_MINUTE: positiveInt('calls').max(10_000_000, 'must be at most 10000000').default(3000),
  SUBSCRIBE_LIMIT_PER_ADDRESS_PER_MINUTE: positiveInt('calls').max(1_000_000, 'must be at most 1000000').default(60),
  // At most 1 TiB: the quota is compared in bytes, and a typo should not read as "unlimited".
  METRICS_PORT: port.optional(),
  SHUTDOWN_TIMEOUT_SECONDS: positiveInt('seconds').default(30),
  DOCTOR_PUSH_HOSTS: z
    .string()
    .trim()
    .transform((v, ctx) => {
      const hosts: Array<{ host: string; port: number }> = [];
      for (const part of v.split(',').map((s) => s.trim()).filter(Boolean)) {
        const match = /^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:]+\])(?::(\d{1,5}))?$/.exec(part);
        const port = match?.[2] === undefined ? 443 : Number(match[2]);
        if (!match || port < 1 || port > 65535) ctx.addIssue({ code: 'custom', message: `"${part}" is not host or host:port` });
        else hosts.push({ host: match[1]!.replace(/^\[|\]$/g, ''), port });
      }
      return hosts;
    })
    .default([]),
  METRICS_TOKEN: z.string().trim().min(16, 'must be at least 16 characters').optional(),
  UPLOAD_QUOTA_MB: positiveInt('megabytes').max(1_048_576, 'must be at most 1048576 (1 TiB)').default(200),
  // docs/security.md, "Audit log": how long entries are kept.
  AUDIT_LOG_RETENTION_DAYS: positiveInt('days').max(36_500, 'must be at most 36500').default(365),
  // docs/storage.md, "Retention".
  DELIVERY_RETENTION_DAYS: positiveInt('days')
    .min(DELIVERY_RETENTION_MIN_DAYS, `must be at least ${DELIVERY_RETENTION_MIN_DAYS} (the frequency cap looks a week back)`)
    .max(36_500, 'must be at most 36500')
    .default(DELIVERY_RETENTION_DEFAULT_DAYS),
  SITE_EVENT_RETENTION_DAYS: positiveInt('days').max(36_500, 'must be at most 36500').default(30),
  FEED_ITEM_RETENTION_DAYS: positiveInt('days').max(36_500, 'must be at most 36500').default(180),
});

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  database: { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string };
  redisUrl: string | undefined;
  publicUrl: string;
  /**
   * The VAPID `sub` (RFC 8292 §2.1) every push is signed with: `mailto:` or
   * `https:` at a real domain, checked at start. Unset: each site's https
   * origin, else its owner's email (delivery/vapid.ts vapidSubject).
   */
  vapidSubject: string | undefined;
  smtpUrl: string | undefined;
  mailFrom: string;
  allowRegistration: boolean;
  admin: { email: string; password: string; name: string } | undefined;
  secretKey: string | undefined;
  trustProxy: boolean;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** auto: human-readable lines on a terminal, JSON lines otherwise (files, journald, process managers). */
  logFormat: 'auto' | 'pretty' | 'json';
  extraPushOrigins: string[];
  outboundAllowHosts: string[];
  rssPollIntervalSeconds: number;
  schedulerIntervalMs: number;
  pushConcurrency: number;
  /** Keep-alive connections per push-service origin per process (PUSH_CONNECTIONS). */
  pushConnections: number;
  workerConcurrency: number;
  /** How long a worker owns a claimed run or delivery before others may take it over. */
  deliveryLeaseMs: number;
  deliveryRetryBaseMs: number;
  deliveryMaxAttempts: number;
  /** Overall deadline of one request to a push service. */
  pushTimeoutMs: number;
  /** RSS feeds one user may have over all their sites (docs/security.md, "Abuse limits"). */
  rssFeedsPerUser: number;
  /** "Check now" calls one user may make per hour, over all their feeds. */
  rssChecksPerUserPerHour: number;
  /** Public subscribe/unsubscribe calls per minute and process: to one site from all addresses, and from one address (an IPv6 /64). */
  subscribeLimitPerSitePerMinute: number;
  subscribeLimitPerAddressPerMinute: number;
  /** Bytes of uploaded images one user may keep (UPLOAD_QUOTA_MB × 1024 × 1024). */
  uploadQuotaBytes: number;
  /** A second port for /healthz, /readyz and /metrics (any role); unset: none. */
  metricsPort: number | undefined;
  /** Bearer token /metrics requires; on `serve`'s own port /metrics exists only with it. */
  metricsToken: string | undefined;
  /** After SIGTERM a process exits within this, done or not (README, "Stopping and restarting"). */
  shutdownTimeoutMs: number;
  /** Hosts `herald doctor` connects to instead of the four push services (a proxy's view, or tests). */
  doctorPushHosts: Array<{ host: string; port: number }>;
  auditLogRetentionDays: number;
  /** Delivery rows of runs finished longer ago are compacted (docs/storage.md, "Retention"). */
  deliveryRetentionDays: number;
  siteEventRetentionDays: number;
  /** Feed items seen longer ago that the feed no longer lists are forgotten. */
  feedItemRetentionDays: number;
}

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Reads the configuration from an environment (process.env by default). */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // Empty strings count as unset, so `FOO=` in a .env file means "default".
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const name = String(issue.path[0] ?? 'environment');
        const got = cleaned[name];
        const shown = name.includes('PASSWORD') || name.includes('SECRET') || name.includes('TOKEN') || got === undefined ? '' : ` (got "${got}")`;
        return `${name}: ${issue.message}${shown}`;
      }),
    );
  }
  const e = parsed.data;
  const problems: string[] = [];

  const adminEmail = e.ADMIN_EMAIL || undefined;
  if (adminEmail && !e.ADMIN_PASSWORD) problems.push('ADMIN_PASSWORD: must be set when ADMIN_EMAIL is set');
  if (e.ADMIN_PASSWORD && !adminEmail) problems.push('ADMIN_EMAIL: must be set when ADMIN_PASSWORD is set');
  if (e.ADMIN_PASSWORD && e.ADMIN_PASSWORD.length < 8) problems.push('ADMIN_PASSWORD: must be at least 8 characters');
  // Apple answers 403 BadJwtToken to a bad subject on every Safari push: refuse it now, not at the first send.
  const vapid = e.VAPID_SUBJECT ? checkVapidSubject(e.VAPID_SUBJECT) : undefined;
  if (vapid && 'problem' in vapid) problems.push(`VAPID_SUBJECT: ${vapid.problem} (got "${e.VAPID_SUBJECT}")`);
  if (problems.length) throw new ConfigError(problems);

  const dataDir = path.resolve(e.DATA_DIR);
  const database: Config['database'] =
    e.DATABASE_URL && !e.DATABASE_URL.startsWith('sqlite:')
      ? { kind: 'postgres', url: e.DATABASE_URL }
      : { kind: 'sqlite', file: e.DATABASE_URL ? path.resolve(e.DATABASE_URL.slice('sqlite:'.length)) : path.join(dataDir, 'herald.db') };
  const publicUrl = e.PUBLIC_URL ?? `http://localhost:${e.PORT}`;

  return {
    port: e.PORT,
    host: e.HOST,
    dataDir,
    database,
    redisUrl: e.REDIS_URL || undefined,
    publicUrl,
    vapidSubject: vapid && 'subject' in vapid ? vapid.subject : undefined,
    smtpUrl: e.SMTP_URL || undefined,
    mailFrom: e.MAIL_FROM || `Herald <no-reply@${new URL(publicUrl).hostname}>`,
    allowRegistration: e.ALLOW_REGISTRATION,
    admin: adminEmail && e.ADMIN_PASSWORD ? { email: adminEmail, password: e.ADMIN_PASSWORD, name: e.ADMIN_NAME || 'Owner' } : undefined,
    secretKey: e.SECRET_KEY || undefined,
    trustProxy: e.TRUST_PROXY,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    extraPushOrigins: e.EXTRA_PUSH_ORIGINS,
    outboundAllowHosts: e.OUTBOUND_ALLOW_HOSTS,
    rssPollIntervalSeconds: e.RSS_POLL_INTERVAL_SECONDS,
    schedulerIntervalMs: e.SCHEDULER_INTERVAL_MS,
    pushConcurrency: e.PUSH_CONCURRENCY,
    pushConnections: e.PUSH_CONNECTIONS,
    workerConcurrency: e.WORKER_CONCURRENCY,
    deliveryLeaseMs: e.DELIVERY_LEASE_SECONDS * 1000,
    deliveryRetryBaseMs: e.DELIVERY_RETRY_BASE_MS,
    deliveryMaxAttempts: e.DELIVERY_MAX_ATTEMPTS,
    pushTimeoutMs: e.PUSH_TIMEOUT_MS,
    rssFeedsPerUser: e.RSS_FEEDS_PER_USER,
    rssChecksPerUserPerHour: e.RSS_CHECKS_PER_USER_PER_HOUR,
    subscribeLimitPerSitePerMinute: e.SUBSCRIBE_LIMIT_PER_SITE_PER_MINUTE,
    subscribeLimitPerAddressPerMinute: e.SUBSCRIBE_LIMIT_PER_ADDRESS_PER_MINUTE,
    uploadQuotaBytes: e.UPLOAD_QUOTA_MB * 1024 * 1024,
    metricsPort: e.METRICS_PORT,
    metricsToken: e.METRICS_TOKEN || undefined,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_SECONDS * 1000,
    doctorPushHosts: e.DOCTOR_PUSH_HOSTS,
    auditLogRetentionDays: e.AUDIT_LOG_RETENTION_DAYS,
    deliveryRetentionDays: e.DELIVERY_RETENTION_DAYS,
    siteEventRetentionDays: e.SITE_EVENT_RETENTION_DAYS,
    feedItemRetentionDays: e.FEED_ITEM_RETENTION_DAYS,
  };
}
