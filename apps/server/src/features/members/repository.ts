// SQL of the members feature: site members, their roles, invitations.
import type { SiteRole } from '@herald/contracts';
import type { Kysely, Transaction } from 'kysely';
import type { DatabaseKind } from '../../db/database';
import type { Database, SiteInvitationRow } from '../../db/schema';

type Db = Kysely<Database> | Transaction<Database>;

export function listMembers(db: Db, siteId: string) {
  return db
    .selectFrom('site_members')
    .innerJoin('users', 'users.id', 'site_members.user_id')
    .select(['site_members.user_id', 'site_members.role', 'site_members.created_at', 'users.name', 'users.email'])
    .where('site_members.site_id', '=', siteId)
    .orderBy('site_members.created_at', 'asc')
    .orderBy('site_members.user_id')
    .execute();
}

export function findMember(db: Db, siteId: string, userId: string) {
  return db
    .selectFrom('site_members')
    .innerJoin('users', 'users.id', 'site_members.user_id')
    .select(['site_members.user_id', 'site_members.role', 'users.name', 'users.email'])
    .where('site_members.site_id', '=', siteId)
    .where('site_members.user_id', '=', userId)
    .executeTakeFirst();
}

export function findMemberByEmail(db: Db, siteId: string, email: string) {
  return db
    .selectFrom('site_members')
    .innerJoin('users', 'users.id', 'site_members.user_id')
    .select(['site_members.user_id'])
    .where('site_members.site_id', '=', siteId)
    .where('users.email', '=', email)
    .executeTakeFirst();
}

/**
 * Serialises the member changes of one site: PostgreSQL locks the site row
 * until the transaction ends; SQLite runs one write transaction at a time
 * anyway. Answers whether the site still exists.
 */
export async function lockSiteMembers(trx: Transaction<Database>, kind: DatabaseKind, siteId: string): Promise<boolean> {
  const query = trx.selectFrom('sites').select('id').where('id', '=', siteId);
  return (await (kind === 'postgres' ? query.forUpdate() : query).executeTakeFirst()) !== undefined;
}

export async function countOwners(db: Db, siteId: string): Promise<number> {
  const row = await db.selectFrom('site_members').select((eb) => eb.fn.countAll<number>().as('count')).where('site_id', '=', siteId).where('role', '=', 'owner').executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function setRole(db: Db, siteId: string, userId: string, role: SiteRole, now: number): Promise<boolean> {
  const result = await db.updateTable('site_members').set({ role, updated_at: now }).where('site_id', '=', siteId).where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteMember(db: Db, siteId: string, userId: string): Promise<boolean> {
  const result = await db.deleteFrom('site_members').where('site_id', '=', siteId).where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Adds the member; someone already a member keeps the role they have (an owner removes and invites again to change it, or changes the role). */
export async function addMemberIfAbsent(db: Db, siteId: string, userId: string, role: SiteRole, now: number): Promise<void> {
  await db
    .insertInto('site_members')
    .values({ site_id: siteId, user_id: userId, role, created_at: now, updated_at: now })
    .onConflict((oc) => oc.columns(['site_id', 'user_id']).doNothing())
    .execute();
}

/** The account the site counts against (RSS_FEEDS_PER_USER, the VAPID contact): follows ownership transfers. */
export async function setSiteAccount(db: Db, siteId: string, userId: string, now: number): Promise<void> {
  await db.updateTable('sites').set({ user_id: userId, updated_at: now }).where('id', '=', siteId).execute();
}

export function findUserByEmail(db: Db, email: string) {
  return db.selectFrom('users').select(['id', 'name', 'email']).where('email', '=', email).executeTakeFirst();
}

// ---- Invitations

export async function insertInvitations(db: Db, rows: SiteInvitationRow[]): Promise<void> {
  if (rows.length) await db.insertInto('site_invitations').values(rows).execute();
}

/**
 * Voids a site's pending invitations: those to an address, when a new one is
 * sent (only the newest link works), or those a member sent, when they lose
 * the owner's authority they were sent with.
 */
export async function revokePendingInvitations(db: Db, siteId: string, which: { email: string } | { invitedBy: string }, now: number): Promise<void> {
  await db
    .updateTable('site_invitations')
    .set({ revoked_at: now })
    .where('site_id', '=', siteId)
    .where((eb) => ('email' in which ? eb('email', '=', which.email) : eb('invited_by', '=', which.invitedBy)))
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .execute();
}

export function listPendingInvitations(db: Db, siteId: string, now: number) {
  return db
    .selectFrom('site_invitations')
    .leftJoin('users', 'users.id', 'site_invitations.invited_by')
    .select(['site_invitations.id', 'site_invitations.email', 'site_invitations.role', 'site_invitations.created_at', 'site_invitations.expires_at', 'users.name as invited_by_name'])
    .where('site_invitations.site_id', '=', siteId)
    .where('site_invitations.accepted_at', 'is', null)
    .where('site_invitations.revoked_at', 'is', null)
    .where('site_invitations.expires_at', '>', now)
    .orderBy('site_invitations.created_at', 'desc')
    .limit(500)
    .execute();
}

export async function revokeInvitation(db: Db, siteId: string, invitationId: string, now: number) {
  return db
    .updateTable('site_invitations')
    .set({ revoked_at: now })
    .where('id', '=', invitationId)
    .where('site_id', '=', siteId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['id', 'email', 'role'])
    .executeTakeFirst();
}

/** The still-usable rows of a link, with their sites' names and who sent them. */
export function findLiveInvitationsByToken(db: Db, tokenHash: string, now: number) {
  return db
    .selectFrom('site_invitations')
    .innerJoin('sites', 'sites.id', 'site_invitations.site_id')
    .leftJoin('users', 'users.id', 'site_invitations.invited_by')
    .select([
      'site_invitations.id',
      'site_invitations.site_id',
      'site_invitations.email',
      'site_invitations.role',
      'site_invitations.expires_at',
      'sites.name as site_name',
      'users.name as invited_by_name',
    ])
    .where('site_invitations.token_hash', '=', tokenHash)
    .where('site_invitations.accepted_at', 'is', null)
    .where('site_invitations.revoked_at', 'is', null)
    .where('site_invitations.expires_at', '>', now)
    .orderBy('sites.name')
    .execute();
}

/** Marks the link's rows used, only if they still are usable: of two accepts at once, one wins. */
export async function consumeInvitations(db: Db, ids: string[], userId: string, now: number): Promise<number> {
  if (!ids.length) return 0;
  const result = await db
    .updateTable('site_invitations')
    .set({ accepted_at: now, accepted_by: userId })
    .where('id', 'in', ids)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
