// Moving in and out (docs/product.md, "Subscribers"): the audience as CSV,
// with the push keys when the site moves. The admin's, like removing a
// subscriber: it is personal data, and the keys let whoever has the site's
// VAPID private key push to those browsers.
import type { SubscribersExportQuery } from '@herald/contracts';
import type { AppContext } from '../../context';
import { recordAudit } from '../audit-log/record';
import { requireSiteRole } from '../sites/service';
import { subscribersCsv } from './export-csv';
import { subscriberFilters } from './service';

export function createSubscriberPrivacy(ctx: AppContext) {
  const { db } = ctx;

  return {
    /**
     * The site's subscribers as CSV, with the list's filters; the push keys
     * and the site's VAPID public key only with `include_keys`. Logged when
     * the download starts (the file is streamed, its length unknown then).
     */
    async exportCsv(userId: string, siteId: string, query: SubscribersExportQuery): Promise<{ fileName: string; lines: AsyncGenerator<string> }> {
      const site = await requireSiteRole(ctx, userId, siteId, 'admin');
      const includeKeys = query.include_keys === true;
      const filters = subscriberFilters(query);
      const detail = {
        export: 'subscribers',
        include_keys: includeKeys,
        ...(query.is_active !== undefined ? { is_active: query.is_active } : {}),
        ...(filters.search ? { search: filters.search } : {}),
      };
      await recordAudit(ctx, { siteId, actor: { userId }, action: 'export_run', subject: { type: 'subscriber', id: null }, detail });
      return {
        fileName: `herald-subscribers-${site.id}${includeKeys ? '-with-keys' : ''}.csv`,
        lines: subscribersCsv(db, { siteId, vapidPublicKey: site.vapid_public_key, filters, includeKeys }),
      };
    },

  };
}

export type SubscriberPrivacy = ReturnType<typeof createSubscriberPrivacy>;
