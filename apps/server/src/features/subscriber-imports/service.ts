// Settings → Import (docs/product.md, "Importing subscribers"): a site's
// admins and owners upload a CSV or JSON Lines file of browser subscriptions
// from another push platform; a background job (job.ts) reads it. Admin, like
// the subscriber export with keys (docs/security.md, "Tenancy").
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { SUBSCRIBER_IMPORT_MAX_BYTES, type SubscriberImport } from '@herald/contracts';
import type { AppContext } from '../../context';
import { badRequest, notFound } from '../../platform/errors';
import { checkSiteRole } from '../../platform/site-roles';
import { csvLine } from '../../platform/csv';
import { iso, isoOrNull } from '../../platform/responses';
import { recordAudit } from '../audit-log/record';
import { requireSiteRole } from '../sites/service';
import { detectFormat } from './import-file';
import type { ReadImportUpload } from './import-upload';
import * as repo from './repository';

/** How many imports the list shows. */
const LIST_LIMIT = 20;
const REPORT_PAGE = 1000;

// Tuning a test or the benchmark may lower (declared here so the feature owns it).
declare module '../../context' {
  interface AppContext {
    subscriberImports?: {
      /** Largest file accepted (default SUBSCRIBER_IMPORT_MAX_BYTES). */
      maxBytes?: number;
      /** Rows per transaction (default 5000). */
      batchSize?: number;
      /** Read and check on a worker thread: 'auto' (default) for files over a few MB (checked-batches.ts). */
      readerThread?: 'auto' | 'always' | 'never';
    };
  }
}

/** Where uploaded import files wait for their job: DATA_DIR/imports. */
export function importsFolder(ctx: Pick<AppContext, 'config'>): string {
  return path.join(ctx.config.dataDir, 'imports');
}

export function toSubscriberImport(row: repo.ImportRow): SubscriberImport {
  const finished = row.status === 'done' || row.status === 'failed';
  return {
    id: row.id,
    site_id: row.site_id,
    status: row.status,
    file_name: row.file_name,
    bytes_read: Number(row.bytes_read),
    file_size: Number(row.file_size),
    rows_read: Number(row.rows_read),
    imported: Number(row.imported),
    updated: Number(row.updated),
    rejected: Number(row.rejected),
    enrol_in_welcome_campaign: row.enrol_in_welcome_campaign === 1,
    error: row.error,
    report_url: finished ? `/api/subscriber-imports/${row.id}/report` : null,
    created_at: iso(row.created_at),
    finished_at: isoOrNull(row.finished_at),
  };
}

function booleanField(value: string | undefined, name: string): boolean {
  if (value === undefined || value === '' || value === 'false') return false;
  if (value === 'true') return true;
  throw badRequest(`${name} must be "true" or "false"`, 'invalid_request');
}

export function createSubscriberImportsService(ctx: AppContext) {
  const { db, clock } = ctx;

  return {
    /**
     * Stores the uploaded file and queues its import: role first (nothing is
     * read for a member who may not import), then the file, then the form's
     * key. The scheduler hands the import to a worker (job.ts).
     */
    async create(userId: string, siteId: string, readUpload: ReadImportUpload): Promise<SubscriberImport> {
      await requireSiteRole(ctx, userId, siteId, 'admin');
      const folder = importsFolder(ctx);
      const upload = await readUpload(folder, ctx.subscriberImports?.maxBytes ?? SUBSCRIBER_IMPORT_MAX_BYTES);
      const stored = path.join(folder, upload.storedFile);
      try {
        const enrol = booleanField(upload.fields.enrol_in_welcome_campaign, 'enrol_in_welcome_campaign');
        const keys = await repo.siteKeys(db, siteId);
        const named = upload.fields.vapid_key_id?.trim();
        const key = named ? keys.find((k) => k.id === named) : keys.find((k) => k.is_primary === 1);
        if (!key) throw named ? badRequest('vapid_key_id is not one of this site’s VAPID keys (Settings → VAPID Keys)', 'unknown_vapid_key') : notFound('Site');
        const now = clock.now();
        const row = {
          id: crypto.randomUUID(),
          site_id: siteId,
          created_by: userId,
          status: 'queued' as const,
          file_name: upload.fileName,
          stored_file: upload.storedFile,
          file_size: upload.size,
          format: detectFormat(upload.fileName, upload.head),
          columns: null,
          vapid_key_id: key.id,
          enrol_in_welcome_campaign: enrol ? 1 : 0,
          lease_until: null,
          error: null,
          created_at: now,
          finished_at: null,
        };
        await db.transaction().execute(async (trx) => {
          await repo.insertImport(trx, row);
          await recordAudit(
            ctx,
            { siteId, actor: { userId }, action: 'created', subject: { type: 'subscriber', id: null, label: `Import of ${upload.fileName}` }, detail: { import_id: row.id, file_size: upload.size, enrol_in_welcome_campaign: enrol } },
            trx,
          );
        });
        ctx.wakeScheduler();
        return toSubscriberImport((await repo.findImport(db, row.id))!);
      } catch (error) {
        await fs.promises.rm(stored, { force: true });
        throw error;
      }
    },

    async get(userId: string, importId: string): Promise<SubscriberImport> {
      return toSubscriberImport(checkSiteRole(await repo.findImportOfUser(db, userId, importId), 'admin', 'Import'));
    },

    async list(userId: string, siteId: string): Promise<SubscriberImport[]> {
      await requireSiteRole(ctx, userId, siteId, 'admin');
      return (await repo.listImports(db, siteId, LIST_LIMIT)).map(toSubscriberImport);
    },

    /** The rejected rows as CSV (line, reason, detail, endpoint), by line; every cell through csvCell (docs/security.md, "CSV injection"). */
    async report(userId: string, importId: string): Promise<{ fileName: string; lines: AsyncGenerator<string> }> {
      const row = checkSiteRole(await repo.findImportOfUser(db, userId, importId), 'admin', 'Import');
      async function* lines(): AsyncGenerator<string> {
        yield csvLine(['line', 'reason', 'detail', 'endpoint']);
        let after = 0;
        for (;;) {
          const page = await repo.rejectsPage(db, row.id, after, REPORT_PAGE);
          if (page.length) yield page.map((reject) => csvLine([Number(reject.line), reject.reason, reject.detail, reject.endpoint])).join('');
          if (page.length < REPORT_PAGE) return;
          after = Number(page[page.length - 1]!.line);
        }
      }
      return { fileName: `herald-import-${row.id}-rejected.csv`, lines: lines() };
    },
  };
}
