import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Config } from './config';
import type { DatabaseKind } from './db/database';
import type { DeliveryPorts } from './delivery/ports';
import type { Database } from './db/schema';
import type { Clock } from './platform/clock';
import type { Mailer } from './platform/mail';
import type { Metrics } from './platform/metrics';
import type { PasswordHasher } from './platform/passwords';

/**
 * What every service may need, built once per process (main.ts) or per test.
 * Services take the pieces they use as arguments, so a test can hand them a
 * real database and a manual clock.
 */
export interface AppContext {
  config: Config;
  db: Kysely<Database>;
  dbKind: DatabaseKind;
  /** A bulk write (an import) holds this while it runs: SQLite checkpoints its WAL on another thread meanwhile (db/wal-checkpoints.ts). */
  holdBackgroundCheckpoints: () => () => void;
  clock: Clock;
  mailer: Mailer;
  /** The process's one password hasher: it bounds how many hashes run at once. */
  passwords: PasswordHasher;
  /** Server secret for HMAC-signed tokens (beacons). */
  secret: Buffer;
  log: FastifyBaseLogger;
  /** This process's Prometheus metrics (platform/metrics.ts). */
  metrics: Metrics;
  /**
   * Asks this process's scheduler to look for due work now (a notification was
   * just sent). A no-op in processes without a scheduler: theirs ticks anyway.
   */
  wakeScheduler: () => void;
  /** What the delivery engine needs from the features, wired in runtime.ts (delivery/ports.ts). */
  deliveryPorts: DeliveryPorts;
}
