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
