import crypto from 'node:crypto';
import { INVITATION_TTL_DAYS, type Invitation, type InvitationPreview, type InviteBody, type Member, type MembersList, type SiteRole, type User } from '@herald/contracts';
import type { Transaction } from 'kysely';
import type { AppContext } from '../../context';
import type { Database, SiteInvitationRow } from '../../db/schema';
import type { AuthenticatedUser } from '../../platform/authenticate';
import { rateLimitKeyOfAddress } from '../../platform/client-address';
import { HttpError, badRequest, conflict, forbidden, notFound, tooManyRequests } from '../../platform/errors';
import { DatabaseRateLimiter } from '../../platform/rate-limit';
import { iso } from '../../platform/responses';
import { randomToken, sha256Hex } from '../../platform/secrets';
import { recordAudit } from '../audit-log/record';
import { insertAccount, newAccountRow, startSession, toPublicUser } from '../auth/accounts';
import { requireSiteRole } from '../sites/service';
import { invitationMail } from './emails';
import * as repo from './repository';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const INVITATION_TTL_MS = INVITATION_TTL_DAYS * 24 * HOUR;
/** Invitation mails one user may send per hour: enough for a team, too few to use Herald as a spam relay. */
const INVITATIONS_PER_USER = { limit: 30, windowMs: HOUR };
/** Accepting as a new person hashes a password: the same flood guard as sign-up (docs/security.md, "CPU exhaustion"). */
const NEW_ACCOUNTS_PER_ADDRESS = { limit: 5, windowMs: HOUR };

const invalidLink = () => badRequest('This invitation link is invalid or has expired. Ask for a new one.', 'invitation_invalid');
const lastOwner = () => conflict('A site always keeps at least one owner: make another member owner first.');
const memberLabel = (member: { name: string; email: string }) => `${member.name} <${member.email}>`;

function toInvitation(row: { id: string; email: string; role: SiteRole; created_at: number; expires_at: number; invited_by_name: string | null }): Invitation {
  return { id: row.id, email: row.email, role: row.role, invited_by: row.invited_by_name, created_at: iso(row.created_at), expires_at: iso(row.expires_at) };
}

/**
 * Teams (docs/product.md, "Teams"; docs/security.md, "Tenancy"): members and
 * their roles, invitations by email, leaving, transferring ownership. Every
 * change of members runs in a transaction that first locks the site's members
 * (repository.lockSiteMembers) and checks again that the caller is an owner,
 * so two owners demoting each other at once cannot leave a site without one.
 */
export function createMembersService(ctx: AppContext) {
  const { db, clock, config, mailer, log } = ctx;
  const limiter = new DatabaseRateLimiter(db);

  async function limit(key: string, rule: { limit: number; windowMs: number }, message: (minutes: number) => string): Promise<void> {
    const { hits, retryAfterMs } = await limiter.hit(key, rule.windowMs, clock.now());
    if (hits > rule.limit) throw tooManyRequests(message(Math.ceil(retryAfterMs / MINUTE)), retryAfterMs / 1000);
  }

  /** Inside the members lock: the caller must still be an owner. */
  async function stillOwner(trx: Transaction<Database>, siteId: string, userId: string): Promise<void> {
    if (!(await repo.lockSiteMembers(trx, ctx.dbKind, siteId))) throw notFound('Site');
    const caller = await repo.findMember(trx, siteId, userId);
    if (!caller) throw notFound('Site');
    if (caller.role !== 'owner') throw new HttpError(403, 'This needs the owner role.', 'role_required');
  }

  async function liveInvitations(token: string) {
    const rows = await repo.findLiveInvitationsByToken(db, sha256Hex(token), clock.now());
    if (!rows.length) throw invalidLink();
    return rows;
  }

  /** Inside the transaction that uses the link: marks it used (all or nothing) and adds the memberships. */
  async function join(trx: Transaction<Database>, rows: Array<{ id: string; site_id: string; role: SiteRole }>, userId: string, now: number): Promise<string[]> {
    if ((await repo.consumeInvitations(trx, rows.map((row) => row.id), userId, now)) !== rows.length) throw invalidLink();
    for (const row of rows) {
      await repo.addMemberIfAbsent(trx, row.site_id, userId, row.role, now);
      await recordAudit(ctx, { siteId: row.site_id, actor: { userId }, action: 'member_joined', subject: { type: 'member', id: userId }, detail: { role: row.role } }, trx);
    }
    return rows.map((row) => row.site_id);
  }

  return {
    /** Every member sees who else is on the site; pending invitations (other people's addresses) only owners. */
    async list(userId: string, siteId: string): Promise<MembersList> {
      const site = await requireSiteRole(ctx, userId, siteId, 'viewer');
      const members: Member[] = (await repo.listMembers(db, siteId)).map((row) => ({
        user_id: row.user_id,
        name: row.name,
        email: row.email,
        role: row.role,
        joined_at: iso(row.created_at),
      }));
      const invitations = site.member_role === 'owner' ? (await repo.listPendingInvitations(db, siteId, clock.now())).map(toInvitation) : [];
      return { members, invitations, your_role: site.member_role };
    },

    /** One mail, one link, to this site and any other site the caller owns; a newer invitation replaces a pending one. */
    async invite(inviter: AuthenticatedUser, siteId: string, body: InviteBody): Promise<Array<Invitation & { site_id: string }>> {
      const siteIds = [...new Set([siteId, ...(body.also_site_ids ?? [])])];
      const sites = [];
      for (const id of siteIds) sites.push(await requireSiteRole(ctx, inviter.id, id, 'owner'));
      for (const site of sites) {
        if (await repo.findMemberByEmail(db, site.id, body.email)) throw conflict(`${body.email} is already a member of ${site.name}`);
      }
      await limit(`invite:user:${inviter.id}`, INVITATIONS_PER_USER, (minutes) => `You have sent many invitations this hour. Please try again in ${minutes} minute(s).`);
      const token = randomToken();
      const now = clock.now();
      const rows: SiteInvitationRow[] = sites.map((site) => ({
        id: crypto.randomUUID(),
        site_id: site.id,
        email: body.email,
        role: body.role,
        token_hash: sha256Hex(token),
        invited_by: inviter.id,
        created_at: now,
        expires_at: now + INVITATION_TTL_MS,
        accepted_at: null,
        accepted_by: null,
        revoked_at: null,
      }));
      await db.transaction().execute(async (trx) => {
        // Still an owner of each, under the members lock a removal or demotion takes: an invitation never outlives its sender's authority.
        for (const id of [...siteIds].sort()) await stillOwner(trx, id, inviter.id);
        for (const row of rows) await repo.revokePendingInvitations(trx, row.site_id, { email: row.email }, now);
        await repo.insertInvitations(trx, rows);
        for (const row of rows) {
          const subject = { type: 'invitation' as const, id: row.id, label: row.email };
          await recordAudit(ctx, { siteId: row.site_id, actor: { userId: inviter.id }, action: 'member_invited', subject, detail: { email: row.email, role: row.role } }, trx);
        }
      });
      try {
        await mailer.send(invitationMail({ to: body.email, publicUrl: config.publicUrl, token, inviter: inviter.name, sites: sites.map((site) => ({ name: site.name, role: body.role })) }));
      } catch (error) {
        log.error({ err: error }, 'sending an invitation failed');
        throw new HttpError(502, 'The invitation is saved but its email could not be sent. Check the mail settings (SMTP_URL), then invite again.', 'mail_failed');
      }
      return rows.map((row) => ({ ...toInvitation({ ...row, invited_by_name: inviter.name }), site_id: row.site_id }));
    },

    async revokeInvitation(userId: string, siteId: string, invitationId: string): Promise<void> {
      await requireSiteRole(ctx, userId, siteId, 'owner');
      await db.transaction().execute(async (trx) => {
        const revoked = await repo.revokeInvitation(trx, siteId, invitationId, clock.now());
        if (!revoked) throw notFound('Invitation');
        const subject = { type: 'invitation' as const, id: revoked.id, label: revoked.email };
        await recordAudit(ctx, { siteId, actor: { userId }, action: 'invitation_revoked', subject, detail: { email: revoked.email, role: revoked.role } }, trx);
      });
    },

    async changeRole(userId: string, siteId: string, memberId: string, role: SiteRole): Promise<Member> {
      await requireSiteRole(ctx, userId, siteId, 'owner');
      await db.transaction().execute(async (trx) => {
        await stillOwner(trx, siteId, userId);
        const member = await repo.findMember(trx, siteId, memberId);
        if (!member) throw notFound('Member');
        if (member.role === role) return;
        if (member.role === 'owner' && (await repo.countOwners(trx, siteId)) <= 1) throw lastOwner();
        await repo.setRole(trx, siteId, memberId, role, clock.now());
        // Only owners invite: what a former owner sent would outlive their authority (docs/security.md, "Teams").
        if (member.role === 'owner') await repo.revokePendingInvitations(trx, siteId, { invitedBy: memberId }, clock.now());
        const subject = { type: 'member' as const, id: memberId, label: memberLabel(member) };
        await recordAudit(ctx, { siteId, actor: { userId }, action: 'role_changed', subject, detail: { from: member.role, to: role } }, trx);
      });
      const member = (await repo.findMember(db, siteId, memberId))!;
      const joined = (await repo.listMembers(db, siteId)).find((row) => row.user_id === memberId)!;
      return { user_id: member.user_id, name: member.name, email: member.email, role: member.role, joined_at: iso(joined.created_at) };
    },

    async remove(userId: string, siteId: string, memberId: string): Promise<void> {
      await requireSiteRole(ctx, userId, siteId, 'owner');
      await db.transaction().execute(async (trx) => {
        await stillOwner(trx, siteId, userId);
        const member = await repo.findMember(trx, siteId, memberId);
        if (!member) throw notFound('Member');
        if (member.role === 'owner' && (await repo.countOwners(trx, siteId)) <= 1) throw lastOwner();
        await repo.deleteMember(trx, siteId, memberId);
        await repo.revokePendingInvitations(trx, siteId, { invitedBy: memberId }, clock.now());
        const subject = { type: 'member' as const, id: memberId, label: memberLabel(member) };
        const action = memberId === userId ? 'member_left' : 'member_removed';
        await recordAudit(ctx, { siteId, actor: { userId }, action, subject, detail: { role: member.role } }, trx);
      });
    },

    /** Any member may leave, except a site's only owner (who transfers ownership first, or deletes the site). */
    async leave(userId: string, siteId: string): Promise<void> {
      await requireSiteRole(ctx, userId, siteId, 'viewer');
      await db.transaction().execute(async (trx) => {
        if (!(await repo.lockSiteMembers(trx, ctx.dbKind, siteId))) throw notFound('Site');
        const member = await repo.findMember(trx, siteId, userId);
        if (!member) throw notFound('Site');
        if (member.role === 'owner' && (await repo.countOwners(trx, siteId)) <= 1) {
          throw conflict('You are the only owner of this site: transfer ownership to another member before you leave.');
        }
        await repo.deleteMember(trx, siteId, userId);
        await repo.revokePendingInvitations(trx, siteId, { invitedBy: userId }, clock.now());
        const subject = { type: 'member' as const, id: userId, label: memberLabel(member) };
        await recordAudit(ctx, { siteId, actor: { userId }, action: 'member_left', subject, detail: { role: member.role } }, trx);
      });
    },

    /** The member becomes an owner (and the site's account); the caller stays on as admin. */
    async transferOwnership(userId: string, siteId: string, memberId: string): Promise<void> {
      await requireSiteRole(ctx, userId, siteId, 'owner');
      if (memberId === userId) throw badRequest('Choose another member to transfer the ownership to.');
      await db.transaction().execute(async (trx) => {
        await stillOwner(trx, siteId, userId);
        const member = await repo.findMember(trx, siteId, memberId);
        if (!member) throw notFound('Member');
        const now = clock.now();
        await repo.setRole(trx, siteId, memberId, 'owner', now);
        await repo.setRole(trx, siteId, userId, 'admin', now);
        await repo.revokePendingInvitations(trx, siteId, { invitedBy: userId }, now);
        await repo.setSiteAccount(trx, siteId, memberId, now);
        const subject = { type: 'member' as const, id: memberId, label: memberLabel(member) };
        await recordAudit(ctx, { siteId, actor: { userId }, action: 'ownership_transferred', subject, detail: { from: userId, to: memberId } }, trx);
      });
    },

    // ---- The invitation link

    /** What the invitation page shows: the invited address, the sites and roles, whether that address has an account. */
    async preview(token: string): Promise<InvitationPreview> {
      const rows = await liveInvitations(token);
      const email = rows[0]!.email;
      return {
        email,
        sites: rows.map((row) => ({ name: row.site_name, role: row.role })),
        invited_by: rows[0]!.invited_by_name,
        has_account: (await repo.findUserByEmail(db, email)) !== undefined,
        expires_at: iso(Math.min(...rows.map((row) => row.expires_at))),
      };
    },

    /** Signed in: only the account with the invited address may use the link. */
    async accept(user: AuthenticatedUser, token: string): Promise<string[]> {
      const rows = await liveInvitations(token);
      if (rows[0]!.email !== user.email) {
        throw forbidden(`This invitation was sent to ${rows[0]!.email}. Sign in with that address to accept it.`);
      }
      return db.transaction().execute((trx) => join(trx, rows, user.id, clock.now()));
    },

    /**
     * A person without an account sets a name and password with the link
     * (open even while sign-up is closed: the link proves the address, so the
     * account starts verified).
     */
    async acceptAsNew(input: { token: string; name: string; password: string }, clientAddress: string): Promise<{ site_ids: string[]; token: string; user: User }> {
      await limit(`invite-accept:address:${rateLimitKeyOfAddress(clientAddress)}`, NEW_ACCOUNTS_PER_ADDRESS, (minutes) => `Too many requests from your network. Please try again in ${minutes} minute(s).`);
      const rows = await liveInvitations(input.token);
      const email = rows[0]!.email;
      if (await repo.findUserByEmail(db, email)) throw conflict('An account with this email already exists: sign in to accept the invitation.');
      const account = await newAccountRow(ctx, { name: input.name, email, password: input.password, verified: true });
      return db.transaction().execute(async (trx) => {
        await insertAccount(trx, account);
        const siteIds = await join(trx, rows, account.id, clock.now());
        return { site_ids: siteIds, token: await startSession(ctx, trx, account.id), user: toPublicUser(account) };
      });
    },
  };
}
