import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema';

type Db = Kysely<Database> | Transaction<Database>;

/** The stored prompt settings (JSON text, null for the defaults), or undefined when the site does not exist. */
export async function findPromptSettings(
  db: Db,
  siteId: string,
): Promise<{ prompt_settings: string | null; vapid_public_key: string; resubscribe_granted: number; replace_foreign_subscription: number } | undefined> {
  return db
    .selectFrom('sites')
    .select(['prompt_settings', 'vapid_public_key', 'resubscribe_granted', 'replace_foreign_subscription'])
    .where('id', '=', siteId)
    .executeTakeFirst();
}

export async function savePromptSettings(db: Db, siteId: string, json: string, now: number): Promise<void> {
  await db.updateTable('sites').set({ prompt_settings: json, updated_at: now }).where('id', '=', siteId).execute();
}

export async function siteExists(db: Db, siteId: string): Promise<boolean> {
  return (await db.selectFrom('sites').select('id').where('id', '=', siteId).executeTakeFirst()) !== undefined;
}
