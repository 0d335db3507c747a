import fs from 'node:fs';
import fastifyMultipart from '@fastify/multipart';
import { idParam, UPLOAD_FIELD_NAME, uploadDeletedResponse, uploadImageResponse, uploadsListQuery, uploadsListResponse } from '@herald/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context';
import { currentUser, requireUser } from '../../platform/authenticate';
import { tooManyRequests } from '../../platform/errors';
import { MemoryRateLimiter } from '../../platform/memory-rate-limiter';
import { ok } from '../../platform/responses';
import { MULTIPART_LIMITS, readImagePart } from './image-part';
import { createUploadsService } from './service';

/** Uploads per user and hour, per process: enough for any editing session, not for filling the disk. */
const UPLOADS_PER_USER_PER_HOUR = 100;

/**
 * Spec §7 Upload: POST /api/upload/image (multipart, field `image`) → data.url;
 * and the caller's own uploads: GET /api/uploads, DELETE /api/uploads/{id}
 * (docs/security.md, "Abuse limits"). Mounted under /api.
 */
export function uploadsRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const uploads = createUploadsService(ctx);
    const perUser = new MemoryRateLimiter({ limit: UPLOADS_PER_USER_PER_HOUR, windowMs: 3_600_000, maxKeys: 10_000 });
    await app.register(fastifyMultipart, { limits: MULTIPART_LIMITS });

    app.post(
      '/upload/image',
      {
        preHandler: requireUser(ctx),
        schema: {
          tags: ['uploads'],
          summary: 'Upload a notification image or icon (JPEG, PNG, GIF or WebP, at most 5MB)',
          description: `multipart/form-data with the file in the field \`${UPLOAD_FIELD_NAME}\`. The type is decided by the file's bytes; SVG and HTML-bearing files are refused, as are images over 10,000 px a side or 40 megapixels. \`data.url\` is absolute (PUBLIC_URL/uploads/<file>).`,
          consumes: ['multipart/form-data'],
          response: { 201: uploadImageResponse },
        },
      },
      async (request, reply) => {
        const user = currentUser(request);
        const limit = perUser.hit(user.id, ctx.clock.now());
        if (!limit.allowed) {
          const seconds = Math.ceil(limit.retryAfterMs / 1000);
          throw tooManyRequests(`Too many uploads. Please try again in ${Math.ceil(seconds / 60)} minutes.`, seconds);
        }
        const bytes = await readImagePart(request);
        return reply.status(201).send(ok(await uploads.storeImage(user.id, bytes)));
      },
    );

    app.get(
      '/uploads',
      {
        preHandler: requireUser(ctx),
        schema: {
          tags: ['uploads'],
          summary: "The caller's uploads, newest first, with the storage they use and their quota (UPLOAD_QUOTA_MB)",
          querystring: uploadsListQuery,
          response: { 200: uploadsListResponse },
        },
      },
      async (request) => ok(await uploads.list(currentUser(request).id, request.query)),
    );

    app.delete(
      '/uploads/:id',
      {
        preHandler: requireUser(ctx),
        schema: {
          tags: ['uploads'],
          summary: "Delete one of the caller's uploads (file and record)",
          description:
            "Another user's upload answers 404. 409 while a notification that can still send, a welcome campaign, an RSS feed or a site of the caller uses the image.",
          params: idParam,
          response: { 200: uploadDeletedResponse },
        },
      },
      async (request) => {
        await uploads.remove(currentUser(request).id, request.params.id);
        return ok({ deleted: true as const });
      },
    );
  };
}

// Uploaded files are served to anyone (subscribers' browsers show them in
// notifications) as inert images: the detected type, no sniffing, and a CSP
// that gives a document opened from here no script, no plugins and a unique
// origin. Names are random UUIDs and never reused, so they cache for good.
const UPLOAD_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; sandbox",
  'cross-origin-resource-policy': 'cross-origin',
} as const;

/**
 * GET /uploads/<file>, outside /api: register this plugin on the root app
 * (app.ts), next to the API, without a prefix.
 */
export function uploadedFilesRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const uploads = createUploadsService(ctx);
    // Runs after the app-wide onSend hook, so these replace the dashboard's CSP.
    app.addHook('onSend', async (_request, reply, payload) => {
      void reply.headers(UPLOAD_HEADERS);
      return payload;
    });

    app.get(
      '/uploads/:file',
      { schema: { hide: true, params: z.object({ file: z.string().max(200) }) } },
      async (request, reply) => {
        const file = await uploads.findFile(request.params.file);
        return reply
          .type(file.contentType)
          .header('content-length', String(file.byteSize))
          .header('cache-control', 'public, max-age=31536000, immutable')
          .send(fs.createReadStream(file.filePath));
      },
    );
  };
}
