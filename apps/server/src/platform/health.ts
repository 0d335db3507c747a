// Health, readiness and metrics routes (README, "Health and metrics"):
//   GET /healthz  the process is alive (no I/O: a stuck database must not get
//                 a healthy process restarted)
//   GET /readyz   it can do its work: the database answers, its schema is
//                 current, and, for a process with an engine, Redis answers
//                 and the queue's workers are taking jobs
//   GET /metrics  Prometheus text; on `serve`'s public port only with
//                 METRICS_TOKEN (then as a bearer token), on METRICS_PORT
//                 always (with the token when one is set)
import crypto from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { bearerToken } from './authenticate';
import type { Metrics } from './metrics';

/** One thing a ready process needs; `check` rejects (or resolves with a problem) when it is not there. */
export interface ReadinessCheck {
  name: string;
  /** Resolves with undefined when fine, or with what is wrong in a few words (never a raw error: /readyz is public). */
  check(): Promise<string | undefined>;
}

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, { ok: boolean; problem?: string }>;
}

/** A check answering within its own time: a hung database or Redis makes the process unready, not /readyz hang. */
const CHECK_TIMEOUT_MS = 3_000;

export async function readinessReport(checks: readonly ReadinessCheck[]): Promise<ReadinessReport> {
  const results = await Promise.all(
    checks.map(async (c) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve(`no answer within ${CHECK_TIMEOUT_MS / 1000} s`), CHECK_TIMEOUT_MS);
      });
      try {
        const problem = await Promise.race([c.check().catch(() => 'does not answer'), timeout]);
        return [c.name, problem === undefined ? { ok: true } : { ok: false, problem }] as const;
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return { ready: results.every(([, r]) => r.ok), checks: Object.fromEntries(results) };
}

export interface HealthRouteOptions {
  readiness: readonly ReadinessCheck[];
  metrics: Metrics;
  /** Serve /metrics at all (false on `serve`'s public port without METRICS_TOKEN). */
  exposeMetrics: boolean;
  /** METRICS_TOKEN: /metrics then needs `Authorization: Bearer <token>`. */
  metricsToken: string | undefined;
}

function tokenMatches(request: FastifyRequest, expected: string): boolean {
  const given = bearerToken(request) ?? '';
  const a = crypto.createHash('sha256').update(given).digest();
  const b = crypto.createHash('sha256').update(expected).digest();
  return crypto.timingSafeEqual(a, b);
}

export function registerHealthRoutes(app: FastifyInstance, options: HealthRouteOptions): void {
  const hidden = { schema: { hide: true } };
  app.get('/healthz', hidden, async (_request, reply) => reply.header('cache-control', 'no-store').send({ status: 'ok' }));
  app.get('/readyz', hidden, async (_request, reply) => {
    const report = await readinessReport(options.readiness);
    return reply
      .status(report.ready ? 200 : 503)
      .header('cache-control', 'no-store')
      .send(report);
  });
  app.get('/metrics', hidden, async (request: FastifyRequest, reply: FastifyReply) => {
    if (!options.exposeMetrics) {
      return reply.status(404).send({ success: false, error: { message: 'Metrics are off on this port: set METRICS_TOKEN, or METRICS_PORT for a port of their own', code: 'not_found' } });
    }
    if (options.metricsToken !== undefined && !tokenMatches(request, options.metricsToken)) {
      return reply
        .status(401)
        .header('www-authenticate', 'Bearer')
        .send({ success: false, error: { message: 'The metrics need Authorization: Bearer <METRICS_TOKEN>', code: 'unauthorized' } });
    }
    const { contentType, body } = await options.metrics.scrape();
    return reply.header('cache-control', 'no-store').type(contentType).send(body);
  });
}

/**
 * METRICS_PORT: a small HTTP server of its own with /healthz, /readyz and
 * /metrics, for the roles without an API (scheduler, worker) and for `serve`
 * when its metrics should not be on the public port.
 */
export async function startOpsServer(options: HealthRouteOptions & { host: string; port: number; log: FastifyBaseLogger }): Promise<FastifyInstance> {
  const app = Fastify({ loggerInstance: options.log, disableRequestLogging: true, requestTimeout: 10_000 });
  registerHealthRoutes(app, options);
  await app.listen({ host: options.host, port: options.port });
  return app;
}
