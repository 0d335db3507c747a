// The ordered list of migrations. esbuild bundles the server into one file, so
// migrations are imported here rather than read from a folder at run time.
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { DatabaseKind } from '../database';
import * as m0001 from './0001_accounts_and_sites';
import * as m0002 from './0002_audience_and_delivery';
import * as m0003 from './0003_segments';
import * as m0004 from './0004_automation';
import * as m0005 from './0005_welcome_campaigns';
import * as m0006 from './0006_rss_feeds';
import * as m0008 from './0008_auth_hardening';
import * as m0009 from './0009_identity_and_endpoints';
import * as m0010 from './0010_uploads_by_user';
import * as m0011 from './0011_send_outcomes';
import * as m0012 from './0012_onboarding';
import * as m0013 from './0013_secret_fingerprints';
import * as m0014 from './0014_teams';
import * as m0015 from './0015_audit_log_outlives_site';
import * as m0016 from './0016_subscriber_erasure';
import * as m0017 from './0017_webhooks';
import * as m0018 from './0018_site_vapid_keys';
import * as m0019 from './0019_run_order';
import * as m0020 from './0020_subscriber_imports';
import * as m0021 from './0021_resubscribe_granted';
import * as m0022 from './0022_delivery_options';
import * as m0023 from './0023_frequency_cap';
import * as m0024 from './0024_throttled_sends';
import * as m0025 from './0025_local_time_and_quiet_hours';
import * as m0026 from './0026_ab_tests';
import * as m0027 from './0027_delivery_retention';
import * as m0028 from './0028_beacon_counts';
import * as m0029 from './0029_subscriber_list_order';
import * as m0030 from './0030_subscriber_search_and_sample';
import * as m0031 from './0031_partial_external_id_index';
import * as m0032 from './0032_subscriber_tags_sample';
import * as m0033 from './0033_personal_run_retention';
import * as m0034 from './0034_deliveries_without_run_copies';
import * as m0035 from './0035_deliveries_run_seq';
import * as m0036 from './0036_deliveries_subscriber_seq';
import * as m0037 from './0037_deliveries_fillfactor';
import * as m0038 from './0038_subscriber_sample_holds_id';
import * as m0039 from './0039_report_reads';
import * as m0040 from './0040_run_retried_at';

interface MigrationModule {
  up(db: Kysely<unknown>, kind: DatabaseKind): Promise<void>;
  down?(db: Kysely<unknown>, kind: DatabaseKind): Promise<void>;
}

const modules: Record<string, MigrationModule> = {
  '0001_accounts_and_sites': m0001,
  '0002_audience_and_delivery': m0002,
  '0003_segments': m0003,
  '0004_automation': m0004,
  '0005_welcome_campaigns': m0005,
  '0006_rss_feeds': m0006,
  '0008_auth_hardening': m0008,
  '0009_identity_and_endpoints': m0009,
  '0010_uploads_by_user': m0010,
  '0011_send_outcomes': m0011,
  '0012_onboarding': m0012,
  '0013_secret_fingerprints': m0013,
  '0014_teams': m0014,
  '0015_audit_log_outlives_site': m0015,
  '0016_subscriber_erasure': m0016,
  '0017_webhooks': m0017,
  '0018_site_vapid_keys': m0018,
  '0019_run_order': m0019,
  '0020_subscriber_imports': m0020,
  '0021_resubscribe_granted': m0021,
  '0022_delivery_options': m0022,
  '0023_frequency_cap': m0023,
  '0024_throttled_sends': m0024,
  '0025_local_time_and_quiet_hours': m0025,
  '0026_ab_tests': m0026,
  '0027_delivery_retention': m0027,
  '0028_beacon_counts': m0028,
  '0029_subscriber_list_order': m0029,
  '0030_subscriber_search_and_sample': m0030,
  '0031_partial_external_id_index': m0031,
  '0032_subscriber_tags_sample': m0032,
  '0033_personal_run_retention': m0033,
  '0034_deliveries_without_run_copies': m0034,
  '0035_deliveries_run_seq': m0035,
  '0036_deliveries_subscriber_seq': m0036,
  '0037_deliveries_fillfactor': m0037,
  '0038_subscriber_sample_holds_id': m0038,
  '0039_report_reads': m0039,
  '0040_run_retried_at': m0040,
};

export function migrationsFor(kind: DatabaseKind): Record<string, Migration> {
  return Object.fromEntries(
    Object.entries(modules).map(([name, m]) => [
      name,
      { up: (db: Kysely<unknown>) => m.up(db, kind), down: m.down ? (db: Kysely<unknown>) => m.down!(db, kind) : undefined },
    ]),
  );
}
