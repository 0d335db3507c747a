import type { Kysely } from 'kysely';

// Per-notification delivery options (docs/web-push.md, "TTL, Urgency and
// Topic"; docs/product.md, "Delivery options"): the RFC 8030 TTL (24 hours,
// as every send had until now), Urgency ("normal", as until now), the owner's
// topic name (none: each send keeps its own Topic) and whether the browser
// keeps the notification on screen until the visitor acts on it. Existing
// notifications get the values they were sent with.
// Shipped migrations are never edited: add a new file instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('notifications').addColumn('ttl_seconds', 'integer', (c) => c.notNull().defaultTo(86_400)).execute();
  await db.schema.alterTable('notifications').addColumn('urgency', 'text', (c) => c.notNull().defaultTo('normal')).execute();
  await db.schema.alterTable('notifications').addColumn('topic', 'text').execute();
  await db.schema.alterTable('notifications').addColumn('require_interaction', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['require_interaction', 'topic', 'urgency', 'ttl_seconds']) await db.schema.alterTable('notifications').dropColumn(column).execute();
}
