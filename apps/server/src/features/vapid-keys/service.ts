// A site's VAPID key pairs (docs/product.md, "VAPID keys"; docs/web-push.md,
// "RFC 8292: VAPID"): import a pair the site used elsewhere, choose the
// primary one (new subscriptions, the snippet), retire one nobody uses any
// more. Admins and owners, like the site's other settings (docs/product.md §6;
// docs/security.md, "Tenancy"). The private key never leaves the server.
import crypto from 'node:crypto';
import type { VapidKey } from '@herald/contracts';
import type { AppContext } from '../../context';
import { isUniqueViolation } from '../../db/database';
import type { SiteVapidKeyRow } from '../../db/schema';
import { importVapidKeyPair, VapidKeyImportError } from '../../delivery/vapid-keys';
import { badRequest, conflict, notFound } from '../../platform/errors';
import { iso } from '../../platform/responses';
import { recordAudit } from '../audit-log/record';
import { requireSiteRole } from '../sites/service';
import * as repo from './repository';

/** Keys a site may hold besides retired ones: enough for a few migrations, not a key store. */
export const MAX_VAPID_KEYS_PER_SITE = 20;

function toVapidKeyResponse(row: SiteVapidKeyRow, subscriberCount: number): VapidKey {
  return { id: row.id, public_key: row.public_key, is_primary: row.is_primary === 1, subscriber_count: subscriberCount, created_at: iso(row.created_at) };
}

/** What the audit log names a key by: the start of its public key. */
const keyLabel = (row: Pick<SiteVapidKeyRow, 'public_key'>) => `${row.public_key.slice(0, 12)}…`;

export function createVapidKeysService(ctx: Pick<AppContext, 'db' | 'dbKind' | 'clock'>) {
  const { db, clock } = ctx;

  async function countOf(siteId: string, row: SiteVapidKeyRow): Promise<number> {
    const counts = await repo.activeSubscribersPerKey(db, siteId);
    return (counts.get(row.id) ?? 0) + (row.is_primary === 1 ? (counts.get(null) ?? 0) : 0);
  }

  async function requireKey(siteId: string, keyId: string): Promise<SiteVapidKeyRow> {
    const key = await repo.findKey(db, siteId, keyId);
    if (!key) throw notFound('VAPID key');
    return key;
  }

  return {
    async list(userId: string, siteId: string): Promise<VapidKey[]> {
      await requireSiteRole(ctx, userId, siteId, 'admin');
      const [rows, counts] = await Promise.all([repo.listKeys(db, siteId), repo.activeSubscribersPerKey(db, siteId)]);
      return rows.map((row) => toVapidKeyResponse(row, (counts.get(row.id) ?? 0) + (row.is_primary === 1 ? (counts.get(null) ?? 0) : 0)));
    },

    /** Imports a key pair (base64url raw or PEM), checked to be one P-256 pair; it is not primary until made so. */
    async import(userId: string, siteId: string, input: { public_key: string; private_key: string }): Promise<VapidKey> {
      await requireSiteRole(ctx, userId, siteId, 'admin');
      let pair: { publicKey: string; privateKey: string };
      try {
        pair = importVapidKeyPair(input.public_key, input.private_key);
      } catch (error) {
        if (error instanceof VapidKeyImportError) throw badRequest(error.message, 'invalid_vapid_key');
        throw error;
      }
      const row: SiteVapidKeyRow = {
        id: crypto.randomUUID(),
        site_id: siteId,
        public_key: pair.publicKey,
        private_key: pair.privateKey,
        is_primary: 0,
        created_at: clock.now(),
        retired_at: null,
      };
      const alreadyThere = () => conflict('This public key is already one of this site’s VAPID keys');
      try {
        await db.transaction().execute(async (trx) => {
          if (!(await repo.lockSiteKeys(trx, ctx.dbKind, siteId))) throw notFound('Site');
          if (await repo.findKeyByPublicKey(trx, siteId, pair.publicKey)) throw alreadyThere();
          if ((await repo.listKeys(trx, siteId)).length >= MAX_VAPID_KEYS_PER_SITE) {
            throw conflict(`A site can hold at most ${MAX_VAPID_KEYS_PER_SITE} VAPID keys; retire one nobody uses first`);
          }
          await repo.insertKey(trx, row);
          await recordAudit(ctx, { siteId, actor: { userId }, action: 'vapid_key_created', subject: { type: 'vapid_key', id: row.id, label: keyLabel(row) } }, trx);
        });
      } catch (error) {
        // Two imports of the same key at once: the unique (site, public key) index stops the second.
        if (isUniqueViolation(error)) throw alreadyThere();
        throw error;
      }
      return toVapidKeyResponse(row, 0);
    },

    /** Makes a key the site's primary one, atomically: exactly one primary per site. */
    async makePrimary(userId: string, siteId: string, keyId: string): Promise<VapidKey> {
      await requireSiteRole(ctx, userId, siteId, 'admin');
      const key = await db.transaction().execute(async (trx) => {
        if (!(await repo.lockSiteKeys(trx, ctx.dbKind, siteId))) throw notFound('Site');
        const found = await repo.findKey(trx, siteId, keyId);
        if (!found) throw notFound('VAPID key');
        if (found.is_primary === 1) return found;
        await repo.makePrimary(trx, siteId, found, clock.now());
        await recordAudit(ctx, { siteId, actor: { userId }, action: 'vapid_key_made_primary', subject: { type: 'vapid_key', id: found.id, label: keyLabel(found) } }, trx);
        return { ...found, is_primary: 1 };
      });
      return toVapidKeyResponse(key, await countOf(siteId, key));
    },

    /** Retires a key that is not primary and that no active subscriber uses; its row stays (inactive subscribers may point to it). */
    async retire(userId: string, siteId: string, keyId: string): Promise<void> {
      await requireSiteRole(ctx, userId, siteId, 'admin');
      await requireKey(siteId, keyId);
      await db.transaction().execute(async (trx) => {
        if (!(await repo.lockSiteKeys(trx, ctx.dbKind, siteId))) throw notFound('Site');
        const key = await repo.findKey(trx, siteId, keyId);
        if (!key) throw notFound('VAPID key');
        if (key.is_primary === 1) throw conflict('This is the site’s primary VAPID key: make another key primary before retiring this one');
        const inUse = await repo.countActiveSubscribersOfKey(trx, key.id);
        if (inUse > 0) {
          throw conflict(`${inUse} active subscriber${inUse === 1 ? ' still uses' : 's still use'} this VAPID key: it can be retired once they have moved to the primary key or unsubscribed`);
        }
        await repo.retireKey(trx, key.id, clock.now());
        await recordAudit(ctx, { siteId, actor: { userId }, action: 'vapid_key_retired', subject: { type: 'vapid_key', id: key.id, label: keyLabel(key) } }, trx);
      });
    },
  };
}
