import type { Kysely } from 'kysely';

// Which server secrets the running processes use (`herald doctor`, "SECRET_KEY
// is the same everywhere"): each process records a fingerprint of its secret
// (an HMAC, never the secret) when it starts and every few minutes after.
// Two fingerprints seen recently mean two secrets: beacons and links signed by
// one process are refused by another.
// Shipped migrations are never edited: add a new file instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('secret_fingerprints')
    .addColumn('fingerprint', 'text', (col) => col.primaryKey())
    .addColumn('first_seen_at', 'bigint', (col) => col.notNull())
    .addColumn('last_seen_at', 'bigint', (col) => col.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('secret_fingerprints').execute();
}
