import { sql, type Kysely } from 'kysely';

// Teams (docs/product.md, "Teams"; docs/security.md, "Tenancy"):
// - site_members: who may use a site and with which role. Every existing
//   site's owner (sites.user_id) becomes its first member, as owner.
// - site_invitations: one row per invited (site, email); the rows sent in one
//   mail share the hash of the link's token (the token itself is never stored).
// - audit_log: who did what on a site, append-only, purged after the
//   retention period in batches.
// Shipped migrations are never edited: add a new file instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('site_members')
    .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('site_members_pk', ['site_id', 'user_id'])
    .execute();
  await db.schema.createIndex('site_members_user').on('site_members').columns(['user_id', 'site_id']).execute();
  await sql`insert into site_members (site_id, user_id, role, created_at, updated_at) select id, user_id, 'owner', created_at, created_at from sites`.execute(db);

  await db.schema
    .createTable('site_invitations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('invited_by', 'text', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('accepted_at', 'bigint')
    .addColumn('accepted_by', 'text', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('site_invitations_token').on('site_invitations').column('token_hash').execute();
  await db.schema.createIndex('site_invitations_site').on('site_invitations').columns(['site_id', 'created_at']).execute();

  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text', (c) => c.notNull())
    .addColumn('actor_label', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('subject_type', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text')
    .addColumn('subject_label', 'text')
    .addColumn('changed_fields', 'text', (c) => c.notNull())
    .addColumn('detail', 'text', (c) => c.notNull())
    .addColumn('address', 'text')
    .execute();
  await db.schema.createIndex('audit_log_site_time').on('audit_log').columns(['site_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('audit_log_created_at').on('audit_log').column('created_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['audit_log', 'site_invitations', 'site_members']) await db.schema.dropTable(table).execute();
}
