// One page of the subscribers list at any size (docs/product.md,
// "Subscribers"; issue 15 part 5, measured by `npm run bench:lists`).
//
// - The total of the status filters is exact without counting a million rows:
//   active subscribers are sites.active_subscriber_count (kept exact in the
//   transaction of every change of active state), inactive ones a count of a
//   short index range; All is their sum. A search counts the matching rows
//   (on index ranges once search.ts has resolved it).
// - The list is paged by offset (the page's Previous/Next and `page` in the
//   API). A page in the far half of the list is read from the other end in
//   the reverse order and turned round, so the last page of a million costs
//   what the first does.
import type { Kysely, Transaction } from 'kysely';
import type { Database, SubscriberRow } from '../../db/schema';
import { readActiveSubscriberCount } from '../analytics/site-counters';
import * as repo from './repository';

type Db = Kysely<Database> | Transaction<Database>;

export async function subscriberListTotal(db: Db, siteId: string, filters: repo.SubscriberFilters): Promise<number> {
  if (filters.searchParts) return repo.countSearchParts(db, siteId, filters.searchParts, filters.isActive);
  if (filters.search) return repo.countSubscribers(db, siteId, filters);
  if (filters.isActive === true) return readActiveSubscriberCount(db, siteId);
  const inactive = await repo.countInactiveSubscribers(db, siteId);
  return filters.isActive === false ? inactive : inactive + (await readActiveSubscriberCount(db, siteId));
}

/** "<subscribed_at in ms>.<id>": where a page starts or ends (contracts `listCursor`). */
export function listCursorOf(row: SubscriberRow): string {
  return `${row.subscribed_at}.${row.id}`;
}

function parseListCursor(cursor: string): repo.ExportCursor {
  const dot = cursor.indexOf('.');
  return { subscribedAt: Number(cursor.slice(0, dot)), id: cursor.slice(dot + 1) };
}

/**
 * The page next to a cursor (Next and Previous in the dashboard): `after`,
 * the `limit` rows following it in list order; `before`, those preceding it.
 * A seek on the list's index and one page of entries, however deep the page
 * (an offset steps over every row before it: half a million for the middle
 * of a million).
 */
export async function subscriberListPageAt(db: Db, siteId: string, filters: repo.SubscriberFilters, cursor: { after?: string; before?: string }, limit: number): Promise<SubscriberRow[]> {
  if (cursor.after) return repo.listSubscribers(db, siteId, filters, { offset: 0, limit, order: 'newest', past: parseListCursor(cursor.after) });
  const rows = await repo.listSubscribers(db, siteId, filters, { offset: 0, limit, order: 'oldest', past: parseListCursor(cursor.before!) });
  return rows.reverse();
}

/** Rows offset…offset+limit−1 of the list (newest first) of `total` rows. */
export async function subscriberListPage(db: Db, siteId: string, filters: repo.SubscriberFilters, offset: number, limit: number, total: number): Promise<SubscriberRow[]> {
  if (offset >= total) return [];
  const end = Math.min(total, offset + limit);
  // The page's middle past the list's middle: fewer rows to step over from the oldest end.
  if (offset + end > total) {
    const rows = await repo.listSubscribers(db, siteId, filters, { offset: total - end, limit: end - offset, order: 'oldest' });
    return rows.reverse();
  }
  return repo.listSubscribers(db, siteId, filters, { offset, limit, order: 'newest' });
}
