import pino from 'pino';
import type { Config } from './config';
import type { AppContext } from './context';
import { openDatabase, type DatabaseHandle } from './db/database';
import { migrateToLatest } from './db/migrate';
import { enrolInWelcomeCampaign } from './features/welcome-campaigns/enrollment';
import { systemClock, type Clock } from './platform/clock';
import { protectDataDirectory } from './platform/data-directory';
import { createOutboxMailer, createSmtpMailer, type Mailer } from './platform/mail';
import { loadOrCreateSecret } from './platform/secrets';

export interface Runtime {
  ctx: AppContext;
  database: DatabaseHandle;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  clock?: Clock;
  mailer?: Mailer;
  migrate?: boolean;
}

/** Opens everything a process role needs: private data folder, database (migrated), logger, mailer, secret. */
export async function openRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  const log = pino({ level: config.logLevel, base: undefined });
  // Before anything is created: the database, the secret and the mail outbox are private (docs/security.md).
  protectDataDirectory(config, log);
  const database = openDatabase(config.database);
  if (options.migrate !== false) {
    const applied = await migrateToLatest(database);
    if (applied.length) log.info({ applied }, 'database migrated');
  }
  const mailer = options.mailer ?? (config.smtpUrl ? createSmtpMailer(config.smtpUrl, config.mailFrom) : createOutboxMailer(config.dataDir, config.mailFrom, log));
  const ctx: AppContext = {
    config,
    db: database.db,
    dbKind: database.kind,
    clock: options.clock ?? systemClock,
    mailer,
    secret: loadOrCreateSecret(config.secretKey, config.dataDir),
    log,
    wakeScheduler: () => undefined,
  };
  ctx.subscriberCreatedHooks = [enrolInWelcomeCampaign(ctx)];
  return {
    ctx,
    database,
    async close() {
      mailer.close();
      await database.close();
    },
  };
}
