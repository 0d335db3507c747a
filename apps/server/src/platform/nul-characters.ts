import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest } from './errors';

// PostgreSQL text cannot hold U+0000: a parameter carrying it makes the query
// fail (SQLSTATE 22021), which answered 500 wherever a path id, query value
// or body string reached the database (found by the security fuzz tests).
// No name, title, id or tag has a use for it, so it is refused up front, the
// same way on SQLite and PostgreSQL.

/** True when a string, or any string or key inside a parsed JSON value, holds U+0000. Iterative: nesting depth cannot overflow the stack. */
export function containsNulCharacter(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length) {
    const current = pending.pop();
    if (typeof current === 'string') {
      if (current.includes('\u0000')) return true;
    } else if (Array.isArray(current)) {
      for (const item of current) pending.push(item);
    } else if (current !== null && typeof current === 'object' && !Buffer.isBuffer(current)) {
      for (const [key, item] of Object.entries(current)) {
        if (key.includes('\u0000')) return true;
        pending.push(item);
      }
    }
  }
  return false;
}

/** Refuses (400) a request whose path parameters, query string or JSON body hold U+0000, before any route touches the database. */
export function registerNulCharacterGuard(app: FastifyInstance): void {
  app.addHook('preHandler', async (request: FastifyRequest) => {
    if (containsNulCharacter(request.params) || containsNulCharacter(request.query) || containsNulCharacter(request.body)) {
      throw badRequest('Text must not contain NUL characters (U+0000)', 'invalid_request');
    }
  });
}
