import type { Kysely } from 'kysely';

// Visitors who already allowed notifications (docs/product.md, Settings,
// "Herald's rule (visitors who already allowed notifications)"):
// - resubscribe_granted: the snippet subscribes a browser whose permission is
//   already granted (e.g. to the site's previous push provider) without a
//   prompt. On for every site, existing ones too: such visitors agreed to
//   notifications from this site already.
// - replace_foreign_subscription: when that browser holds another provider's
//   subscription (another key on the same service-worker registration), the
//   snippet replaces it with Herald's. Off: it belongs to someone else.
// Shipped migrations are never edited: add a new file instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('sites')
    .addColumn('resubscribe_granted', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema
    .alterTable('sites')
    .addColumn('replace_foreign_subscription', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sites').dropColumn('replace_foreign_subscription').execute();
  await db.schema.alterTable('sites').dropColumn('resubscribe_granted').execute();
}
