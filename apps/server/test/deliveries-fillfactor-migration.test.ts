import crypto from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { Migrator } from 'kysely/migration';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate';
import { migrationsFor } from '../src/db/migrations';
import type { Database } from '../src/db/schema';
import { claimDeliveries } from '../src/delivery/runs';
import { insertOneTimeSend, insertOwnerAndSite, openDatabaseAt, type OldDatabase } from './support/old-schema';
import { subscriberRow } from './support/subscriber-rows';

// Migration 0037 on a database of 0036 (docs/storage.md, "Room for updates on
// PostgreSQL"): PostgreSQL fills new pages of `deliveries` to 60%, so a
// batch's claim (lease, next attempt, attempts) rewrites a row inside its own
// page, without new index entries; SQLite has no fillfactor and is unchanged.

describe('migration 0037 on a database of 0036', () => {
  const T0 = Date.UTC(2026, 5, 1, 9);
  const ids = { user: crypto.randomUUID(), site: crypto.randomUUID(), notification: crypto.randomUUID(), run: crypto.randomUUID() };
  /** Enough rows to fill more than one 8 kB page at any fillfactor. */
  const ROWS = 400;
  let old: OldDatabase;
  let db: Kysely<any>;

  beforeAll(async () => {
    old = await openDatabaseAt('0036_deliveries_subscriber_seq');
    db = old.db;
    await insertOwnerAndSite(db, { user: ids.user, site: ids.site }, T0);
    await insertOneTimeSend(db, { site: ids.site, notification: ids.notification, run: ids.run }, { notification: 'sending', run: 'running' }, T0);
  });
  afterAll(async () => old?.close());

  async function fillfactorOfDeliveries(): Promise<string | null> {
    const rows = await sql<{ options: string[] | null }>`SELECT reloptions AS options FROM pg_class WHERE relname = 'deliveries'`.execute(db);
    return rows.rows[0]?.options?.find((option) => option.startsWith('fillfactor=')) ?? null;
  }

  /** Inserts a fresh run's worth of pending rows; answers the first one's id. */
  async function insertPendingRows(): Promise<number> {
    const subscriberIds = Array.from({ length: ROWS }, () => crypto.randomUUID());
    await db
      .insertInto('subscribers')
      .values(subscriberIds.map((id) => subscriberRow(ids.site, { id, subscribed_at: T0 })))
      .execute();
    const { seq: runSeq } = await db.selectFrom('notification_runs').select('seq').where('id', '=', ids.run).executeTakeFirstOrThrow();
    const numbered = await db.selectFrom('subscribers').select('seq').where('id', 'in', subscriberIds).orderBy('seq').execute();
    const inserted = await db
      .insertInto('deliveries')
      .values(numbered.map(({ seq }) => ({ run_seq: runSeq, subscriber_seq: seq, status: 'pending', attempts: 0, created_at: T0 })))
      .returning('id')
      .execute();
    return Math.min(...inserted.map((row) => Number(row.id)));
  }

  /** The page a row version lives in (PostgreSQL's ctid is "(page,item)"). */
  async function pageOf(id: number): Promise<string> {
    const rows = await sql<{ ctid: string }>`SELECT ctid::text AS ctid FROM deliveries WHERE id = ${id}`.execute(db);
    return rows.rows[0]!.ctid.replace(/^\((\d+),\d+\)$/, '$1');
  }

  /** A batch's claim of one row, as the engine makes it. */
  async function claim(id: number): Promise<void> {
    expect(await claimDeliveries(db as unknown as Kysely<Database>, [id], T0, 60_000)).toHaveLength(1);
  }

  it('on PostgreSQL leaves room in each new page, so a claim keeps its row in its page; SQLite is unchanged', async () => {
    if (old.handle.kind === 'postgres') {
      expect(await fillfactorOfDeliveries()).toBeNull();
      // Before: the first page is full, so the claimed row moves to another page.
      const before = await insertPendingRows();
      const pageBefore = await pageOf(before);
      await claim(before);
      expect(await pageOf(before)).not.toBe(pageBefore);
    }

    expect(await migrateToLatest(old.handle)).toContain('0037_deliveries_fillfactor');

    if (old.handle.kind === 'postgres') {
      expect(await fillfactorOfDeliveries()).toBe('fillfactor=60');
      const after = await insertPendingRows();
      const pageAfter = await pageOf(after);
      await claim(after);
      expect(await pageOf(after)).toBe(pageAfter);
    }
  });

  it('goes back down to 0036: PostgreSQL fills pages again', async () => {
    const migrator = new Migrator({ db: old.handle.db, provider: { getMigrations: async () => migrationsFor(old.handle.kind) } });
    expect((await migrator.migrateTo('0036_deliveries_subscriber_seq')).error).toBeUndefined();
    if (old.handle.kind === 'postgres') expect(await fillfactorOfDeliveries()).toBeNull();
  });
});
