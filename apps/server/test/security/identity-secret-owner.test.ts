import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app';
import { addMember, fcmEndpoint, nextAddress, pushKeys } from './support/fixtures';

// The identity secret is the owner's alone (docs/security.md, "Tenancy" and
// "Identity verification"): whoever holds it can sign any user id, so an
// admin, who manages the site's settings and API keys, may neither read nor
// rotate it. They get 403 naming the owner role, and the secret stays. Nor
// may they switch verification off or change the server-only tags: that
// would let them claim any user id from their own browser without it.

describe('the identity secret, owner only', () => {
  let t: TestApp;
  let owner: TestUser;
  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.createUser();
  });
  afterAll(async () => t?.close());

  const storedSecret = async (siteId: string) => (await t.ctx.db.selectFrom('sites').select('identity_secret').where('id', '=', siteId).executeTakeFirstOrThrow()).identity_secret;

  it('refuses an admin (and below) with 403 naming the owner role, changes nothing, and answers the owner', async () => {
    const site = await t.createSite(owner.token);
    const mine = await t.request('GET', `/api/sites/${site.id}/identity-secret`, { token: owner.token });
    expect(mine.status).toBe(200);
    const secret: string = mine.body.data.secret;
    expect(secret).toMatch(/^[0-9a-f]{64}$/);

    for (const role of ['admin', 'editor', 'viewer']) {
      const member = await addMember(t, { site, user: owner }, role);
      for (const [method, url] of [
        ['GET', `/api/sites/${site.id}/identity-secret`],
        ['POST', `/api/sites/${site.id}/identity-secret/rotate`],
      ] as const) {
        const refused = await t.request(method, url, { token: member.token });
        expect(refused.status, `${role}: ${method} ${url}`).toBe(403);
        expect(refused.body).toEqual({ success: false, error: { message: 'This needs the owner role.', code: 'role_required' } });
        expect(JSON.stringify(refused.body)).not.toContain(secret);
      }
    }
    expect(await storedSecret(site.id)).toBe(secret);
    const rotations = await t.ctx.db.selectFrom('audit_log').select('id').where('site_id', '=', site.id).where('action', '=', 'secret_rotated').execute();
    expect(rotations).toEqual([]);

    const rotated = await t.request('POST', `/api/sites/${site.id}/identity-secret/rotate`, { token: owner.token });
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.secret).not.toBe(secret);
    expect(await storedSecret(site.id)).toBe(rotated.body.data.secret);
  });

  it('a site an admin was promoted to own answers them the secret', async () => {
    const site = await t.createSite(owner.token);
    const admin = await addMember(t, { site, user: owner }, 'admin');
    expect((await t.request('GET', `/api/sites/${site.id}/identity-secret`, { token: admin.token })).status).toBe(403);
    expect((await t.request('PATCH', `/api/sites/${site.id}/members/${admin.id}`, { token: owner.token, body: { role: 'owner' } })).status).toBe(200);
    const now = await t.request('GET', `/api/sites/${site.id}/identity-secret`, { token: admin.token });
    expect(now.status).toBe(200);
    expect(now.body.data.secret).toBe(await storedSecret(site.id));
  });

  it('an admin cannot turn identity verification off or change the server-only tags; the owner can', async () => {
    const site = await t.createSite(owner.token);
    const admin = await addMember(t, { site, user: owner }, 'admin');
    const endpoint = fcmEndpoint();
    expect((await t.request('POST', `/api/public/sites/${site.id}/subscribers`, { body: { subscription: { endpoint, keys: pushKeys() } }, remoteAddress: nextAddress() })).status).toBe(201);
    const claim = () => t.request('POST', `/api/public/sites/${site.id}/identify`, { body: { endpoint, external_id: 'customer-42' }, remoteAddress: nextAddress() });
    expect((await claim()).status).toBe(401);

    for (const settings of [{ identityVerification: false }, { serverOnlyTags: ['plan-pro'] }]) {
      const refused = await t.request('PATCH', `/api/sites/${site.id}`, { token: admin.token, body: { name: 'Renamed by admin', settings } });
      expect(refused.status, JSON.stringify(settings)).toBe(403);
      expect(refused.body.error).toEqual({ message: 'This needs the owner role.', code: 'role_required' });
    }
    const stored = await t.ctx.db.selectFrom('sites').select(['name', 'identity_verification', 'server_only_tags']).where('id', '=', site.id).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ name: site.name, identity_verification: 1 });
    expect(JSON.parse(stored.server_only_tags ?? '[]')).toEqual([]);
    expect((await claim()).status).toBe(401);
    // A body that repeats the current values (a settings form sent whole) changes nothing of them: it passes.
    const same = await t.request('PATCH', `/api/sites/${site.id}`, { token: admin.token, body: { settings: { identityVerification: true, serverOnlyTags: [], language: 'de' } } });
    expect(same.status, JSON.stringify(same.body)).toBe(200);

    const byOwner = await t.request('PATCH', `/api/sites/${site.id}`, { token: owner.token, body: { settings: { identityVerification: false, serverOnlyTags: ['plan-pro'] } } });
    expect(byOwner.status).toBe(200);
    expect(byOwner.body.data.site.settings).toMatchObject({ identityVerification: false, serverOnlyTags: ['plan-pro'] });
    expect((await claim()).status).toBe(200);
  });
});
