import { z } from 'zod';
import { utmParamsInput } from './utm';
import { envelope, httpUrl, optionalImageUrl } from './common';
import { actionButton, actionButtons, notificationMessage, notificationTitle } from './notifications';

// Welcome campaigns (spec §2 Campaigns list and New campaign form, §3, §4, §5,
// §7, §9): a drip sequence sent to each NEW subscriber of a site.

/** Spec §5/§9 limits. */
export const CAMPAIGN_NAME_MAX = 100;
export const CAMPAIGN_STEP_TITLE_MAX = 50;
export const CAMPAIGN_STEP_MESSAGE_MAX = 140;
export const CAMPAIGN_STEPS_MAX = 20;
/** Spec §9 (help): "Ideal welcome campaign 3-7 steps". Advice only, not enforced. */
export const CAMPAIGN_STEPS_IDEAL = { min: 3, max: 7 } as const;
/** A step waits at most a year after the one before it. */
export const CAMPAIGN_STEP_DELAY_MAX_MINUTES = 365 * 24 * 60;

/** Spec §5: "step delay converted to minutes (immediately 0, hours x60, days x1440)". */
export const DELAY_UNITS = ['minutes', 'hours', 'days'] as const;
export type DelayUnit = (typeof DELAY_UNITS)[number];
export const MINUTES_PER_DELAY_UNIT: Record<DelayUnit, number> = { minutes: 1, hours: 60, days: 1440 };

export const campaignName = z
  .string({ message: 'Campaign name is required' })
  .trim()
  .min(1, 'Campaign name is required')
  .max(CAMPAIGN_NAME_MAX, `Campaign name must be at most ${CAMPAIGN_NAME_MAX} characters`);

export const campaignStepNotificationInput = z.object({
  title: notificationTitle,
  message: notificationMessage(CAMPAIGN_STEP_MESSAGE_MAX),
  destination_url: httpUrl,
  icon_url: optionalImageUrl,
  image_url: optionalImageUrl,
  actions: actionButtons.optional(),
});

export const campaignStepInput = z.object({
  sequence_order: z
    .number({ message: 'Step number is required' })
    .int('Step number must be a whole number')
    .min(1, 'Steps are numbered from 1')
    .max(CAMPAIGN_STEPS_MAX, `At most ${CAMPAIGN_STEPS_MAX} steps`),
  delay_minutes: z
    .number({ message: 'Delay is required' })
    .int('Delay must be a whole number of minutes')
    .min(0, 'Delay must be 0 or more')
    .max(CAMPAIGN_STEP_DELAY_MAX_MINUTES, 'Delay must be at most 365 days'),
  notification: campaignStepNotificationInput,
});
export type CampaignStepInput = z.output<typeof campaignStepInput>;

/**
 * 1 to 20 steps numbered 1..N (any order in the body); the first step goes
 * out immediately after subscription (spec §2: the timeline "begins
 * immediately after subscription"; a delay is set "only from step 2").
 */
const campaignSteps = z
  .array(campaignStepInput)
  .min(1, 'Add at least one notification')
  .max(CAMPAIGN_STEPS_MAX, `A campaign has at most ${CAMPAIGN_STEPS_MAX} notifications`)
  .superRefine((steps, ctx) => {
    const orders = steps.map((s) => s.sequence_order).sort((a, b) => a - b);
    if (orders.some((order, index) => order !== index + 1)) {
      ctx.addIssue({ code: 'custom', message: `Steps must be numbered 1 to ${steps.length}, each once` });
      return;
    }
    const first = steps.findIndex((s) => s.sequence_order === 1);
    if (first >= 0 && steps[first]!.delay_minutes !== 0) {
      ctx.addIssue({ code: 'custom', path: [first, 'delay_minutes'], message: 'The first notification is sent immediately: its delay must be 0' });
    }
  });

const campaignFields = z.object({
  name: campaignName,
  is_active: z.boolean({ message: 'is_active must be true or false' }),
  icon_url: optionalImageUrl,
  utm_params: utmParamsInput.nullable().optional(),
  segment_id: z.string().trim().max(100).nullable().optional(),
  steps: campaignSteps,
});

/** Spec §7 POST /sites/{siteId}/welcome-campaigns. A campaign is active unless told otherwise (the form's toggle defaults on). */
export const campaignBody = campaignFields.extend({ is_active: campaignFields.shape.is_active.default(true) });
export type CampaignBody = z.input<typeof campaignBody>;
export type CampaignInput = z.output<typeof campaignBody>;

/** Spec §7 PATCH /welcome-campaigns/{id}: toggling sends `{ is_active }`; editing sends the changed fields. */
export const campaignPatchBody = campaignFields.partial().strict();
export type CampaignPatchBody = z.input<typeof campaignPatchBody>;
export type CampaignPatchInput = z.output<typeof campaignPatchBody>;

/** What a step (or a campaign) sent, in the outcome model of delivery-outcomes.ts (sent = accepted by the push service). */
export const campaignSendStats = z.object({
  targeted: z.number(),
  sent: z.number(),
  failed: z.number(),
  expired: z.number(),
  skipped: z.number(),
  pending: z.number(),
  delivered: z.number(),
  clicked: z.number(),
});

export const campaignStep = z.object({
  id: z.string(),
  sequence_order: z.number(),
  delay_minutes: z.number(),
  notification: z.object({
    title: z.string(),
    message: z.string(),
    /** As entered; the UTM parameters are added when sending. */
    destination_url: z.string(),
    icon_url: z.string().nullable(),
    image_url: z.string().nullable(),
    actions: z.array(actionButton),
  }),
  stats: campaignSendStats,
});
export type CampaignStep = z.infer<typeof campaignStep>;

export const welcomeCampaign = z.object({
  id: z.string(),
  site_id: z.string(),
  name: z.string(),
  is_active: z.boolean(),
  icon_url: z.string().nullable(),
  utm_params: z.object({ utm_source: z.string().nullable(), utm_medium: z.string().nullable(), utm_campaign: z.string().nullable() }).nullable(),
  segment_id: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  steps_count: z.number(),
  steps: z.array(campaignStep),
  /** Across every version of the steps: subscribers enrolled, and what their steps did (click rate = clicked / delivered × 100). */
  stats: campaignSendStats.extend({ enrolled: z.number(), click_rate: z.number() }),
});
export type WelcomeCampaign = z.infer<typeof welcomeCampaign>;

export const campaignResponse = envelope(z.object({ campaign: welcomeCampaign }));
export const campaignListResponse = envelope(z.object({ campaigns: z.array(welcomeCampaign) }));
export const campaignDeletedResponse = envelope(z.object({ deleted: z.literal(true) }));

/** "Send after X minutes" in words: immediately, or the largest whole unit. */
export function describeDelay(minutes: number): string {
  if (minutes <= 0) return 'immediately';
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (minutes % MINUTES_PER_DELAY_UNIT.days === 0) return plural(minutes / MINUTES_PER_DELAY_UNIT.days, 'day');
  if (minutes % MINUTES_PER_DELAY_UNIT.hours === 0) return plural(minutes / MINUTES_PER_DELAY_UNIT.hours, 'hour');
  return plural(minutes, 'minute');
}
