import {
  SEGMENT_BROWSERS,
  SEGMENT_DAYS_AGO_MAX,
  SEGMENT_NAME_MAX,
  SEGMENT_OPERATING_SYSTEMS,
  SEGMENT_TAGS_MAX,
  countryRule,
  type CreateSegmentBody,
  type Segment,
  type SegmentRules,
} from '@herald/contracts';
import { z } from 'zod';

// The "+ New Segment" form (spec §2 Segments): a name and optional rules.
// Fields hold what the user typed; only the rules that are filled in are
// sent (spec: "Only non-empty rules are sent").

const blank = (value: string) => value.trim() === '';

/** The tags field: comma-separated, trimmed, without empties or repeats. */
export function parseTags(text: string): string[] {
  return [...new Set(text.split(',').map((tag) => tag.trim()).filter(Boolean))];
}

export const segmentFormSchema = z.object({
  name: z.string().trim().min(1, 'Segment name is required').max(SEGMENT_NAME_MAX, `Segment name must be at most ${SEGMENT_NAME_MAX} characters`),
  browser: z.union([z.literal(''), z.enum(SEGMENT_BROWSERS)]),
  os: z.union([z.literal(''), z.enum(SEGMENT_OPERATING_SYSTEMS)]),
  country: z.string().superRefine((text, ctx) => {
    if (blank(text)) return;
    // The server's own reading of the text, so a typo shows here rather than after saving.
    const checked = countryRule.safeParse(text);
    if (!checked.success) ctx.addIssue({ code: 'custom', message: checked.error.issues[0]?.message ?? 'Enter country codes such as US, DE' });
  }),
  subscribedDaysAgo: z.string().refine((text) => {
    if (blank(text)) return true;
    const days = Number(text);
    return Number.isInteger(days) && days >= 1 && days <= SEGMENT_DAYS_AGO_MAX;
  }, `Enter a whole number of days from 1 to ${SEGMENT_DAYS_AGO_MAX}`),
  tags: z.string().refine((text) => parseTags(text).length <= SEGMENT_TAGS_MAX, `At most ${SEGMENT_TAGS_MAX} tags`),
});
export type SegmentFormValues = z.infer<typeof segmentFormSchema>;

export const emptySegmentForm: SegmentFormValues = { name: '', browser: '', os: '', country: '', subscribedDaysAgo: '', tags: '' };

/** An existing segment, as the edit form shows it. */
export function segmentFormValues(segment: Segment): SegmentFormValues {
  const { rules } = segment;
  return {
    name: segment.name,
    browser: rules.browser ?? '',
    os: rules.os ?? '',
    country: rules.country ?? '',
    subscribedDaysAgo: rules.subscribed_days_ago === undefined ? '' : String(rules.subscribed_days_ago),
    tags: (rules.tags ?? []).join(', '),
  };
}

/** The request body: the name and the rules that are filled in, nothing else. */
export function segmentRequestBody(values: SegmentFormValues): CreateSegmentBody & { rules: SegmentRules } {
  const rules: SegmentRules = {};
  if (values.browser) rules.browser = values.browser;
  if (values.os) rules.os = values.os;
  if (!blank(values.country)) rules.country = values.country.trim();
  if (!blank(values.subscribedDaysAgo)) rules.subscribed_days_ago = Number(values.subscribedDaysAgo);
  const tags = parseTags(values.tags);
  if (tags.length) rules.tags = tags;
  return { name: values.name.trim(), rules };
}
