import type { Kysely } from 'kysely';

// The caller's uploads are listed newest first and summed for the storage
// quota on every upload (UPLOAD_QUOTA_MB); both read by user.
// Shipped migrations are never edited: add a new file instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('uploads_user_created').on('uploads').columns(['user_id', 'created_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('uploads_user_created').execute();
}
