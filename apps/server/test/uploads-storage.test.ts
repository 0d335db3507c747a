import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pngOfSize, uploadImage } from './security/support/fixtures';
import { createTestApp, type TestApp, type TestUser } from './support/test-app';

// docs/security.md "Abuse limits": a user's uploaded images take at most
// UPLOAD_QUOTA_MB (default 200) of the server's disk; the user sees what they
// uploaded (GET /api/uploads) and can delete it (DELETE /api/uploads/{id}),
// unless something of theirs that can still send uses it.

const MB = 1024 * 1024;

async function upload(t: TestApp, user: TestUser, bytes: Buffer) {
  return uploadImage(t.app, user.token, bytes);
}

const fileOf = (url: string) => url.split('/uploads/')[1]!;

describe('upload storage quota (UPLOAD_QUOTA_MB=1)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { UPLOAD_QUOTA_MB: '1' } });
  });
  afterAll(async () => t?.close());

  const storedFiles = () => (fs.existsSync(path.join(t.dataDir, 'uploads')) ? fs.readdirSync(path.join(t.dataDir, 'uploads')) : []);

  it('refuses an image that does not fit with 413 naming the quota, stores nothing, and takes it once room is made', async () => {
    const user = await t.createUser();
    const first = await upload(t, user, pngOfSize(400_000));
    const second = await upload(t, user, pngOfSize(400_000));
    expect([first.status, second.status]).toEqual([201, 201]);
    const filesBefore = storedFiles().length;

    const refused = await upload(t, user, pngOfSize(400_000));
    expect(refused.status).toBe(413);
    expect(refused.body).toEqual({
      success: false,
      error: expect.objectContaining({
        message: 'This image does not fit in your upload storage quota of 1 MB (0.8 MB used). Delete some of your uploads to make room.',
      }),
    });
    expect(storedFiles()).toHaveLength(filesBefore);
    const rows = await t.ctx.db.selectFrom('uploads').select('byte_size').where('user_id', '=', user.id).execute();
    expect(rows.map((r) => r.byte_size)).toEqual([400_000, 400_000]);

    // Exactly up to the quota is allowed.
    expect((await upload(t, user, pngOfSize(MB - 800_000))).status).toBe(201);
    expect((await upload(t, user, pngOfSize(100))).status).toBe(413);

    // Another user has their own quota.
    const other = await t.createUser();
    expect((await upload(t, other, pngOfSize(400_000))).status).toBe(201);

    const firstId = fileOf(first.body.data.url).split('.')[0]!;
    expect((await t.request('DELETE', `/api/uploads/${firstId}`, { token: user.token })).status).toBe(200);
    expect((await upload(t, user, pngOfSize(400_000))).status).toBe(201);
  });

  it('parallel uploads cannot pass the quota together', async () => {
    const user = await t.createUser();
    const answers = await Promise.all(Array.from({ length: 8 }, () => upload(t, user, pngOfSize(300_000))));
    // 3 × 300,000 bytes fit in 1 MB (1,048,576 bytes); a 4th does not.
    expect(answers.filter((a) => a.status === 201)).toHaveLength(3);
    expect(answers.filter((a) => a.status === 413)).toHaveLength(5);
    const listed = await t.request('GET', '/api/uploads', { token: user.token });
    expect(listed.body.data).toMatchObject({ total: 3, used_bytes: 900_000, quota_bytes: MB });
    const mine = listed.body.data.uploads.map((u: { url: string }) => fileOf(u.url));
    for (const file of mine) expect(storedFiles()).toContain(file);
    // The refused ones left no file behind.
    const all = await t.ctx.db.selectFrom('uploads').select('file_name').execute();
    expect(storedFiles().sort()).toEqual(all.map((r) => r.file_name).sort());
  });
});

describe('GET /api/uploads and DELETE /api/uploads/{id}', () => {
  let t: TestApp;
  let owner: TestUser;
  let stranger: TestUser;
  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.createUser();
    stranger = await t.createUser();
  });
  afterAll(async () => t?.close());

  const as = (user: TestUser | null, method: string, url: string, body?: unknown) =>
    t.request(method, url, { ...(user ? { token: user.token } : {}), ...(body !== undefined ? { body } : {}) });

  it("lists the caller's uploads newest first with url, size, type, dimensions and date, and the storage used out of 200 MB", async () => {
    const user = await t.createUser();
    const small = await upload(t, user, pngOfSize(1_000));
    const large = await upload(t, user, pngOfSize(2_500));
    await upload(t, stranger, pngOfSize(3_000));

    const listed = await as(user, 'GET', '/api/uploads');
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual({
      uploads: [
        { id: expect.any(String), url: large.body.data.url, content_type: 'image/png', byte_size: 2_500, width: 1, height: 1, created_at: expect.any(String) },
        { id: expect.any(String), url: small.body.data.url, content_type: 'image/png', byte_size: 1_000, width: 1, height: 1, created_at: expect.any(String) },
      ],
      total: 2,
      page: 1,
      limit: 50,
      used_bytes: 3_500,
      quota_bytes: 200 * MB,
    });
    expect(listed.body.data.uploads[0].url).toMatch(/^http:\/\/herald\.test\/uploads\/[0-9a-f-]{36}\.png$/);
    expect(new Date(listed.body.data.uploads[0].created_at).toISOString()).toBe(listed.body.data.uploads[0].created_at);

    const second = await as(user, 'GET', '/api/uploads?limit=1&page=2');
    expect(second.body.data.uploads.map((u: { url: string }) => u.url)).toEqual([small.body.data.url]);
    expect(second.body.data).toMatchObject({ total: 2, page: 2, limit: 1, used_bytes: 3_500 });

    const bad = await as(user, 'GET', '/api/uploads?limit=0');
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/limit must be 1 or more/);
    expect((await as(null, 'GET', '/api/uploads')).status).toBe(401);
    // Nothing uploaded: an empty list, nothing used.
    expect((await as(await t.createUser(), 'GET', '/api/uploads')).body.data).toMatchObject({ uploads: [], total: 0, used_bytes: 0 });
  });

  it("deletes the caller's own upload, file and row; another user's id is 404 and leaves it alone", async () => {
    const mine = await upload(t, owner, pngOfSize(1_200));
    const file = fileOf(mine.body.data.url);
    const filePath = path.join(t.dataDir, 'uploads', file);
    const id = (await as(owner, 'GET', '/api/uploads')).body.data.uploads.find((u: { url: string }) => u.url === mine.body.data.url).id;

    const refused = await as(stranger, 'DELETE', `/api/uploads/${id}`);
    expect(refused.status).toBe(404);
    expect(refused.body.error.message).toBe('Upload not found');
    expect((await as(null, 'DELETE', `/api/uploads/${id}`)).status).toBe(401);
    expect(fs.existsSync(filePath)).toBe(true);
    expect((await t.request('GET', `/uploads/${file}`)).status).toBe(200);

    const deleted = await as(owner, 'DELETE', `/api/uploads/${id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, data: { deleted: true } });
    expect(fs.existsSync(filePath)).toBe(false);
    expect(await t.ctx.db.selectFrom('uploads').select('id').where('id', '=', id).executeTakeFirst()).toBeUndefined();
    expect((await t.request('GET', `/uploads/${file}`)).status).toBe(404);
    expect((await as(owner, 'GET', '/api/uploads')).body.data.uploads.map((u: { id: string }) => u.id)).not.toContain(id);
    expect((await as(owner, 'DELETE', `/api/uploads/${id}`)).status).toBe(404);
    expect((await as(owner, 'DELETE', '/api/uploads/not-an-upload')).status).toBe(404);
  });

  it('refuses with 409 naming what still uses the image, and deletes it once nothing that can still send does', async () => {
    const user = await t.createUser();
    const site = await t.createSite(user.token, { name: 'Acme Shop', url: 'https://acme.example' });
    const image = (await upload(t, user, pngOfSize(900))).body.data.url as string;
    const id = (await as(user, 'GET', '/api/uploads')).body.data.uploads[0].id as string;
    const remove = () => as(user, 'DELETE', `/api/uploads/${id}`);

    const draft = await as(user, 'POST', `/api/sites/${site.id}/notifications`, { title: 'Summer sale', message: 'Now on', destination_url: 'https://acme.example/sale', image_url: image });
    expect(draft.status).toBe(201);
    let answer = await remove();
    expect(answer.status).toBe(409);
    expect(answer.body.error.message).toBe('This image is still used by notification "Summer sale". Remove it there first, then delete it.');

    // A site-relative link, a feed icon, a campaign step and the site's own icon count too.
    const feed = await as(user, 'POST', `/api/sites/${site.id}/rss-feeds`, { name: 'Acme blog', url: 'https://acme.example/feed.xml', iconUrl: `/uploads/${fileOf(image)}` });
    expect(feed.status).toBe(201);
    const campaign = await as(user, 'POST', `/api/sites/${site.id}/welcome-campaigns`, {
      name: 'Hello',
      is_active: false,
      steps: [{ sequence_order: 1, delay_minutes: 0, notification: { title: 'Hi', message: 'Welcome', destination_url: 'https://acme.example/', icon_url: image } }],
    });
    expect(campaign.status).toBe(201);
    expect((await as(user, 'PATCH', `/api/sites/${site.id}`, { settings: { icon: image } })).status).toBe(200);
    answer = await remove();
    expect(answer.status).toBe(409);
    expect(answer.body.error.message).toBe(
      'This image is still used by notification "Summer sale", welcome campaign "Hello", RSS feed "Acme blog" and 1 more. Remove it there first, then delete it.',
    );

    // Remove it from each; a finished (cancelled) notification that showed it does not hold it.
    expect((await as(user, 'PATCH', `/api/notifications/${draft.body.data.notification.id}`, { image_url: null })).status).toBe(200);
    const scheduled = await as(user, 'POST', `/api/sites/${site.id}/notifications`, {
      title: 'Old news',
      message: 'Was planned',
      destination_url: 'https://acme.example/old',
      icon_url: image,
      scheduled_at: new Date(Date.now() + 24 * 3_600_000).toISOString(),
    });
    expect(scheduled.body.data.notification.status).toBe('scheduled');
    expect((await as(user, 'POST', `/api/notifications/${scheduled.body.data.notification.id}/cancel`)).status).toBe(200);
    expect((await as(user, 'DELETE', `/api/rss-feeds/${feed.body.data.feed.id}`)).status).toBe(200);
    expect((await as(user, 'DELETE', `/api/welcome-campaigns/${campaign.body.data.campaign.id}`)).status).toBe(200);
    answer = await remove();
    expect(answer.body.error.message).toBe('This image is still used by site "Acme Shop". Remove it there first, then delete it.');
    expect((await as(user, 'PATCH', `/api/sites/${site.id}`, { settings: { icon: null } })).status).toBe(200);

    // Another user's notification linking to the image does not pin it (nor their quota).
    const strangerSite = await t.createSite(stranger.token, { name: 'Elsewhere', url: 'https://elsewhere.example' });
    expect(
      (await as(stranger, 'POST', `/api/sites/${strangerSite.id}/notifications`, { title: 'Borrowed', message: 'x', destination_url: 'https://elsewhere.example/', icon_url: image })).status,
    ).toBe(201);

    expect((await remove()).status).toBe(200);
  });
});
