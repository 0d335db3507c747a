import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

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

/** One built file, read into memory at start. */
interface BuiltFile {
  body: Buffer;
  contentType: string;
  etag: string;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
};

/** Files under `root` by URL path (`/assets/index-abc.js`). */
function readTree(root: string): Map<string, BuiltFile> {
  const files = new Map<string, BuiltFile>();
  const walk = (dir: string, prefix: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full, `${prefix}${entry.name}/`);
      else if (entry.isFile()) {
        const body = fs.readFileSync(full);
        files.set(`${prefix}${entry.name}`, {
          body,
          contentType: CONTENT_TYPES[path.extname(entry.name).toLowerCase()] ?? 'application/octet-stream',
          etag: `"${crypto.createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
        });
      }
    }
  };
  walk(root, '/');
  return files;
}

/** Paths index.html loads from this build (`/assets/…`): they must be in the same build. */
function referencedAssets(indexHtml: string): string[] {
  return [...indexHtml.matchAll(/(?:src|href)="(\/assets\/[^"?#]+)"/g)].map((m) => m[1]!);
}

export class StaticBuildError extends Error {}

const READ_ATTEMPTS = 5;
const READ_PAUSE_MS = 500;

/** What makes a build folder complete: the file everything starts from, and (dashboard) the assets it loads. */
interface BuildSpec {
  /** "dashboard" or "SDK", for the message. */
  what: string;
  /** The URL path that must be there (`/index.html`, `/herald.js`). */
  entry: string;
  /** What is wrong with a build that has its entry, or undefined. */
  check?(files: Map<string, BuiltFile>, entry: BuiltFile): string | undefined;
}

/**
 * Reads a build folder into memory, checking it is complete. No folder at all
 * is "not built" (an empty map: the dashboard answers 503 saying so). A
 * folder without its entry file is a build being written (Vite empties
 * `dist/` first) or an interrupted one: serving it would answer "not built
 * yet" or 404 for as long as the process runs while /readyz said 200, so it
 * is read again a few times, then refused with a message that says what to do.
 */
async function readBuild(dir: string, spec: BuildSpec, attempts: number, pauseMs: number): Promise<Map<string, BuiltFile>> {
  let problem = '';
  let missingEntry = false;
  let seen = false;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    if (!fs.existsSync(dir)) {
      // Never there: not built. Gone since the last attempt: being replaced.
      if (!seen) return new Map();
      missingEntry = true;
    } else {
      seen = true;
      try {
        const files = readTree(dir);
        const entry = files.get(spec.entry);
        missingEntry = !entry;
        if (entry) {
          problem = spec.check?.(files, entry) ?? '';
          if (!problem) return files;
        }
      } catch (error) {
        missingEntry = false;
        problem = `${(error as NodeJS.ErrnoException).code ?? 'error'}: ${(error as Error).message}`;
      }
    }
    if (attempt < attempts) await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
  if (missingEntry) {
    throw new StaticBuildError(
      `The ${spec.what} build in ${dir} has no ${spec.entry.slice(1)}: a build is still being written there, or one was interrupted. Wait for \`npm run build\` to finish (or run it again), then start Herald again.`,
    );
  }
  throw new StaticBuildError(`The ${spec.what} build in ${dir} changed while Herald was reading it (${problem}). Wait for \`npm run build\` to finish, then start Herald again.`);
}

const WEB_BUILD: BuildSpec = {
  what: 'dashboard',
  entry: '/index.html',
  check(files, index) {
    const missing = referencedAssets(index.body.toString('utf8')).filter((asset) => !files.has(asset));
    return missing.length ? `index.html loads ${missing.join(', ')}, which ${missing.length === 1 ? 'is' : 'are'} not in the build` : undefined;
  },
};

const SDK_BUILD: BuildSpec = { what: 'SDK', entry: '/herald.js' };

/**
 * Reads the whole dashboard build once (issue 17, 7d): served from memory,
 * a build replaced while Herald runs cannot make it crash on a vanished
 * index.html or answer an index.html whose scripts are gone. A build caught
 * half-replaced at start (index.html missing, a file vanished, or index.html
 * names assets that are not there) is read again a few times, then refused
 * with a message that says what to do.
 */
export function readWebBuild(dir: string, attempts = READ_ATTEMPTS, pauseMs = READ_PAUSE_MS): Promise<Map<string, BuiltFile>> {
  return readBuild(dir, WEB_BUILD, attempts, pauseMs);
}

/** The browser SDK (`/sdk/`), read the same way: a folder without herald.js is waited for, then refused. */
export function readSdkBuild(dir: string, attempts = READ_ATTEMPTS, pauseMs = READ_PAUSE_MS): Promise<Map<string, BuiltFile>> {
  return readBuild(dir, SDK_BUILD, attempts, pauseMs);
}

function sendBuilt(request: FastifyRequest, reply: FastifyReply, file: BuiltFile, cacheControl: string): FastifyReply {
  reply.header('etag', file.etag).header('cache-control', cacheControl);
  if (request.headers['if-none-match'] === file.etag) return reply.status(304).send();
  return reply.type(file.contentType).send(file.body);
}

/**
 * Serves the built React app with a history fallback (deep links such as
 * /settings load index.html) and the browser SDK under /sdk, both from
 * memory (read once here).
 */
export async function registerStaticFiles(app: FastifyInstance, dirs: StaticDirs): Promise<void> {
  const [web, sdk] = await Promise.all([readWebBuild(dirs.web), readSdkBuild(dirs.sdk)]);
  const indexHtml = web.get('/index.html');

  const notFound = (reply: FastifyReply, pathname: string) =>
    reply.status(404).send({ success: false, error: { message: `Route GET ${pathname} not found`, code: 'not_found' } });
  const sendIndex = (request: FastifyRequest, reply: FastifyReply) => {
    if (!indexHtml) {
      return reply
        .status(503)
        .type('text/plain; charset=utf-8')
        .send('The Herald dashboard has not been built yet. Run `npm run build` (or `npm start`, which builds first).');
    }
    return sendBuilt(request, reply, indexHtml, 'no-cache');
  };

  app.get('/sdk/*', { schema: { hide: true } }, async (request, reply) => {
    const pathname = request.url.split('?')[0] ?? '/';
    const file = sdk.get(pathname.slice('/sdk'.length));
    if (!file) return notFound(reply, pathname);
    // Customers' pages load these cross-origin.
    reply.header('access-control-allow-origin', '*');
    return sendBuilt(request, reply, file, 'public, max-age=300');
  });
  app.get('/*', { schema: { hide: true } }, async (request, reply) => {
    const pathname = request.url.split('?')[0] ?? '/';
    if (pathname === '/index.html') return sendIndex(request, reply);
    const file = web.get(pathname);
    // Vite fingerprints everything under assets/, so it can be cached for good.
    if (file) return sendBuilt(request, reply, file, pathname.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'public, max-age=0');
    if (pathname.startsWith('/api/') || pathname.startsWith('/sdk/') || pathname.startsWith('/uploads/') || /\.[a-z0-9]+$/i.test(pathname)) {
      return notFound(reply, pathname);
    }
    return sendIndex(request, reply);
  });
  app.get('/', { schema: { hide: true } }, async (request, reply) => sendIndex(request, reply));
}
