import { auditLogQuery, auditLogResponse, siteIdParam } from '@herald/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context';
import { currentUser, requireUser } from '../../platform/authenticate';
import { ok } from '../../platform/responses';
import { createAuditLogService } from './service';

/** The audit log (docs/product.md, "Teams"): read and export only; entries are never changed or deleted through the API. */
export function auditLogRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const audit = createAuditLogService(ctx);
    app.addHook('preHandler', requireUser(ctx));
    const tags = ['audit-log'];

    app.get(
      '/sites/:siteId/audit-log',
      {
        schema: {
          tags,
          summary: 'Who did what on the site, newest first (admin)',
          description: '`actor` is a user id, an API key id or a member’s email; `from`/`to` are dates or instants; `cursor` is the `next_cursor` of the previous page.',
          params: siteIdParam,
          querystring: auditLogQuery,
          response: { 200: auditLogResponse },
        },
      },
      async (request) => ok(await audit.list(currentUser(request).id, request.params.siteId, request.query)),
    );

    app.get(
      '/sites/:siteId/audit-log/export',
      {
        schema: {
          tags,
          summary: 'The filtered audit log as CSV (admin)',
          params: siteIdParam,
          querystring: auditLogQuery.omit({ cursor: true, limit: true }),
          response: { 200: z.string() },
        },
      },
      async (request, reply) => {
        const csv = await audit.exportCsv(currentUser(request).id, request.params.siteId, request.query);
        return reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="audit-log.csv"').send(csv);
      },
    );
  };
}
