import crypto from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate';
import { indexDefinitionOf, insertOwnerAndSite, openDatabaseAt, type OldDatabase } from './support/old-schema';
import { subscriberRow } from './support/subscriber-rows';

// Migration 0031 on a database of 0029 (issue 15 part 3): the (site_id,
// external_id) index holds only identified subscribers, and a lookup by
// external id still reads it (the privacy tools' and the identify call's).

describe('migration 0031 on a database of 0029 with subscribers', () => {
  const T0 = Date.UTC(2026, 5, 1, 9);
  const user = crypto.randomUUID();
  const site = crypto.randomUUID();
  let old: OldDatabase;
  let db: Kysely<any>;

  const indexDefinition = () => indexDefinitionOf(old, 'subscribers_site_external');

  async function planOfLookup(): Promise<string> {
    if (old.handle.kind === 'postgres') {
      // Few rows: a sequential scan would win on cost, so ask whether the index can serve at all.
      return db.connection().execute(async (connection) => {
        await sql`SET enable_seqscan = off`.execute(connection);
        const plan = await sql<{ 'QUERY PLAN': string }>`EXPLAIN SELECT id FROM subscribers WHERE site_id = ${site} AND external_id = ${'customer-7'}`.execute(connection);
        await sql`RESET enable_seqscan`.execute(connection);
        return plan.rows.map((row) => row['QUERY PLAN']).join('\n');
      });
    }
    const plan = await sql<{ detail: string }>`EXPLAIN QUERY PLAN SELECT id FROM subscribers WHERE site_id = ${site} AND external_id = ${'customer-7'}`.execute(db);
    return plan.rows.map((row) => row.detail).join('\n');
  }

  beforeAll(async () => {
    old = await openDatabaseAt('0029_subscriber_list_order');
    db = old.db;
    await insertOwnerAndSite(db, { user, site }, T0);
    for (const [i, externalId] of [null, 'customer-7', null].entries()) {
      const id = crypto.randomUUID();
      await db
        .insertInto('subscribers')
        .values(subscriberRow(site, { id, subscribed_at: T0 + i, external_id: externalId }))
        .execute();
    }
  });
  afterAll(async () => old?.close());

  it('makes the index partial (identified subscribers only); a lookup by external id still uses it and finds the subscriber', async () => {
    expect(await indexDefinition()).not.toMatch(/where/i);
    expect(await migrateToLatest(old.handle)).toContain('0031_partial_external_id_index');
    expect(await indexDefinition()).toMatch(/where .*external_id.* is not null/i);
    expect(await planOfLookup()).toContain('subscribers_site_external');
    const found = await db.selectFrom('subscribers').select('external_id').where('site_id', '=', site).where('external_id', '=', 'customer-7').execute();
    expect(found).toEqual([{ external_id: 'customer-7' }]);
    expect(Number((await db.selectFrom('subscribers').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)).toBe(3);
  });
});
