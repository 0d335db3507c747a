// A/B tests of a one-time notification (docs/product.md, "A/B tests";
// docs/delivery.md, "A/B tests"): 2–4 variants of its content, and either a
// sample that picks the winner for the rest (`ab_test` set) or every variant
// to the whole audience, split evenly (`ab_test` null).
import { z } from 'zod';
import { httpUrl, optionalImageUrl } from './common';

export const AB_VARIANTS_MIN = 2;
export const AB_VARIANTS_MAX = 4;
/** At most half the audience: the winner should reach more people than the test did. */
export const AB_SAMPLE_PERCENT_MIN = 1;
export const AB_SAMPLE_PERCENT_MAX = 50;
export const AB_DECIDE_AFTER_MIN_MINUTES = 1;
export const AB_DECIDE_AFTER_MAX_MINUTES = 24 * 60;
/** Letters the dashboard and the API's messages give the variants: index 0 is "A". */
export const AB_VARIANT_LETTERS = ['A', 'B', 'C', 'D'] as const;

export const abVariantInput = z.object({
  title: z.string({ message: 'Each variant needs a title' }).trim().min(1, 'Each variant needs a title').max(50, 'A variant title must be at most 50 characters'),
  message: z.string({ message: 'Each variant needs a message' }).trim().min(1, 'Each variant needs a message').max(150, 'A variant message must be at most 150 characters'),
  destination_url: httpUrl,
  image_url: optionalImageUrl,
});
export type AbVariantInput = z.output<typeof abVariantInput>;

export const abVariantsInput = z
  .array(abVariantInput, { message: 'variants must be a list of 2 to 4 variants' })
  .min(AB_VARIANTS_MIN, `An A/B test needs at least ${AB_VARIANTS_MIN} variants`)
  .max(AB_VARIANTS_MAX, `An A/B test has at most ${AB_VARIANTS_MAX} variants`);

export const AB_DECIDE_MODES = ['auto', 'manual'] as const;
export type AbDecideMode = (typeof AB_DECIDE_MODES)[number];

/**
 * The test on a sample: `sample_percent` of the audience, split evenly and at
 * random among the variants; `decide: "auto"` sends the variant with the best
 * click rate to the rest `decide_after_minutes` after the sample started,
 * `"manual"` waits for the owner's pick.
 */
export const abTestInput = z.object({
  sample_percent: z
    .number({ message: 'ab_test.sample_percent must be a number' })
    .int('ab_test.sample_percent must be a whole number')
    .min(AB_SAMPLE_PERCENT_MIN, `ab_test.sample_percent must be between ${AB_SAMPLE_PERCENT_MIN} and ${AB_SAMPLE_PERCENT_MAX}`)
    .max(AB_SAMPLE_PERCENT_MAX, `ab_test.sample_percent must be between ${AB_SAMPLE_PERCENT_MIN} and ${AB_SAMPLE_PERCENT_MAX}`),
  decide_after_minutes: z
    .number({ message: 'ab_test.decide_after_minutes must be a number' })
    .int('ab_test.decide_after_minutes must be a whole number of minutes')
    .min(AB_DECIDE_AFTER_MIN_MINUTES, 'ab_test.decide_after_minutes must be between 1 and 1440 (24 hours)')
    .max(AB_DECIDE_AFTER_MAX_MINUTES, 'ab_test.decide_after_minutes must be between 1 and 1440 (24 hours)'),
  metric: z.literal('click_rate', { message: 'ab_test.metric must be "click_rate"' }),
  decide: z.enum(AB_DECIDE_MODES, { message: 'ab_test.decide must be "auto" or "manual"' }).default('auto'),
});
export type AbTestInput = z.output<typeof abTestInput>;

export const abVariant = z.object({ title: z.string(), message: z.string(), destination_url: z.string(), image_url: z.string().nullable() });
export type AbVariant = z.infer<typeof abVariant>;
export const abTestSettings = z.object({
  sample_percent: z.number(),
  decide_after_minutes: z.number(),
  metric: z.literal('click_rate'),
  decide: z.enum(AB_DECIDE_MODES),
});

/**
 * waiting: not sent yet; testing: the sample is out, the decision is to come;
 * decided: the winner went (or goes) to the rest; all_variants: no sample,
 * every variant went to the whole audience.
 */
export const AB_TEST_STATUSES = ['waiting', 'testing', 'decided', 'all_variants'] as const;
export type AbTestStatus = (typeof AB_TEST_STATUSES)[number];

/** One variant's figures (GET /notifications/{id}/performance `data.variants`); click_rate = clicked ÷ delivered × 100. */
export const abVariantPerformance = z.object({
  index: z.number(),
  title: z.string(),
  reach: z.number(),
  delivered: z.number(),
  clicked: z.number(),
  click_rate: z.number(),
});
export type AbVariantPerformance = z.infer<typeof abVariantPerformance>;

export const abTestPerformance = z.object({
  status: z.enum(AB_TEST_STATUSES),
  /** Null: every variant to everyone (no sample). */
  sample_percent: z.number().nullable(),
  decide: z.enum(AB_DECIDE_MODES).nullable(),
  /** When the automatic decision falls due (the sample's start + the wait); null before the sample is sent or when picked by hand. */
  decides_at: z.string().nullable(),
  winner_index: z.number().nullable(),
  decided_at: z.string().nullable(),
  decided_by: z.enum(AB_DECIDE_MODES).nullable(),
  /** The variant with the best click rate now (before a decision), or the winner's at the decision. */
  leader_index: z.number().nullable(),
  /** Two-proportion z-test at 95 % between the best and the runner-up (at the decision, once decided). */
  significant: z.boolean(),
});
export type AbTestPerformance = z.infer<typeof abTestPerformance>;

export const abWinnerBody = z.object({
  variant_index: z
    .number({ message: 'variant_index must be a number' })
    .int('variant_index must be a whole number')
    .min(0, 'variant_index must be 0 or more')
    .max(AB_VARIANTS_MAX - 1, `variant_index must be at most ${AB_VARIANTS_MAX - 1}`),
});
