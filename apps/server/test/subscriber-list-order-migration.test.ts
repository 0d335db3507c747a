import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate';
import { indexesOf, insertOwnerAndSite, openDatabaseAt, type OldDatabase } from './support/old-schema';
import { subscriberRow } from './support/subscriber-rows';

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

  const indexesOfSubscribers = () => indexesOf(old, 'subscribers');

  beforeAll(async () => {
    old = await openDatabaseAt('0026_ab_tests');
    db = old.db;
    await insertOwnerAndSite(db, { user, site }, T0);
    for (const [i, id] of subscribers.entries()) {
      await db
        .insertInto('subscribers')
        .values(subscriberRow(site, { id, subscribed_at: T0 + (i === 2 ? 0 : i) }))
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
