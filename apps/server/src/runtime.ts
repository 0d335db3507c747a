import type { Config } from './config';
import type { AppContext } from './context';
import { openDatabase, type DatabaseHandle } from './db/database';
import { migrateToLatest, pendingMigrations } from './db/migrate';
import { deliveryBacklog } from './delivery/runs';
import { unfoldedBeacons } from './features/tracking/repository';
import { fireTriggers } from './features/notifications/triggered';
import { addSendToSiteCounters, addToDeliveryHealth } from './features/analytics/site-counters';
import { notificationsUsingSegment, runsUsingSegment } from './features/segments/repository';
import { countAudienceByZone, selectAudiencePage } from './features/segments/audience';
import { feedsUsingSegment } from './features/rss-feeds/repository';
import { deactivateGoneSubscribers } from './features/subscribers/service';
import { campaignsUsingSegment } from './features/welcome-campaigns/repository';
import { enrolImportedSubscribers, enrolInWelcomeCampaign } from './features/welcome-campaigns/enrollment';
import { webhooksOnNotificationClicked, webhooksOnRunFinished, webhooksOnSubscriberCreated, webhooksOnSubscriberRemoved } from './features/webhooks/events';
import { sql } from 'kysely';
import { systemClock, type Clock } from './platform/clock';
import { protectDataDirectory } from './platform/data-directory';
import type { ReadinessCheck } from './platform/health';
import { createLogger } from './platform/logger';
import { countMails, createOutboxMailer, createSmtpMailer, type Mailer } from './platform/mail';
import { createMetrics } from './platform/metrics';
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

/** Opens everything a process role needs: private data folder, database (migrated), logger, mailer, secret. */
export async function openRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  const log = createLogger(config);
  // Before anything is created: the database, the secret and the mail outbox are private (docs/security.md).
  protectDataDirectory(config, log);
  const database = openDatabase(config.database, { onBackgroundError: (err) => log.warn({ err }, 'the SQLite checkpoint thread failed; the server connection checkpoints by itself') });
  if (options.migrate !== false) {
    const applied = await migrateToLatest(database);
    if (applied.length) log.info({ applied }, 'database migrated');
  }
  const metrics = createMetrics();
  const mailer = countMails(
    options.mailer ?? (config.smtpUrl ? createSmtpMailer(config.smtpUrl, config.mailFrom) : createOutboxMailer(config.dataDir, config.mailFrom, log)),
    metrics,
  );
  const ctx: AppContext = {
    config,
    db: database.db,
    dbKind: database.kind,
    holdBackgroundCheckpoints: () => database.holdBackgroundCheckpoints(),
    clock: options.clock ?? systemClock,
    mailer,
    passwords: new PasswordHasher(),
    secret: loadOrCreateSecret(config.secretKey, config.dataDir),
    log,
    metrics,
    wakeScheduler: () => undefined,
    // The composition root: features plug into the engine's ports and into each other's registries here.
    deliveryPorts: {
      selectAudiencePage,
      countAudienceByZone,
      // A subscriber a push service says is gone is "removed" for the subscriber-removed hooks (webhooks), in the result transaction.
      deactivateGoneSubscribers: (trx, gone, now) => deactivateGoneSubscribers(trx, gone, now, ctx.subscriberRemovedHooks),
      addToSiteCounters: addSendToSiteCounters,
      addToDeliveryHealth,
      runFinished: webhooksOnRunFinished,
    },
    onSiteEvent: (trx, event) => fireTriggers(trx, database.kind, event),
    segmentUseFinders: [notificationsUsingSegment, runsUsingSegment, campaignsUsingSegment, feedsUsingSegment],
  };
  ctx.subscriberCreatedHooks = [enrolInWelcomeCampaign(ctx), webhooksOnSubscriberCreated(ctx)];
  // An import enrols the subscribers it created only when asked, and sends no subscriber.created webhook per row (docs/product.md, "Importing subscribers").
  ctx.subscriberImportedHooks = [enrolImportedSubscribers(ctx)];
  ctx.subscriberRemovedHooks = [webhooksOnSubscriberRemoved];
  ctx.notificationClickedHooks = [webhooksOnNotificationClicked];
  metrics.watchDeliveryBacklog(async () => {
    const now = ctx.clock.now();
    const backlog = await deliveryBacklog(ctx.db, now);
    return { pending: backlog.pending, leased: backlog.leased, oldestPendingSeconds: backlog.oldestPendingAt === null ? 0 : Math.max(0, now - backlog.oldestPendingAt) / 1000 };
  });
  metrics.watchBeaconBacklog(async () => {
    const beacons = await unfoldedBeacons(ctx.db);
    return { unfolded: beacons.count, oldestUnfoldedSeconds: beacons.oldestAt === null ? 0 : Math.max(0, ctx.clock.now() - beacons.oldestAt) / 1000 };
  });
  return {
    ctx,
    database,
    async close() {
      mailer.close();
      await database.close();
    },
  };
}

/** What every process needs to be ready: the database answers and has this version's schema (GET /readyz). */
export function databaseReadiness(ctx: Pick<AppContext, 'db' | 'dbKind'>): ReadinessCheck[] {
  return [
    {
      name: 'database',
      async check() {
        await sql`select 1`.execute(ctx.db);
        return undefined;
      },
    },
    {
      name: 'migrations',
      async check() {
        const pending = await pendingMigrations({ db: ctx.db, kind: ctx.dbKind });
        return pending.length ? `${pending.length} migration(s) pending: run \`herald migrate\`` : undefined;
      },
    },
  ];
}
