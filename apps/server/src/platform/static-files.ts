import fs from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

// The dashboard's policy: no inline or third-party script (docs/security.md,
// stored XSS). Styles allow inline because chart libraries set style
// attributes; images come from anywhere because notification icons do.
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob: https: http:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export interface StaticDirs {
  web: string;
  sdk: string;
}

/** Where the built dashboard and SDK live, relative to this module (src/ in tests, dist/ when bundled). */
export function defaultStaticDirs(): StaticDirs {
  const serverRoot = path.resolve(import.meta.dirname, '..');
  const appsRoot = fs.existsSync(path.join(serverRoot, 'package.json')) ? path.resolve(serverRoot, '..') : path.resolve(serverRoot, '..', '..');
  return {
    web: path.join(appsRoot, 'web', 'dist'),
    sdk: path.join(appsRoot, '..', 'packages', 'sdk', 'dist'),
  };
}

/**
 * Serves the built React app with a history fallback (deep links such as
 * /settings load index.html) and the browser SDK under /sdk.
 */
export async function registerStaticFiles(app: FastifyInstance, dirs: StaticDirs): Promise<void> {
  const webBuilt = fs.existsSync(path.join(dirs.web, 'index.html'));
  if (webBuilt) {
    await app.register(fastifyStatic, {
      root: dirs.web,
      prefix: '/',
      wildcard: false,
      index: false,
      setHeaders(reply, filePath) {
        // Vite fingerprints everything under assets/, so it can be cached for good.
        if (filePath.includes(`${path.sep}assets${path.sep}`)) reply.header('cache-control', 'public, max-age=31536000, immutable');
      },
    });
  }
  await app.register(fastifyStatic, {
    root: fs.existsSync(dirs.sdk) ? dirs.sdk : dirs.web,
    prefix: '/sdk/',
    decorateReply: !webBuilt,
    setHeaders(reply) {
      // Customers' pages load these cross-origin.
      reply.header('access-control-allow-origin', '*');
      reply.header('cache-control', 'public, max-age=300');
    },
  });

  const indexHtml = webBuilt ? fs.readFileSync(path.join(dirs.web, 'index.html'), 'utf8') : undefined;
  app.get('/*', { schema: { hide: true } }, async (request, reply) => {
    const pathname = request.url.split('?')[0] ?? '/';
    if (pathname.startsWith('/api/') || pathname.startsWith('/sdk/') || pathname.startsWith('/uploads/') || /\.[a-z0-9]+$/i.test(pathname)) {
      return reply.status(404).send({ success: false, error: { message: `Route GET ${pathname} not found`, code: 'not_found' } });
    }
    if (!indexHtml) {
      return reply
        .status(503)
        .type('text/plain; charset=utf-8')
        .send('The Herald dashboard has not been built yet. Run `npm run build` (or `npm start`, which builds first).');
    }
    return reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(indexHtml);
  });
  app.get('/', { schema: { hide: true } }, async (_request, reply) => {
    if (!indexHtml) return reply.status(503).type('text/plain; charset=utf-8').send('The Herald dashboard has not been built yet. Run `npm run build`.');
    return reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(indexHtml);
  });
}
