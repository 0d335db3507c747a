import {
  CAMPAIGN_NAME_MAX,
  CAMPAIGN_STEP_DELAY_MAX_MINUTES,
  CAMPAIGN_STEP_MESSAGE_MAX,
  CAMPAIGN_STEP_TITLE_MAX,
  CAMPAIGN_STEPS_MAX,
  DELAY_UNITS,
  MINUTES_PER_DELAY_UNIT,
  NOTIFICATION_ACTIONS_MAX,
  UTM_VALUE_MAX,
  httpUrl,
  optionalImageUrl,
  type CampaignBody,
  type DelayUnit,
  type WelcomeCampaign,
} from '@herald/contracts';
import { z } from 'zod';

// The New campaign / edit form (spec §2, §5): what the fields hold, their
// rules, and how they become the request body (spec §7).

const URL_MESSAGE = 'Must be a complete URL starting with https:// or http://';
const isHttpUrl = (value: string) => httpUrl.safeParse(value).success;
const isImageUrl = (value: string) => optionalImageUrl.safeParse(value).success;

const optionalImageField = z
  .string()
  .trim()
  .refine((value) => value === '' || isImageUrl(value), URL_MESSAGE);

const actionField = z.object({ title: z.string().trim(), url: z.string().trim() });

export const stepFormSchema = z
  .object({
    /** Text of the number box; ignored for the first step (sent immediately). */
    delay_value: z.string().trim(),
    delay_unit: z.enum(DELAY_UNITS),
    title: z.string().trim().min(1, 'Title is required').max(CAMPAIGN_STEP_TITLE_MAX, `Title must be at most ${CAMPAIGN_STEP_TITLE_MAX} characters`),
    message: z.string().trim().min(1, 'Message is required').max(CAMPAIGN_STEP_MESSAGE_MAX, `Message must be at most ${CAMPAIGN_STEP_MESSAGE_MAX} characters`),
    destination_url: z.string().trim().min(1, 'Destination URL is required').refine(isHttpUrl, URL_MESSAGE),
    icon_url: optionalImageField,
    large_image: z.boolean(),
    image_url: z.string().trim(),
    actions_enabled: z.boolean(),
    actions: z.array(actionField).max(NOTIFICATION_ACTIONS_MAX, `At most ${NOTIFICATION_ACTIONS_MAX} action buttons`),
  })
  .superRefine((step, ctx) => {
    if (step.large_image) {
      if (!step.image_url) ctx.addIssue({ code: 'custom', path: ['image_url'], message: 'Image URL is required for a large image' });
      else if (!isImageUrl(step.image_url)) ctx.addIssue({ code: 'custom', path: ['image_url'], message: URL_MESSAGE });
    }
    if (step.actions_enabled) {
      step.actions.forEach((action, index) => {
        if (!action.title) ctx.addIssue({ code: 'custom', path: ['actions', index, 'title'], message: 'Button text is required' });
        else if (action.title.length > 30) ctx.addIssue({ code: 'custom', path: ['actions', index, 'title'], message: 'Button text must be at most 30 characters' });
        if (!action.url) ctx.addIssue({ code: 'custom', path: ['actions', index, 'url'], message: 'Button URL is required' });
        else if (!isHttpUrl(action.url)) ctx.addIssue({ code: 'custom', path: ['actions', index, 'url'], message: URL_MESSAGE });
      });
    }
  });

const utmField = z.string().trim().max(UTM_VALUE_MAX, `At most ${UTM_VALUE_MAX} characters`);

export const campaignFormSchema = z
  .object({
    is_active: z.boolean(),
    name: z.string().trim().min(1, 'Campaign name is required').max(CAMPAIGN_NAME_MAX, `Campaign name must be at most ${CAMPAIGN_NAME_MAX} characters`),
    icon_url: optionalImageField,
    utm_enabled: z.boolean(),
    utm_source: utmField,
    utm_medium: utmField,
    utm_campaign: utmField,
    /** '' targets all subscribers. */
    segment_id: z.string(),
    steps: z.array(stepFormSchema).min(1, 'Add at least one notification').max(CAMPAIGN_STEPS_MAX, `At most ${CAMPAIGN_STEPS_MAX} notifications`),
  })
  .superRefine((form, ctx) => {
    // Spec §5: "delay minimum 0"; the first step has no delay (sent immediately).
    form.steps.forEach((step, index) => {
      if (index === 0) return;
      const path = ['steps', index, 'delay_value'];
      if (!/^\d+$/.test(step.delay_value)) {
        ctx.addIssue({ code: 'custom', path, message: step.delay_value.startsWith('-') ? 'Delay must be 0 or more' : 'Enter a whole number' });
      } else if (toDelayMinutes(Number(step.delay_value), step.delay_unit) > CAMPAIGN_STEP_DELAY_MAX_MINUTES) {
        ctx.addIssue({ code: 'custom', path, message: 'Delay must be at most 365 days' });
      }
    });
  });

export type StepFormValues = z.input<typeof stepFormSchema>;
export type CampaignFormValues = z.input<typeof campaignFormSchema>;

/** Spec §5: "step delay converted to minutes (immediately 0, hours x60, days x1440)". */
export function toDelayMinutes(value: number, unit: DelayUnit): number {
  return value * MINUTES_PER_DELAY_UNIT[unit];
}

/** A stored delay shown in the largest unit it is a whole number of. */
export function fromDelayMinutes(minutes: number): { value: number; unit: DelayUnit } {
  if (minutes > 0 && minutes % MINUTES_PER_DELAY_UNIT.days === 0) return { value: minutes / MINUTES_PER_DELAY_UNIT.days, unit: 'days' };
  if (minutes > 0 && minutes % MINUTES_PER_DELAY_UNIT.hours === 0) return { value: minutes / MINUTES_PER_DELAY_UNIT.hours, unit: 'hours' };
  return { value: minutes, unit: 'minutes' };
}

export function emptyStep(isFirst: boolean): StepFormValues {
  return {
    delay_value: isFirst ? '0' : '1',
    delay_unit: isFirst ? 'minutes' : 'days',
    title: '',
    message: '',
    destination_url: '',
    icon_url: '',
    large_image: false,
    image_url: '',
    actions_enabled: false,
    actions: [],
  };
}

export const emptyCampaignForm = (): CampaignFormValues => ({
  is_active: true,
  name: '',
  icon_url: '',
  utm_enabled: false,
  utm_source: '',
  utm_medium: '',
  utm_campaign: '',
  segment_id: '',
  steps: [emptyStep(true)],
});

/** The edit form's values for a stored campaign. */
export function campaignFormValues(campaign: WelcomeCampaign): CampaignFormValues {
  return {
    is_active: campaign.is_active,
    name: campaign.name,
    icon_url: campaign.icon_url ?? '',
    utm_enabled: campaign.utm_params !== null,
    utm_source: campaign.utm_params?.utm_source ?? '',
    utm_medium: campaign.utm_params?.utm_medium ?? '',
    utm_campaign: campaign.utm_params?.utm_campaign ?? '',
    segment_id: campaign.segment_id ?? '',
    steps: campaign.steps.map((step) => {
      const delay = fromDelayMinutes(step.delay_minutes);
      return {
        delay_value: String(delay.value),
        delay_unit: delay.unit,
        title: step.notification.title,
        message: step.notification.message,
        destination_url: step.notification.destination_url,
        icon_url: step.notification.icon_url ?? '',
        large_image: step.notification.image_url !== null,
        image_url: step.notification.image_url ?? '',
        actions_enabled: step.notification.actions.length > 0,
        actions: step.notification.actions.map((action) => ({ ...action })),
      };
    }),
  };
}

const orNull = (value: string) => value.trim() || null;

/** Spec §7 body: {name, is_active, icon_url, utm_params, segment_id, steps[{sequence_order, delay_minutes, notification}]}. */
export function toCampaignBody(values: CampaignFormValues): CampaignBody & { is_active: boolean } {
  return {
    name: values.name.trim(),
    is_active: values.is_active,
    icon_url: orNull(values.icon_url),
    utm_params: values.utm_enabled
      ? { utm_source: orNull(values.utm_source), utm_medium: orNull(values.utm_medium), utm_campaign: orNull(values.utm_campaign) }
      : null,
    segment_id: values.segment_id || null,
    steps: values.steps.map((step, index) => ({
      sequence_order: index + 1,
      delay_minutes: index === 0 ? 0 : toDelayMinutes(Number(step.delay_value), step.delay_unit),
      notification: {
        title: step.title.trim(),
        message: step.message.trim(),
        destination_url: step.destination_url.trim(),
        icon_url: orNull(step.icon_url),
        image_url: step.large_image ? orNull(step.image_url) : null,
        actions: step.actions_enabled ? step.actions.map((action) => ({ title: action.title.trim(), url: action.url.trim() })) : [],
      },
    })),
  };
}
