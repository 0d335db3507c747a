import type { AppContext } from '../../context';
import { rateLimitKeyOfAddress } from '../../platform/client-address';
import { tooManyRequests } from '../../platform/errors';
import { DatabaseRateLimiter } from '../../platform/rate-limit';

// The rule that decides when a password is checked at all: sign-in and the
// current-password check of a password or email change (docs/security.md,
// "Password guessing and lockout"). Every attempt is counted BEFORE the slow
// password hash, each count one atomic statement, so parallel requests (from
// one process or several sharing the database) cannot all slip under a limit.
//
// 1. Per client address (IPv6 per /64): 50 attempts in 15 minutes, over all
//    accounts. Beyond that the address gets 429 until its window ends.
// 2. Per account and address pair: 10 attempts in 15 minutes. Beyond that that
//    address gets 429 for that account until the window ends; the owner, at
//    another address, is not affected.
// 3. Per account, over all addresses it has not signed in from: 10 failed
//    attempts in 15 minutes go freely; after that the account is slowed, never
//    locked: the next attempt is checked only 1 s after the last checked one,
//    the one after 2 s, then 4, 8, 16, 32 s and from then on 60 s; an attempt
//    that comes sooner gets 429 with the wait in Retry-After (and is not
//    checked, so it does not lengthen the wait). A botnet spraying one account
//    gets about 30 guesses per 15 minutes; the owner waits at most a minute.
// 4. An address that signed in to the account (or completed a password reset
//    for it) in the last 30 days is trusted for that account and skips rule 3,
//    so a stranger slowing the account does not slow its owner at home.
// 5. A completed password reset clears rules 2 and 3 for the account.
// A successful attempt clears its pair's count and takes back its own count in
// rules 1 and 3: only failures use up a limit (colleagues signing in behind one
// address never do), and the owner's own sign-ins never slow the account.

const MINUTE = 60_000;
const WINDOW_MS = 15 * MINUTE;
export const LOGIN_LIMITS = {
  windowMs: WINDOW_MS,
  perAddress: 50,
  perAccountAndAddress: 10,
  perAccountBeforeDelay: 10,
  /** Waits after the free attempts: 1, 2, 4, 8, 16, 32 s, then 60 s for every further one. */
  delaysMs: [1000, 2000, 4000, 8000, 16_000, 32_000, 60_000],
  trustedForMs: 30 * 24 * 60 * MINUTE,
} as const;

/** The wait required after n checked attempts on an account: none for the free ones, then the delays. */
const ACCOUNT_SPACINGS_MS: readonly number[] = [...Array<number>(LOGIN_LIMITS.perAccountBeforeDelay).fill(0), ...LOGIN_LIMITS.delaysMs];

/** An attempt allowed to check a password; tell it how it ended. */
export interface PasswordAttempt {
  succeeded(): Promise<void>;
}

export function createLoginThrottle(ctx: Pick<AppContext, 'db' | 'clock'>) {
  const limiter = new DatabaseRateLimiter(ctx.db);
  const keys = (email: string, address?: string) => ({
    address: `login:address:${address}`,
    // A space never occurs in an email address, so the prefix `login:pair:<email> ` names this account's pairs only.
    pair: `login:pair:${email} ${address}`,
    trusted: `login:trusted:${email} ${address}`,
    account: `login:account:${email}`,
  });

  const lockedOut = (retryAfterMs: number) =>
    tooManyRequests(`Too many failed sign-in attempts. Please try again in ${Math.ceil(retryAfterMs / MINUTE)} minute(s).`, retryAfterMs / 1000);
  const slowedDown = (retryAfterMs: number) =>
    tooManyRequests(
      `Too many failed sign-in attempts for this account. Please try again in ${Math.ceil(retryAfterMs / 1000)} second(s).`,
      retryAfterMs / 1000,
    );

  return {
    /**
     * Counts an attempt to check `email`'s password from `clientAddress`, and
     * throws 429 when a limit says no password may be checked now.
     */
    async admit(email: string, clientAddress: string): Promise<PasswordAttempt> {
      const now = ctx.clock.now();
      const key = keys(email, rateLimitKeyOfAddress(clientAddress));
      const address = await limiter.hit(key.address, WINDOW_MS, now);
      if (address.hits > LOGIN_LIMITS.perAddress) throw lockedOut(address.retryAfterMs);
      const pair = await limiter.hit(key.pair, WINDOW_MS, now);
      if (pair.hits > LOGIN_LIMITS.perAccountAndAddress) throw lockedOut(pair.retryAfterMs);

      const trusted = await limiter.isLive(key.trusted, now);
      if (!trusted) {
        const account = await limiter.admitSpaced(key.account, WINDOW_MS, now, ACCOUNT_SPACINGS_MS);
        if (!account.admitted) throw slowedDown(account.retryAfterMs);
      }

      return {
        async succeeded() {
          const later = ctx.clock.now();
          await limiter.reset(key.pair);
          await limiter.refund(key.address, later);
          if (!trusted) await limiter.refund(key.account, later);
          await limiter.mark(key.trusted, later, LOGIN_LIMITS.trustedForMs);
        },
      };
    },

    /**
     * After a completed password reset: the account's limits start over, and
     * the address that reset it is trusted for it.
     */
    async clearAccount(email: string, resetFromAddress: string | undefined): Promise<void> {
      const key = keys(email);
      await limiter.reset(key.account);
      await limiter.resetPrefix(`login:pair:${email} `);
      if (resetFromAddress !== undefined) {
        await limiter.mark(keys(email, rateLimitKeyOfAddress(resetFromAddress)).trusted, ctx.clock.now(), LOGIN_LIMITS.trustedForMs);
      }
    },
  };
}

