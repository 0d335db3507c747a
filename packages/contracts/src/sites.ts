import { z } from 'zod';
import { envelope, httpUrl, optionalImageUrl } from './common';
import { siteRole } from './members';
import { quietHours } from './local-time';
import { SUBSCRIBER_TAG_MAX_LENGTH } from './subscribers';

/** Spec §2 Create Site: the timezone choices offered when creating a site. */
export const CREATE_SITE_TIMEZONES = [
  'UTC',
  'America/New_York',
  'America/Chicago',
  'America/Denver',
  'America/Los_Angeles',
  'Europe/London',
  'Europe/Paris',
  'Asia/Tokyo',
  'Asia/Shanghai',
  'Australia/Sydney',
] as const;

/** Spec §2 Settings → General: the timezone choices, with their labels. */
export const SETTINGS_TIMEZONES = [
  { value: 'UTC', label: 'UTC' },
  { value: 'America/New_York', label: 'New York' },
  { value: 'America/Chicago', label: 'Chicago' },
  { value: 'America/Denver', label: 'Denver' },
  { value: 'America/Los_Angeles', label: 'Los Angeles' },
  { value: 'Europe/London', label: 'London' },
  { value: 'Europe/Paris', label: 'Paris' },
  { value: 'Asia/Tokyo', label: 'Tokyo' },
] as const;

/** Spec §2 Settings → General "primary language": about 31 codes. */
export const LANGUAGES = [
  { code: 'en', label: 'English' },
  { code: 'es', label: 'Spanish' },
  { code: 'fr', label: 'French' },
  { code: 'de', label: 'German' },
  { code: 'it', label: 'Italian' },
  { code: 'pt', label: 'Portuguese' },
  { code: 'pt-BR', label: 'Portuguese (Brazil)' },
  { code: 'nl', label: 'Dutch' },
  { code: 'sv', label: 'Swedish' },
  { code: 'da', label: 'Danish' },
  { code: 'no', label: 'Norwegian' },
  { code: 'fi', label: 'Finnish' },
  { code: 'pl', label: 'Polish' },
  { code: 'cs', label: 'Czech' },
  { code: 'hu', label: 'Hungarian' },
  { code: 'ro', label: 'Romanian' },
  { code: 'el', label: 'Greek' },
  { code: 'tr', label: 'Turkish' },
  { code: 'ru', label: 'Russian' },
  { code: 'uk', label: 'Ukrainian' },
  { code: 'ar', label: 'Arabic' },
  { code: 'he', label: 'Hebrew' },
  { code: 'hi', label: 'Hindi' },
  { code: 'th', label: 'Thai' },
  { code: 'vi', label: 'Vietnamese' },
  { code: 'id', label: 'Indonesian' },
  { code: 'ms', label: 'Malay' },
  { code: 'ja', label: 'Japanese' },
  { code: 'ko', label: 'Korean' },
  { code: 'zh', label: 'Chinese (Simplified)' },
  { code: 'zh-TW', label: 'Chinese (Traditional)' },
] as const;

/** Spec §2 Settings → Value Goals currencies. */
export const CURRENCIES = ['USD', 'EUR', 'GBP', 'JPY', 'CAD', 'AUD'] as const;

/** Spec §3 Site defaults. */
export const SITE_DEFAULTS = { timezone: 'UTC', language: 'en', valueCurrency: 'USD', valuePerSubscriber: 0, valuePerClick: 0 } as const;

function isKnownTimezone(value: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

export const timezone = z.string().trim().max(64).refine(isKnownTimezone, 'Unknown timezone');
const languageCode = z.enum(LANGUAGES.map((l) => l.code) as [string, ...string[]], { message: 'Unknown language code' });
const money = z.coerce
  .number({ message: 'Must be a number' })
  .min(0, 'Must be 0 or more')
  .max(1_000_000_000, 'Must be at most 1,000,000,000')
  .refine(Number.isFinite, 'Must be a number');

/** Per site: at most `max` pushes per subscriber in any `hours` (docs/product.md, "Frequency cap"). */
export const FREQUENCY_CAP_MAX = 100;
export const FREQUENCY_CAP_HOURS_MAX = 168;
/**
 * The frequency cap with its fields named as its reader knows them: the API's
 * messages say "frequencyCap.max", Settings' say "Pushes" and "Hours". One
 * set of rules for both.
 */
export function frequencyCapNamed(names: { max: string; hours: string }) {
  return z
    .object({
      max: z
        .number({ message: `${names.max} must be a number` })
        .int(`${names.max} must be a whole number`)
        .min(1, `${names.max} must be at least 1`)
        .max(FREQUENCY_CAP_MAX, `${names.max} must be at most ${FREQUENCY_CAP_MAX}`),
      hours: z
        .number({ message: `${names.hours} must be a number` })
        .int(`${names.hours} must be a whole number`)
        .min(1, `${names.hours} must be at least 1`)
        .max(FREQUENCY_CAP_HOURS_MAX, `${names.hours} must be at most ${FREQUENCY_CAP_HOURS_MAX} (a week)`),
    })
    .strict();
}

export const frequencyCap = frequencyCapNamed({ max: 'frequencyCap.max', hours: 'frequencyCap.hours' });
export type FrequencyCap = z.infer<typeof frequencyCap>;

export const siteSettings = z.object({
  icon: z.string().nullable(),
  language: z.string(),
  timezone: z.string(),
  valueCurrency: z.string(),
  valuePerSubscriber: z.number(),
  valuePerClick: z.number(),
  /** docs/security.md: when on, `identify` needs `identity_hash` = HMAC-SHA256(identity secret, external_id). */
  identityVerification: z.boolean(),
  /** Tags the browser SDK may neither add nor remove; only the site's backend (v1 API) sets them. */
  serverOnlyTags: z.array(z.string()),
  /** null: no cap. */
  frequencyCap: frequencyCap.nullable(),
  /** null: none (docs/product.md, "Quiet hours"). */
  quietHours: quietHours.nullable(),
  /** docs/product.md, "visitors who already allowed notifications": the SDK subscribes a browser already granted permission, without a prompt. */
  resubscribeGranted: z.boolean(),
  /** With resubscribeGranted: the SDK replaces another provider's subscription on the same service worker registration. */
  replaceForeignSubscription: z.boolean(),
});
export type SiteSettings = z.infer<typeof siteSettings>;

export const site = z.object({
  id: z.string(),
  name: z.string(),
  url: z.string(),
  settings: siteSettings,
  vapid_public_key: z.string(),
  subscriber_count: z.number(),
  /** The caller's role on the site (docs/product.md, "Teams"). */
  role: siteRole,
  created_at: z.string(),
  updated_at: z.string(),
});
export type Site = z.infer<typeof site>;

const siteName = z.string().trim().min(1, 'Site name is required').max(100, 'Site name must be at most 100 characters');

export const SERVER_ONLY_TAGS_MAX = 50;

/** Trimmed, duplicates and empty entries dropped. */
const serverOnlyTags = z
  .array(
    z
      .string({ message: 'each server-only tag must be text' })
      .trim()
      .max(SUBSCRIBER_TAG_MAX_LENGTH, `each server-only tag must be at most ${SUBSCRIBER_TAG_MAX_LENGTH} characters`),
    { message: 'serverOnlyTags must be a list of tags' },
  )
  .max(500, 'too many server-only tags')
  .transform((tags) => [...new Set(tags.filter((tag) => tag.length > 0))])
  .refine((tags) => tags.length <= SERVER_ONLY_TAGS_MAX, `at most ${SERVER_ONLY_TAGS_MAX} server-only tags`);

const settingsInput = z
  .object({
    icon: optionalImageUrl,
    language: languageCode.optional(),
    timezone: timezone.optional(),
    valueCurrency: z.enum(CURRENCIES, { message: 'Unknown currency' }).optional(),
    valuePerSubscriber: money.optional(),
    valuePerClick: money.optional(),
    identityVerification: z.boolean({ message: 'identityVerification must be true or false' }).optional(),
    serverOnlyTags: serverOnlyTags.optional(),
    frequencyCap: frequencyCap.nullable().optional(),
    quietHours: quietHours.nullable().optional(),
    resubscribeGranted: z.boolean({ message: 'resubscribeGranted must be true or false' }).optional(),
    replaceForeignSubscription: z.boolean({ message: 'replaceForeignSubscription must be true or false' }).optional(),
  })
  .strict();

export const createSiteBody = z.object({
  name: siteName,
  url: httpUrl,
  settings: settingsInput.optional(),
});
export type CreateSiteBody = z.input<typeof createSiteBody>;

export const updateSiteBody = z
  .object({
    name: siteName.optional(),
    url: httpUrl.optional(),
    settings: settingsInput.optional(),
  })
  .strict();
export type UpdateSiteBody = z.input<typeof updateSiteBody>;

export const siteResponse = envelope(z.object({ site }));
export const sitesResponse = envelope(z.object({ sites: z.array(site) }));

export const installCodeResponse = envelope(
  z.object({
    /** Spec §7: the snippet to paste before </body> (the page part only; the worker line is `serviceWorker.content`). */
    installCode: z.string(),
    /** The same page snippet (kept for existing callers). */
    snippet: z.string(),
    /** The file to save at the site root, e.g. /herald-sw.js. */
    serviceWorker: z.object({ fileName: z.string(), content: z.string() }),
    nextSteps: z.array(z.string()),
    /** Problems no edit on the customer's site can fix, e.g. Herald itself served over http. */
    warnings: z.array(z.string()),
  }),
);
export type InstallCode = z.infer<typeof installCodeResponse>['data'];

// ---------------------------------------------------------------------------
// Install check and setup checklist (issue 12).

/** The checks POST /api/sites/{id}/install-check runs, in the order it answers them. */
export const INSTALL_CHECK_IDS = ['reachable', 'site_https', 'public_url_https', 'snippet', 'service_worker', 'single_service_worker', 'manifest'] as const;
export type InstallCheckId = (typeof INSTALL_CHECK_IDS)[number];
/** error: push cannot work until it is fixed; warning: it works for some visitors or only while testing. */
export const INSTALL_CHECK_SEVERITIES = ['error', 'warning'] as const;

export const installCheck = z.object({
  id: z.enum(INSTALL_CHECK_IDS),
  ok: z.boolean(),
  /** How bad it is when not ok. */
  severity: z.enum(INSTALL_CHECK_SEVERITIES),
  message: z.string(),
  /** What to do about it; null when ok. */
  fix: z.string().nullable(),
});
export type InstallCheck = z.infer<typeof installCheck>;

export const installCheckResult = z.object({
  checked_at: z.string(),
  /** No check failed with severity error. */
  passed: z.boolean(),
  checks: z.array(installCheck),
});
export type InstallCheckResult = z.infer<typeof installCheckResult>;
export const installCheckResponse = envelope(installCheckResult);

/** Each step of the dashboard's setup checklist, from the site's real state. */
export const setupChecklist = z.object({
  /** The owner hid it; it stays in Settings → Installation. */
  dismissed: z.boolean(),
  install_check: installCheckResult.nullable(),
  first_subscriber_at: z.string().nullable(),
  active_subscribers: z.number(),
  test_devices: z.number(),
  /** Last test push a test device's push service accepted. */
  test_sent_at: z.string().nullable(),
});
export type SetupChecklist = z.infer<typeof setupChecklist>;
export const setupChecklistResponse = envelope(z.object({ checklist: setupChecklist }));
export const updateSetupChecklistBody = z.object({ dismissed: z.boolean({ message: 'dismissed must be true or false' }) }).strict();

/**
 * The site's identity secret (Settings → Automation): the key of the HMAC
 * that proves an `identify` call comes from the site's own backend
 * (docs/security.md, "Identity verification"). Owner only.
 */
export const identitySecretResponse = envelope(z.object({ secret: z.string() }));
export type IdentitySecret = z.infer<typeof identitySecretResponse>['data'];
