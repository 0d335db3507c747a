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
import * as repo from './repository';

type Db = Kysely<Database> | Transaction<Database>;

export async function subscriberListTotal(db: Db, siteId: string, filters: repo.SubscriberFilters): Promise<number> {
  if (filters.searchParts) return repo.countSearchParts(db, siteId, filters.searchParts, filters.isActive);
  if (filters.search) return repo.countSubscribers(db, siteId, filters);
  if (filters.isActive === true) return repo.activeSubscriberCounter(db, siteId);
  const inactive = await repo.countInactiveSubscribers(db, siteId);
  return filters.isActive === false ? inactive : inactive + (await repo.activeSubscriberCounter(db, siteId));
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
