import { z } from 'zod';
import { envelope } from './common';

/** Spec §5/§9: upload max 5MB (5 MB + 1 byte is refused). */
export const UPLOAD_MAX_BYTES = 5 * 1024 * 1024;

/** Spec §5 image upload types; the server decides the type from the file's bytes, not its name. */
export const UPLOAD_IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const;
export type UploadImageType = (typeof UPLOAD_IMAGE_TYPES)[number];

/** The multipart field the image travels in (spec §7 Upload). */
export const UPLOAD_FIELD_NAME = 'image';

// Spec §5 messages, word for word.
export const UPLOAD_INVALID_TYPE_MESSAGE = 'Please upload a valid image file (JPEG, PNG, GIF, or WebP)';
export const UPLOAD_TOO_LARGE_MESSAGE = 'File size must be less than 5MB';

/** `data.url` is absolute (`${PUBLIC_URL}/uploads/<file>`): subscribers' browsers load notification images from it. */
export const uploadImageResponse = envelope(z.object({ url: z.string() }));
export type UploadImageResponse = z.infer<typeof uploadImageResponse>;

/** One of the caller's uploads (GET /api/uploads). `url` is the same absolute URL the upload answered. */
export const upload = z.object({
  id: z.string(),
  url: z.string(),
  content_type: z.enum(UPLOAD_IMAGE_TYPES),
  byte_size: z.number().int(),
  width: z.number().int(),
  height: z.number().int(),
  created_at: z.string(),
});
export type Upload = z.infer<typeof upload>;

export const UPLOADS_PAGE_DEFAULT_LIMIT = 50;
export const UPLOADS_PAGE_MAX_LIMIT = 200;

export const uploadsListQuery = z.object({
  page: z.coerce.number({ message: 'page must be a number' }).int('page must be a whole number').min(1, 'page must be 1 or more').default(1),
  limit: z.coerce
    .number({ message: 'limit must be a number' })
    .int('limit must be a whole number')
    .min(1, 'limit must be 1 or more')
    .max(UPLOADS_PAGE_MAX_LIMIT, `limit must be at most ${UPLOADS_PAGE_MAX_LIMIT}`)
    .default(UPLOADS_PAGE_DEFAULT_LIMIT),
});
export type UploadsListQuery = z.input<typeof uploadsListQuery>;

/**
 * Newest first. `total` counts all of the caller's uploads; `used_bytes` is
 * what they take together and `quota_bytes` the most they may take
 * (UPLOAD_QUOTA_MB on the server).
 */
export const uploadsListResponse = envelope(
  z.object({
    uploads: z.array(upload),
    total: z.number().int(),
    page: z.number().int(),
    limit: z.number().int(),
    used_bytes: z.number().int(),
    quota_bytes: z.number().int(),
  }),
);
export type UploadsList = z.infer<typeof uploadsListResponse>['data'];

export const uploadDeletedResponse = envelope(z.object({ deleted: z.literal(true) }));
