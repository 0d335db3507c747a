// Kysely's view of the database: one Database interface naming every table,
// and the row types services use. Column conventions: columns.ts. Tables are
// grouped by area in the files beside this one; a new table is added to its
// area's file and listed here once.
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { RateLimitsTable, SecretFingerprintsTable, SessionsTable, UploadsTable, UsersTable, UserTokensTable } from './accounts';
import type { SegmentsTable, SeqCountersTable, SiteEventsTable, SubscribersTable, SubscriberTagsTable } from './audience';
import type { SubscriberImportRejectsTable, SubscriberImportSeenTable, SubscriberImportsTable } from './imports';
import type { RssFeedItemsTable, RssFeedsTable, WelcomeCampaignEnrollmentsTable, WelcomeCampaignsTable, WelcomeCampaignStepsTable } from './campaigns';
import type {
  AbTestsTable,
  DeliveriesTable,
  DeliveryStatsHourlyTable,
  NotificationFailuresTable,
  NotificationRunsTable,
  NotificationsTable,
  NotificationTriggersTable,
  RecurringSchedulesTable,
  StatsHourlyTable,
} from './sending';
import type { CompactedDeliveriesTable, ReportReadsTable } from './retention';
import type { PromptStatsTable, SiteApiKeysTable, SitesTable, SiteVapidKeysTable, TestDeviceLinksTable } from './sites';
import type { AuditLogTable, SiteInvitationsTable, SiteMembersTable } from './teams';
import type { UncountedBeaconsTable } from './tracking';
import type { WebhookAttemptsTable, WebhookClickTalliesTable, WebhookDeliveriesTable, WebhooksTable } from './webhooks';

export type * from './accounts';
export type * from './audience';
export type * from './campaigns';
export type * from './imports';
export type * from './retention';
export type * from './sending';
export type * from './sites';
export type * from './teams';
export type * from './tracking';
export type * from './webhooks';
export type { NotificationStatus, NotificationType, SiteEventSource } from '@herald/contracts';

export interface Database {
  users: UsersTable;
  sessions: SessionsTable;
  user_tokens: UserTokensTable;
  rate_limits: RateLimitsTable;
  secret_fingerprints: SecretFingerprintsTable;
  uploads: UploadsTable;
  sites: SitesTable;
  site_api_keys: SiteApiKeysTable;
  site_vapid_keys: SiteVapidKeysTable;
  subscribers: SubscribersTable;
  /** SQLite only (migration 0036). */
  seq_counters: SeqCountersTable;
  subscriber_tags: SubscriberTagsTable;
  segments: SegmentsTable;
  site_events: SiteEventsTable;
  notifications: NotificationsTable;
  notification_runs: NotificationRunsTable;
  deliveries: DeliveriesTable;
  compacted_deliveries: CompactedDeliveriesTable;
  report_reads: ReportReadsTable;
  ab_tests: AbTestsTable;
  stats_hourly: StatsHourlyTable;
  uncounted_beacons: UncountedBeaconsTable;
  notification_failures: NotificationFailuresTable;
  delivery_stats_hourly: DeliveryStatsHourlyTable;
  recurring_schedules: RecurringSchedulesTable;
  notification_triggers: NotificationTriggersTable;
  welcome_campaigns: WelcomeCampaignsTable;
  welcome_campaign_steps: WelcomeCampaignStepsTable;
  welcome_campaign_enrollments: WelcomeCampaignEnrollmentsTable;
  rss_feeds: RssFeedsTable;
  rss_feed_items: RssFeedItemsTable;
  site_members: SiteMembersTable;
  site_invitations: SiteInvitationsTable;
  audit_log: AuditLogTable;
  test_device_links: TestDeviceLinksTable;
  prompt_stats: PromptStatsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  webhook_click_tallies: WebhookClickTalliesTable;
  subscriber_imports: SubscriberImportsTable;
  subscriber_import_rejects: SubscriberImportRejectsTable;
  subscriber_import_seen: SubscriberImportSeenTable;
}

export type UserRow = Selectable<UsersTable>;
export type SiteRow = Selectable<SitesTable>;
export type NewSite = Insertable<SitesTable>;
export type SiteUpdate = Updateable<SitesTable>;
export type SiteApiKeyRow = Selectable<SiteApiKeysTable>;
export type SiteVapidKeyRow = Selectable<SiteVapidKeysTable>;
export type SubscriberRow = Selectable<SubscribersTable>;
export type SegmentRow = Selectable<SegmentsTable>;
export type SiteEventRow = Selectable<SiteEventsTable>;
export type NotificationRow = Selectable<NotificationsTable>;
export type RunRow = Selectable<NotificationRunsTable>;
export type AbTestRow = Selectable<AbTestsTable>;
export type RecurringScheduleRow = Selectable<RecurringSchedulesTable>;
export type NotificationTriggerRow = Selectable<NotificationTriggersTable>;
export type WelcomeCampaignRow = Selectable<WelcomeCampaignsTable>;
export type WelcomeCampaignStepRow = Selectable<WelcomeCampaignStepsTable>;
export type RssFeedRow = Selectable<RssFeedsTable>;
export type SiteInvitationRow = Selectable<SiteInvitationsTable>;
export type AuditLogRow = Selectable<AuditLogTable>;
