import { sql, type Kysely, type Transaction } from 'kysely';
import type { DatabaseKind } from '../database';

// The audit log outlives its site (docs/security.md, "Audit log"): entries
// are never changed or deleted by the API and are kept
// AUDIT_LOG_RETENTION_DAYS, but 0014 made audit_log.site_id reference sites
// ON DELETE CASCADE, so deleting a site wiped its log, the "site deleted"
// entry included. This drops that foreign key; the retention sweep is then
// the only thing that deletes entries.
// - PostgreSQL: the constraint is dropped by the name the database gave it.
// - SQLite cannot drop a constraint: the table is rebuilt without it (same
//   columns, every row copied, the two indexes of 0014 made again), inside
//   one transaction. Nothing references audit_log, so foreign_keys may stay on.
// Shipped migrations are never edited: add a new file instead.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations see the schema as it was, not as the Database type says today
type Db = Kysely<any> | Transaction<any>;

const COLUMNS = [
  'id',
  'site_id',
  'created_at',
  'actor_type',
  'actor_id',
  'actor_label',
  'action',
  'subject_type',
  'subject_id',
  'subject_label',
  'changed_fields',
  'detail',
  'address',
] as const;

export async function up(db: Kysely<unknown>, kind: DatabaseKind): Promise<void> {
  const anyDb = db as Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- see Db
  if (kind === 'postgres') {
    await dropForeignKeysOnPostgres(anyDb);
    return;
  }
  // PostgreSQL runs each migration in a transaction already; on SQLite this one brings its own.
  if (anyDb.isTransaction) await rebuildOnSqlite(anyDb);
  else await anyDb.transaction().execute((trx) => rebuildOnSqlite(trx));
}

async function dropForeignKeysOnPostgres(db: Db): Promise<void> {
  const { rows } = await sql<{ name: string }>`
    select conname as name from pg_constraint
    where conrelid = 'audit_log'::regclass and contype = 'f'
  `.execute(db);
  for (const { name } of rows) await db.schema.alterTable('audit_log').dropConstraint(name).execute();
}

async function rebuildOnSqlite(db: Db): Promise<void> {
  await db.schema
    .createTable('audit_log_rebuilt')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('site_id', 'text', (c) => c.notNull())
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
  await db
    .insertInto('audit_log_rebuilt')
    .columns([...COLUMNS])
    .expression(db.selectFrom('audit_log').select([...COLUMNS]))
    .execute();
  await db.schema.dropTable('audit_log').execute();
  await db.schema.alterTable('audit_log_rebuilt').renameTo('audit_log').execute();
  await db.schema.createIndex('audit_log_site_time').on('audit_log').columns(['site_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('audit_log_created_at').on('audit_log').column('created_at').execute();
}
