import { sql, type Kysely } from 'kysely';
import type { DatabaseKind } from '../database';

// Importing subscribers (docs/product.md, "Importing subscribers"):
// - subscriber_imports: one uploaded file and the job reading it. bytes_read /
//   lines_read are where the last committed batch ended, so an import whose
//   worker died is resumed from there (claimed again once lease_until passed).
// - subscriber_import_rejects: the report, one row per rejected line.
// - subscriber_import_seen: the subscribers this import wrote so far and the
//   line each came from (duplicates within the file, across batches and a
//   resume, without holding the file's endpoints in memory). Keyed by
//   subscriber id, which an import hands out in time order, so it is written
//   at its end, not all over it. Emptied when the import finishes.
// Shipped migrations are never edited: add a new file instead.
export async function up(db: Kysely<unknown>, kind: DatabaseKind): Promise<void> {
  await db.schema
    .createTable('subscriber_imports')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('site_id', 'text', (c) => c.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('created_by', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('stored_file', 'text', (c) => c.notNull())
    .addColumn('file_size', 'bigint', (c) => c.notNull())
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('columns', 'text')
    .addColumn('vapid_key_id', 'text', (c) => c.notNull())
    .addColumn('enrol_in_welcome_campaign', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('bytes_read', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('lines_read', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('rows_read', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('imported', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('updated', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('rejected', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_until', 'bigint')
    .addColumn('error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('finished_at', 'bigint')
    .execute();
  await db.schema.createIndex('subscriber_imports_site').on('subscriber_imports').columns(['site_id', 'created_at']).execute();
  await db.schema.createIndex('subscriber_imports_status').on('subscriber_imports').columns(['status', 'lease_until']).execute();

  await db.schema
    .createTable('subscriber_import_rejects')
    .addColumn('import_id', 'text', (c) => c.notNull().references('subscriber_imports.id').onDelete('cascade'))
    .addColumn('line', 'bigint', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('detail', 'text', (c) => c.notNull())
    .addColumn('endpoint', 'text')
    .addPrimaryKeyConstraint('subscriber_import_rejects_pk', ['import_id', 'line'])
    .execute();

  // One B-tree on SQLite (WITHOUT ROWID): a row per subscriber written, so it is written as often as subscribers are.
  await db.schema
    .createTable('subscriber_import_seen')
    .addColumn('import_id', 'text', (c) => c.notNull().references('subscriber_imports.id').onDelete('cascade'))
    .addColumn('subscriber_id', 'text', (c) => c.notNull())
    .addColumn('line', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('subscriber_import_seen_pk', ['import_id', 'subscriber_id'])
    .$call((table) => (kind === 'sqlite' ? table.modifyEnd(sql`without rowid`) : table))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('subscriber_import_seen').execute();
  await db.schema.dropTable('subscriber_import_rejects').execute();
  await db.schema.dropTable('subscriber_imports').execute();
}
