import { z } from 'zod';
import { envelope } from './common';

// The opt-in prompt the browser SDK shows (Settings → Installation, issue 12):
// the browser's own permission prompt, a soft "slide-down" banner or a bell
// button, with when to show it. Served to the SDK by the public
// GET /api/public/sites/{siteId}/prompt-settings.

/** `slide`: Herald's banner, whose button gives Safari the user gesture it needs; `native`: the browser's prompt, asked at the visitor's next click; `bell`: a floating button. */
export const PROMPT_TYPES = ['slide', 'native', 'bell'] as const;
export type PromptType = (typeof PROMPT_TYPES)[number];
export const PROMPT_POSITIONS = ['top', 'bottom'] as const;
export type PromptPosition = (typeof PROMPT_POSITIONS)[number];

export const PROMPT_HEADLINE_MAX = 80;
export const PROMPT_TEXT_MAX = 200;
export const PROMPT_LABEL_MAX = 30;
export const PROMPT_DELAY_MAX_SECONDS = 3600;
export const PROMPT_PAGE_VIEWS_MAX = 100;
export const PROMPT_DISMISS_MAX_DAYS = 365;

/** What a site shows until its owner changes it: the soft banner at the bottom, 5 s after the first page view, 7 days after "Not now". */
export const DEFAULT_PROMPT_SETTINGS = {
  type: 'slide',
  delaySeconds: 5,
  pageViews: 1,
  dismissDays: 7,
  /** Empty: "Get notifications from <the site's host>?". */
  headline: '',
  text: '',
  acceptLabel: 'Allow',
  laterLabel: 'Not now',
  position: 'bottom',
  backgroundColor: '#ffffff',
  textColor: '#111827',
  buttonColor: '#1d4ed8',
  buttonTextColor: '#ffffff',
} as const satisfies PromptSettings;

const hexColor = (name: string) => z.string().trim().regex(/^#[0-9a-fA-F]{6}$/, `${name} must be a colour like #1d4ed8`).transform((v) => v.toLowerCase());
const wholeNumber = (name: string, min: number, max: number) =>
  z.coerce
    .number({ message: `${name} must be a number` })
    .int(`${name} must be a whole number`)
    .min(min, `${name} must be ${min} or more`)
    .max(max, `${name} must be at most ${max}`);
/** Plain text: the SDK sets it as textContent, never as markup. */
const label = (name: string, max: number, min = 0) =>
  z
    .string({ message: `${name} must be text` })
    .trim()
    .min(min, `${name} is required`)
    .max(max, `${name} must be at most ${max} characters`);

/** The checks of each field, as PUT checks them (trimmed, colours lower-cased). */
const promptSettingsInput = z.object({
  type: z.enum(PROMPT_TYPES, { message: 'Prompt type must be slide, native or bell' }),
  /** Seconds on the page before the prompt appears. */
  delaySeconds: wholeNumber('Delay', 0, PROMPT_DELAY_MAX_SECONDS),
  /** The prompt appears from the visitor's Nth page view on (1: the first). */
  pageViews: wholeNumber('Page views', 1, PROMPT_PAGE_VIEWS_MAX),
  /** Days the prompt stays away after "later" (or a closed browser prompt); 0: ask again on the next page view. */
  dismissDays: wholeNumber('Days before asking again', 0, PROMPT_DISMISS_MAX_DAYS),
  headline: label('Headline', PROMPT_HEADLINE_MAX),
  text: label('Text', PROMPT_TEXT_MAX),
  acceptLabel: label('Accept button label', PROMPT_LABEL_MAX, 1),
  laterLabel: label('Later button label', PROMPT_LABEL_MAX, 1),
  position: z.enum(PROMPT_POSITIONS, { message: 'Position must be top or bottom' }),
  backgroundColor: hexColor('Background colour'),
  textColor: hexColor('Text colour'),
  buttonColor: hexColor('Button colour'),
  buttonTextColor: hexColor('Button text colour'),
});

/** The settings as answered (response schemas carry no transforms). */
export const promptSettings = z.object({
  type: z.enum(PROMPT_TYPES),
  delaySeconds: z.number(),
  pageViews: z.number(),
  dismissDays: z.number(),
  headline: z.string(),
  text: z.string(),
  acceptLabel: z.string(),
  laterLabel: z.string(),
  position: z.enum(PROMPT_POSITIONS),
  backgroundColor: z.string(),
  textColor: z.string(),
  buttonColor: z.string(),
  buttonTextColor: z.string(),
});
export type PromptSettings = z.output<typeof promptSettings>;

/** PUT body: the whole settings object; fields missing from it take their defaults. */
export const promptSettingsBody = promptSettingsInput.partial().strict();
export type PromptSettingsBody = z.input<typeof promptSettingsBody>;

/** A complete, checked settings object from a PUT body: what it leaves out is the default. */
export function completePromptSettings(body: z.output<typeof promptSettingsBody>): PromptSettings {
  return { ...DEFAULT_PROMPT_SETTINGS, ...Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined)) };
}

export const promptSettingsResponse = envelope(z.object({ prompt: promptSettings }));
/**
 * GET /api/public/sites/{siteId}/prompt-settings: the prompt, the site's
 * primary VAPID key (base64url) the SDK subscribes with, and what the SDK does
 * for a visitor who already allowed notifications (docs/product.md, Settings,
 * "visitors who already allowed notifications"; site settings
 * `resubscribeGranted` and `replaceForeignSubscription`).
 */
export const publicPromptSettingsResponse = envelope(
  z.object({ prompt: promptSettings, vapid_public_key: z.string(), resubscribe_granted: z.boolean(), replace_foreign_subscription: z.boolean() }),
);
export type PublicPromptSettings = z.infer<typeof publicPromptSettingsResponse>['data'];

/** Stored settings (JSON) read leniently: whatever is missing or no longer valid takes its default. */
export function readPromptSettings(stored: unknown): PromptSettings {
  const fields = typeof stored === 'object' && stored !== null ? (stored as Record<string, unknown>) : {};
  const settings: Record<string, unknown> = { ...DEFAULT_PROMPT_SETTINGS };
  for (const [key, schema] of Object.entries(promptSettingsInput.shape)) {
    const parsed = (schema as z.ZodType).safeParse(fields[key]);
    if (parsed.success) settings[key] = parsed.data;
  }
  return settings as PromptSettings;
}

/** The SDK's report that it showed a prompt (the denominator of the prompt's conversion). */
export const promptEventBody = z.object({
  prompt: z.enum(PROMPT_TYPES, { message: 'prompt must be slide, native or bell' }),
  event: z.literal('shown', { message: 'event must be "shown"' }),
});
export const promptEventResponse = envelope(z.object({ recorded: z.literal(true) }));

/** Subscriber analytics: per prompt type in the range, prompts shown, subscriptions they led to, and subscribed ÷ shown × 100. */
export const promptConversion = z.object({
  prompt: z.enum(PROMPT_TYPES),
  shown: z.number(),
  subscribed: z.number(),
  /** subscribed ÷ shown × 100, two decimals; 0 when never shown. */
  conversion_rate: z.number(),
});
export type PromptConversion = z.infer<typeof promptConversion>;
