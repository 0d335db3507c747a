import type { FastifyInstance } from 'fastify';
import { ensureOwnerAccount } from './bootstrap';
import type { Config } from './config';
import type { AppContext } from './context';
import { openRuntime } from './runtime';

/** The `serve` role: HTTP on HOST:PORT, with graceful shutdown on SIGTERM/SIGINT. */
export async function bootstrapServe(config: Config, buildApp: (ctx: AppContext) => Promise<FastifyInstance>): Promise<void> {
  const runtime = await openRuntime(config);
  const { ctx } = runtime;
  await ensureOwnerAccount(ctx);
  const app = await buildApp(ctx);
  await app.listen({ port: config.port, host: config.host });
  ctx.log.info(`Herald is running at ${config.publicUrl} (listening on ${config.host}:${config.port}, database: ${runtime.database.kind})`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    ctx.log.info(`${signal} received, shutting down`);
    try {
      await app.close();
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
