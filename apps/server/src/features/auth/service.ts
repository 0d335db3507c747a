import crypto from 'node:crypto';
import type { User } from '@herald/contracts';
import type { AppContext } from '../../context';
import { isUniqueViolation } from '../../db/database';
import type { UserRow } from '../../db/schema';
import type { AuthenticatedUser } from '../../platform/authenticate';
import { rateLimitKeyOfAddress } from '../../platform/client-address';
import { badRequest, conflict, forbidden, tooManyRequests, unauthorized } from '../../platform/errors';
import { burnPasswordCheck, hashPassword, verifyPassword } from '../../platform/passwords';
import { DatabaseRateLimiter } from '../../platform/rate-limit';
import { iso } from '../../platform/responses';
import { randomToken, sha256Hex } from '../../platform/secrets';
import { passwordResetMail, verificationMail } from './emails';
import * as repo from './repository';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const SESSION_TTL_MS = 30 * 24 * HOUR;
const RESET_TTL_MS = 1 * HOUR; // docs/security.md: reset ≤ 1 h
const VERIFY_TTL_MS = 24 * HOUR;
const SETUP_TTL_MS = 24 * HOUR;
const LOGIN_WINDOW_MS = 15 * MINUTE;
const LOGIN_FAILURES_PER_ACCOUNT = 10;
const LOGIN_FAILURES_PER_ADDRESS = 50;
const MAILS_PER_ACCOUNT_PER_HOUR = 5;

export const FORGOT_PASSWORD_MESSAGE = 'If an account exists for that email, a password reset link has been sent.';

export function toPublicUser(user: Pick<UserRow, 'id' | 'name' | 'email' | 'email_verified_at' | 'created_at'>): User {
  return {
    id: user.id,
    name: user.name,
    email: user.email,
    emailVerified: user.email_verified_at !== null,
    createdAt: iso(user.created_at),
  };
}

export function createAuthService(ctx: AppContext) {
  const { db, clock, config, mailer, log } = ctx;
  const limiter = new DatabaseRateLimiter(db);

  async function startSession(userId: string): Promise<string> {
    const token = randomToken();
    const now = clock.now();
    await repo.insertSession(db, { token_hash: sha256Hex(token), user_id: userId, created_at: now, expires_at: now + SESSION_TTL_MS });
    return token;
  }

  async function issueToken(userId: string | null, purpose: 'reset' | 'verify' | 'setup', ttlMs: number): Promise<string> {
    const token = randomToken();
    const now = clock.now();
    await repo.insertUserToken(db, { token_hash: sha256Hex(token), purpose, user_id: userId, created_at: now, expires_at: now + ttlMs });
    return token;
  }

  /** Mail failures are logged, never shown: they must not reveal whether an account exists. */
  function sendInBackground(work: () => Promise<void>): void {
    work().catch((error: unknown) => log.error({ err: error }, 'sending mail failed'));
  }

  async function sendVerification(user: Pick<UserRow, 'id' | 'email'>): Promise<void> {
    const token = await issueToken(user.id, 'verify', VERIFY_TTL_MS);
    await mailer.send(verificationMail(user.email, config.publicUrl, token));
  }

  async function createUser(input: { name: string; email: string; password: string; verified: boolean }): Promise<UserRow> {
    const now = clock.now();
    const user: UserRow = {
      id: crypto.randomUUID(),
      name: input.name,
      email: input.email.trim().toLowerCase(),
      password_hash: await hashPassword(input.password),
      email_verified_at: input.verified ? now : null,
      created_at: now,
      updated_at: now,
    };
    try {
      await repo.insertUser(db, user);
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict('An account with this email already exists');
      throw error;
    }
    return user;
  }

  return {
    createUser,

    async login(email: string, password: string, clientAddress: string): Promise<{ user: User; token: string }> {
      const now = clock.now();
      const accountKey = `login:account:${email}`;
      // Per /64 for IPv6 (a client owns the whole prefix and can rotate through it), per address for IPv4.
      const addressKey = `login:address:${rateLimitKeyOfAddress(clientAddress)}`;
      const [account, address] = await Promise.all([
        limiter.current(accountKey, LOGIN_WINDOW_MS, now),
        limiter.current(addressKey, LOGIN_WINDOW_MS, now),
      ]);
      if (account.hits >= LOGIN_FAILURES_PER_ACCOUNT || address.hits >= LOGIN_FAILURES_PER_ADDRESS) {
        const wait = Math.max(account.retryAfterMs, address.retryAfterMs);
        throw tooManyRequests(`Too many failed sign-in attempts. Please try again in ${Math.ceil(wait / MINUTE)} minute(s).`, wait / 1000);
      }
      const user = await repo.findUserByEmail(db, email);
      const valid = user ? await verifyPassword(user.password_hash, password) : (await burnPasswordCheck(password), false);
      if (!user || !valid) {
        await Promise.all([limiter.hit(accountKey, LOGIN_WINDOW_MS, now), limiter.hit(addressKey, LOGIN_WINDOW_MS, now)]);
        throw unauthorized('Invalid email or password');
      }
      await limiter.reset(accountKey);
      return { user: toPublicUser(user), token: await startSession(user.id) };
    },

    async logout(sessionTokenHash: string): Promise<void> {
      await repo.deleteSession(db, sessionTokenHash);
    },

    async register(input: { name: string; email: string; password: string }): Promise<{ user: User; token: string }> {
      if (!config.allowRegistration) {
        throw forbidden('Sign-up is not open on this Herald server. Ask its owner to create an account for you.');
      }
      const user = await createUser({ ...input, verified: false });
      sendInBackground(() => sendVerification(user));
      return { user: toPublicUser(user), token: await startSession(user.id) };
    },

    async updateProfile(
      current: AuthenticatedUser,
      changes: { name?: string | undefined; email?: string | undefined; currentPassword?: string | undefined; newPassword?: string | undefined },
    ): Promise<User> {
      const user = await repo.findUserById(db, current.id);
      if (!user) throw unauthorized();
      const now = clock.now();
      const update: Parameters<typeof repo.updateUser>[2] = { updated_at: now };
      const emailChanged = changes.email !== undefined && changes.email !== user.email;
      if ((emailChanged || changes.newPassword !== undefined) && !(changes.currentPassword && (await verifyPassword(user.password_hash, changes.currentPassword)))) {
        throw badRequest('Your current password is required to change your email or password');
      }
      if (changes.name !== undefined) update.name = changes.name;
      if (emailChanged) {
        update.email = changes.email!;
        update.email_verified_at = null;
      }
      if (changes.newPassword !== undefined) update.password_hash = await hashPassword(changes.newPassword);
      try {
        await repo.updateUser(db, user.id, update);
      } catch (error) {
        if (isUniqueViolation(error)) throw conflict('An account with this email already exists');
        throw error;
      }
      // A password change ends every other session (docs/security.md).
      if (changes.newPassword !== undefined) await repo.deleteSessionsOfUser(db, user.id, current.sessionTokenHash);
      const updated = (await repo.findUserById(db, user.id))!;
      if (emailChanged) sendInBackground(() => sendVerification(updated));
      return toPublicUser(updated);
    },

    /** Same answer, status and (since the work runs after replying) timing whether or not the email exists. */
    forgotPassword(email: string): void {
      sendInBackground(async () => {
        const user = await repo.findUserByEmail(db, email);
        if (!user) return;
        const hits = await limiter.hit(`mail:reset:${user.id}`, HOUR, clock.now());
        if (hits > MAILS_PER_ACCOUNT_PER_HOUR) return;
        await repo.expireUserTokens(db, user.id, 'reset', clock.now());
        const token = await issueToken(user.id, 'reset', RESET_TTL_MS);
        await mailer.send(passwordResetMail(user.email, config.publicUrl, token));
      });
    },

    async resetPassword(token: string, password: string): Promise<void> {
      const now = clock.now();
      const passwordHash = await hashPassword(password);
      await db.transaction().execute(async (trx) => {
        const consumed = await repo.consumeUserToken(trx, sha256Hex(token), 'reset', now);
        if (!consumed?.user_id) throw badRequest('Invalid or expired reset token. Please request a new link.');
        await repo.updateUser(trx, consumed.user_id, { password_hash: passwordHash, updated_at: now });
        // A reset ends every session and every other reset link (docs/security.md).
        await repo.deleteSessionsOfUser(trx, consumed.user_id);
        await repo.expireUserTokens(trx, consumed.user_id, 'reset', now);
      });
    },

    async verifyEmail(token: string): Promise<void> {
      const now = clock.now();
      const consumed = await repo.consumeUserToken(db, sha256Hex(token), 'verify', now);
      if (!consumed?.user_id) throw badRequest('Invalid or expired verification link');
      await repo.updateUser(db, consumed.user_id, { email_verified_at: now, updated_at: now });
    },

    async resendVerification(current: AuthenticatedUser): Promise<void> {
      if (current.emailVerifiedAt !== null) throw badRequest('Your email is already verified');
      const hits = await limiter.hit(`mail:verify:${current.id}`, HOUR, clock.now());
      if (hits > MAILS_PER_ACCOUNT_PER_HOUR) throw tooManyRequests('Too many verification emails. Please try again later.', HOUR / 1000);
      await repo.expireUserTokens(db, current.id, 'verify', clock.now());
      await sendVerification(current);
    },

    // ---- First account (owner setup) ----

    async isSetupRequired(): Promise<boolean> {
      return (await repo.countUsers(db)) === 0;
    },

    async setupStatus(token: string | undefined): Promise<{ setupRequired: boolean; tokenValid: boolean }> {
      const setupRequired = (await repo.countUsers(db)) === 0;
      const tokenValid = setupRequired && !!token && (await repo.isUserTokenLive(db, sha256Hex(token), 'setup', clock.now()));
      return { setupRequired, tokenValid };
    },

    /** A one-time link for creating the owner account, valid only while no user exists. */
    async issueSetupToken(): Promise<string> {
      return issueToken(null, 'setup', SETUP_TTL_MS);
    },

    async completeSetup(input: { token: string; name: string; email: string; password: string }): Promise<{ user: User; token: string }> {
      if ((await repo.countUsers(db)) > 0) throw forbidden('Herald is already set up. Sign in instead.');
      const consumed = await repo.consumeUserToken(db, sha256Hex(input.token), 'setup', clock.now());
      if (!consumed) throw badRequest('This setup link is invalid or has expired. Restart Herald to get a new one.');
      if ((await repo.countUsers(db)) > 0) throw forbidden('Herald is already set up. Sign in instead.');
      const user = await createUser({ name: input.name, email: input.email, password: input.password, verified: true });
      await repo.expireUserTokens(db, null, 'setup', clock.now());
      return { user: toPublicUser(user), token: await startSession(user.id) };
    },

    async setPasswordByEmail(email: string, password: string): Promise<boolean> {
      const user = await repo.findUserByEmail(db, email.trim().toLowerCase());
      if (!user) return false;
      await repo.updateUser(db, user.id, { password_hash: await hashPassword(password), updated_at: clock.now() });
      await repo.deleteSessionsOfUser(db, user.id);
      return true;
    },
  };
}

