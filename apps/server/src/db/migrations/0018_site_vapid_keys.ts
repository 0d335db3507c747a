import crypto from 'node:crypto';
import { sql, type Kysely } from 'kysely';

// Bring your own VAPID keys, and rotation (docs/product.md, "VAPID keys";
// docs/web-push.md, "RFC 8292: VAPID"):
// - site_vapid_keys: the key pairs of a site, one of them primary (the one
//   new subscriptions are made with and the snippet carries). The private key
//   is stored as sites.vapid_private_key is (the base64url scalar, as is:
//   docs/security.md, "Secrets at rest"). Each site's existing pair becomes its
//   first key, primary. sites.vapid_public_key / vapid_private_key stay, and
//   always hold the primary pair.
// - subscribers.vapid_key_id: the key the browser subscribed with; every
//   push to it is signed with that key. Existing subscribers get their site's key.
// Shipped migrations are never edited: add a new file instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('site_vapid_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('private_key', 'text', (c) => c.notNull())
    .addColumn('is_primary', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('retired_at', 'bigint')
    .execute();
  await db.schema.createIndex('site_vapid_keys_site_public').on('site_vapid_keys').columns(['site_id', 'public_key']).unique().execute();
  // Exactly one primary per site: a second one is refused by the database.
  await db.schema
    .createIndex('site_vapid_keys_one_primary')
    .on('site_vapid_keys')
    .column('site_id')
    .unique()
    .where(sql<boolean>`is_primary = 1`)
    .execute();

  const sites = await sql<{ id: string; vapid_public_key: string; vapid_private_key: string; created_at: number | string }>`
    select id, vapid_public_key, vapid_private_key, created_at from sites`.execute(db);
  for (const site of sites.rows) {
    await sql`insert into site_vapid_keys (id, site_id, public_key, private_key, is_primary, created_at, retired_at)
      values (${crypto.randomUUID()}, ${site.id}, ${site.vapid_public_key}, ${site.vapid_private_key}, 1, ${Number(site.created_at)}, null)`.execute(db);
  }

  await db.schema
    .alterTable('subscribers')
    .addColumn('vapid_key_id', 'text', (c) => c.references('site_vapid_keys.id').onDelete('set null'))
    .execute();
  await sql`update subscribers set vapid_key_id = (select k.id from site_vapid_keys k where k.site_id = subscribers.site_id and k.is_primary = 1)`.execute(db);
  // Subscriber counts per key, and "is this key still in use" when retiring it.
  await db.schema.createIndex('subscribers_vapid_key').on('subscribers').columns(['vapid_key_id', 'is_active']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('subscribers_vapid_key').execute();
  await db.schema.alterTable('subscribers').dropColumn('vapid_key_id').execute();
  await db.schema.dropTable('site_vapid_keys').execute();
}
