import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context';
import { unauthorized } from './errors';
import { sha256Hex } from './secrets';

export interface AuthenticatedUser {
  id: string;
  name: string;
  email: string;
  emailVerifiedAt: number | null;
  createdAt: number;
  sessionTokenHash: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    user?: AuthenticatedUser;
  }
}

/** Reads `Authorization: Bearer <token>` and loads the session's user (spec §6). */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match?.[1];
}

/** A preHandler that answers 401 unless the request carries a live session token. */
export function requireUser(ctx: AppContext) {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const token = bearerToken(request);
    if (!token || token.length > 200) throw unauthorized();
    const tokenHash = sha256Hex(token);
    const row = await ctx.db
      .selectFrom('sessions')
      .innerJoin('users', 'users.id', 'sessions.user_id')
      .select(['users.id', 'users.name', 'users.email', 'users.email_verified_at', 'users.created_at', 'sessions.expires_at'])
      .where('sessions.token_hash', '=', tokenHash)
      .executeTakeFirst();
    if (!row || row.expires_at <= ctx.clock.now()) throw unauthorized('Your session has expired. Please sign in again.');
    request.user = {
      id: row.id,
      name: row.name,
      email: row.email,
      emailVerifiedAt: row.email_verified_at,
      createdAt: row.created_at,
      sessionTokenHash: tokenHash,
    };
  };
}

/** The signed-in user of a route guarded by requireUser. */
export function currentUser(request: FastifyRequest): AuthenticatedUser {
  if (!request.user) throw unauthorized();
  return request.user;
}
