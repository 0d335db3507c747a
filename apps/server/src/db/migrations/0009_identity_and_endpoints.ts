import crypto from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import { normalisePushEndpoint } from '../../delivery/push-endpoints';
import type { DatabaseKind } from '../database';

// docs/security.md:
// - "Identity verification": a per-site identity secret and switch, the tags
//   only the site's backend may set, and whether a subscriber's external id
//   was claimed with a valid signature. Sites that exist keep verification
//   off (turning it on would break their identify calls); new sites get it on.
// - "One device, one subscriber": endpoints are stored normalised. Rows stored
//   before were hashed as the browser spelt them, so one browser could be
//   several subscribers; each such group is merged into its oldest row.
// Shipped migrations are never edited: add a new file instead.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations see the schema as it was, not as the Database type says today
type Db = Kysely<any> | Transaction<any>;

const SCAN_PAGE = 1000;

export async function up(db: Kysely<unknown>, kind: DatabaseKind): Promise<void> {
  // PostgreSQL runs each migration in a transaction already. Kysely does not
  // on SQLite, though SQLite's DDL is transactional too: a merge stopped
  // half-way must leave nothing behind, so this one brings its own.
  const anyDb = db as Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- see Db
  if (kind === 'postgres' || anyDb.isTransaction) await migrate(anyDb);
  else await anyDb.transaction().execute((trx) => migrate(trx));
}

async function migrate(db: Db): Promise<void> {
  await db.schema.alterTable('sites').addColumn('identity_secret', 'text').execute();
  await db.schema
    .alterTable('sites')
    .addColumn('identity_verification', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('sites')
    .addColumn('server_only_tags', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
  await db.schema
    .alterTable('subscribers')
    .addColumn('external_id_verified', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await normaliseStoredEndpoints(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('subscribers').dropColumn('external_id_verified').execute();
  await db.schema.alterTable('sites').dropColumn('server_only_tags').execute();
  await db.schema.alterTable('sites').dropColumn('identity_verification').execute();
  await db.schema.alterTable('sites').dropColumn('identity_secret').execute();
}

function sha256Hex(text: string): string {
  return crypto.createHash('sha256').update(text).digest('hex');
}

interface Respelt {
  id: string;
  siteId: string;
  endpoint: string;
  hash: string;
}

/**
 * Rewrites every subscriber whose stored endpoint is not in normal form, and
 * merges the subscribers that turn out to be one browser. Most endpoints are
 * normal already (browsers produce them so); only the others are kept in
 * memory while the table is read page by page.
 */
export async function normaliseStoredEndpoints(db: Db): Promise<void> {
  const respelt: Respelt[] = [];
  let after = '';
  for (;;) {
    const page: Array<{ id: string; site_id: string; endpoint: string; endpoint_hash: string }> = await db
      .selectFrom('subscribers')
      .select(['id', 'site_id', 'endpoint', 'endpoint_hash'])
      .where('id', '>', after)
      .orderBy('id')
      .limit(SCAN_PAGE)
      .execute();
    for (const row of page) {
      const endpoint = normalisePushEndpoint(row.endpoint);
      const hash = sha256Hex(endpoint);
      if (endpoint !== row.endpoint || hash !== row.endpoint_hash) respelt.push({ id: row.id, siteId: row.site_id, endpoint, hash });
    }
    if (page.length < SCAN_PAGE) break;
    after = page[page.length - 1]!.id;
  }
  if (!respelt.length) return;

  const groups = new Map<string, Respelt[]>();
  for (const row of respelt) {
    const key = `${row.siteId}\n${row.hash}`;
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  const sites = new Set<string>();
  for (const rows of groups.values()) {
    const { siteId, endpoint, hash } = rows[0]!;
    sites.add(siteId);
    // A subscriber already stored under the normal spelling is one of the group too.
    const holder = await db.selectFrom('subscribers').select('id').where('site_id', '=', siteId).where('endpoint_hash', '=', hash).executeTakeFirst();
    const ids = [...new Set([...rows.map((r) => r.id), ...(holder ? [holder.id] : [])])];
    await mergeInto(db, ids, endpoint, hash);
  }
  // A merge can only lower the number of active rows; recount rather than adjust.
  for (const siteId of sites) {
    await db
      .updateTable('sites')
      .set({
        active_subscriber_count: db
          .selectFrom('subscribers')
          .select((eb) => eb.fn.countAll().as('active'))
          .where('site_id', '=', siteId)
          .where('is_active', '=', 1),
      })
      .where('id', '=', siteId)
      .execute();
  }
}

interface MergedRow {
  id: string;
  p256dh: string;
  auth: string;
  browser: string | null;
  os: string | null;
  country: string | null;
  language: string | null;
  timezone: string | null;
  user_agent: string | null;
  external_id: string | null;
  external_id_verified: number;
  is_active: number;
  subscribed_at: number;
  last_seen_at: number | null;
  unsubscribed_at: number | null;
  updated_at: number;
}

/**
 * Makes the oldest subscriber of `ids` the one subscriber of that browser,
 * under the normal endpoint, and deletes the others after moving what points
 * at them:
 * - the keeper is active if any of them was, with the keys and description of
 *   the most recently updated row (the browser's current subscription);
 * - tags: the union; external id: the keeper's, else the latest claimed one;
 * - welcome-campaign enrolments in campaigns the keeper is not in move over;
 * - per-subscriber runs move over, except pending ones of a notification the
 *   keeper already has pending or sending (that would reach the browser twice),
 *   which are cancelled;
 * - deliveries move over unless the keeper has one of the same run (then they
 *   stay as recorded history: run counters already count them);
 * - events move over.
 */
async function mergeInto(db: Db, ids: string[], endpoint: string, hash: string): Promise<void> {
  const rows: MergedRow[] = await db
    .selectFrom('subscribers')
    .select([
      'id',
      'p256dh',
      'auth',
      'browser',
      'os',
      'country',
      'language',
      'timezone',
      'user_agent',
      'external_id',
      'external_id_verified',
      'is_active',
      'subscribed_at',
      'last_seen_at',
      'unsubscribed_at',
      'updated_at',
    ])
    .where('id', 'in', ids)
    .execute();
  rows.sort((a, b) => a.subscribed_at - b.subscribed_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const keeper = rows[0]!;
  const others = rows.slice(1);
  const latest = [...rows].sort((a, b) => b.updated_at - a.updated_at)[0]!;
  const active = rows.some((r) => r.is_active === 1);
  const claimed = keeper.external_id !== null ? keeper : [...others].sort((a, b) => b.updated_at - a.updated_at).find((r) => r.external_id !== null);
  const lastSeen = Math.max(...rows.map((r) => r.last_seen_at ?? 0));

  for (const other of others) {
    await db
      .insertInto('subscriber_tags')
      .columns(['subscriber_id', 'site_id', 'tag'])
      .expression(db.selectFrom('subscriber_tags').select([sql.lit(keeper.id).as('subscriber_id'), 'site_id', 'tag']).where('subscriber_id', '=', other.id))
      .onConflict((oc) => oc.columns(['subscriber_id', 'tag']).doNothing())
      .execute();
    await db.deleteFrom('subscriber_tags').where('subscriber_id', '=', other.id).execute();

    await db
      .updateTable('welcome_campaign_enrollments')
      .set({ subscriber_id: keeper.id })
      .where('subscriber_id', '=', other.id)
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('welcome_campaign_enrollments as kept')
              .select(sql.lit(1).as('one'))
              .where('kept.subscriber_id', '=', keeper.id)
              .whereRef('kept.campaign_id', '=', 'welcome_campaign_enrollments.campaign_id'),
          ),
        ),
      )
      .execute();
    await db.deleteFrom('welcome_campaign_enrollments').where('subscriber_id', '=', other.id).execute();

    await db
      .updateTable('notification_runs')
      .set({ status: 'cancelled', finished_at: Date.now(), last_error: 'Merged into the subscriber of the same browser' })
      .where('subscriber_id', '=', other.id)
      .where('status', '=', 'pending')
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('notification_runs as kept')
            .select(sql.lit(1).as('one'))
            .where('kept.subscriber_id', '=', keeper.id)
            .whereRef('kept.notification_id', '=', 'notification_runs.notification_id')
            .where('kept.status', 'in', ['pending', 'sending']),
        ),
      )
      .execute();
    await db.updateTable('notification_runs').set({ subscriber_id: keeper.id }).where('subscriber_id', '=', other.id).execute();

    await db
      .updateTable('deliveries')
      .set({ subscriber_id: keeper.id })
      .where('subscriber_id', '=', other.id)
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('deliveries as kept')
              .select(sql.lit(1).as('one'))
              .where('kept.subscriber_id', '=', keeper.id)
              .whereRef('kept.run_id', '=', 'deliveries.run_id'),
          ),
        ),
      )
      .execute();

    await db.updateTable('site_events').set({ subscriber_id: keeper.id }).where('subscriber_id', '=', other.id).execute();
  }

  // The others go before the keeper takes the normal hash: (site_id, endpoint_hash) is unique.
  if (others.length) await db.deleteFrom('subscribers').where('id', 'in', others.map((r) => r.id)).execute();
  await db
    .updateTable('subscribers')
    .set({
      endpoint,
      endpoint_hash: hash,
      p256dh: latest.p256dh,
      auth: latest.auth,
      browser: latest.browser,
      os: latest.os,
      country: latest.country,
      language: latest.language,
      timezone: latest.timezone,
      user_agent: latest.user_agent,
      external_id: claimed?.external_id ?? null,
      external_id_verified: claimed?.external_id_verified ?? 0,
      is_active: active ? 1 : 0,
      last_seen_at: lastSeen || null,
      unsubscribed_at: active ? null : Math.max(...rows.map((r) => r.unsubscribed_at ?? 0)) || null,
      updated_at: latest.updated_at,
    })
    .where('id', '=', keeper.id)
    .execute();
}
