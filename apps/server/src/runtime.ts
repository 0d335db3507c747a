import pino from 'pino';
import type { Config } from './config';
import type { AppContext } from './context';
import { openDatabase, type DatabaseHandle } from './db/database';
import { migrateToLatest } from './db/migrate';
import { enrolInWelcomeCampaign } from './features/welcome-campaigns/enrollment';
import { systemClock, type Clock } from './platform/clock';
import { createOutboxMailer, createSmtpMailer, type Mailer } from './platform/mail';
import { PasswordHasher } from './platform/passwords';
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

/** Opens everything a process role needs: database (migrated), logger, mailer, secret. */
export async function openRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  const log = pino({ level: config.logLevel, base: undefined });
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
    passwords: new PasswordHasher(),
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
