import type { Kysely, Transaction } from 'kysely';
import type { Database, UserRow, UserTokensTable } from '../../db/schema';

type Db = Kysely<Database> | Transaction<Database>;

export function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
}

export function findUserById(db: Db, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function countUsers(db: Db): Promise<number> {
  const row = await db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertUser(db: Db, user: UserRow): Promise<void> {
  await db.insertInto('users').values(user).execute();
}

export async function updateUser(
  db: Db,
  id: string,
  changes: Partial<Pick<UserRow, 'name' | 'email' | 'password_hash' | 'email_verified_at'>> & { updated_at: number },
): Promise<void> {
  await db.updateTable('users').set(changes).where('id', '=', id).execute();
}

export async function insertSession(db: Db, session: { token_hash: string; user_id: string; created_at: number; expires_at: number }): Promise<void> {
  await db.insertInto('sessions').values(session).execute();
}

export async function deleteSession(db: Db, tokenHash: string): Promise<void> {
  await db.deleteFrom('sessions').where('token_hash', '=', tokenHash).execute();
}

/** Ends every session of a user, optionally keeping the one making the request. */
export async function deleteSessionsOfUser(db: Db, userId: string, keepTokenHash?: string): Promise<void> {
  let query = db.deleteFrom('sessions').where('user_id', '=', userId);
  if (keepTokenHash) query = query.where('token_hash', '!=', keepTokenHash);
  await query.execute();
}

export async function insertUserToken(
  db: Db,
  token: { token_hash: string; purpose: UserTokensTable['purpose']; user_id: string | null; email: string | null; created_at: number; expires_at: number },
): Promise<void> {
  await db.insertInto('user_tokens').values({ ...token, used_at: null }).execute();
}

/** A live token of the given purpose, without using it up. */
export function findLiveUserToken(
  db: Db,
  tokenHash: string,
  purpose: UserTokensTable['purpose'],
  now: number,
): Promise<{ user_id: string | null; email: string | null } | undefined> {
  return db
    .selectFrom('user_tokens')
    .select(['user_id', 'email'])
    .where('token_hash', '=', tokenHash)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

/**
 * Marks a token used if it is live and of the given purpose, in one statement,
 * so a token can be redeemed once even by two concurrent requests.
 */
export async function consumeUserToken(
  db: Db,
  tokenHash: string,
  purpose: UserTokensTable['purpose'],
  now: number,
): Promise<{ user_id: string | null; email: string | null } | undefined> {
  const row = await db
    .updateTable('user_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['user_id', 'email'])
    .executeTakeFirst();
  return row;
}

export async function isUserTokenLive(db: Db, tokenHash: string, purpose: UserTokensTable['purpose'], now: number): Promise<boolean> {
  const row = await db
    .selectFrom('user_tokens')
    .select('token_hash')
    .where('token_hash', '=', tokenHash)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row !== undefined;
}

/** Retires a user's other live tokens of one purpose (a new reset link supersedes older ones). */
export async function expireUserTokens(db: Db, userId: string | null, purpose: UserTokensTable['purpose'], now: number): Promise<void> {
  let query = db.updateTable('user_tokens').set({ used_at: now }).where('purpose', '=', purpose).where('used_at', 'is', null);
  query = userId === null ? query.where('user_id', 'is', null) : query.where('user_id', '=', userId);
  await query.execute();
}

/** Retires every live reset and verification link of a user (their email or password changed). */
export async function expireEmailedTokensOfUser(db: Db, userId: string, now: number): Promise<void> {
  await db
    .updateTable('user_tokens')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('purpose', 'in', ['reset', 'verify'])
    .where('used_at', 'is', null)
    .execute();
}

/**
 * Sets a new password only while the account still has the address the
 * reset link was mailed to; false when it has not (or the link had none).
 */
export async function updatePasswordOfAddress(db: Db, userId: string, email: string | null, passwordHash: string, now: number): Promise<boolean> {
  if (email === null) return false;
  const result = await db
    .updateTable('users')
    .set({ password_hash: passwordHash, updated_at: now })
    .where('id', '=', userId)
    .where('email', '=', email)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Marks the address verified only if it is still the account's address; false otherwise. */
export async function markAddressVerified(db: Db, userId: string, email: string | null, now: number): Promise<boolean> {
  if (email === null) return false;
  const result = await db
    .updateTable('users')
    .set({ email_verified_at: now, updated_at: now })
    .where('id', '=', userId)
    .where('email', '=', email)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Deletes up to `limit` sessions past their expiry; returns how many. */
export async function deleteExpiredSessions(db: Db, now: number, limit: number): Promise<number> {
  const expired = db.selectFrom('sessions').select('token_hash').where('expires_at', '<=', now).limit(limit);
  const result = await db.deleteFrom('sessions').where('token_hash', 'in', expired).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Deletes up to `limit` emailed or setup tokens past their expiry (used or not); returns how many. */
export async function deleteExpiredUserTokens(db: Db, now: number, limit: number): Promise<number> {
  const expired = db.selectFrom('user_tokens').select('token_hash').where('expires_at', '<=', now).limit(limit);
  const result = await db.deleteFrom('user_tokens').where('token_hash', 'in', expired).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The user's live sessions, newest first (Profile → Sessions). */
export function listLiveSessionsOfUser(db: Db, userId: string, now: number): Promise<Array<{ token_hash: string; created_at: number; expires_at: number }>> {
  return db
    .selectFrom('sessions')
    .select(['token_hash', 'created_at', 'expires_at'])
    .where('user_id', '=', userId)
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .limit(200)
    .execute();
}

/** Ends every session of the user, this one included; returns how many there were. */
export async function deleteAllSessionsOfUser(db: Db, userId: string): Promise<number> {
  const result = await db.deleteFrom('sessions').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}
