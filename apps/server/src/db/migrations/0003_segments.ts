import type { Kysely } from 'kysely';

// Segments (spec §2 Segments, §3 Segment): a site's named audience rules.
// The rules are a JSON document (contracts segmentRules); who matches is
// decided when a segment is counted or sent to, so nothing else is stored.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('segments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    // lower(trimmed name): two segments of a site cannot share a name, in any case,
    // or the notification form's segment select could not tell them apart.
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('rules', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('segments_site_name_key', ['site_id', 'name_key'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('segments').execute();
}
