import { Readable } from 'node:stream';
import fastifyMultipart from '@fastify/multipart';
import { siteIdParam, subscriberImportParams, subscriberImportResponse, subscriberImportsResponse } from '@herald/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from '../../context';
import { currentUser, requireUser } from '../../platform/authenticate';
import { ok } from '../../platform/responses';
import { importUploadReader } from './import-upload';
import { createSubscriberImportsService } from './service';

/** Settings → Import: subscribers from another push platform (docs/product.md, "Importing subscribers"). Admins and owners. */
export function subscriberImportsRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const imports = createSubscriberImportsService(ctx);
    await app.register(fastifyMultipart);
    app.addHook('preHandler', requireUser(ctx));
    const tags = ['subscriber-imports'];

    app.post(
      '/sites/:siteId/subscriber-imports',
      {
        schema: {
          tags,
          summary: 'Import subscribers from a CSV or JSON Lines file (read in the background)',
          description:
            'multipart/form-data: `file` (CSV with a header row, or JSON Lines, with the fields endpoint, p256dh, auth, vapid_public_key, created_at, browser, os, country, language, timezone, tags (joined with |), external_id; at most 1 GB, else 413), `vapid_key_id` (the site key rows without vapid_public_key were subscribed with; default the primary key), `enrol_in_welcome_campaign` ("true"/"false", default false). Answers 201 with the queued import; poll GET /subscriber-imports/{importId} for progress.',
          consumes: ['multipart/form-data'],
          params: siteIdParam,
          response: { 201: subscriberImportResponse },
        },
      },
      async (request, reply) => reply.status(201).send(ok({ import: await imports.create(currentUser(request).id, request.params.siteId, importUploadReader(request)) })),
    );

    app.get(
      '/sites/:siteId/subscriber-imports',
      { schema: { tags, summary: 'The site’s last 20 imports, newest first', params: siteIdParam, response: { 200: subscriberImportsResponse } } },
      async (request) => ok({ imports: await imports.list(currentUser(request).id, request.params.siteId) }),
    );

    app.get(
      '/subscriber-imports/:importId',
      { schema: { tags, summary: 'One import: status and progress', params: subscriberImportParams, response: { 200: subscriberImportResponse } } },
      async (request) => ok({ import: await imports.get(currentUser(request).id, request.params.importId) }),
    );

    app.get(
      '/subscriber-imports/:importId/report',
      {
        schema: {
          tags,
          summary: 'The rejected rows as CSV: line, reason, detail, endpoint',
          description: 'line is the row’s line number in the file; reason one of bad_row, bad_key, endpoint_not_allowed, duplicate, unknown_vapid_key, inactive. Cells a spreadsheet would run as a formula get a leading apostrophe.',
          params: subscriberImportParams,
          produces: ['text/csv'],
        },
      },
      async (request, reply) => {
        const file = await imports.report(currentUser(request).id, request.params.importId);
        return reply
          .header('content-type', 'text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${file.fileName}"`)
          .header('cache-control', 'no-store')
          .send(Readable.from(file.lines));
      },
    );
  };
}
