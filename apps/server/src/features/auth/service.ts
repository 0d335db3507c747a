import type { SessionInfo, User } from '@herald/contracts';
import { iso } from '../../platform/responses';
import type { AppContext } from '../../context';
import { isUniqueViolation } from '../../db/database';
import type { UserRow } from '../../db/schema';
import type { AuthenticatedUser } from '../../platform/authenticate';
import { rateLimitKeyOfAddress } from '../../platform/client-address';
import { badRequest, conflict, forbidden, tooManyRequests, unauthorized } from '../../platform/errors';
import { DatabaseRateLimiter } from '../../platform/rate-limit';
import { randomToken, sha256Hex } from '../../platform/secrets';
import { insertAccount, newAccountRow, startSession as startSessionOf, toPublicUser } from './accounts';
import { passwordResetMail, verificationMail } from './emails';
import { createLoginThrottle } from './login-throttle';
import * as repo from './repository';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const RESET_TTL_MS = 1 * HOUR; // docs/security.md: reset ≤ 1 h
const VERIFY_TTL_MS = 24 * HOUR;
const SETUP_TTL_MS = 24 * HOUR;
const MAILS_PER_ACCOUNT_PER_HOUR = 5;
// Flood guards per client address for the unauthenticated routes that may
// hash a password (docs/security.md, "CPU exhaustion"); counted before any work.
const RESETS_PER_ADDRESS = { limit: 10, windowMs: 15 * MINUTE };
const SIGN_UPS_PER_ADDRESS = { limit: 5, windowMs: HOUR };

export const FORGOT_PASSWORD_MESSAGE = 'If an account exists for that email, a password reset link has been sent.';


export function createAuthService(ctx: AppContext) {
  const { db, clock, config, mailer, log, passwords } = ctx;
  const limiter = new DatabaseRateLimiter(db);
  const loginThrottle = createLoginThrottle(ctx);

  /** Counts one request of `route` from the client and refuses it (429) beyond the limit. */
  async function limitPerAddress(route: string, clientAddress: string, rule: { limit: number; windowMs: number }): Promise<void> {
    const { hits, retryAfterMs } = await limiter.hit(`${route}:address:${rateLimitKeyOfAddress(clientAddress)}`, rule.windowMs, clock.now());
    if (hits > rule.limit) {
      throw tooManyRequests(`Too many requests from your network. Please try again in ${Math.ceil(retryAfterMs / MINUTE)} minute(s).`, retryAfterMs / 1000);
    }
  }

  const startSession = (userId: string) => startSessionOf(ctx, db, userId);

  /** `email` is the address the link is mailed to: the link works only while the account has it. */
  async function issueToken(userId: string | null, email: string | null, purpose: 'reset' | 'verify' | 'setup', ttlMs: number): Promise<string> {
    const token = randomToken();
    const now = clock.now();
    await repo.insertUserToken(db, { token_hash: sha256Hex(token), purpose, user_id: userId, email, created_at: now, expires_at: now + ttlMs });
    return token;
  }

  /** Mail failures are logged, never shown: they must not reveal whether an account exists. */
  function sendInBackground(work: () => Promise<void>): void {
    work().catch((error: unknown) => log.error({ err: error }, 'sending mail failed'));
  }

  async function sendVerification(user: Pick<UserRow, 'id' | 'email'>): Promise<void> {
    const token = await issueToken(user.id, user.email, 'verify', VERIFY_TTL_MS);
    await mailer.send(verificationMail(user.email, config.publicUrl, token));
  }

  async function createUser(input: { name: string; email: string; password: string; verified: boolean }): Promise<UserRow> {
    const user = await newAccountRow(ctx, input);
    await insertAccount(db, user);
    return user;
  }

  return {
    createUser,

    async login(email: string, password: string, clientAddress: string): Promise<{ user: User; token: string }> {
      // Counted before the password is hashed (docs/security.md, "Password guessing and lockout").
      const attempt = await loginThrottle.admit(email, clientAddress);
      const user = await repo.findUserByEmail(db, email);
      const valid = user ? await passwords.verify(user.password_hash, password) : (await passwords.burn(password), false);
      if (!user || !valid) throw unauthorized('Invalid email or password');
      await attempt.succeeded();
      return { user: toPublicUser(user), token: await startSession(user.id) };
    },

    async logout(sessionTokenHash: string): Promise<void> {
      await repo.deleteSession(db, sessionTokenHash);
    },

    /** Profile → Sessions: where the user is signed in; the tokens are never shown, only which one is this. */
    async sessions(current: AuthenticatedUser): Promise<SessionInfo[]> {
      const rows = await repo.listLiveSessionsOfUser(db, current.id, clock.now());
      return rows.map((row) => ({ created_at: iso(row.created_at), expires_at: iso(row.expires_at), current: row.token_hash === current.sessionTokenHash }));
    },

    /** "Sign out everywhere": every session ends, this one too (a stolen token stops working at once). */
    async signOutEverywhere(current: AuthenticatedUser): Promise<number> {
      return repo.deleteAllSessionsOfUser(db, current.id);
    },

    async register(input: { name: string; email: string; password: string }, clientAddress: string): Promise<{ user: User; token: string }> {
      if (!config.allowRegistration) {
        throw forbidden('Sign-up is not open on this Herald server. Ask its owner to create an account for you.');
      }
      await limitPerAddress('sign-up', clientAddress, SIGN_UPS_PER_ADDRESS);
      const user = await createUser({ ...input, verified: false });
      sendInBackground(() => sendVerification(user));
      return { user: toPublicUser(user), token: await startSession(user.id) };
    },

    async updateProfile(
      current: AuthenticatedUser,
      changes: { name?: string | undefined; email?: string | undefined; currentPassword?: string | undefined; newPassword?: string | undefined },
      clientAddress: string,
    ): Promise<User> {
      const user = await repo.findUserById(db, current.id);
      if (!user) throw unauthorized();
      const emailChanged = changes.email !== undefined && changes.email !== user.email;
      const passwordChanged = changes.newPassword !== undefined;
      let attempt: Awaited<ReturnType<typeof loginThrottle.admit>> | undefined;
      if (emailChanged || passwordChanged) {
        if (!changes.currentPassword) throw badRequest('Your current password is required to change your email or password');
        // The current password is guessed here as at sign-in, with the same limits (docs/security.md).
        attempt = await loginThrottle.admit(user.email, clientAddress);
        if (!(await passwords.verify(user.password_hash, changes.currentPassword))) {
          throw badRequest('Your current password is required to change your email or password');
        }
      }
      const update: Parameters<typeof repo.updateUser>[2] = { updated_at: clock.now() };
      if (changes.name !== undefined) update.name = changes.name;
      if (emailChanged) {
        update.email = changes.email!;
        update.email_verified_at = null;
      }
      if (passwordChanged) update.password_hash = await passwords.hash(changes.newPassword!);
      try {
        await db.transaction().execute(async (trx) => {
          await repo.updateUser(trx, user.id, update);
          // Links mailed before the change must not outlive it: a reset link
          // sent to the old address would take the account back, a verify link
          // would vouch for an address it was never sent to (docs/security.md, "Emailed links").
          if (emailChanged || passwordChanged) await repo.expireEmailedTokensOfUser(trx, user.id, clock.now());
          // A password change ends every other session (docs/security.md).
          if (passwordChanged) await repo.deleteSessionsOfUser(trx, user.id, current.sessionTokenHash);
        });
      } catch (error) {
        // The attempt stays counted: an address already taken answers 409, so asking for other people's addresses one
        // after another is limited like guessing passwords (docs/security.md, "Accounts").
        if (isUniqueViolation(error)) throw conflict('An account with this email already exists');
        throw error;
      }
      await attempt?.succeeded();
      const updated = (await repo.findUserById(db, user.id))!;
      if (emailChanged) sendInBackground(() => sendVerification(updated));
      return toPublicUser(updated);
    },

    /** Same answer, status and (since the work runs after replying) timing whether or not the email exists. */
    forgotPassword(email: string): void {
      sendInBackground(async () => {
        const user = await repo.findUserByEmail(db, email);
        if (!user) return;
        const { hits } = await limiter.hit(`mail:reset:${user.id}`, HOUR, clock.now());
        if (hits > MAILS_PER_ACCOUNT_PER_HOUR) return;
        await repo.expireUserTokens(db, user.id, 'reset', clock.now());
        const token = await issueToken(user.id, user.email, 'reset', RESET_TTL_MS);
        await mailer.send(passwordResetMail(user.email, config.publicUrl, token));
      });
    },

    async resetPassword(token: string, password: string, clientAddress: string): Promise<void> {
      await limitPerAddress('reset-password', clientAddress, RESETS_PER_ADDRESS);
      const invalid = () => badRequest('Invalid or expired reset token. Please request a new link.');
      const tokenHash = sha256Hex(token);
      // The token is checked before the new password is hashed: a made-up
      // token costs a lookup, not a hash (docs/security.md, "CPU exhaustion").
      const live = await repo.findLiveUserToken(db, tokenHash, 'reset', clock.now());
      if (!live?.user_id) throw invalid();
      const passwordHash = await passwords.hash(password);
      const now = clock.now();
      const email = await db.transaction().execute(async (trx) => {
        const consumed = await repo.consumeUserToken(trx, tokenHash, 'reset', now);
        if (!consumed?.user_id) throw invalid();
        // Only while the account still has the address the link was mailed to.
        if (!(await repo.updatePasswordOfAddress(trx, consumed.user_id, consumed.email, passwordHash, now))) throw invalid();
        // A reset ends every session and every other emailed link (docs/security.md).
        await repo.deleteSessionsOfUser(trx, consumed.user_id);
        await repo.expireEmailedTokensOfUser(trx, consumed.user_id, now);
        return consumed.email!;
      });
      // Whoever could read the mail is the owner: the account's sign-in limits start over.
      await loginThrottle.clearAccount(email, clientAddress);
    },

    async verifyEmail(token: string): Promise<void> {
      const now = clock.now();
      await db.transaction().execute(async (trx) => {
        const consumed = await repo.consumeUserToken(trx, sha256Hex(token), 'verify', now);
        // Verified only if the link was mailed to the account's current address.
        if (!consumed?.user_id || !(await repo.markAddressVerified(trx, consumed.user_id, consumed.email, now))) {
          throw badRequest('Invalid or expired verification link');
        }
      });
    },

    async resendVerification(current: AuthenticatedUser): Promise<void> {
      if (current.emailVerifiedAt !== null) throw badRequest('Your email is already verified');
      const { hits } = await limiter.hit(`mail:verify:${current.id}`, HOUR, clock.now());
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
      return issueToken(null, null, 'setup', SETUP_TTL_MS);
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

    /** `herald user reset-password`: the administrator's reset, with the same effects as an emailed one. */
    async setPasswordByEmail(email: string, password: string): Promise<boolean> {
      const user = await repo.findUserByEmail(db, email.trim().toLowerCase());
      if (!user) return false;
      const passwordHash = await passwords.hash(password);
      const now = clock.now();
      await db.transaction().execute(async (trx) => {
        await repo.updateUser(trx, user.id, { password_hash: passwordHash, updated_at: now });
        await repo.deleteSessionsOfUser(trx, user.id);
        await repo.expireEmailedTokensOfUser(trx, user.id, now);
      });
      await loginThrottle.clearAccount(user.email, undefined);
      return true;
    },
  };
}

