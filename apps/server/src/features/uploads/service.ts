import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { UPLOAD_INVALID_TYPE_MESSAGE, UPLOAD_MAX_BYTES, UPLOAD_TOO_LARGE_MESSAGE, type UploadImageType } from '@herald/contracts';
import type { AppContext } from '../../context';
import { badRequest, HttpError, notFound } from '../../platform/errors';
import { containsMarkup, identifyImage, type ImageInfo } from './image-bytes';
import * as repo from './repository';

/** Larger sides or pixel counts are refused: nothing a notification shows needs them, and decoding them costs browsers dearly. */
export const MAX_IMAGE_SIDE_PX = 10_000;
export const MAX_IMAGE_PIXELS = 40_000_000;

/** Stored names: a random UUID and the extension of the detected type. Nothing else is ever served. */
const STORED_FILE_NAME = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.(jpg|png|gif|webp)$/;

const CONTENT_TYPE_OF_EXTENSION: Record<ImageInfo['extension'], UploadImageType> = {
  jpg: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
};

export const fileTooLarge = () => new HttpError(413, UPLOAD_TOO_LARGE_MESSAGE, 'file_too_large');

export function uploadsDirectory(dataDir: string): string {
  return path.join(dataDir, 'uploads');
}

/** Checks an uploaded file's bytes: an accepted type, sane dimensions, no markup. */
export function checkImage(bytes: Buffer): ImageInfo {
  if (bytes.length > UPLOAD_MAX_BYTES) throw fileTooLarge();
  const image = identifyImage(bytes);
  if (!image || image.width < 1 || image.height < 1) throw badRequest(UPLOAD_INVALID_TYPE_MESSAGE, 'invalid_image');
  if (containsMarkup(bytes, image.headerLength)) throw badRequest(UPLOAD_INVALID_TYPE_MESSAGE, 'invalid_image');
  if (image.width > MAX_IMAGE_SIDE_PX || image.height > MAX_IMAGE_SIDE_PX || image.width * image.height > MAX_IMAGE_PIXELS) {
    throw badRequest(
      `Image dimensions ${image.width}×${image.height} are too large: at most 10,000 pixels a side and 40 megapixels`,
      'image_too_large',
    );
  }
  return image;
}

export interface UploadedFile {
  filePath: string;
  contentType: UploadImageType;
  byteSize: number;
}

export function createUploadsService(ctx: AppContext) {
  const { db, clock, config } = ctx;
  const directory = uploadsDirectory(config.dataDir);

  return {
    /** Stores a checked image under DATA_DIR/uploads/<uuid>.<ext> and answers its absolute URL. */
    async storeImage(userId: string, bytes: Buffer): Promise<{ url: string }> {
      const image = checkImage(bytes);
      const id = crypto.randomUUID();
      const fileName = `${id}.${image.extension}`;
      const filePath = path.join(directory, fileName);
      await fs.promises.mkdir(directory, { recursive: true });
      await fs.promises.writeFile(filePath, bytes, { flag: 'wx', mode: 0o644 });
      try {
        await repo.insertUpload(db, {
          id,
          user_id: userId,
          file_name: fileName,
          content_type: image.contentType,
          byte_size: bytes.length,
          width: image.width,
          height: image.height,
          created_at: clock.now(),
        });
      } catch (error) {
        await fs.promises.rm(filePath, { force: true });
        throw error;
      }
      // Absolute: subscribers' browsers load notification images from it, not the dashboard.
      return { url: `${config.publicUrl}/uploads/${fileName}` };
    },

    /** A stored upload by its file name; 404 for any other name (no path ever reaches the disk unchecked). */
    async findFile(fileName: string): Promise<UploadedFile> {
      const match = STORED_FILE_NAME.exec(fileName);
      if (!match) throw notFound('File');
      const filePath = path.join(directory, fileName);
      try {
        const stat = await fs.promises.stat(filePath);
        if (!stat.isFile()) throw notFound('File');
        return { filePath, contentType: CONTENT_TYPE_OF_EXTENSION[match[2] as ImageInfo['extension']], byteSize: stat.size };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw notFound('File');
        throw error;
      }
    },
  };
}
