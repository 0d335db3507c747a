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
  token: { token_hash: string; purpose: UserTokensTable['purpose']; user_id: string | null; created_at: number; expires_at: number },
): Promise<void> {
  await db.insertInto('user_tokens').values({ ...token, used_at: null }).execute();
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
): Promise<{ user_id: string | null } | undefined> {
  const row = await db
    .updateTable('user_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['user_id'])
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
