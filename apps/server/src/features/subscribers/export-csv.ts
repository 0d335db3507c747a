// The audience as CSV (docs/product.md, "Subscribers"): one line per
// subscriber, oldest first, with the column names the import reads, so a file
// exported with its keys moves the audience to another Herald (or another push
// server) that has the VAPID private key each subscription names. Streamed a keyset page at a
// time: a million subscribers never sit in memory. Every cell goes through
// csvCell, the base64url keys through csvKeyCell (docs/security.md, "CSV injection").
import { SUBSCRIBER_EXPORT_TAG_SEPARATOR, subscriberExportColumns } from '@herald/contracts';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema';
import { csvCell, csvKeyCell, csvLine, csvRow } from '../../platform/csv';
import { iso } from '../../platform/responses';
import * as repo from './repository';
import { tagsOfSubscribers } from '../../db/subscriber-tags';

const PAGE = 1000;

export interface SubscribersCsvOptions {
  siteId: string;
  /** The site's primary VAPID public key, for subscribers written without a key of their own. The keys column set carries each subscriber's key, so the importer knows which private key each subscription needs. */
  vapidPublicKey: string;
  filters: repo.SubscriberFilters;
  includeKeys: boolean;
}

/** The CSV text, a page at a time (a UTF-8 byte order mark first, for spreadsheets). */
export async function* subscribersCsv(db: Kysely<Database>, options: SubscribersCsvOptions): AsyncGenerator<string> {
  yield `\uFEFF${csvLine(subscriberExportColumns(options.includeKeys))}`;
  let after: repo.ExportCursor | null = null;
  const publicKeys = options.includeKeys ? await repo.vapidPublicKeysOfSite(db, options.siteId) : new Map<string, string>();
  for (;;) {
    const rows = await repo.subscribersExportPage(db, options.siteId, options.filters, after, PAGE);
    const tags = await tagsOfSubscribers(
      db,
      rows.map((row) => row.id),
    );
    let chunk = '';
    for (const row of rows) {
      const rest = [
        iso(row.subscribed_at),
        row.browser,
        row.os,
        row.country,
        row.language,
        row.timezone,
        (tags.get(row.id) ?? []).join(SUBSCRIBER_EXPORT_TAG_SEPARATOR),
        row.external_id,
        row.is_active === 1 ? 'active' : 'inactive',
      ].map(csvCell);
      // The endpoint is an https URL (it never starts like a formula); the keys are base64url (csvKeyCell).
      const keys = options.includeKeys ? [csvCell(row.endpoint), csvKeyCell(row.p256dh), csvKeyCell(row.auth), csvKeyCell((row.vapid_key_id && publicKeys.get(row.vapid_key_id)) || options.vapidPublicKey)] : [];
      chunk += csvRow([csvCell(row.id), ...keys, ...rest]);
    }
    if (chunk) yield chunk;
    if (rows.length < PAGE) return;
    const last = rows[rows.length - 1]!;
    after = { subscribedAt: last.subscribed_at, id: last.id };
  }
}
