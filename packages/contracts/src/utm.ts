import { z } from 'zod';

/** Campaign tracking parameters added to destination links (RSS feeds, welcome campaigns). */
export const UTM_PARAM_NAMES = ['utm_source', 'utm_medium', 'utm_campaign'] as const;
export type UtmParamName = (typeof UTM_PARAM_NAMES)[number];
export const UTM_VALUE_MAX = 100;

const utmValue = z
  .string()
  .trim()
  .max(UTM_VALUE_MAX, `UTM values must be at most ${UTM_VALUE_MAX} characters`)
  .nullable()
  .optional()
  .transform((value) => value || null);

/** Empty values are left out when the parameters are added to a link; existing query parameters are kept. */
export const utmParamsInput = z.object({ utm_source: utmValue, utm_medium: utmValue, utm_campaign: utmValue }).strict();

export const utmParams = z.object({
  utm_source: z.string().nullable(),
  utm_medium: z.string().nullable(),
  utm_campaign: z.string().nullable(),
});
export type UtmParams = z.infer<typeof utmParams>;

/**
 * Adds the configured UTM parameters to a link. They replace parameters of
 * the same name already in the link: the owner set them for this channel
 * (a feed's links often carry the publisher's own utm_source). A link that
 * is not a URL is returned as it is.
 */
export function withUtmParams(link: string, params: UtmParams | null | undefined): string {
  if (!params || !UTM_PARAM_NAMES.some((name) => params[name])) return link;
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    return link;
  }
  for (const name of UTM_PARAM_NAMES) {
    const value = params[name];
    if (value) url.searchParams.set(name, value);
  }
  return url.href;
}
