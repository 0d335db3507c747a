import { z } from 'zod';
import { envelope } from './common';
import { SUBSCRIBER_TAG_MAX_LENGTH } from './subscribers';

// Spec §2 Segments, §3 Segment, §5 "Segment name is required", §7 Segments.
// A segment is a named set of rules; its audience is the site's ACTIVE
// subscribers matching every rule given (AND), evaluated when it is counted
// or sent to, never stored.

/** Spec §2: the Browser choices (besides Any). Subscribers are filed under these family names (server user-agent.ts). */
export const SEGMENT_BROWSERS = ['Chrome', 'Firefox', 'Safari', 'Edge'] as const;
/** Spec §2: the Operating System choices (besides Any). */
export const SEGMENT_OPERATING_SYSTEMS = ['Windows', 'macOS', 'Linux', 'Android', 'iOS'] as const;
export type SegmentBrowser = (typeof SEGMENT_BROWSERS)[number];
export type SegmentOperatingSystem = (typeof SEGMENT_OPERATING_SYSTEMS)[number];

export const SEGMENT_NAME_MAX = 100;
export const SEGMENT_COUNTRIES_MAX = 50;
export const SEGMENT_TAGS_MAX = 20;
/** Ten years: a larger "subscribed days ago" can only be a typo. */
export const SEGMENT_DAYS_AGO_MAX = 3650;
/** Every segment's count is computed live on each list load, so a site's list is bounded. */
export const SEGMENTS_PER_SITE_MAX = 200;
/** From this many active subscribers a site's segment counts are estimated from a sample (docs/product.md, "Segments"). */
export const SEGMENT_ESTIMATE_FROM_ACTIVE = 100_000;

/** Spec §2 hint under "Subscribed Days Ago". */
export const SUBSCRIBED_DAYS_AGO_HINT = '7 for users subscribed 7+ days ago';

/** "", null and missing all mean "no rule" (spec §2: only non-empty rules count). */
const isBlank = (value: unknown) => value === undefined || value === null || (typeof value === 'string' && value.trim() === '');

/** A choice among `options`, matched without regard to case and returned in the spec's spelling. */
function choiceRule<const T extends readonly string[]>(options: T, label: string) {
  const message = `${label} must be one of ${options.join(', ')}`;
  return z
    .string({ message })
    .trim()
    .transform((value, ctx) => {
      const match = options.find((option) => option.toLowerCase() === value.toLowerCase());
      if (match === undefined) {
        ctx.addIssue({ code: 'custom', message });
        return z.NEVER;
      }
      return match as T[number];
    });
}

let regionNames: Intl.DisplayNames | undefined;
let codesByName: Map<string, string> | undefined;

/** English region names from the runtime's ICU data (browser and Node), so no list is kept here. */
function displayNames(): Intl.DisplayNames {
  regionNames ??= new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
  return regionNames;
}

/**
 * The current code of a region code, or undefined when it is none: old and
 * alias codes map to today's ("UK" → "GB", "FX" → "FR"), which is what the
 * country database stores.
 */
function canonicalRegion(code: string): string | undefined {
  let region: string | undefined;
  try {
    region = new Intl.Locale(`und-${code}`).region;
  } catch {
    return undefined;
  }
  if (!region || !/^[A-Z]{2}$/.test(region)) return undefined;
  const name = displayNames().of(region);
  return name !== undefined && name !== region ? region : undefined;
}

/** "germany" → "DE": an exact English country name is accepted as well as its code. */
function codeOfCountryName(name: string): string | undefined {
  if (!codesByName) {
    codesByName = new Map();
    for (let a = 65; a <= 90; a += 1) {
      for (let b = 65; b <= 90; b += 1) {
        const code = canonicalRegion(String.fromCharCode(a, b));
        const english = code && displayNames().of(code);
        if (code && english && !codesByName.has(english.toLowerCase())) codesByName.set(english.toLowerCase(), code);
      }
    }
  }
  return codesByName.get(name.toLowerCase());
}

/**
 * Spec §2 "Country (free text, e.g. country codes)". Subscribers store the
 * ISO 3166-1 alpha-2 code of their address, so the text is read as a
 * comma-separated list of codes (any case) or exact English names, and kept
 * as upper-case codes joined by ", " — "de, france" becomes "DE, FR".
 */
export const countryRule = z
  .string({ message: 'Country must be text such as US or DE, GB' })
  .max(1000, 'Country is too long')
  .transform((text, ctx) => {
    const codes: string[] = [];
    for (const entry of text.split(/[,;]/)) {
      const item = entry.trim().replace(/\s+/g, ' ');
      if (!item) continue;
      const code = /^[A-Za-z]{2}$/.test(item) ? canonicalRegion(item.toUpperCase()) : codeOfCountryName(item);
      if (!code) {
        ctx.addIssue({ code: 'custom', message: `"${item}" is not a country code (use ISO codes such as US, DE or GB, separated by commas)` });
        return z.NEVER;
      }
      if (!codes.includes(code)) codes.push(code);
    }
    if (codes.length > SEGMENT_COUNTRIES_MAX) {
      ctx.addIssue({ code: 'custom', message: `At most ${SEGMENT_COUNTRIES_MAX} countries` });
      return z.NEVER;
    }
    return codes.join(', ');
  });

/** The codes of a stored country rule ("DE, FR" → ["DE", "FR"]). */
export function countryCodesOf(rule: string): string[] {
  return rule
    .split(',')
    .map((code) => code.trim())
    .filter(Boolean);
}

/** A whole number of days; numeric text (a form field's value) is read as its number. */
const subscribedDaysAgo = z.preprocess(
  (value) => (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value),
  z
    .number({ message: 'Subscribed Days Ago must be a number' })
    .int('Subscribed Days Ago must be a whole number of days')
    .min(1, 'Subscribed Days Ago must be 1 or more')
    .max(SEGMENT_DAYS_AGO_MAX, `Subscribed Days Ago must be at most ${SEGMENT_DAYS_AGO_MAX}`),
);

/** Tags set with PATCH /subscribers/{id}/tags; a subscriber matches when it has all of them (exact, case-sensitive). */
const tagsRule = z
  .array(
    z
      .string({ message: 'each tag must be text' })
      .trim()
      .max(SUBSCRIBER_TAG_MAX_LENGTH, `each tag must be at most ${SUBSCRIBER_TAG_MAX_LENGTH} characters`),
    { message: 'Tags must be a list of text' },
  )
  .max(200, 'too many tags')
  .transform((tags) => [...new Set(tags.filter((tag) => tag.length > 0))])
  .refine((tags) => tags.length <= SEGMENT_TAGS_MAX, `A segment can require at most ${SEGMENT_TAGS_MAX} tags`);

/** Each rule may be left out, or blank, which means the same. */
const optionalRule = <T extends z.ZodType>(rule: T) => z.preprocess((value) => (isBlank(value) ? undefined : value), rule.optional());

/**
 * The rules of a segment, all optional, combined with AND (spec §2). Blank
 * rules are dropped; an unknown key is refused rather than ignored, because
 * an ignored rule ("browsers": …) would silently widen a send.
 */
export const segmentRulesInput = z
  .strictObject(
    {
      browser: optionalRule(choiceRule(SEGMENT_BROWSERS, 'Browser')),
      os: optionalRule(choiceRule(SEGMENT_OPERATING_SYSTEMS, 'Operating System')),
      country: optionalRule(countryRule),
      subscribed_days_ago: optionalRule(subscribedDaysAgo),
      tags: optionalRule(tagsRule),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `Unknown rule ${issue.keys.map((key) => `"${key}"`).join(', ')}: rules are browser, os, country, subscribed_days_ago and tags`
          : 'rules must be an object',
    },
  )
  .transform((rules) => normalizeSegmentRules(rules));

/** The stored and returned shape: only the rules that are set. */
export const segmentRules = z.object({
  browser: z.enum(SEGMENT_BROWSERS).optional(),
  os: z.enum(SEGMENT_OPERATING_SYSTEMS).optional(),
  /** Upper-case ISO 3166-1 alpha-2 codes joined by ", ". */
  country: z.string().optional(),
  subscribed_days_ago: z.number().int().optional(),
  tags: z.array(z.string()).optional(),
});
export type SegmentRules = z.infer<typeof segmentRules>;

function normalizeSegmentRules(rules: {
  browser?: SegmentBrowser | undefined;
  os?: SegmentOperatingSystem | undefined;
  country?: string | undefined;
  subscribed_days_ago?: number | undefined;
  tags?: string[] | undefined;
}): SegmentRules {
  const normalized: SegmentRules = {};
  if (rules.browser) normalized.browser = rules.browser;
  if (rules.os) normalized.os = rules.os;
  if (rules.country) normalized.country = rules.country;
  if (rules.subscribed_days_ago !== undefined) normalized.subscribed_days_ago = rules.subscribed_days_ago;
  if (rules.tags?.length) normalized.tags = rules.tags;
  return normalized;
}

/** Spec §5: "Segment name is required". */
export const segmentName = z
  .string({ message: 'Segment name is required' })
  .trim()
  .min(1, 'Segment name is required')
  .max(SEGMENT_NAME_MAX, `Segment name must be at most ${SEGMENT_NAME_MAX} characters`);

export const createSegmentBody = z.strictObject({
  name: segmentName,
  rules: segmentRulesInput.optional().transform((rules) => rules ?? {}),
});
export type CreateSegmentBody = z.input<typeof createSegmentBody>;
export type CreateSegmentInput = z.output<typeof createSegmentBody>;

/** `rules`, when sent, replaces the whole rule set (a rule left out is removed). */
export const updateSegmentBody = z.strictObject({
  name: segmentName.optional(),
  rules: segmentRulesInput.optional(),
});
export type UpdateSegmentBody = z.input<typeof updateSegmentBody>;
export type UpdateSegmentInput = z.output<typeof updateSegmentBody>;

/**
 * Whether a segment's count is exact or, on a site with 100,000 or more active
 * subscribers, estimated from a fixed sample of them (docs/product.md,
 * "Segments": an estimate says so). A send always reaches exactly the
 * matching subscribers.
 */
const countLabel = {
  /** True: the count is the sample's share scaled to the site's active subscribers, rounded to three significant figures. */
  is_estimate: z.boolean().default(false),
  /** The sampled active subscribers an estimate was made from; null for an exact count. */
  sample_size: z.number().int().nullable().default(null),
};

export const segment = z.object({
  id: z.string(),
  site_id: z.string(),
  name: z.string(),
  rules: segmentRules,
  /** Active subscribers matching the rules now (spec §3 estimated_count); on a large site estimated from a sample (is_estimate). */
  estimated_count: z.number(),
  ...countLabel,
  created_at: z.string(),
  updated_at: z.string(),
});
export type Segment = z.infer<typeof segment>;

export const segmentResponse = envelope(z.object({ segment }));
export const segmentListResponse = envelope(z.object({ segments: z.array(segment) }));
export const segmentEstimate = z.object({ estimated_count: z.number(), ...countLabel });
export type SegmentEstimate = z.infer<typeof segmentEstimate>;
export const segmentEstimateResponse = envelope(segmentEstimate);
export const segmentDeletedResponse = envelope(z.object({ deleted: z.literal(true) }));

/** GET /sites/{siteId}/audience: who a send would reach now, all active subscribers or a segment's. */
export const audienceQuery = z.object({ segment_id: z.string().trim().min(1).max(100).optional() });
export const audienceResponse = envelope(
  z.object({
    /** Active subscribers the send would reach if it went now (a segment's audience is decided again when it is sent). */
    count: z.number(),
    ...countLabel,
    segment_id: z.string().nullable(),
  }),
);
export type Audience = z.infer<typeof audienceResponse>['data'];
