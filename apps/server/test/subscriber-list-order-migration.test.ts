import crypto from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate';
import { insertOwnerAndSite, openDatabaseAt, type OldDatabase } from './support/old-schema';

// Migration 0029 on a database of 0026 (issue 15 part 5, bench:lists): the
// subscribers' (site_id, subscribed_at) index becomes (site_id,
// subscribed_at, id), the list's exact order, and the rows stay as they were.

describe('migration 0029 on a database of 0026 with subscribers', () => {
  const T0 = Date.UTC(2026, 5, 1, 9);
  const user = crypto.randomUUID();
  const site = crypto.randomUUID();
  const subscribers = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
  let old: OldDatabase;
  let db: Kysely<any>;

  async function indexesOfSubscribers(): Promise<string[]> {
    const rows =
      old.handle.kind === 'postgres'
        ? await sql<{ name: string }>`SELECT indexname AS name FROM pg_indexes WHERE tablename = 'subscribers'`.execute(db)
        : await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'subscribers'`.execute(db);
    return rows.rows.map((row) => row.name);
  }

  beforeAll(async () => {
    old = await openDatabaseAt('0026_ab_tests');
    db = old.db;
    await insertOwnerAndSite(db, { user, site }, T0);
    for (const [i, id] of subscribers.entries()) {
      await db
        .insertInto('subscribers')
        .values({
          id,
          site_id: site,
          endpoint: `https://fcm.googleapis.com/fcm/send/${id}`,
          endpoint_hash: id,
          p256dh: 'key',
          auth: 'auth',
          browser: 'Chrome',
          os: 'Windows',
          country: 'US',
          is_active: 1,
          subscribed_at: T0 + (i === 2 ? 0 : i),
          last_seen_at: T0,
          updated_at: T0,
        })
        .execute();
    }
  });
  afterAll(async () => old?.close());

  it('replaces the index by one in list order and keeps every subscriber', async () => {
    expect(await indexesOfSubscribers()).toContain('subscribers_site_subscribed');
    expect(await migrateToLatest(old.handle)).toContain('0029_subscriber_list_order');
    const indexes = await indexesOfSubscribers();
    expect(indexes).toContain('subscribers_site_subscribed_id');
    expect(indexes).not.toContain('subscribers_site_subscribed');
    const rows = await db.selectFrom('subscribers').select('id').where('site_id', '=', site).orderBy('subscribed_at', 'desc').orderBy('id', 'desc').execute();
    const want = [subscribers[1]!, ...[subscribers[0]!, subscribers[2]!].sort().reverse()];
    expect(rows.map((row) => row.id)).toEqual(want);
  });
});
