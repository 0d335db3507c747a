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
import { parseStringListColumn } from '../../platform/string-list-column';
import { installCheckPassed, runInstallCheck } from './install-check';
import { buildInstallCode } from './install-code';
import * as repo from './repository';

/** The API shape of a site. The private VAPID key and the identity secret never leave the server here. */
export function toSiteResponse(row: SiteRow): Site {
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
    },
    vapid_public_key: row.vapid_public_key,
    subscriber_count: row.active_subscriber_count,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/** Loads a site of the signed-in user, or answers 404 (also for another user's site). */
export async function requireOwnedSite(ctx: Pick<AppContext, 'db'>, userId: string, siteId: string): Promise<SiteRow> {
  const site = await repo.findSiteOfUser(ctx.db, userId, siteId);
  if (!site) throw notFound('Site');
  return site;
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
      return (await repo.listSitesOfUser(db, userId)).map(toSiteResponse);
    },

    async get(userId: string, siteId: string): Promise<Site> {
      return toSiteResponse(await requireOwnedSite(ctx, userId, siteId));
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
        active_subscriber_count: 0,
        prompt_settings: null,
        install_check: null,
        checklist_dismissed_at: null,
        test_sent_at: null,
        created_at: now,
        updated_at: now,
      };
      await repo.insertSite(db, row);
      return toSiteResponse(row);
    },

    /** VAPID keys are not updatable: changing them would orphan every subscriber (docs/web-push.md). */
    async update(userId: string, siteId: string, input: UpdateSiteBody): Promise<Site> {
      await requireOwnedSite(ctx, userId, siteId);
      const changes: SiteUpdate = { ...settingsColumns(input.settings), updated_at: clock.now() };
      if (input.name !== undefined) changes.name = input.name;
      if (input.url !== undefined) changes.url = input.url;
      // Verification without a secret would refuse every identify call.
      if (changes.identity_verification === 1) await repo.setIdentitySecretIfMissing(db, siteId, generateIdentitySecret());
      await repo.updateSite(db, siteId, changes);
      return toSiteResponse((await repo.findSiteById(db, siteId))!);
    },

    /** Settings → Automation. Sites older than identity verification get their secret the first time it is asked for. */
    async identitySecret(userId: string, siteId: string): Promise<IdentitySecret> {
      const site = await requireOwnedSite(ctx, userId, siteId);
      if (site.identity_secret) return { secret: site.identity_secret };
      // Conditional, so two first reads at once agree on one secret.
      await repo.setIdentitySecretIfMissing(db, siteId, generateIdentitySecret());
      const stored = await repo.findSiteById(db, siteId);
      if (!stored?.identity_secret) throw notFound('Site');
      return { secret: stored.identity_secret };
    },

    /** A new secret; hashes made with the old one are refused from now on. */
    async rotateIdentitySecret(userId: string, siteId: string): Promise<IdentitySecret> {
      await requireOwnedSite(ctx, userId, siteId);
      const secret = generateIdentitySecret();
      await repo.updateSite(db, siteId, { identity_secret: secret, updated_at: clock.now() });
      return { secret };
    },

    async remove(userId: string, siteId: string): Promise<void> {
      await requireOwnedSite(ctx, userId, siteId);
      await repo.deleteSite(db, siteId);
    },

    async installCode(userId: string, siteId: string): Promise<InstallCode> {
      return buildInstallCode(await requireOwnedSite(ctx, userId, siteId), config.publicUrl);
    },

    /** Fetches the site, its worker and its manifest, checks them, keeps the result for the checklist and answers it. */
    async installCheck(userId: string, siteId: string): Promise<InstallCheckResult> {
      const site = await requireOwnedSite(ctx, userId, siteId);
      const { hits, retryAfterMs } = await limiter.hit(`install-check:user:${userId}`, HOUR_MS, clock.now());
      if (hits > INSTALL_CHECKS_PER_USER_PER_HOUR) {
        const seconds = retryAfterSeconds(retryAfterMs);
        throw tooManyRequests(`Too many installation checks. Please try again in ${seconds} seconds.`, seconds);
      }
      const checks = await runInstallCheck(site, { outbound, publicUrl: config.publicUrl });
      const result: InstallCheckResult = { checked_at: iso(clock.now()), passed: installCheckPassed(checks), checks };
      await repo.updateSite(db, site.id, { install_check: JSON.stringify(result) });
      return result;
    },

    /** The setup checklist's steps, from the site's real state (issue 12). */
    async checklist(userId: string, siteId: string): Promise<SetupChecklist> {
      return checklistOf(await requireOwnedSite(ctx, userId, siteId));
    },

    /** Hides the checklist from the dashboard, or shows it again. */
    async setChecklistDismissed(userId: string, siteId: string, dismissed: boolean): Promise<SetupChecklist> {
      await requireOwnedSite(ctx, userId, siteId);
      await repo.updateSite(db, siteId, { checklist_dismissed_at: dismissed ? clock.now() : null });
      return checklistOf((await repo.findSiteById(db, siteId))!);
    },
  };
}
