import { z } from 'zod';

/** Every successful response: `{ success: true, data }` (spec §7 reads `data.*`). */
export const envelope = <T extends z.ZodType>(data: T) => z.object({ success: z.literal(true), data });

/** Every error response: `{ success: false, error: { message } }` (spec §8 reads `error.message`). */
export const errorBody = z.object({
  success: z.literal(false),
  error: z.object({ message: z.string(), code: z.string().optional() }),
});
export type ErrorBody = z.infer<typeof errorBody>;

export const idParam = z.object({ id: z.string().min(1).max(100) });
export const siteIdParam = z.object({ siteId: z.string().min(1).max(100) });

/** An absolute http(s) URL; `javascript:` and friends are refused (docs/security.md: stored XSS). */
export const httpUrl = z
  .string()
  .trim()
  .max(2048, 'URL must be at most 2048 characters')
  .refine((value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'http:' || url.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'Must be a complete URL starting with https:// or http://');

/** An optional image/icon URL: empty string or null clears it; a site-relative upload path is allowed. */
export const optionalImageUrl = z
  .union([z.literal(''), z.null(), httpUrl, z.string().regex(/^\/uploads\/[A-Za-z0-9._-]+$/, 'Must be an image URL')])
  .optional()
  .transform((v) => (v === '' ? null : v));

export const emailAddress = z.string().trim().toLowerCase().max(254, 'Email is too long').email('Please enter a valid email address');
