import { systemChecksResponse } from '@herald/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from '../../context';
import { currentUser, requireUser } from '../../platform/authenticate';
import { ok } from '../../platform/responses';
import { createSystemService } from './service';

/** Settings → System: the checks of `herald doctor`, read-only, for the install's owner. */
export function systemRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const system = createSystemService(ctx);
    app.addHook('preHandler', requireUser(ctx));
    app.get(
      '/system/checks',
      {
        schema: {
          tags: ['system'],
          summary: "Run herald doctor's checks (the install's owner only)",
          description:
            'Configuration (PUBLIC_URL, SECRET_KEY the same in every process, SMTP login, VAPID subjects), each push service reachable (DNS, TCP 443, TLS, with timings), database and Redis latency, clock skew against the database, disk space of DATA_DIR. Each check is ok, warn or fail with what to do. 403 for any account but the first.',
          response: { 200: systemChecksResponse },
        },
      },
      async (request) => ok(await system.checks(currentUser(request).id)),
    );
  };
}
