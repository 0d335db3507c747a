import { httpUrl, RSS_FEED_NAME_MAX, RSS_MAX_PUSHES_PER_DAY_MAX, UTM_VALUE_MAX } from '@herald/contracts';
import { z } from 'zod';

// The add/edit feed form's rules (spec §5: name and URL required, max pushes
// per day min 1), shown next to each field before anything is sent.

const utmValue = z.string().trim().max(UTM_VALUE_MAX, `At most ${UTM_VALUE_MAX} characters`);

export const rssFeedForm = z.object({
  name: z.string().trim().min(1, 'Feed name is required').max(RSS_FEED_NAME_MAX, `Feed name must be at most ${RSS_FEED_NAME_MAX} characters`),
  url: z.string().trim().min(1, 'RSS feed URL is required').pipe(httpUrl),
  iconUrl: z.union([z.literal(''), httpUrl]),
  utm_source: utmValue,
  utm_medium: utmValue,
  utm_campaign: utmValue,
  showActionButtons: z.boolean(),
  createDraft: z.boolean(),
  maxPushesPerDay: z
    .number({ message: 'Maximum pushes per day must be a number' })
    .int('Maximum pushes per day must be a whole number')
    .min(1, 'Maximum pushes per day must be at least 1')
    .max(RSS_MAX_PUSHES_PER_DAY_MAX, `Maximum pushes per day must be at most ${RSS_MAX_PUSHES_PER_DAY_MAX}`),
  /** '' = all subscribers. */
  segmentId: z.string(),
});
export type RssFeedForm = z.input<typeof rssFeedForm>;
