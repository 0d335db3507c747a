import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate';
import { insertOwnerAndSite, openDatabaseAt, type OldDatabase } from './support/old-schema';
import { createTestApp, type TestApp, type TestUser } from './support/test-app';

// docs/product.md, Settings, "visitors who already allowed notifications":
// the site settings resubscribeGranted (on by default) and
// replaceForeignSubscription (off by default), saved through PATCH
// /api/sites/{id} and served to the SDK with the prompt settings.

describe('the settings for visitors who already allowed notifications', () => {
  let t: TestApp;
  let owner: TestUser;
  let address = 0;
  const publicSettings = (siteId: string) =>
    t.request('GET', `/api/public/sites/${siteId}/prompt-settings`, {
      headers: { origin: 'https://shop.example' },
      remoteAddress: `192.0.2.${(address = (address % 250) + 1)}`,
    });

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.createUser();
  });
  afterAll(async () => t.close());

  it('a new site re-subscribes granted visitors and leaves other providers’ subscriptions alone, and the SDK is told so', async () => {
    const site = await t.createSite(owner.token);
    expect(site.settings).toMatchObject({ resubscribeGranted: true, replaceForeignSubscription: false });
    const served = await publicSettings(site.id);
    expect(served.status).toBe(200);
    expect(served.body.data).toMatchObject({ vapid_public_key: site.vapid_public_key, resubscribe_granted: true, replace_foreign_subscription: false });
  });

  it('can be created with either setting given', async () => {
    const response = await t.request('POST', '/api/sites', {
      token: owner.token,
      body: { name: 'Shop', url: 'https://shop.example', settings: { resubscribeGranted: false, replaceForeignSubscription: true } },
    });
    expect(response.status).toBe(201);
    expect(response.body.data.site.settings).toMatchObject({ resubscribeGranted: false, replaceForeignSubscription: true });
  });

  it('PATCH saves each on its own, the SDK reads the new values, and the change is in the audit log', async () => {
    const site = await t.createSite(owner.token);
    const first = await t.request('PATCH', `/api/sites/${site.id}`, { token: owner.token, body: { settings: { replaceForeignSubscription: true } } });
    expect(first.status).toBe(200);
    expect(first.body.data.site.settings).toMatchObject({ resubscribeGranted: true, replaceForeignSubscription: true });
    const second = await t.request('PATCH', `/api/sites/${site.id}`, { token: owner.token, body: { settings: { resubscribeGranted: false } } });
    expect(second.body.data.site.settings).toMatchObject({ resubscribeGranted: false, replaceForeignSubscription: true });
    expect((await t.request('GET', `/api/sites/${site.id}`, { token: owner.token })).body.data.site.settings).toMatchObject({
      resubscribeGranted: false,
      replaceForeignSubscription: true,
    });
    expect((await publicSettings(site.id)).body.data).toMatchObject({ resubscribe_granted: false, replace_foreign_subscription: true });

    const audit = await t.request('GET', `/api/sites/${site.id}/audit-log`, { token: owner.token });
    const changed = (audit.body.data.entries as Array<{ action: string; changed_fields?: string[] | null }>)
      .filter((entry) => entry.action === 'settings_changed')
      .flatMap((entry) => entry.changed_fields ?? []);
    expect(changed).toEqual(expect.arrayContaining(['resubscribe_granted', 'replace_foreign_subscription']));
  });

  it('answers 400 with a readable message for anything but true or false', async () => {
    const site = await t.createSite(owner.token);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ resubscribeGranted: 'yes' }, 'resubscribeGranted must be true or false'],
      [{ resubscribeGranted: 1 }, 'resubscribeGranted must be true or false'],
      [{ resubscribeGranted: null }, 'resubscribeGranted must be true or false'],
      [{ replaceForeignSubscription: 'false' }, 'replaceForeignSubscription must be true or false'],
      [{ replaceForeignSubscription: 0 }, 'replaceForeignSubscription must be true or false'],
    ];
    for (const [settings, message] of cases) {
      const response = await t.request('PATCH', `/api/sites/${site.id}`, { token: owner.token, body: { settings } });
      expect(response.status, JSON.stringify(settings)).toBe(400);
      expect(response.body.error.message).toContain(message);
    }
    expect((await t.request('GET', `/api/sites/${site.id}`, { token: owner.token })).body.data.site.settings).toMatchObject({
      resubscribeGranted: true,
      replaceForeignSubscription: false,
    });
  });

  it('only admins and owners change them; another tenant gets 404', async () => {
    const site = await t.createSite(owner.token);
    const intruder = await t.createUser();
    const response = await t.request('PATCH', `/api/sites/${site.id}`, { token: intruder.token, body: { settings: { resubscribeGranted: false } } });
    expect(response.status).toBe(404);
    expect((await t.request('GET', `/api/sites/${site.id}`, { token: owner.token })).body.data.site.settings.resubscribeGranted).toBe(true);
  });
});

describe('migration 0021 on a database of 0019 with a site', () => {
  const T0 = Date.UTC(2026, 5, 1, 9);
  const user = crypto.randomUUID();
  const site = crypto.randomUUID();
  let old: OldDatabase;
  let db: Kysely<any>;

  beforeAll(async () => {
    old = await openDatabaseAt('0019_run_order');
    db = old.db;
    await insertOwnerAndSite(db, { user, site }, T0);
  });
  afterAll(async () => old?.close());

  it('turns re-subscribing granted visitors on for the existing site, and replacing foreign subscriptions off', async () => {
    expect(await migrateToLatest(old.handle)).toContain('0021_resubscribe_granted');
    const row = await db.selectFrom('sites').select(['resubscribe_granted', 'replace_foreign_subscription']).where('id', '=', site).executeTakeFirstOrThrow();
    expect(row).toEqual({ resubscribe_granted: 1, replace_foreign_subscription: 0 });
  });
});
