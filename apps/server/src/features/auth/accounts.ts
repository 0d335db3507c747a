import crypto from 'node:crypto';
import type { User } from '@herald/contracts';
import type { AppContext } from '../../context';
import { isUniqueViolation } from '../../db/database';
import type { UserRow } from '../../db/schema';
import { conflict } from '../../platform/errors';
import { iso } from '../../platform/responses';
import { randomToken, sha256Hex } from '../../platform/secrets';
import * as repo from './repository';

// Creating an account and signing it in: the owner's setup, sign-up, the CLI,
// and (through this published entry point) an accepted invitation.

const SESSION_TTL_MS = 30 * 24 * 60 * 60_000;

type Db = Parameters<typeof repo.insertUser>[0];

export function toPublicUser(user: Pick<UserRow, 'id' | 'name' | 'email' | 'email_verified_at' | 'created_at'>): User {
  return {
    id: user.id,
    name: user.name,
    email: user.email,
    emailVerified: user.email_verified_at !== null,
    createdAt: iso(user.created_at),
  };
}

/** The row of a new account, its password hashed (bounded by the process's hasher). */
export async function newAccountRow(
  ctx: Pick<AppContext, 'clock' | 'passwords'>,
  input: { name: string; email: string; password: string; verified: boolean },
): Promise<UserRow> {
  const now = ctx.clock.now();
  return {
    id: crypto.randomUUID(),
    name: input.name,
    email: input.email.trim().toLowerCase(),
    password_hash: await ctx.passwords.hash(input.password),
    email_verified_at: input.verified ? now : null,
    created_at: now,
    updated_at: now,
  };
}

/** Stores the account; an address already taken answers 409. */
export async function insertAccount(db: Db, user: UserRow): Promise<void> {
  try {
    await repo.insertUser(db, user);
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict('An account with this email already exists');
    throw error;
  }
}

/** A new session of 30 days; only the token's hash is stored. */
export async function startSession(ctx: Pick<AppContext, 'clock'>, db: Db, userId: string): Promise<string> {
  const token = randomToken();
  const now = ctx.clock.now();
  await repo.insertSession(db, { token_hash: sha256Hex(token), user_id: userId, created_at: now, expires_at: now + SESSION_TTL_MS });
  return token;
}
