import crypto from 'node:crypto';
import {
  installCheckResult,
  SITE_DEFAULTS,
  type CreateSiteBody,
  type IdentitySecret,
  type InstallCheckResult,
  type InstallCode,
  type SetupChecklist,
  type Site,
  type SiteRole,
  type UpdateSiteBody,
} from '@herald/contracts';
import type { AppContext } from '../../context';
import type { SiteRow, SiteUpdate } from '../../db/schema';
import { generateVapidKeys } from '../../delivery/vapid-keys';
import { notFound, retryAfterSeconds, tooManyRequests } from '../../platform/errors';
import { generateIdentitySecret } from '../../platform/identity-hash';
import { createOutboundHttpFromConfig, type OutboundHttp } from '../../platform/outbound-http';
import { DatabaseRateLimiter } from '../../platform/rate-limit';
import { iso, isoOrNull } from '../../platform/responses';
import { checkSiteRole, type WithMemberRole } from '../../platform/site-roles';
import { parseStringListColumn } from '../../platform/string-list-column';
import { changedFields, recordAudit } from '../audit-log/record';
import { installCheckPassed, runInstallCheck } from './install-check';
import { buildInstallCode } from './install-code';
import * as repo from './repository';

/** The API shape of a site. The private VAPID key and the identity secret never leave the server here. */
export function toSiteResponse(row: SiteRow, role: SiteRole): Site {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    settings: {
      icon: row.icon,
      language: row.language,
      timezone: row.timezone,
      valueCurrency: row.value_currency,
      valuePerSubscriber: row.value_per_subscriber,
      valuePerClick: row.value_per_click,
      identityVerification: row.identity_verification === 1,
      serverOnlyTags: parseStringListColumn(row.server_only_tags),
      frequencyCap: row.frequency_cap_max !== null && row.frequency_cap_hours !== null ? { max: row.frequency_cap_max, hours: row.frequency_cap_hours } : null,
      quietHours: row.quiet_hours_start !== null && row.quiet_hours_end !== null ? { start: row.quiet_hours_start, end: row.quiet_hours_end } : null,
      resubscribeGranted: row.resubscribe_granted === 1,
      replaceForeignSubscription: row.replace_foreign_subscription === 1,
    },
    vapid_public_key: row.vapid_public_key,
    subscriber_count: row.active_subscriber_count,
    role,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/**
 * Loads a site the signed-in user is a member of, with their role, if that
 * role is at least `needed` (docs/security.md, "Tenancy"): 404 for a site
 * they are no member of (also another tenant's), 403 naming the role needed
 * for a member with less. The role each route needs: docs/security.md.
 */
export async function requireSiteRole(ctx: Pick<AppContext, 'db'>, userId: string, siteId: string, needed: SiteRole): Promise<SiteRow & WithMemberRole> {
  return checkSiteRole(await repo.findSiteOfUser(ctx.db, userId, siteId), needed, 'Site');
}

type SettingsInput = NonNullable<CreateSiteBody['settings']>;

function settingsColumns(settings: SettingsInput | undefined): SiteUpdate {
  const columns: SiteUpdate = {};
  if (!settings) return columns;
  if (settings.icon !== undefined) columns.icon = settings.icon;
  if (settings.language !== undefined) columns.language = settings.language;
  if (settings.timezone !== undefined) columns.timezone = settings.timezone;
  if (settings.valueCurrency !== undefined) columns.value_currency = settings.valueCurrency;
  if (settings.valuePerSubscriber !== undefined) columns.value_per_subscriber = Number(settings.valuePerSubscriber);
  if (settings.valuePerClick !== undefined) columns.value_per_click = Number(settings.valuePerClick);
  if (settings.identityVerification !== undefined) columns.identity_verification = settings.identityVerification ? 1 : 0;
  // The contract has trimmed them and dropped duplicates and empty ones.
  if (settings.serverOnlyTags !== undefined) columns.server_only_tags = JSON.stringify(settings.serverOnlyTags);
  if (settings.frequencyCap !== undefined) {
    columns.frequency_cap_max = settings.frequencyCap?.max ?? null;
    columns.frequency_cap_hours = settings.frequencyCap?.hours ?? null;
  }
  if (settings.quietHours !== undefined) {
    columns.quiet_hours_start = settings.quietHours?.start ?? null;
    columns.quiet_hours_end = settings.quietHours?.end ?? null;
  }
  if (settings.resubscribeGranted !== undefined) columns.resubscribe_granted = settings.resubscribeGranted ? 1 : 0;
  if (settings.replaceForeignSubscription !== undefined) columns.replace_foreign_subscription = settings.replaceForeignSubscription ? 1 : 0;
  return columns;
}

/** Install checks one user may run per hour: each fetches up to three URLs from their site. */
export const INSTALL_CHECKS_PER_USER_PER_HOUR = 60;
const HOUR_MS = 3_600_000;

/** The stored last install check, or null when there is none (or it cannot be read any more). */
function storedInstallCheck(json: string | null): InstallCheckResult | null {
  if (!json) return null;
  try {
    const parsed = installCheckResult.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export function createSitesService(ctx: AppContext, options: { outbound?: OutboundHttp } = {}) {
  const { db, clock, config } = ctx;
  const outbound = options.outbound ?? createOutboundHttpFromConfig(config);
  const limiter = new DatabaseRateLimiter(db);

  async function checklistOf(site: SiteRow): Promise<SetupChecklist> {
    const [firstAt, testDevices] = await Promise.all([repo.firstSubscribedAt(db, site.id), repo.countActiveTestDevices(db, site.id)]);
    return {
      dismissed: site.checklist_dismissed_at !== null,
      install_check: storedInstallCheck(site.install_check),
      first_subscriber_at: firstAt === undefined ? null : iso(firstAt),
      active_subscribers: site.active_subscriber_count,
      test_devices: testDevices,
      test_sent_at: isoOrNull(site.test_sent_at),
    };
  }

  return {
    async list(userId: string): Promise<Site[]> {
      return (await repo.listSitesOfUser(db, userId)).map((row) => toSiteResponse(row, row.member_role));
    },

    async get(userId: string, siteId: string): Promise<Site> {
      const site = await requireSiteRole(ctx, userId, siteId, 'viewer');
      return toSiteResponse(site, site.member_role);
    },

    async create(userId: string, input: CreateSiteBody): Promise<Site> {
      const now = clock.now();
      const keys = generateVapidKeys();
      const settings = settingsColumns(input.settings);
      const row: SiteRow = {
        id: crypto.randomUUID(),
        user_id: userId,
        name: input.name,
        url: input.url,
        icon: settings.icon ?? null,
        language: settings.language ?? SITE_DEFAULTS.language,
        timezone: settings.timezone ?? SITE_DEFAULTS.timezone,
        value_currency: settings.value_currency ?? SITE_DEFAULTS.valueCurrency,
        value_per_subscriber: settings.value_per_subscriber ?? SITE_DEFAULTS.valuePerSubscriber,
        value_per_click: settings.value_per_click ?? SITE_DEFAULTS.valuePerClick,
        vapid_public_key: keys.publicKey,
        vapid_private_key: keys.privateKey,
        identity_secret: generateIdentitySecret(),
        // docs/security.md, "Identity verification": on unless the owner says otherwise.
        identity_verification: settings.identity_verification ?? 1,
        server_only_tags: settings.server_only_tags ?? '[]',
        frequency_cap_max: settings.frequency_cap_max ?? null,
        frequency_cap_hours: settings.frequency_cap_hours ?? null,
        quiet_hours_start: settings.quiet_hours_start ?? null,
        quiet_hours_end: settings.quiet_hours_end ?? null,
        // docs/product.md, "visitors who already allowed notifications".
        resubscribe_granted: settings.resubscribe_granted ?? 1,
        replace_foreign_subscription: settings.replace_foreign_subscription ?? 0,
        active_subscriber_count: 0,
        prompt_settings: null,
        install_check: null,
        checklist_dismissed_at: null,
        test_sent_at: null,
        created_at: now,
        updated_at: now,
      };
      await repo.insertSite(db, row, crypto.randomUUID());
      await recordAudit(ctx, { siteId: row.id, actor: { userId }, action: 'created', subject: { type: 'site', id: row.id, label: row.name } });
      return toSiteResponse(row, 'owner');
    },

    /** VAPID keys are not updatable here: they have their own routes (features/vapid-keys), which keep every subscriber on its key (docs/web-push.md). */
    async update(userId: string, siteId: string, input: UpdateSiteBody): Promise<Site> {
      const site = await requireSiteRole(ctx, userId, siteId, 'admin');
      const changes: SiteUpdate = { ...settingsColumns(input.settings), updated_at: clock.now() };
      // Who may say which user a browser belongs to, and which tags only the backend sets, is the owner's, like the
      // identity secret (docs/security.md, "Tenancy"): an admin turning verification off could claim any user id.
      const identityRules = changedFields(site, { identity_verification: changes.identity_verification, server_only_tags: changes.server_only_tags });
      if (identityRules.length) checkSiteRole(site, 'owner', 'Site');
      if (input.name !== undefined) changes.name = input.name;
      if (input.url !== undefined) changes.url = input.url;
      const changed = changedFields(site, changes);
      // The install check was of the old address: the checklist asks for a new one (not a setting the audit log lists).
      if (input.url !== undefined && input.url !== site.url) changes.install_check = null;
      await db.transaction().execute(async (trx) => {
        // Verification without a secret would refuse every identify call.
        if (changes.identity_verification === 1) await repo.setIdentitySecretIfMissing(trx, siteId, generateIdentitySecret());
        await repo.updateSite(trx, siteId, changes);
        if (changed.length > 0) {
          await recordAudit(ctx, { siteId, actor: { userId }, action: 'settings_changed', subject: { type: 'site', id: siteId, label: changes.name ?? site.name }, changedFields: changed }, trx);
        }
      });
      return toSiteResponse((await repo.findSiteById(db, siteId))!, site.member_role);
    },

    /** Settings → Automation. Sites older than identity verification get their secret the first time it is asked for. */
    async identitySecret(userId: string, siteId: string): Promise<IdentitySecret> {
      // Owner only (docs/security.md, "Tenancy"): whoever holds it can vouch for any user id.
      const site = await requireSiteRole(ctx, userId, siteId, 'owner');
      if (site.identity_secret) return { secret: site.identity_secret };
      // Conditional, so two first reads at once agree on one secret.
      await repo.setIdentitySecretIfMissing(db, siteId, generateIdentitySecret());
      const stored = await repo.findSiteById(db, siteId);
      if (!stored?.identity_secret) throw notFound('Site');
      return { secret: stored.identity_secret };
    },

    /** A new secret; hashes made with the old one are refused from now on. */
    async rotateIdentitySecret(userId: string, siteId: string): Promise<IdentitySecret> {
      const site = await requireSiteRole(ctx, userId, siteId, 'owner');
      const secret = generateIdentitySecret();
      await db.transaction().execute(async (trx) => {
        await repo.updateSite(trx, siteId, { identity_secret: secret, updated_at: clock.now() });
        await recordAudit(ctx, { siteId, actor: { userId }, action: 'secret_rotated', subject: { type: 'site', id: siteId, label: site.name }, detail: { secret: 'identity' } }, trx);
      });
      return { secret };
    },

    async remove(userId: string, siteId: string): Promise<void> {
      const site = await requireSiteRole(ctx, userId, siteId, 'owner');
      // The site's audit log outlives it, this entry included, until the
      // retention sweep (docs/security.md, "Audit log"; migration 0015).
      await db.transaction().execute(async (trx) => {
        await recordAudit(ctx, { siteId, actor: { userId }, action: 'deleted', subject: { type: 'site', id: siteId, label: site.name } }, trx);
        await repo.deleteSite(trx, siteId);
      });
    },

    async installCode(userId: string, siteId: string): Promise<InstallCode> {
      return buildInstallCode(await requireSiteRole(ctx, userId, siteId, 'viewer'), config.publicUrl);
    },

    /** Fetches the site, its worker and its manifest, checks them, keeps the result for the checklist and answers it. */
    async installCheck(userId: string, siteId: string): Promise<InstallCheckResult> {
      const site = await requireSiteRole(ctx, userId, siteId, 'editor');
      const { hits, retryAfterMs } = await limiter.hit(`install-check:user:${userId}`, HOUR_MS, clock.now());
      if (hits > INSTALL_CHECKS_PER_USER_PER_HOUR) {
        const seconds = retryAfterSeconds(retryAfterMs);
        throw tooManyRequests(`Too many installation checks. Please try again in ${seconds} seconds.`, seconds);
      }
      const otherVapidKeys = await repo.otherVapidPublicKeys(db, site.id);
      const checks = await runInstallCheck(site, { outbound, publicUrl: config.publicUrl, otherVapidKeys });
      const result: InstallCheckResult = { checked_at: iso(clock.now()), passed: installCheckPassed(checks), checks };
      await repo.updateSite(db, site.id, { install_check: JSON.stringify(result) });
      return result;
    },

    /** The setup checklist's steps, from the site's real state (issue 12). */
    async checklist(userId: string, siteId: string): Promise<SetupChecklist> {
      return checklistOf(await requireSiteRole(ctx, userId, siteId, 'viewer'));
    },

    /** Hides the checklist from the dashboard, or shows it again. */
    async setChecklistDismissed(userId: string, siteId: string, dismissed: boolean): Promise<SetupChecklist> {
      await requireSiteRole(ctx, userId, siteId, 'editor');
      await repo.updateSite(db, siteId, { checklist_dismissed_at: dismissed ? clock.now() : null });
      return checklistOf((await repo.findSiteById(db, siteId))!);
    },
  };
}
