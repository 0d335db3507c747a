import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app';
import { LOGIN_LIMITS } from '../../src/features/auth/login-throttle';
import { ManualClock } from '../../src/platform/clock';
import { openRuntime } from '../../src/runtime';
import { createTestApp, waitFor, type TestApp, type TestResponse } from '../support/test-app';
import { expectErrorBody } from './support/fixtures';

// docs/security.md, "Password guessing and lockout": the sign-in limits hold
// under parallel requests (counted before the hash, atomically, across
// processes), apply to the current-password check of a profile change, and
// slow a guessed account down without letting a stranger lock its owner out.

const SECOND = 1000;
const MINUTE = 60 * SECOND;

const statusCounts = (answers: TestResponse[]) => {
  const counts = new Map<number, number>();
  for (const answer of answers) counts.set(answer.status, (counts.get(answer.status) ?? 0) + 1);
  return Object.fromEntries(counts);
};

describe('sign-in limits under parallel requests', () => {
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 9, 0));
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ clock });
  });
  afterAll(async () => t?.close());

  const attempt = (email: string, password: string, remoteAddress: string) => t.request('POST', '/api/auth/login', { body: { email, password }, remoteAddress });

  it('200 parallel wrong passwords from one address: exactly 10 are checked, the rest get 429, and the right password inside the burst is refused', async () => {
    const owner = await t.createUser();
    const verifiedBefore = t.ctx.passwords.stats.verified;
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => attempt(owner.email, i === 100 ? owner.password : `wrong-${i}`, '198.51.100.20')));
    const counts = statusCounts(answers);
    // Every answer that is not a 429 had its password checked.
    expect(counts, JSON.stringify(counts)).toEqual({ 401: LOGIN_LIMITS.perAccountAndAddress, 429: 200 - LOGIN_LIMITS.perAccountAndAddress });
    expect(answers[100]!.status).toBe(429);
    expectErrorBody(answers[100]!.body, 'the right password inside the burst');
    expect(t.ctx.passwords.stats.verified - verifiedBefore).toBe(LOGIN_LIMITS.perAccountAndAddress);
    // The owner is not locked out elsewhere: an address it signed in from before gets in.
    expect((await attempt(owner.email, owner.password, '127.0.0.1')).status).toBe(200);
  });

  it('200 parallel wrong passwords for one account from 200 addresses: 10 are checked, the rest are told to wait', async () => {
    const owner = await t.createUser();
    const verifiedBefore = t.ctx.passwords.stats.verified;
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => attempt(owner.email, i === 100 ? owner.password : `wrong-${i}`, `203.0.${Math.floor(i / 100)}.${(i % 100) + 1}`)),
    );
    const counts = statusCounts(answers);
    expect(counts, JSON.stringify(counts)).toEqual({ 401: LOGIN_LIMITS.perAccountBeforeDelay, 429: 200 - LOGIN_LIMITS.perAccountBeforeDelay });
    expect(answers[100]!.status).toBe(429);
    expect(t.ctx.passwords.stats.verified - verifiedBefore).toBe(LOGIN_LIMITS.perAccountBeforeDelay);
    const waits = answers.filter((a) => a.status === 429).map((a) => Number(a.headers['retry-after']));
    expect(Math.max(...waits)).toBe(1); // the first delay: one second, not a lock
  });

  it('holds across two server processes sharing the database', async () => {
    const owner = await t.createUser();
    // A second process: its own connections, its own password hasher, the same database.
    const otherRuntime = await openRuntime(t.config, { clock });
    const otherApp = await buildApp(otherRuntime.ctx, { staticDirs: { web: `${t.dataDir}/no-web`, sdk: `${t.dataDir}/no-sdk` } });
    try {
      const verifiedBefore = t.ctx.passwords.stats.verified + otherRuntime.ctx.passwords.stats.verified;
      const answers = await Promise.all(
        Array.from({ length: 200 }, async (_, i) => {
          const app = i % 2 === 0 ? t.app : otherApp;
          const response = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: owner.email, password: `wrong-${i}` }, remoteAddress: '198.51.100.30' });
          return { status: response.statusCode, body: response.json(), headers: response.headers } as TestResponse;
        }),
      );
      expect(statusCounts(answers)).toEqual({ 401: LOGIN_LIMITS.perAccountAndAddress, 429: 200 - LOGIN_LIMITS.perAccountAndAddress });
      expect(t.ctx.passwords.stats.verified + otherRuntime.ctx.passwords.stats.verified - verifiedBefore).toBe(LOGIN_LIMITS.perAccountAndAddress);
    } finally {
      await otherApp.close();
      await otherRuntime.close();
    }
  });
});

describe('the current-password check of a profile change has the sign-in limits', () => {
  const clock = new ManualClock(Date.UTC(2026, 5, 2, 9, 0));
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ clock });
  });
  afterAll(async () => t?.close());

  const changePassword = (token: string, currentPassword: string, remoteAddress: string) =>
    t.request('PATCH', '/api/auth/profile', { token, body: { currentPassword, newPassword: 'taken over by a thief' }, remoteAddress });

  it('a stolen session gets 10 guesses, then 429 even for the right password, and nothing changes', async () => {
    const owner = await t.createUser();
    for (let i = 0; i < 10; i++) expect((await changePassword(owner.token, `guess-${i}`, '198.51.100.40')).status).toBe(400);
    const limited = await changePassword(owner.token, owner.password, '198.51.100.40');
    expect(limited.status).toBe(429);
    expectErrorBody(limited.body, 'profile change over the limit');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // The email cannot be changed either, and the password is still the owner's.
    const email = await t.request('PATCH', '/api/auth/profile', { token: owner.token, body: { email: 'thief@example.com', currentPassword: owner.password }, remoteAddress: '198.51.100.40' });
    expect(email.status).toBe(429);
    expect((await t.request('POST', '/api/auth/login', { body: { email: owner.email, password: owner.password } })).status).toBe(200);
    // The same pair is limited at sign-in too: the guesses count against one budget.
    expect((await t.request('POST', '/api/auth/login', { body: { email: owner.email, password: owner.password }, remoteAddress: '198.51.100.40' })).status).toBe(429);
  });

  it('200 parallel guesses of the current password: exactly 10 are checked', async () => {
    const owner = await t.createUser();
    const verifiedBefore = t.ctx.passwords.stats.verified;
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => changePassword(owner.token, i === 100 ? owner.password : `guess-${i}`, '198.51.100.41')));
    expect(statusCounts(answers)).toEqual({ 400: LOGIN_LIMITS.perAccountAndAddress, 429: 200 - LOGIN_LIMITS.perAccountAndAddress });
    expect(t.ctx.passwords.stats.verified - verifiedBefore).toBe(LOGIN_LIMITS.perAccountAndAddress);
  });

  it('the right current password still works within the limit and does not use it up', async () => {
    const owner = await t.createUser();
    for (let i = 0; i < 9; i++) expect((await changePassword(owner.token, `guess-${i}`, '198.51.100.42')).status).toBe(400);
    const changed = await t.request('PATCH', '/api/auth/profile', {
      token: owner.token,
      body: { currentPassword: owner.password, newPassword: 'a fresh passphrase' },
      remoteAddress: '198.51.100.42',
    });
    expect(changed.status).toBe(200);
    // Success cleared the pair: the owner may mistype again.
    expect((await changePassword(owner.token, 'typo', '198.51.100.42')).status).toBe(400);
  });

  it("the profile's email change counts an address already taken as a failed attempt: probing other people's addresses is limited", async () => {
    const prober = await t.createUser();
    const others = await Promise.all(Array.from({ length: 12 }, () => t.createUser()));
    const changeEmail = (email: string) => t.request('PATCH', '/api/auth/profile', { token: prober.token, body: { email, currentPassword: prober.password }, remoteAddress: '198.51.100.43' });
    const answers = [];
    for (const other of others) answers.push((await changeEmail(other.email)).status);
    // Ten answers say "taken"; after them even the right password waits, so the eleventh address is not answered.
    expect(answers.slice(0, LOGIN_LIMITS.perAccountAndAddress)).toEqual(Array(LOGIN_LIMITS.perAccountAndAddress).fill(409));
    expect(answers.slice(LOGIN_LIMITS.perAccountAndAddress)).toEqual([429, 429]);
    expect((await t.ctx.db.selectFrom('users').select('email').where('id', '=', prober.id).executeTakeFirstOrThrow()).email).toBe(prober.email);
  });
});

describe('no lockout without a way out', () => {
  const clock = new ManualClock(Date.UTC(2026, 5, 3, 9, 0));
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ clock });
  });
  afterAll(async () => t?.close());

  const attempt = (email: string, password: string, remoteAddress: string) => t.request('POST', '/api/auth/login', { body: { email, password }, remoteAddress });
  /** A stranger with many addresses: 11 wrong passwords from each of 30, in parallel. */
  const sprayFromManyAddresses = async (email: string, prefix: string) => {
    const answers = await Promise.all(
      Array.from({ length: 30 }, async (_, a) => {
        const statuses: number[] = [];
        for (let i = 0; i < 11; i++) statuses.push((await attempt(email, `stranger-${a}-${i}`, `${prefix}.${a + 1}`)).status);
        return statuses;
      }),
    );
    return answers.flat();
  };

  it("a stranger guessing from many addresses does not lock the owner out where the owner signs in", async () => {
    const owner = await t.createUser();
    expect((await attempt(owner.email, owner.password, '192.0.2.50')).status).toBe(200); // the owner's home address
    const statuses = await sprayFromManyAddresses(owner.email, '203.0.113');
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(LOGIN_LIMITS.perAccountBeforeDelay);
    // At home the owner signs in at once, with the right password.
    expect((await attempt(owner.email, owner.password, '192.0.2.50')).status).toBe(200);
    // From one of the stranger's addresses even the right password waits out the pair's window.
    const strangers = await attempt(owner.email, owner.password, '203.0.113.1');
    expect(strangers.status).toBe(429);
  });

  it('from a new address the owner is slowed down, never locked: the right password works after the wait, which never exceeds a minute', async () => {
    const owner = await t.createUser();
    await sprayFromManyAddresses(owner.email, '198.51.100');
    const slowed = await attempt(owner.email, owner.password, '192.0.2.77');
    expect(slowed.status).toBe(429);
    expect(slowed.body.error.message).toMatch(/^Too many failed sign-in attempts for this account\. Please try again in \d+ second\(s\)\.$/);
    const wait = Number(slowed.headers['retry-after']);
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(LOGIN_LIMITS.delaysMs.at(-1)! / SECOND);
    clock.advance(wait * SECOND);
    expect((await attempt(owner.email, owner.password, '192.0.2.77')).status).toBe(200);
  });

  it('each checked guess beyond the first 10 waits longer (1, 2, 4 … s, at most 60 s); an early attempt is not checked and does not lengthen the wait', async () => {
    const victim = await t.createUser();
    const verifiedBefore = t.ctx.passwords.stats.verified;
    for (let i = 0; i < 10; i++) expect((await attempt(victim.email, `guess-${i}`, `198.18.0.${i + 1}`)).status).toBe(401);
    const waits: number[] = [];
    for (let n = 0; n < 9; n++) {
      const early = await attempt(victim.email, `early-${n}`, `198.18.1.${n + 1}`);
      expect(early.status).toBe(429);
      const wait = Number(early.headers['retry-after']);
      waits.push(wait);
      // Asking again before the wait is over changes nothing.
      clock.advance(wait * SECOND - 1);
      expect(Number((await attempt(victim.email, `early-again-${n}`, `198.18.2.${n + 1}`)).headers['retry-after'])).toBe(1);
      clock.advance(1);
      expect((await attempt(victim.email, `on-time-${n}`, `198.18.3.${n + 1}`)).status).toBe(401);
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 60, 60, 60]);
    expect(t.ctx.passwords.stats.verified - verifiedBefore).toBe(10 + 9);
  });

  it('a completed password reset lifts every limit on the account and trusts the address that reset it', async () => {
    const owner = await t.createUser();
    await sprayFromManyAddresses(owner.email, '198.51.101');
    expect((await attempt(owner.email, owner.password, '198.51.101.1')).status).toBe(429);
    expect((await attempt(owner.email, owner.password, '192.0.2.90')).status).toBe(429);

    const before = t.outbox().length;
    expect((await t.request('POST', '/api/auth/forgot-password', { body: { email: owner.email }, remoteAddress: '192.0.2.90' })).status).toBe(200);
    const mail = await waitFor(() => t.outbox().slice(before).find((m) => m.to === owner.email));
    const token = /reset-password\?token=([A-Za-z0-9_-]+)/.exec(mail.text)![1]!;
    const reset = await t.request('POST', '/api/auth/reset-password', { body: { token, password: 'my own password again' }, remoteAddress: '192.0.2.90' });
    expect(reset.status).toBe(200);

    // No wait, no window to sit out: from the resetting address, and from any other.
    expect((await attempt(owner.email, 'my own password again', '192.0.2.90')).status).toBe(200);
    expect((await attempt(owner.email, 'my own password again', '192.0.2.91')).status).toBe(200);
    expect((await attempt(owner.email, 'my own password again', '198.51.101.1')).status).toBe(200);
  });

  it('a trusted address is trusted for 30 days, and only for its account', async () => {
    const owner = await t.createUser();
    const other = await t.createUser();
    expect((await attempt(owner.email, owner.password, '192.0.2.120')).status).toBe(200);
    await sprayFromManyAddresses(other.email, '198.51.102');
    // The owner's address is not trusted for someone else's account.
    expect((await attempt(other.email, other.password, '192.0.2.120')).status).toBe(429);
    clock.advance(16 * MINUTE);
    await sprayFromManyAddresses(owner.email, '198.51.103');
    expect((await attempt(owner.email, owner.password, '192.0.2.120')).status).toBe(200);
    clock.advance(LOGIN_LIMITS.trustedForMs + MINUTE);
    await sprayFromManyAddresses(owner.email, '198.51.104');
    expect((await attempt(owner.email, owner.password, '192.0.2.120')).status).toBe(429);
  });
});

describe('sign-in limits when the server clock is set back', () => {
  const clock = new ManualClock(Date.UTC(2026, 8, 1, 9, 0));
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ clock });
  });
  afterAll(async () => t?.close());

  it('a window or a wait that starts "in the future" starts over instead of refusing everyone', async () => {
    const owner = await t.createUser();
    for (let i = 0; i < 10; i++) expect((await t.request('POST', '/api/auth/login', { body: { email: owner.email, password: `wrong-${i}` }, remoteAddress: `192.0.2.${i + 1}` })).status).toBe(401);
    clock.set(Date.UTC(2026, 7, 1, 9, 0)); // a month back
    expect((await t.request('POST', '/api/auth/login', { body: { email: owner.email, password: owner.password }, remoteAddress: '192.0.2.100' })).status).toBe(200);
    expect((await t.request('POST', '/api/auth/login', { body: { email: owner.email, password: owner.password }, remoteAddress: '192.0.2.101' })).status).toBe(200);
  });
});
