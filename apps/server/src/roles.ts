import type { FastifyInstance } from 'fastify';
import { buildApp } from './app';
import { ensureOwnerAccount } from './bootstrap';
import type { Config } from './config';
import { PushClient } from './delivery/push-client';
import type { PushMetrics } from './delivery/push-client-options';
import { pushOriginPolicy } from './delivery/push-endpoints';
import { startEngine, type Engine } from './engine';
import { keepRecordingSecretFingerprint } from './features/system/secret-fingerprint';
import { startOpsServer, type ReadinessCheck } from './platform/health';
import { databaseReadiness, openRuntime } from './runtime';

export type Role = 'serve' | 'scheduler' | 'worker';

export interface RoleOptions {
  /** serve only: also run the scheduler in this process (default true). */
  scheduler?: boolean;
  /** serve only: also take delivery jobs in this process (default true). */
  worker?: boolean;
}

export function createPushClient(config: Config, metrics?: PushMetrics): PushClient {
  return new PushClient({
    concurrency: config.pushConcurrency,
    connectionsPerOrigin: config.pushConnections,
    requestTimeoutMs: config.pushTimeoutMs,
    allowOrigin: pushOriginPolicy(config.extraPushOrigins),
    metrics,
  });
}

export class RoleError extends Error {}

/**
 * Starts a process role and keeps it running until SIGTERM/SIGINT, then shuts
 * down gracefully: stop taking HTTP requests and new jobs, let the sends in
 * flight finish and be recorded, close connections.
 *   serve      API + dashboard (+ scheduler and worker unless told otherwise)
 *   scheduler  claims due work and enqueues it (also works it without Redis)
 *   worker     takes delivery jobs from Redis (needs REDIS_URL)
 */
export async function runRole(config: Config, role: Role, options: RoleOptions = {}): Promise<void> {
  if (role === 'worker' && !config.redisUrl) {
    throw new RoleError('The worker role takes jobs from Redis: set REDIS_URL (without it, `serve` runs the workers in-process).');
  }
  const runtime = await openRuntime(config);
  const { ctx } = runtime;
  // For as long as the role runs, SQLite checkpoints its WAL on another thread, so
  // no request or send waits for a checkpoint's disk syncs (docs/storage.md); closing the runtime ends it.
  ctx.holdBackgroundCheckpoints();
  const stopRecordingSecret = keepRecordingSecretFingerprint(ctx);
  let app: FastifyInstance | undefined;
  let engine: Engine | undefined;

  const withScheduler = role === 'scheduler' || (role === 'serve' && options.scheduler !== false);
  // Without Redis the in-process queue only reaches this process, so whoever enqueues must also work.
  const withWorker = role === 'worker' || (role === 'scheduler' && !config.redisUrl) || (role === 'serve' && options.worker !== false);
  if (withScheduler || withWorker) {
    engine = startEngine(ctx, { scheduler: withScheduler, worker: withWorker, pushClient: createPushClient(config, ctx.metrics) });
  }

  let stopping = false;
  const readiness: ReadinessCheck[] = [
    { name: 'running', check: async () => (stopping ? 'shutting down' : undefined) },
    ...databaseReadiness(ctx),
    ...(engine?.readiness ?? []),
  ];
  if (role === 'serve') {
    await ensureOwnerAccount(ctx);
    app = await buildApp(ctx, { readiness });
    await app.listen({ port: config.port, host: config.host });
  }
  const opsServer =
    config.metricsPort === undefined
      ? undefined
      : await startOpsServer({ host: config.host, port: config.metricsPort, log: ctx.log, readiness, metrics: ctx.metrics, exposeMetrics: true, metricsToken: config.metricsToken });
  ctx.log.info(
    `Herald ${role} started` +
      (app ? ` at ${config.publicUrl} (listening on ${config.host}:${config.port})` : '') +
      (opsServer ? `, health and metrics on ${config.host}:${config.metricsPort}` : '') +
      ` — database: ${runtime.database.kind}, queue: ${engine?.queue.kind ?? 'none'}, scheduler: ${withScheduler ? 'on' : 'off'}, worker: ${withWorker ? 'on' : 'off'}`,
  );

  // The role runs until a signal, so it holds the event loop open itself: the
  // scheduler's timer is unref'd and a scheduler may have no Redis connection
  // yet, so while PostgreSQL restarts (every pooled socket closed) nothing
  // else would, and the process would end quietly with code 0.
  const keepAlive = setInterval(() => undefined, 60 * 60_000);

  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    clearInterval(keepAlive);
    ctx.log.info(`${signal} received, shutting down`);
    stopRecordingSecret();
    // The documented bound (SHUTDOWN_TIMEOUT_SECONDS): past it the process
    // exits anyway. Pushes sent but not yet recorded are then sent again
    // after their lease, at most PUSH_CONCURRENCY of them (docs/delivery.md).
    setTimeout(() => {
      ctx.log.error(`shutdown took longer than ${config.shutdownTimeoutMs / 1000} s (SHUTDOWN_TIMEOUT_SECONDS); exiting with work unfinished, the recovery sweep resumes it`);
      process.exit(1);
    }, config.shutdownTimeoutMs).unref();
    try {
      await app?.close();
      await engine?.close();
      await opsServer?.close();
      await runtime.close();
      process.exit(0);
    } catch (error) {
      ctx.log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}
