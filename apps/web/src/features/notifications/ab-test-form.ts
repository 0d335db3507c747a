import {
  AB_DECIDE_AFTER_MAX_MINUTES,
  AB_SAMPLE_PERCENT_MAX,
  AB_SAMPLE_PERCENT_MIN,
  AB_VARIANTS_MAX,
  abTestInput,
  abVariantInput,
  httpUrl,
  optionalImageUrl,
  type AbDecideMode,
  type Notification,
  type NotificationBody,
} from '@herald/contracts';
import { z } from 'zod';

// The notification form's A/B test section (docs/product.md, "A/B tests"):
// variant A is the form's own content; B to D are edited here. Kept apart
// from notification-form.ts, which only spreads these in.

export interface AbVariantValues {
  title: string;
  message: string;
  destination_url: string;
  image_url: string;
}

export type AbMode = 'sample' | 'all';

export interface AbTestFormValues {
  ab_enabled: boolean;
  /** Variants B, C and D (A is the content above). */
  ab_variants: AbVariantValues[];
  ab_mode: AbMode;
  ab_sample_percent: string;
  ab_wait_minutes: string;
  ab_decide: AbDecideMode;
}

export const EMPTY_VARIANT: AbVariantValues = { title: '', message: '', destination_url: '', image_url: '' };
/** Besides variant A, at most three more. */
export const AB_EXTRA_VARIANTS_MAX = AB_VARIANTS_MAX - 1;

export const AB_DEFAULT_VALUES: AbTestFormValues = {
  ab_enabled: false,
  ab_variants: [],
  ab_mode: 'sample',
  ab_sample_percent: '20',
  ab_wait_minutes: '60',
  ab_decide: 'auto',
};

export const AB_FORM_SHAPE = {
  ab_enabled: z.boolean(),
  ab_variants: z.array(z.object({ title: z.string(), message: z.string(), destination_url: z.string(), image_url: z.string() })),
  ab_mode: z.enum(['sample', 'all']),
  ab_sample_percent: z.string(),
  ab_wait_minutes: z.string(),
  ab_decide: z.enum(['auto', 'manual']),
};

function firstIssue(schema: z.ZodType, value: unknown): string | null {
  const result = schema.safeParse(value);
  return result.success ? null : (result.error.issues[0]?.message ?? 'Invalid value');
}

/** The section's rules, with the contracts' messages; `check` adds an issue at a path. */
export function checkAbTestValues(values: AbTestFormValues & { type: string }, check: (path: (string | number)[], message: string | null) => void): void {
  if (values.type !== 'ONE_TIME' || !values.ab_enabled) return;
  if (!values.ab_variants.length) check(['ab_variants'], 'Add variant B: an A/B test needs at least 2 variants');
  values.ab_variants.slice(0, AB_EXTRA_VARIANTS_MAX).forEach((variant, index) => {
    check(['ab_variants', index, 'title'], firstIssue(abVariantInput.shape.title, variant.title));
    check(['ab_variants', index, 'message'], firstIssue(abVariantInput.shape.message, variant.message));
    check(['ab_variants', index, 'destination_url'], variant.destination_url.trim() === '' ? 'Destination URL is required' : firstIssue(httpUrl, variant.destination_url));
    check(['ab_variants', index, 'image_url'], firstIssue(optionalImageUrl, variant.image_url.trim()));
  });
  if (values.ab_mode === 'sample') {
    const whole = (text: string) => (/^\d+$/.test(text.trim()) ? Number(text) : Number.NaN);
    check(['ab_sample_percent'], firstIssue(abTestInput.shape.sample_percent, whole(values.ab_sample_percent)));
    check(['ab_wait_minutes'], firstIssue(abTestInput.shape.decide_after_minutes, whole(values.ab_wait_minutes)));
  }
}

/** The body's `variants` and `ab_test`: sent when the section is on, or to remove a test the notification had. */
export function abTestBody(values: AbTestFormValues & Pick<NotificationBody, 'type' | 'title' | 'message' | 'destination_url' | 'image_url'>, hadVariants: boolean): Pick<NotificationBody, 'variants' | 'ab_test'> {
  if (values.type !== 'ONE_TIME' || !values.ab_enabled) return hadVariants ? { variants: null, ab_test: null } : {};
  const a = { title: values.title, message: values.message, destination_url: values.destination_url, image_url: values.image_url ?? null };
  const others = values.ab_variants.slice(0, AB_EXTRA_VARIANTS_MAX).map((v) => ({ title: v.title.trim(), message: v.message.trim(), destination_url: v.destination_url.trim(), image_url: v.image_url.trim() || null }));
  return {
    variants: [a, ...others],
    ab_test:
      values.ab_mode === 'all'
        ? null
        : { sample_percent: Number(values.ab_sample_percent), decide_after_minutes: Number(values.ab_wait_minutes), metric: 'click_rate', decide: values.ab_decide },
  };
}

/** A saved notification's test as form values. */
export function abFormValues(notification: Pick<Notification, 'variants' | 'ab_test'>): AbTestFormValues {
  if (!notification.variants) return AB_DEFAULT_VALUES;
  const test = notification.ab_test;
  return {
    ab_enabled: true,
    ab_variants: notification.variants.slice(1).map((v) => ({ title: v.title, message: v.message, destination_url: v.destination_url, image_url: v.image_url ?? '' })),
    ab_mode: test ? 'sample' : 'all',
    ab_sample_percent: String(test?.sample_percent ?? AB_DEFAULT_VALUES.ab_sample_percent),
    ab_wait_minutes: String(test?.decide_after_minutes ?? AB_DEFAULT_VALUES.ab_wait_minutes),
    ab_decide: test?.decide ?? 'auto',
  };
}

/** "1 h 30 min" for the wait's hint. */
export function waitLabel(minutesText: string): string {
  const minutes = Number(minutesText);
  if (!Number.isInteger(minutes) || minutes < 1 || minutes > AB_DECIDE_AFTER_MAX_MINUTES) return '';
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return [hours ? `${hours} h` : '', rest ? `${rest} min` : ''].filter(Boolean).join(' ');
}

export const AB_SAMPLE_HINT = `${AB_SAMPLE_PERCENT_MIN}–${AB_SAMPLE_PERCENT_MAX} % of the audience, split evenly and at random among the variants.`;
