import type { Kysely } from 'kysely';

// Retry of a finished send (POST /notifications/{id}/retry) gives the re-sent
// deliveries a new message lifetime: a push's TTL runs from when it is sent
// (RFC 8030 §5.2), so the retries of a send older than its TTL are measured
// from the Retry, not from the run's first start (docs/delivery.md, "Retries").
// Null until a run is retried. Shipped migrations are never edited: add a new file instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('notification_runs').addColumn('retried_at', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('notification_runs').dropColumn('retried_at').execute();
}
