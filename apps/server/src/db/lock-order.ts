// Every transaction that writes shared rows (counters, rollups, new unique
// keys) takes them in key order, so two of them never wait for each other
// crosswise (delivery/run-counters.ts, "row order"). One comparison for all of
// them: text by code unit, numbers by value, part after part.
import { sql, type Transaction } from 'kysely';
import type { DatabaseKind } from './database';
import type { Database } from './schema';

type KeyPart = string | number;

function compareParts(a: readonly KeyPart[], b: readonly KeyPart[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    return String(x) < String(y) ? -1 : 1;
  }
  return a.length - b.length;
}

/** The rows sorted by their key (a copy; the input is left as it is). */
export function inKeyOrder<T>(rows: Iterable<T>, key: (row: T) => readonly KeyPart[]): T[] {
  return [...rows].sort((a, b) => compareParts(key(a), key(b)));
}

/**
 * Makes the transactions that count a site's rows of one kind before adding
 * one (at most 25 API keys, at most 10 webhooks) take turns. On PostgreSQL two
 * of them at READ COMMITTED would both count below the limit and both insert;
 * a transaction-scoped advisory lock on (kind, site) serializes them without
 * locking the site's row, which every subscribe updates. SQLite has one writer
 * and its transactions already run one after the other.
 */
export async function lockSiteLimit(trx: Transaction<Database>, kind: DatabaseKind, limit: string, siteId: string): Promise<void> {
  if (kind === 'postgres') await sql`select pg_advisory_xact_lock(hashtext(${`herald:limit:${limit}`}), hashtext(${siteId}))`.execute(trx);
}
