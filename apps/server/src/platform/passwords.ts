import os from 'node:os';
import { hash, verify } from '@node-rs/argon2';
import { HttpError } from './errors';

// docs/security.md: argon2id with m ≥ 19 MiB, t ≥ 2, p = 1; compared exactly as
// typed (argon2 has no 72-byte truncation, unlike bcrypt).
/** Algorithm 2 is Argon2id in @node-rs/argon2's (const) enum. */
const options = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

export interface PasswordHasherLimits {
  /** Hashes computed at once in this process. */
  concurrency: number;
  /** Hashes waiting for a turn; one more is refused at once with 503. */
  queueLimit: number;
}

/**
 * Every argon2 computation is ~19 MiB and tens of milliseconds of a core, and
 * runs on libuv's thread pool (4 threads by default), which file reads (the
 * SDK served to every customer page) and DNS lookups share. Unbounded, a flood
 * of requests that hash a password takes every core and every pool thread
 * (docs/security.md, "CPU exhaustion"). So hashing runs through one small
 * semaphore per process: at most `concurrency` at once, a short queue behind
 * them, and anything beyond answers 503 with Retry-After straight away.
 */
export function defaultPasswordHasherLimits(): PasswordHasherLimits {
  // Leave at least one core (and most pool threads) to everything else.
  return { concurrency: Math.max(1, Math.min(2, os.availableParallelism() - 1)), queueLimit: 16 };
}

export interface PasswordHasherStats {
  /** Hashes of new passwords computed. */
  hashed: number;
  /** Password checks computed (a failed login for an unknown email included). */
  verified: number;
  /** Requests refused because the queue was full. */
  refused: number;
  /** The most computations that ran at the same time. */
  peakRunning: number;
  /** The most requests that waited for a turn at the same time. */
  peakWaiting: number;
}

export class PasswordHasher {
  /** Counters read by tests and available for metrics. */
  readonly stats: PasswordHasherStats = { hashed: 0, verified: 0, refused: 0, peakRunning: 0, peakWaiting: 0 };
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private dummyHash: Promise<string> | undefined;

  constructor(private readonly limits: PasswordHasherLimits = defaultPasswordHasherLimits()) {
    if (limits.concurrency < 1 || limits.queueLimit < 0) throw new Error('PasswordHasher: concurrency must be ≥ 1 and queueLimit ≥ 0');
  }

  hash(password: string): Promise<string> {
    return this.withTurn(() => {
      this.stats.hashed += 1;
      return hash(password, options);
    });
  }

  verify(passwordHash: string, password: string): Promise<boolean> {
    return this.withTurn(async () => {
      this.stats.verified += 1;
      try {
        return await verify(passwordHash, password);
      } catch {
        return false;
      }
    });
  }

  /**
   * Verifies against a throw-away hash: a failed login for an unknown email
   * costs as much as one for a known email (no account enumeration by timing).
   */
  async burn(password: string): Promise<void> {
    this.dummyHash ??= hash('herald-timing-equaliser', options);
    await this.verify(await this.dummyHash, password);
  }

  private async withTurn<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.limits.concurrency) {
      if (this.waiting.length >= this.limits.queueLimit) {
        this.stats.refused += 1;
        throw new HttpError(503, 'The server is busy checking other passwords. Please try again in a few seconds.', 'busy', { 'retry-after': '2' });
      }
      // A finishing computation hands its slot straight to the first in line (running is not decremented).
      const turn = new Promise<void>((resolve) => this.waiting.push(resolve));
      this.stats.peakWaiting = Math.max(this.stats.peakWaiting, this.waiting.length);
      await turn;
    } else {
      this.running += 1;
    }
    this.stats.peakRunning = Math.max(this.stats.peakRunning, this.running);
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
