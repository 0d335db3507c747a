import crypto from 'node:crypto';
import { API_KEY_PREFIX, type ApiKey, type CreatedApiKey } from '@herald/contracts';
import type { AppContext } from '../../context';
import { lockSiteLimit } from '../../db/lock-order';
import type { SiteApiKeyRow } from '../../db/schema';
import { HttpError, conflict, notFound } from '../../platform/errors';
import { iso, isoOrNull } from '../../platform/responses';
import { sha256Hex } from '../../platform/secrets';
import { checkSiteRole } from '../../platform/site-roles';
import { recordAudit } from '../audit-log/record';
import { requireSiteRole } from '../sites/service';
import * as repo from './repository';

/** Characters of the key shown in lists after `hk_`: enough to tell keys apart, far too few to guess the rest (256 bits). */
const VISIBLE_KEY_CHARS = 8;
/** last_used_at is precise to a minute: one write per key per minute at most. */
const LAST_USED_RESOLUTION_MS = 60_000;
/** Plenty for one key per service and environment; a site with more has lost track of its keys. */
export const MAX_ACTIVE_KEYS_PER_SITE = 25;
/** Longer than any key Herald issues; anything longer is refused before hashing. */
const MAX_KEY_LENGTH = 200;

/** 401 with the RFC 6750 §3 challenge, so HTTP clients know a bearer key is expected. */
function keyRejected(message: string, error?: 'invalid_token'): HttpError {
  const challenge = error ? `Bearer realm="herald", error="${error}"` : 'Bearer realm="herald"';
  return new HttpError(401, message, 'unauthorized', { 'www-authenticate': challenge });
}

export function toApiKeyResponse(row: SiteApiKeyRow): ApiKey {
  return { id: row.id, name: row.name, prefix: row.prefix, created_at: iso(row.created_at), last_used_at: isoOrNull(row.last_used_at) };
}

/** `hk_` + 256 random bits, base64url (docs/security.md: tokens ≥ 128 random bits, stored hashed). */
export function generateApiKey(): string {
  return `${API_KEY_PREFIX}${crypto.randomBytes(32).toString('base64url')}`;
}

export function createApiKeysService(ctx: Pick<AppContext, 'db' | 'clock' | 'dbKind'>) {
  const { db, clock } = ctx;
  return {
    async create(userId: string, siteId: string, name: string): Promise<CreatedApiKey> {
      await requireSiteRole(ctx, userId, siteId, 'admin');
      const key = generateApiKey();
      const row: SiteApiKeyRow = {
        id: crypto.randomUUID(),
        site_id: siteId,
        name,
        prefix: key.slice(0, API_KEY_PREFIX.length + VISIBLE_KEY_CHARS),
        key_hash: sha256Hex(key),
        created_at: clock.now(),
        last_used_at: null,
        revoked_at: null,
      };
      await db.transaction().execute(async (trx) => {
        // Counted under the site's lock for this limit: keys created at once cannot all count below it.
        await lockSiteLimit(trx, ctx.dbKind, 'api-keys', siteId);
        if ((await repo.countActiveApiKeys(trx, siteId)) >= MAX_ACTIVE_KEYS_PER_SITE) {
          throw conflict(`A site can have at most ${MAX_ACTIVE_KEYS_PER_SITE} API keys; revoke one you no longer use first`);
        }
        await repo.insertApiKey(trx, row);
        await recordAudit(ctx, { siteId, actor: { userId }, action: 'key_created', subject: { type: 'api_key', id: row.id, label: `${row.name} (${row.prefix}…)` } }, trx);
      });
      return { api_key: toApiKeyResponse(row), key };
    },

    async list(userId: string, siteId: string): Promise<ApiKey[]> {
      await requireSiteRole(ctx, userId, siteId, 'admin');
      return (await repo.listActiveApiKeys(db, siteId)).map(toApiKeyResponse);
    },

    /** Revoked keys stay stored (hashed) so a call with one is told it was revoked. */
    async revoke(userId: string, keyId: string): Promise<void> {
      const row = checkSiteRole(await repo.findActiveApiKeyOfUser(db, userId, keyId), 'admin', 'API key');
      await db.transaction().execute(async (trx) => {
        if (!(await repo.revokeApiKey(trx, row.id, clock.now()))) throw notFound('API key');
        await recordAudit(ctx, { siteId: row.site_id, actor: { userId }, action: 'key_revoked', subject: { type: 'api_key', id: row.id, label: `${row.name} (${row.prefix}…)` } }, trx);
      });
    },

    /**
     * The v1 API's check: the bearer key must be a live key of `siteId`.
     * Every failure is a 401 saying what is wrong; none reveals anything about
     * other sites beyond what the caller's own key already is.
     */
    async authenticate(siteId: string, key: string | undefined): Promise<SiteApiKeyRow> {
      if (!key) throw keyRejected('API key required: send Authorization: Bearer <site API key>');
      if (key.length > MAX_KEY_LENGTH || !key.startsWith(API_KEY_PREFIX)) throw keyRejected('Invalid API key', 'invalid_token');
      const row = await repo.findApiKeyByHash(db, sha256Hex(key));
      if (!row) throw keyRejected('Invalid API key', 'invalid_token');
      if (row.revoked_at !== null) throw keyRejected('This API key has been revoked', 'invalid_token');
      if (row.site_id !== siteId) throw keyRejected('This API key is not valid for this site', 'invalid_token');
      await repo.touchApiKey(db, row.id, clock.now(), LAST_USED_RESOLUTION_MS);
      return row;
    },
  };
}

