// The import job (docs/product.md, "Importing subscribers"). The database
// says what is due: the scheduler's due-work source claims queued imports,
// and running ones whose lease ran out (their worker died), with one
// conditional UPDATE, and enqueues a typed job for the claim. The worker reads
// the file as a stream from where the last committed batch ended, checks each
// row as the subscribe API would, and writes a batch per transaction:
// subscribers inserted in one statement (endpoint known to the site: updated),
// tags merged, the site's active count, the rejects, and the progress, which
// is also the resume point. A claim superseded by another stops at its next
// batch (its transaction is rolled back).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { SUBSCRIBER_TAG_MAX_COUNT, UNKNOWN } from '@herald/contracts';
import { z } from 'zod';
import type { AppContext } from '../../context';
import { tagsOfSubscribers } from '../../db/subscriber-tags';
import { defineJob, type JobQueue } from '../../jobs/queue';
import type { DueWorkSource } from '../../jobs/scheduler';
import { addToHourlyStats, adjustActiveSubscriberCount } from '../analytics/site-counters';
import type { SubscribersImportedHook } from '../subscribers/hooks';
import { checkedBatchesOf, ImportHeaderError, type CheckedBatch, type ReadStart } from './checked-batches';
import { ImportFileError } from './import-file';
import { isRejected, type ImportedRow, type RejectedRow, type RowContext } from './import-row';
import * as repo from './repository';
import { importsFolder } from './service';

export const subscriberImportJob = defineJob('subscriber-import', z.object({ importId: z.string(), attempt: z.number().int() }));

/** A claim lasts this long; every batch renews it. */
export const IMPORT_LEASE_MS = 5 * 60_000;
/** Claims before an import that keeps dying is given up. */
const MAX_ATTEMPTS = 5;
/** Rows per transaction: fewer, larger commits write each index page touched by a batch once (measured by bench:import). */
const DEFAULT_BATCH = 5000;

export const INTERRUPTED = 'The import was interrupted too many times; start it again: rows already imported are updated, not duplicated';

// Who is told of subscribers an import created, when the uploader asked to
// enrol them: runtime.ts wires welcome-campaign enrolment only. An import
// fires no subscriber.created webhook per row (docs/product.md).
declare module '../../context' {
  interface AppContext {
    subscriberImportedHooks?: SubscribersImportedHook[];
  }
}

class ClaimLost extends Error {}

/** The scheduler's side: claim what is due, enqueue one job per claim. */
export function subscriberImportsDueWork(ctx: Pick<AppContext, 'db' | 'clock'>, queue: JobQueue): DueWorkSource {
  return {
    name: 'subscriber-imports',
    async runDue(now) {
      const claimed = await repo.claimImports(ctx.db, now, now + IMPORT_LEASE_MS, 10);
      for (const claim of claimed) {
        if (claim.attempts > MAX_ATTEMPTS) {
          await repo.finishImport(ctx.db, claim.id, claim.attempts, 'failed', INTERRUPTED, now);
          continue;
        }
        await queue.enqueue(subscriberImportJob, { importId: claim.id, attempt: claim.attempts });
      }
    },
  };
}

export function registerSubscriberImportJobs(ctx: AppContext, queue: JobQueue): void {
  queue.work(subscriberImportJob, (payload) => runImport(ctx, payload.importId, payload.attempt), { concurrency: 1 });
}

interface BatchCounts {
  imported: number;
  updated: number;
  rejected: number;
}

/** Reads and imports the file of a claimed import, from its resume point. Never throws: an error fails the import. */
export async function runImport(ctx: AppContext, importId: string, attempt: number, options: { onBatch?: (rows: number) => Promise<void> } = {}): Promise<void> {
  const row = await repo.findImport(ctx.db, importId);
  if (!row || row.status !== 'running' || Number(row.attempts) !== attempt) return;
  // Batch commits no longer wait for WAL checkpoints and their fsyncs (db/wal-checkpoints.ts).
  const releaseCheckpoints = ctx.holdBackgroundCheckpoints();
  try {
    await importClaimed(ctx, row, attempt, options);
  } finally {
    releaseCheckpoints();
  }
}

async function importClaimed(ctx: AppContext, row: repo.ImportRow, attempt: number, options: { onBatch?: (rows: number) => Promise<void> }): Promise<void> {
  const { db, clock } = ctx;
  const importId = row.id;
  const filePath = path.join(importsFolder(ctx), row.stored_file);
  const batchSize = ctx.subscriberImports?.batchSize ?? DEFAULT_BATCH;
  const enrol = row.enrol_in_welcome_campaign === 1;

  const fail = async (message: string) => {
    if (await repo.finishImport(db, importId, attempt, 'failed', message, clock.now())) await cleanUp();
  };
  const cleanUp = async () => {
    await repo.forgetSeen(db, importId);
    await fs.promises.rm(filePath, { force: true });
  };

  // A batch is written while the next one is read and checked (on another
  // thread for a large file, checked-batches.ts); batches still commit one
  // after another, in file order, so the saved offset is always a prefix.
  let writing: Promise<void> = Promise.resolve();
  try {
    const keys = await repo.siteKeys(db, row.site_id);
    const context: RowContext = {
      extraPushOrigins: ctx.config.extraPushOrigins,
      keysByPublicKey: new Map(keys.map((key) => [key.public_key, key.id])),
      defaultKeyId: row.vapid_key_id,
      now: clock.now(),
    };
    const commit = async (batch: CheckedBatch) => {
      const at = { bytesRead: batch.position.offset, linesRead: batch.position.line, columns: batch.columns };
      await writing;
      writing = (async () => {
        const counts = await commitBatch(ctx, row.site_id, importId, attempt, batch.rows, at, enrol);
        // Welcome steps due now (enrolled with the batch): the scheduler need not wait for its next tick.
        if (counts.imported && enrol) ctx.wakeScheduler();
        await options.onBatch?.(batch.rows.length);
      })();
      // Awaited before the next batch or the end; this only keeps a failure from counting as unhandled meanwhile.
      writing.catch(() => undefined);
    };

    if (!fs.existsSync(filePath)) return await fail('The uploaded file is no longer in the data folder; upload it again');
    const start: ReadStart = {
      filePath,
      format: row.format,
      position: { offset: Number(row.bytes_read), line: Number(row.lines_read) },
      columns: row.columns ? (JSON.parse(row.columns) as string[]) : null,
      context,
      batchSize,
    };
    const remainingBytes = (await fs.promises.stat(filePath)).size - start.position.offset;
    for await (const batch of checkedBatchesOf(start, remainingBytes, ctx.subscriberImports?.readerThread)) await commit(batch);
    await writing;
    if (await repo.finishImport(db, importId, attempt, 'done', null, clock.now())) await cleanUp();
  } catch (error) {
    // A batch still being written ends first: its rows are stored and counted before the import is marked failed.
    const lastWrite: unknown = await writing.then(
      () => undefined,
      (failure: unknown) => failure,
    );
    if (error instanceof ClaimLost || lastWrite instanceof ClaimLost) return;
    if (error instanceof ImportFileError) return await fail(`The file could not be read: ${error.message}`);
    if (error instanceof ImportHeaderError) return await fail(error.message);
    ctx.log.error({ err: error, importId }, 'a subscriber import failed');
    await fail(`The import stopped (${error instanceof Error ? error.message : String(error)}); start it again: rows already imported are updated, not duplicated`);
  }
}

/**
 * Subscriber ids in time order (RFC 9562 UUIDv7: 48-bit milliseconds, a
 * 12-bit sequence, random bits): an import inserts its subscribers at the end
 * of the id indexes instead of all over them, which keeps a million-row import
 * from rewriting the whole index on every batch. Ids stay opaque.
 */
let lastMillis = 0;
let sequence = 0;
/** Random bytes for ids, drawn 64 KiB at a time: one system call per 4,096 ids instead of one each. */
const RANDOM_POOL = Buffer.alloc(64 * 1024);
let randomOffset = RANDOM_POOL.length;
function timeOrderedId(): string {
  let millis = Date.now();
  if (millis <= lastMillis) {
    sequence += 1;
    if (sequence > 0xfff) {
      lastMillis += 1;
      sequence = 0;
    }
    millis = lastMillis;
  } else {
    lastMillis = millis;
    sequence = 0;
  }
  if (randomOffset + 16 > RANDOM_POOL.length) {
    crypto.randomFillSync(RANDOM_POOL);
    randomOffset = 0;
  }
  const bytes = RANDOM_POOL.subarray(randomOffset, randomOffset + 16);
  randomOffset += 16;
  bytes.writeUIntBE(millis, 0, 6);
  bytes.writeUInt16BE(0x7000 | sequence, 6);
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const duplicateOf = (row: ImportedRow, firstLine: number): RejectedRow => ({ line: row.line, reason: 'duplicate', detail: `the same endpoint appears on line ${firstLine}`, endpoint: row.endpoint });

/** One batch in one transaction; throws ClaimLost (rolling it back) when another claim took the import over. */
async function commitBatch(
  ctx: AppContext,
  siteId: string,
  importId: string,
  attempt: number,
  batch: Array<ImportedRow | RejectedRow>,
  position: { bytesRead: number; linesRead: number; columns: string | undefined },
  enrol: boolean,
): Promise<BatchCounts> {
  const now = ctx.clock.now();
  const rejects: RejectedRow[] = [];
  const unique: ImportedRow[] = [];
  const firstLine = new Map<string, number>();
  for (const row of batch) {
    if (isRejected(row)) {
      rejects.push(row);
      continue;
    }
    const first = firstLine.get(row.endpointHash);
    if (first !== undefined) rejects.push(duplicateOf(row, first));
    else {
      firstLine.set(row.endpointHash, row.line);
      unique.push(row);
    }
  }

  return ctx.db.transaction().execute(async (trx) => {
    // Every endpoint is offered for insertion; the site's own unique index
    // says which ones it had already, so a fresh import looks nothing up first.
    const newIds = new Map<string, string>();
    const values: repo.ImportedSubscriber[] = unique.map((row) => {
      const id = timeOrderedId();
      newIds.set(row.endpointHash, id);
      return {
        id,
        site_id: siteId,
        endpoint: row.endpoint,
        endpoint_hash: row.endpointHash,
        p256dh: row.p256dh,
        auth: row.auth,
        vapid_key_id: row.vapidKeyId,
        browser: row.browser ?? UNKNOWN,
        os: row.os ?? UNKNOWN,
        country: row.country ?? UNKNOWN,
        language: row.language,
        timezone: row.timezone,
        external_id: row.externalId,
        is_active: 1,
        subscribed_at: row.subscribedAt ?? now,
        updated_at: now,
      };
    });
    const inserted = await repo.insertSubscribers(trx, ctx.dbKind, values);
    /** The subscriber each stored row wrote: inserted, or updated below; a duplicate has none. */
    const ids = new Map<string, string>();
    for (const hash of inserted) ids.set(hash, newIds.get(hash)!);
    // The endpoints the site had: written by an earlier line of this file (a
    // duplicate), or there before the import or stored by a concurrent
    // subscribe (updated: keys, key, the metadata the row gave).
    const known = unique.filter((row) => !inserted.has(row.endpointHash));
    const existing = new Map((await repo.subscribersByHash(trx, siteId, known.map((row) => row.endpointHash))).map((row) => [row.endpoint_hash, row]));
    const earlier = await repo.seenLines(
      trx,
      importId,
      [...existing.values()].map((row) => row.id),
    );
    let updated = 0;
    for (const row of known) {
      const line = earlier.get(existing.get(row.endpointHash)?.id ?? '');
      if (line !== undefined) {
        rejects.push(duplicateOf(row, line));
        continue;
      }
      const update: repo.SubscriberImportUpdate = { p256dh: row.p256dh, auth: row.auth, vapid_key_id: row.vapidKeyId, updated_at: now };
      if (row.browser) update.browser = row.browser;
      if (row.os) update.os = row.os;
      if (row.country) update.country = row.country;
      if (row.language) update.language = row.language;
      if (row.timezone) update.timezone = row.timezone;
      if (row.externalId && !existing.get(row.endpointHash)?.external_id) update.external_id = row.externalId;
      const id = await repo.updateSubscriber(trx, siteId, row.endpointHash, update);
      if (id) {
        ids.set(row.endpointHash, id);
        updated += 1;
      }
    }
    await repo.markSeen(
      trx,
      ctx.dbKind,
      importId,
      unique.flatMap((row) => {
        const subscriberId = ids.get(row.endpointHash);
        return subscriberId ? [{ subscriberId, line: row.line }] : [];
      }),
    );
    // A subscriber the site had keeps its tags; the row's are added up to the most a subscriber can have, as the tags API allows.
    const tagsOfKnown = await tagsOfSubscribers(trx, [...existing.values()].map((row) => row.id));
    await repo.addTags(
      trx,
      ctx.dbKind,
      unique.flatMap((row) => {
        const subscriberId = ids.get(row.endpointHash);
        if (!subscriberId) return [];
        const had = tagsOfKnown.get(subscriberId) ?? [];
        const added = row.tags.filter((tag) => !had.includes(tag)).slice(0, Math.max(0, SUBSCRIBER_TAG_MAX_COUNT - had.length));
        return added.map((tag) => ({ subscriber_id: subscriberId, site_id: siteId, tag }));
      }),
    );
    if (inserted.size) {
      await adjustActiveSubscriberCount(trx, siteId, inserted.size);
      // They joined this site now: the dashboard's "previous" and the growth report walk back from the active count by
      // the hourly subscribes (docs/product.md, "Importing subscribers"), so the import is counted in this hour.
      await addToHourlyStats(trx, siteId, now, { subscribed: inserted.size });
    }
    await repo.insertRejects(
      trx,
      rejects.map((reject) => ({ import_id: importId, line: reject.line, reason: reject.reason, detail: reject.detail.slice(0, 500), endpoint: reject.endpoint?.slice(0, 2000) ?? null })),
    );
    const advanced = await repo.advanceImport(
      trx,
      importId,
      attempt,
      { bytesRead: position.bytesRead, linesRead: position.linesRead, rows: batch.length, imported: inserted.size, updated, rejected: rejects.length, columns: position.columns },
      now + IMPORT_LEASE_MS,
    );
    if (!advanced) throw new ClaimLost();
    if (enrol && inserted.size) {
      // The welcome campaign's first step counts from the import (docs/product.md); enrolled in this transaction.
      const created = [...inserted].map((hash) => ({ subscriberId: ids.get(hash)!, siteId, subscribedAt: now }));
      for (const hook of ctx.subscriberImportedHooks ?? []) await hook(trx, siteId, created);
    }
    return { imported: inserted.size, updated, rejected: rejects.length };
  });
}
