import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Database, UploadsTable } from '../../db/schema';

type Db = Kysely<Database> | Transaction<Database>;

export async function insertUpload(db: Db, upload: Insertable<UploadsTable>): Promise<void> {
  await db.insertInto('uploads').values(upload).execute();
}
