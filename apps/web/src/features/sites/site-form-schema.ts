import { CREATE_SITE_TIMEZONES, CURRENCIES, httpUrl, LANGUAGES } from '@herald/contracts';
import { z } from 'zod';

// The dashboard's form rules (spec §5: site name and URL required, value
// fields min 0), shown next to each field before anything is sent.

const siteName = z.string().trim().min(1, 'Site name is required').max(100, 'Site name must be at most 100 characters');
const websiteUrl = z.string().trim().min(1, 'Website URL is required').pipe(httpUrl);
const iconUrl = z.union([z.literal(''), httpUrl]);
const money = z
  .number({ message: 'Enter a number' })
  .min(0, 'Must be 0 or more')
  .max(1_000_000_000, 'Must be at most 1,000,000,000');

export const createSiteForm = z.object({
  name: siteName,
  url: websiteUrl,
  icon: iconUrl,
  timezone: z.enum(CREATE_SITE_TIMEZONES),
});
export type CreateSiteForm = z.input<typeof createSiteForm>;

export const siteSettingsForm = z.object({
  name: siteName,
  url: websiteUrl,
  icon: iconUrl,
  language: z.enum(LANGUAGES.map((l) => l.code) as [string, ...string[]]),
  timezone: z.string().min(1),
  valueCurrency: z.enum(CURRENCIES),
  valuePerSubscriber: money,
  valuePerClick: money,
});
export type SiteSettingsForm = z.input<typeof siteSettingsForm>;
