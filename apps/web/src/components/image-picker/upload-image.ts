import { UPLOAD_FIELD_NAME, UPLOAD_IMAGE_TYPES, UPLOAD_INVALID_TYPE_MESSAGE, UPLOAD_MAX_BYTES, UPLOAD_TOO_LARGE_MESSAGE, uploadImageResponse } from '@herald/contracts';
import { apiRequest } from '../../lib/api-client';

// Spec §5 "types jpeg, jpg, png, gif, webp only": some systems label JPEG files image/jpg.
const ACCEPTED_TYPES: readonly string[] = [...UPLOAD_IMAGE_TYPES, 'image/jpg'];
const ACCEPTED_EXTENSIONS = ['jpeg', 'jpg', 'png', 'gif', 'webp'];

/** The file input's `accept`, so the picker dialog offers the same types the checks allow. */
export const IMAGE_ACCEPT = [...ACCEPTED_TYPES, ...ACCEPTED_EXTENSIONS.map((ext) => `.${ext}`)].join(',');

/**
 * Spec §5 image upload checks, before anything is sent: the type, then the
 * size. A file the system gives no type falls back to its extension; the
 * server decides by the bytes in any case.
 */
export function checkImageFile(file: Pick<File, 'name' | 'type' | 'size'>): string | null {
  const extension = file.name.includes('.') ? file.name.split('.').pop()!.toLowerCase() : '';
  const typeOk = file.type ? ACCEPTED_TYPES.includes(file.type.toLowerCase()) : ACCEPTED_EXTENSIONS.includes(extension);
  if (!typeOk) return UPLOAD_INVALID_TYPE_MESSAGE;
  if (file.size > UPLOAD_MAX_BYTES) return UPLOAD_TOO_LARGE_MESSAGE;
  return null;
}

/** Spec §7 Upload: POST /api/upload/image, multipart with the file in `image`; answers `data.url`. */
export async function uploadImage(file: File, signal?: AbortSignal): Promise<string> {
  const form = new FormData();
  form.append(UPLOAD_FIELD_NAME, file);
  const data = await apiRequest('/upload/image', { method: 'POST', body: form, schema: uploadImageResponse, signal });
  return data.url;
}
