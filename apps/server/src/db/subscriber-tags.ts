// A subscriber's tags, read by several features (the subscribers list and
// export, an endpoint move, an import merging a file's tags into known
// subscribers): one query shape, in pages of ids so a batch of thousands stays
// within the databases' parameter limits.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema';

const IDS_PER_QUERY = 1000;

/** Tags of each subscriber, sorted, keyed by subscriber id (an empty list for one without tags). */
export async function tagsOfSubscribers(db: Kysely<Database> | Transaction<Database>, subscriberIds: string[]): Promise<Map<string, string[]>> {
  const tags = new Map<string, string[]>(subscriberIds.map((id) => [id, []]));
  for (let i = 0; i < subscriberIds.length; i += IDS_PER_QUERY) {
    const rows = await db
      .selectFrom('subscriber_tags')
      .select(['subscriber_id', 'tag'])
      .where('subscriber_id', 'in', subscriberIds.slice(i, i + IDS_PER_QUERY))
      .orderBy('subscriber_id')
      .orderBy('tag')
      .execute();
    for (const row of rows) tags.get(row.subscriber_id)?.push(row.tag);
  }
  return tags;
}
