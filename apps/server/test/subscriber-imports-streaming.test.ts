import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_RECORD_BYTES } from '../src/features/subscriber-imports/import-file';
import { INTERRUPTED, IMPORT_LEASE_MS, runImport, subscriberImportJob, subscriberImportsDueWork } from '../src/features/subscriber-imports/job';
import type { JobQueue } from '../src/jobs/queue';
import { ManualClock } from '../src/platform/clock';
import { multipart } from './security/support/fixtures';
import { createTestApp, type TestApp, type TestUser } from './support/test-app';

// The import job reads its file as a stream and commits a batch at a time,
// each with the byte offset it reached (docs/product.md, "Importing
// subscribers"): progress moves while it runs, and an import whose worker
// died is taken over from the last committed batch, duplicates across the
// restart still found. The job is driven by hand here: no engine runs.

const ROWS = 3000;

function subscriptionRows(count: number): string[] {
  return Array.from({ length: count }, () => {
    const ecdh = crypto.createECDH('prime256v1');
    const endpoint = `https://fcm.googleapis.com/fcm/send/${crypto.randomBytes(18).toString('base64url')}`;
    return `${endpoint},${ecdh.generateKeys().toString('base64url')},${crypto.randomBytes(16).toString('base64url')},2025-06-01T00:00:00Z,Chrome,Windows,DE,de-DE,Europe/Berlin,a|b`;
  });
}
const HEADER = 'endpoint,p256dh,auth,created_at,browser,os,country,language,timezone,tags';

// Both ways of reading (checked-batches.ts): on the importing thread, and on
// a reader thread (large files) that must give the very same batches, resume
// points and failures.
describe.each(['never', 'always'] as const)('the import job (reader thread: %s)', (readerThread) => {
  let t: TestApp;
  let owner: TestUser;
  let site: any;
  const clock = new ManualClock(Date.UTC(2026, 5, 1));
  const claims: Array<{ importId: string; attempt: number }> = [];
  const queue = {
    async enqueue(job: unknown, payload: { importId: string; attempt: number }) {
      expect(job).toBe(subscriberImportJob);
      claims.push(payload);
    },
  } as unknown as JobQueue;

  beforeAll(async () => {
    t = await createTestApp({ clock });
    t.ctx.subscriberImports = { batchSize: 200, readerThread };
    owner = await t.createUser();
    site = await t.createSite(owner.token);
  });
  afterAll(async () => {
    await t?.close();
  });

  async function upload(content: string, fields: Record<string, string> = {}): Promise<string> {
    const body = multipart([...Object.entries(fields).map(([name, data]) => ({ name, data })), { name: 'file', filename: 'big.csv', contentType: 'text/csv', data: content }]);
    const response = await t.app.inject({ method: 'POST', url: `/api/sites/${site.id}/subscriber-imports`, headers: { 'content-type': body.contentType, authorization: `Bearer ${owner.token}` }, payload: body.payload });
    expect(response.statusCode).toBe(201);
    return response.json().data.import.id;
  }
  const progress = async (id: string) => (await t.request('GET', `/api/subscriber-imports/${id}`, { token: owner.token })).body.data.import;
  async function claim(): Promise<{ importId: string; attempt: number }> {
    claims.length = 0;
    await subscriberImportsDueWork(t.ctx, queue).runDue(clock.now());
    expect(claims).toHaveLength(1);
    return claims[0]!;
  }

  it('commits a batch at a time while reading, so progress moves long before the end of the file', async () => {
    const content = `${HEADER}\n${subscriptionRows(ROWS).join('\n')}\n`;
    const id = await upload(content);
    const { importId, attempt } = await claim();
    expect(importId).toBe(id);
    const seen: Array<{ bytes: number; rows: number; status: string }> = [];
    // While it runs the import holds checkpoints on another thread (docs/storage.md), and lets go at the end.
    const holds: string[] = [];
    const holdBackgroundCheckpoints = t.ctx.holdBackgroundCheckpoints;
    t.ctx.holdBackgroundCheckpoints = () => {
      holds.push('hold');
      const release = holdBackgroundCheckpoints();
      return () => {
        holds.push('release');
        release();
      };
    };
    await runImport(t.ctx, importId, attempt, {
      onBatch: async () => {
        const row = await progress(id);
        seen.push({ bytes: row.bytes_read, rows: row.rows_read, status: row.status });
        expect(holds).toEqual(['hold']);
      },
    });
    t.ctx.holdBackgroundCheckpoints = holdBackgroundCheckpoints;
    expect(holds).toEqual(['hold', 'release']);
    // One observation per batch of 200 rows, then the last (empty) commit.
    expect(seen.length).toBeGreaterThanOrEqual(ROWS / 200);
    expect(seen[0]).toMatchObject({ rows: 200, status: 'running' });
    expect(seen[0]!.bytes).toBeLessThan(Buffer.byteLength(content) / 10);
    for (let i = 1; i < seen.length; i += 1) expect(seen[i]!.bytes).toBeGreaterThanOrEqual(seen[i - 1]!.bytes);
    expect(await progress(id)).toMatchObject({ status: 'done', rows_read: ROWS, imported: ROWS, rejected: 0, bytes_read: Buffer.byteLength(content), file_size: Buffer.byteLength(content) });
  });

  it('takes over an import whose worker stopped from the last committed batch; the stale worker stops at its next batch and duplicates across the restart are still found', async () => {
    const rows = subscriptionRows(1000);
    // Line 2 comes back on the last line, after the restart.
    const content = `${HEADER}\n${rows.join('\n')}\n${rows[0]}\n`;
    const id = await upload(content);
    const first = await claim();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let batches = 0;
    let stalled!: () => void;
    const isStalled = new Promise<void>((resolve) => (stalled = resolve));
    const stale = runImport(t.ctx, first.importId, first.attempt, {
      onBatch: async () => {
        batches += 1;
        if (batches === 2) {
          stalled();
          await gate;
        }
      },
    });
    await isStalled;
    expect(await progress(id)).toMatchObject({ status: 'running', rows_read: 400 });

    // The lease runs out: the scheduler claims it again and a new run resumes at the saved offset.
    clock.advance(IMPORT_LEASE_MS + 1);
    const second = await claim();
    expect(second).toEqual({ importId: id, attempt: first.attempt + 1 });
    await runImport(t.ctx, second.importId, second.attempt);
    release();
    await stale;

    expect(await progress(id)).toMatchObject({ status: 'done', rows_read: 1001, imported: 1000, updated: 0, rejected: 1 });
    const report = (await t.request('GET', `/api/subscriber-imports/${id}/report`, { token: owner.token })).body as string;
    expect(report.trim().split('\r\n')[1]).toMatch(/^1002,duplicate,the same endpoint appears on line 2,https:/);
    const counted = await t.ctx.db.selectFrom('sites').select('active_subscriber_count').where('id', '=', site.id).executeTakeFirstOrThrow();
    expect(Number(counted.active_subscriber_count)).toBe(ROWS + 1000);
  });

  it('fails a file whose header lacks a required column, or whose line is too long, with a message that says why', async () => {
    const noAuth = await upload(`endpoint,p256dh\n${subscriptionRows(1)[0]}\n`);
    const first = await claim();
    expect(first.importId).toBe(noAuth);
    await runImport(t.ctx, first.importId, first.attempt);
    expect(await progress(noAuth)).toMatchObject({ status: 'failed', error: expect.stringMatching(/^The header row must name the columns endpoint, p256dh and auth \(missing: auth\)/) });

    const tooLong = await upload(`${HEADER}\n${subscriptionRows(300).join('\n')}\n${'x'.repeat(2 * 1024 * 1024)}\n`);
    const second = await claim();
    expect(second.importId).toBe(tooLong);
    await runImport(t.ctx, second.importId, second.attempt);
    // A line is refused once it outgrows MAX_RECORD_BYTES with no end in sight. The batch
    // before it is kept (written while the reader went on); the import says where it stopped.
    expect(await progress(tooLong)).toMatchObject({ status: 'failed', rows_read: 200, imported: 200, error: `The file could not be read: line 302 is longer than ${MAX_RECORD_BYTES / 1024} KB: is this a CSV or JSON Lines file?` });
  });

  it('enrols a batch’s new subscribers in the welcome campaign in the batch’s own transaction: a failed enrolment stores nothing of that batch, and starting again enrols each subscriber once', async () => {
    const shop = await t.createSite(owner.token, { name: `Welcome Shop ${readerThread}`, url: 'https://welcome-import.example' });
    const campaign = await t.request('POST', `/api/sites/${shop.id}/welcome-campaigns`, {
      token: owner.token,
      body: { name: 'Welcome', is_active: true, steps: [{ sequence_order: 1, delay_minutes: 0, notification: { title: 'Hi', message: 'Welcome', destination_url: 'https://welcome-import.example/hi' } }] },
    });
    expect(campaign.status).toBe(201);
    const siteOfTest = site;
    site = shop;
    const hooks = t.ctx.subscriberImportedHooks;
    let calls = 0;
    // The second batch's enrolment fails, as a database error would.
    t.ctx.subscriberImportedHooks = [
      ...(hooks ?? []),
      async () => {
        calls += 1;
        if (calls === 2) throw new Error('enrolment failed');
      },
    ];
    try {
      const content = `${HEADER}\n${subscriptionRows(450).join('\n')}\n`;
      const first = await upload(content, { enrol_in_welcome_campaign: 'true' });
      const firstClaim = await claim();
      await runImport(t.ctx, firstClaim.importId, firstClaim.attempt);
      expect(await progress(first)).toMatchObject({ status: 'failed', rows_read: 200, imported: 200, error: expect.stringContaining('enrolment failed') });
      const enrolments = () => t.ctx.db.selectFrom('welcome_campaign_enrollments').select('subscriber_id').where('site_id', '=', shop.id).execute();
      const subscribers = () => t.ctx.db.selectFrom('subscribers').select('id').where('site_id', '=', shop.id).execute();
      expect((await enrolments()).length).toBe(200);
      expect((await subscribers()).length).toBe(200);

      // Started again: the 200 stored are updated (already enrolled), the 250 others imported and enrolled.
      const again = await upload(content, { enrol_in_welcome_campaign: 'true' });
      const againClaim = await claim();
      await runImport(t.ctx, againClaim.importId, againClaim.attempt);
      expect(await progress(again)).toMatchObject({ status: 'done', rows_read: 450, imported: 250, updated: 200, rejected: 0 });
      const enrolled = (await enrolments()).map((row) => row.subscriber_id).sort();
      expect(enrolled).toEqual((await subscribers()).map((row) => row.id).sort());
      const runs = await t.ctx.db.selectFrom('notification_runs').select('subscriber_id').where('site_id', '=', shop.id).where('dedupe_key', 'like', 'drip:%').execute();
      expect(runs).toHaveLength(450);
    } finally {
      t.ctx.subscriberImportedHooks = hooks;
      site = siteOfTest;
    }
  });

  it('gives up an import that was interrupted too many times, with a message that says what to do', async () => {
    const id = await upload(`${HEADER}\n${subscriptionRows(1).join('\n')}\n`);
    await t.ctx.db.updateTable('subscriber_imports').set({ status: 'running', attempts: 5, lease_until: clock.now() - 1 }).where('id', '=', id).execute();
    claims.length = 0;
    await subscriberImportsDueWork(t.ctx, queue).runDue(clock.now());
    expect(claims).toEqual([]);
    expect(await progress(id)).toMatchObject({ status: 'failed', error: INTERRUPTED });
    expect(INTERRUPTED).toMatch(/rows already imported are updated, not duplicated/);
  });
});
