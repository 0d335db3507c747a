import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  UPLOAD_INVALID_TYPE_MESSAGE,
  UPLOAD_MAX_BYTES,
  UPLOAD_TOO_LARGE_MESSAGE,
  type Upload,
  type UploadImageType,
  type UploadsList,
} from '@herald/contracts';
import type { AppContext } from '../../context';
import { badRequest, conflict, HttpError, notFound } from '../../platform/errors';
import { iso } from '../../platform/responses';
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

const MB = 1024 * 1024;

/** "200 MB", "0.4 MB": quotas are whole megabytes, usage gets one decimal. */
export function megabytes(bytes: number): string {
  const value = bytes / MB;
  return `${Number.isInteger(value) ? value : value.toFixed(1)} MB`;
}

/** docs/security.md "Abuse limits": one user's images may take at most UPLOAD_QUOTA_MB. */
export const quotaExceeded = (quotaBytes: number, usedBytes: number) =>
  new HttpError(
    413,
    `This image does not fit in your upload storage quota of ${megabytes(quotaBytes)} (${megabytes(usedBytes)} used). Delete some of your uploads to make room.`,
    'upload_quota_exceeded',
  );

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

/** "notification "Summer sale"", the first three, then "and 2 more". */
function describeUses(uses: repo.UploadUse[]): string {
  const named = uses.slice(0, 3).map((use) => `${use.kind} "${use.name}"`);
  const rest = uses.length - named.length;
  if (rest > 0) return `${named.join(', ')} and ${rest} more`;
  return named.length > 1 ? `${named.slice(0, -1).join(', ')} and ${named.at(-1)}` : named[0]!;
}

export function createUploadsService(ctx: AppContext) {
  const { db, clock, config } = ctx;
  const directory = uploadsDirectory(config.dataDir);
  // Absolute: subscribers' browsers load notification images from it, not the dashboard.
  const urlOf = (fileName: string) => `${config.publicUrl}/uploads/${fileName}`;

  function toUpload(row: repo.UploadRow): Upload {
    return {
      id: row.id,
      url: urlOf(row.file_name),
      content_type: row.content_type as UploadImageType,
      byte_size: row.byte_size,
      width: row.width,
      height: row.height,
      created_at: iso(row.created_at),
    };
  }

  return {
    /**
     * Stores a checked image under DATA_DIR/uploads/<uuid>.<ext> and answers
     * its absolute URL, unless it would take the user past their storage
     * quota. The quota is looked at before the file is written (so a full
     * account costs no disk writes) and counted again, atomically with the
     * row, after (so parallel uploads cannot pass it together).
     */
    async storeImage(userId: string, bytes: Buffer): Promise<{ url: string }> {
      const image = checkImage(bytes);
      const quota = config.uploadQuotaBytes;
      const before = await repo.usageOfUser(db, userId);
      if (before.bytes + bytes.length > quota) throw quotaExceeded(quota, before.bytes);

      const id = crypto.randomUUID();
      const fileName = `${id}.${image.extension}`;
      const filePath = path.join(directory, fileName);
      await fs.promises.mkdir(directory, { recursive: true });
      await fs.promises.writeFile(filePath, bytes, { flag: 'wx', mode: 0o644 });
      try {
        await db.transaction().execute(async (trx) => {
          await repo.lockUploadsOfUser(trx, ctx.dbKind, userId);
          const used = await repo.usageOfUser(trx, userId);
          if (used.bytes + bytes.length > quota) throw quotaExceeded(quota, used.bytes);
          await repo.insertUpload(trx, {
            id,
            user_id: userId,
            file_name: fileName,
            content_type: image.contentType,
            byte_size: bytes.length,
            width: image.width,
            height: image.height,
            created_at: clock.now(),
          });
        });
      } catch (error) {
        await fs.promises.rm(filePath, { force: true });
        throw error;
      }
      return { url: urlOf(fileName) };
    },

    /** The caller's uploads, newest first, with what they use of their quota. */
    async list(userId: string, { page, limit }: { page: number; limit: number }): Promise<UploadsList> {
      const [rows, usage] = await Promise.all([repo.listUploadsOfUser(db, userId, { limit, offset: (page - 1) * limit }), repo.usageOfUser(db, userId)]);
      return { uploads: rows.map(toUpload), total: usage.count, page, limit, used_bytes: usage.bytes, quota_bytes: config.uploadQuotaBytes };
    },

    /**
     * Deletes one of the caller's uploads, row and file. Refused (409, naming
     * them) while something of theirs that can still send shows it: deleting
     * would make those pushes go out with a broken image, silently.
     * Another user's upload answers 404 (docs/security.md, tenancy).
     */
    async remove(userId: string, id: string): Promise<void> {
      const row = await repo.findUploadOfUser(db, userId, id);
      if (!row) throw notFound('Upload');
      const uses = await repo.findUsesOfUpload(db, userId, row.file_name);
      if (uses.length) throw conflict(`This image is still used by ${describeUses(uses)}. Remove it there first, then delete it.`);
      // The file first: if the process stops in between, the row is still listed and the
      // owner can delete it again; the other way round, an unlisted file would stay served.
      await fs.promises.rm(path.join(directory, row.file_name), { force: true });
      await repo.deleteUpload(db, id);
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
