import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccessible, launchChromium, type BrowserSession } from './support/browser';
import { startHerald, type HeraldProcess } from './support/herald-server';
import { ownerApi, signInThroughUi, waitUntil } from './support/journey';

// Issue 13 §4 through the dashboard in headless Chromium: an owner moving from
// another push platform uploads its CSV in Settings → Import, follows the
// import to its end, reads the figures (imported, rejected) and downloads the
// report of rejected rows; the Subscribers page then counts the newcomers.

const OWNER = { email: 'owner@example.com', password: 'owner-password' };
const ROWS = 400;

/** A subscription as another platform exports it: a real P-256 key, a 16-byte auth secret, an FCM endpoint. */
function subscriptionLine(i: number): string {
  const p256dh = crypto.createECDH('prime256v1').generateKeys().toString('base64url');
  const auth = crypto.randomBytes(16).toString('base64url');
  return `https://fcm.googleapis.com/fcm/send/import-journey-${i}:APA91b${crypto.randomBytes(12).toString('hex')},${p256dh},${auth},Chrome,Windows,vip|spring`;
}

describe('import journey: a CSV from another platform, through Settings → Import', () => {
  let herald: HeraldProcess;
  let browser: BrowserSession;
  let siteId: string;
  let folder: string;

  beforeAll(async () => {
    herald = await startHerald({ ADMIN_EMAIL: OWNER.email, ADMIN_PASSWORD: OWNER.password, ADMIN_NAME: 'Olive Owner' });
    const owner = ownerApi(herald.url);
    await owner.signIn(OWNER.email, OWNER.password);
    siteId = (await owner.call('POST', '/sites', { name: 'Moving Shop', url: 'https://moving.example' })).data.site.id;
    browser = await launchChromium();
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-import-journey-'));
  });
  afterAll(async () => {
    await browser?.close();
    await herald?.stop();
    if (folder) fs.rmSync(folder, { recursive: true, force: true });
  });

  it('imports the good rows, rejects the duplicate and the bad key with their lines, and the report says why', async () => {
    const lines = ['endpoint,p256dh,auth,browser,os,tags'];
    for (let i = 0; i < ROWS; i++) lines.push(subscriptionLine(i));
    // Line 402: the first subscription again. Line 403: a key that is not a P-256 point.
    lines.push(lines[1]!);
    lines.push(`https://fcm.googleapis.com/fcm/send/import-journey-bad:APA91b,${Buffer.alloc(65, 4).toString('base64url')},${crypto.randomBytes(16).toString('base64url')},Chrome,Windows,`);
    const file = path.join(folder, 'onesignal-export.csv');
    fs.writeFileSync(file, lines.join('\n') + '\n');

    const page = await browser.context.newPage();
    await signInThroughUi(page, herald.url, OWNER.email, OWNER.password);
    await page.goto(`${herald.url}/subscribers`);
    await page.getByRole('link', { name: 'Import' }).click();
    await page.waitForURL('**/settings?tab=import');
    await page.getByText('No imports yet.').waitFor();
    await expectAccessible(page, 'settings import tab');

    await page.getByLabel(/^File/).setInputFiles(file);
    await page.getByRole('button', { name: 'Import subscribers' }).click();
    const row = page.getByRole('listitem', { name: 'Import of onesignal-export.csv' });
    await row.getByText('Done, 2 rejected').waitFor({ timeout: 60_000 });
    const figures = await row.locator('dl').innerText();
    expect(figures.replace(/\s+/g, ' ')).toBe(`Rows read ${(ROWS + 2).toLocaleString('en-US')} Imported ${ROWS} Updated 0 Rejected 2`);

    const download = page.waitForEvent('download');
    await row.getByRole('button', { name: 'Download rejected rows (CSV)' }).click();
    const report = fs.readFileSync(await (await download).path(), 'utf8').trim().split(/\r?\n/);
    expect(report[0]).toBe('line,reason,detail,endpoint');
    expect(report.slice(1).map((line) => line.split(',').slice(0, 2).join(','))).toEqual([`${ROWS + 2},duplicate`, `${ROWS + 3},bad_key`]);

    const owner = ownerApi(herald.url);
    await owner.signIn(OWNER.email, OWNER.password);
    const total = await waitUntil('the subscribers to be listed', 10_000, async () => {
      const listed = (await owner.call('GET', `/sites/${siteId}/subscribers?limit=1`)).data.total as number;
      return listed === ROWS ? listed : undefined;
    });
    expect(total).toBe(ROWS);
    await page.close();
  });

  it('imports a file of several megabytes on the built server, read on its reader thread', async () => {
    // Over the 4 MB from which the job reads and checks on a worker thread
    // (checked-batches.ts): the bundle's own entry for it must load and work.
    const keys = Array.from({ length: 500 }, () => crypto.createECDH('prime256v1').generateKeys().toString('base64url'));
    const count = 20_000;
    const lines = ['endpoint,p256dh,auth,browser,os,tags'];
    for (let i = 0; i < count; i++) lines.push(`https://fcm.googleapis.com/fcm/send/large-${i}:APA91b${crypto.randomBytes(64).toString('base64url')},${keys[i % keys.length]},${crypto.randomBytes(16).toString('base64url')},Chrome,Windows,large`);
    const csv = lines.join('\n') + '\n';
    expect(Buffer.byteLength(csv)).toBeGreaterThan(4 * 1024 * 1024);

    const token = ((await (await fetch(`${herald.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(OWNER) })).json()) as { data: { token: string } }).data.token;
    const form = new FormData();
    form.append('file', new Blob([csv], { type: 'text/csv' }), 'large.csv');
    const created = await fetch(`${herald.url}/api/sites/${siteId}/subscriber-imports`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
    expect(created.status).toBe(201);
    const importId = ((await created.json()) as { data: { import: { id: string } } }).data.import.id;
    const done = await waitUntil('the large import to end', 120_000, async () => {
      const row = ((await (await fetch(`${herald.url}/api/subscriber-imports/${importId}`, { headers: { authorization: `Bearer ${token}` } })).json()) as { data: { import: Record<string, unknown> } }).data.import;
      return row.status === 'running' || row.status === 'queued' ? undefined : row;
    });
    expect(done).toMatchObject({ status: 'done', rows_read: count, imported: count, rejected: 0, error: null });
  });
});
