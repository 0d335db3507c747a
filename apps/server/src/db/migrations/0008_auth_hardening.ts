import { sql, type Kysely } from 'kysely';

// Security hardening of accounts (docs/security.md, "Accounts and sessions"):
// - user_tokens.email: the address a reset or verification link was mailed to.
//   A link works only while the account still has that address, so a link sent
//   to an old address cannot verify or take over the new one. Links issued
//   before this migration have none and are refused (they live an hour or a
//   day; the user asks for a new one).
// - rate_limits.expires_at: when a counter's window ends, so the scheduled
//   purge can delete finished counters whatever their window length. Counters
//   from before this migration had windows of at most one hour.
// - indexes on the expiry columns the purge deletes by.
// Shipped migrations are never edited: add a new file instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('user_tokens').addColumn('email', 'text').execute();

  await db.schema
    .alterTable('rate_limits')
    .addColumn('expires_at', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`update rate_limits set expires_at = window_start + 3600000`.execute(db);

  await db.schema.createIndex('rate_limits_expires_at').on('rate_limits').column('expires_at').execute();
  await db.schema.createIndex('sessions_expires_at').on('sessions').column('expires_at').execute();
  await db.schema.createIndex('user_tokens_expires_at').on('user_tokens').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('user_tokens_expires_at').execute();
  await db.schema.dropIndex('sessions_expires_at').execute();
  await db.schema.dropIndex('rate_limits_expires_at').execute();
  await db.schema.alterTable('rate_limits').dropColumn('expires_at').execute();
  await db.schema.alterTable('user_tokens').dropColumn('email').execute();
}
