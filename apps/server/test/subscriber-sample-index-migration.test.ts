import crypto from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { Migrator } from 'kysely/migration';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate';
import { migrationsFor } from '../src/db/migrations';
import type { Database } from '../src/db/schema';
import { sampledMatchingEachQuery } from '../src/features/segments/repository';
import { indexDefinitionOf, insertOwnerAndSite, openDatabaseAt, type OldDatabase } from './support/old-schema';
import { subscriberRow } from './support/subscriber-rows';

// Migration 0038 on a database of 0037 (docs/product.md, "Segments"): the
// estimate sample's index holds the subscriber's id, so the segments list's
// one read of the sample, which joins tag holders on the id, reads the index
// alone; a sampled subscriber stays in it, an unsampled one stays out.

describe('migration 0038 on a database of 0037 with subscribers', () => {
  const T0 = Date.UTC(2026, 5, 1, 9);
  const user = crypto.randomUUID();
  const site = crypto.randomUUID();
  /** A random UUID whose 4th and 3rd characters from the end are `pair` (sampled for "00"–"02"). */
  const idWith = (pair: string) => {
    const id = crypto.randomUUID();
    return `${id.slice(0, -4)}${pair}${id.slice(-2)}`;
  };
  const sampled = [idWith('00'), idWith('02')];
  const unsampled = idWith('ff');
  let old: OldDatabase;
  let db: Kysely<any>;

  const sampleIndex = () => indexDefinitionOf(old, 'subscribers_site_sample');

  /** The plan of the segments list's read of the sample, for a tag and a browser. */
  async function planOfSampleRead(): Promise<string> {
    const compiled = sampledMatchingEachQuery(db as unknown as Kysely<Database>, site, [{ tags: ['vip'] }, { browser: 'Chrome' }], T0).compile();
    if (old.handle.kind === 'postgres') {
      // Few rows: a sequential scan would win on cost, so ask whether the index can serve at all.
      return db.connection().execute(async (connection) => {
        await sql`SET enable_seqscan = off`.execute(connection);
        await sql`SET enable_bitmapscan = off`.execute(connection);
        const plan = await connection.executeQuery<{ 'QUERY PLAN': string }>({ ...compiled, sql: `EXPLAIN ${compiled.sql}` });
        await sql`RESET enable_seqscan`.execute(connection);
        await sql`RESET enable_bitmapscan`.execute(connection);
        return plan.rows.map((row) => row['QUERY PLAN']).join('\n');
      });
    }
    const plan = await db.executeQuery<{ detail: string }>({ ...compiled, sql: `EXPLAIN QUERY PLAN ${compiled.sql}` });
    return plan.rows.map((row) => row.detail).join('\n');
  }

  beforeAll(async () => {
    old = await openDatabaseAt('0037_deliveries_fillfactor');
    db = old.db;
    await insertOwnerAndSite(db, { user, site }, T0);
    for (const [i, id] of [...sampled, unsampled].entries()) await db.insertInto('subscribers').values(subscriberRow(site, { id, subscribed_at: T0 + i })).execute();
    await db.insertInto('subscriber_tags').values({ subscriber_id: sampled[0], site_id: site, tag: 'vip' }).execute();
  });
  afterAll(async () => old?.close());

  it('adds the id to the partial sample index; the sample is read from the index alone and counts the same', async () => {
    expect(await sampleIndex()).not.toMatch(/subscribed_at"?, "?id/);
    expect(await migrateToLatest(old.handle)).toContain('0038_subscriber_sample_holds_id');
    expect(await sampleIndex()).toMatch(/subscribed_at"?, "?id"?\)/);
    expect(await sampleIndex()).toMatch(/where .*substr\(/i);
    expect(await planOfSampleRead()).toMatch(old.handle.kind === 'postgres' ? /Index Only Scan using subscribers_site_sample/ : /COVERING INDEX subscribers_site_sample/);
    const row = (await sampledMatchingEachQuery(db as unknown as Kysely<Database>, site, [{ tags: ['vip'] }, { browser: 'Chrome' }], T0).executeTakeFirstOrThrow()) as Record<string, unknown>;
    expect([Number(row.matching_0), Number(row.matching_1)]).toEqual([1, 2]);
  });

  it('goes back down to 0037: the index as 0030 made it', async () => {
    const migrator = new Migrator({ db: old.handle.db, provider: { getMigrations: async () => migrationsFor(old.handle.kind) } });
    expect((await migrator.migrateTo('0037_deliveries_fillfactor')).error).toBeUndefined();
    expect(await sampleIndex()).toMatch(/subscribed_at"?\)/);
    expect(await sampleIndex()).toMatch(/where .*substr\(/i);
  });
});
