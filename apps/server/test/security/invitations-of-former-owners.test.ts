import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app';
import { addMember, invitationTokenFor, nextAddress } from './support/fixtures';

// An invitation carries its sender's authority (docs/security.md,
// "Invitations"): only owners invite, so once the sender is no owner of the
// site any more (removed, left, demoted, or handed ownership over) the
// invitations they sent and nobody has used yet are revoked. Otherwise a
// co-owner about to be removed could invite a second address of their own as
// owner and come back through it.

const uniqueEmail = (name: string) => `${name}-${crypto.randomBytes(4).toString('hex')}@example.com`;

describe('invitations of a member who is no longer an owner', () => {
  let t: TestApp;
  let owner: TestUser;
  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.createUser({ name: 'Olivia Owner' });
  });
  afterAll(async () => t?.close());

  const acceptAsNewAccount = (token: string) =>
    t.request('POST', '/api/invitations/accept-new', { body: { token, name: 'Second address', password: 'a-good-password' }, remoteAddress: nextAddress() });
  const pendingInvitations = async (siteId: string) =>
    (await t.request('GET', `/api/sites/${siteId}/members`, { token: owner.token })).body.data.invitations.map((invitation: { email: string }) => invitation.email);

  it("a co-owner's invitations are revoked when they are removed, leave, are demoted or hand ownership over", async () => {
    const ways: Array<[string, (siteId: string, coOwnerId: string, coOwnerToken: string) => Promise<{ status: number }>]> = [
      ['removed', (siteId, id) => t.request('DELETE', `/api/sites/${siteId}/members/${id}`, { token: owner.token })],
      ['left', (siteId, _id, token) => t.request('POST', `/api/sites/${siteId}/leave`, { token })],
      ['demoted', (siteId, id) => t.request('PATCH', `/api/sites/${siteId}/members/${id}`, { token: owner.token, body: { role: 'editor' } })],
      ['handed over', (siteId, _id, token) => t.request('POST', `/api/sites/${siteId}/transfer-ownership`, { token, body: { user_id: owner.id } })],
    ];
    for (const [way, act] of ways) {
      const site = await t.createSite(owner.token, { name: `Shared shop (${way})` });
      const coOwner = await addMember(t, { site, user: owner }, 'owner');
      const ownInvite = uniqueEmail('own');
      const colleague = uniqueEmail('colleague');
      expect((await t.request('POST', `/api/sites/${site.id}/invitations`, { token: coOwner.token, body: { email: ownInvite, role: 'owner' } })).status).toBe(201);
      expect((await t.request('POST', `/api/sites/${site.id}/invitations`, { token: owner.token, body: { email: colleague, role: 'editor' } })).status).toBe(201);
      const link = invitationTokenFor(t, ownInvite);

      const acted = await act(site.id, coOwner.id, coOwner.token);
      expect(acted.status, way).toBeLessThan(300);
      expect(await pendingInvitations(site.id), way).toEqual([colleague]);
      const joined = await acceptAsNewAccount(link);
      expect(joined.status, way).toBe(400);
      expect(joined.body.error.message, way).toMatch(/invitation/i);
    }
  });

  it("another member's removal leaves a co-owner's invitations live, and they still work", async () => {
    const site = await t.createSite(owner.token, { name: 'Shared shop (kept)' });
    const coOwner = await addMember(t, { site, user: owner }, 'owner');
    const colleague = uniqueEmail('kept');
    expect((await t.request('POST', `/api/sites/${site.id}/invitations`, { token: coOwner.token, body: { email: colleague, role: 'viewer' } })).status).toBe(201);
    // Another member's removal touches none of the co-owner's invitations.
    const admin = await addMember(t, { site, user: owner }, 'admin');
    expect((await t.request('DELETE', `/api/sites/${site.id}/members/${admin.id}`, { token: owner.token })).status).toBe(200);
    expect(await pendingInvitations(site.id)).toEqual([colleague]);
    const joined = await acceptAsNewAccount(invitationTokenFor(t, colleague));
    expect(joined.status).toBe(201);
  });

  it('an invitation from someone who is no owner any more is refused, and nothing is written', async () => {
    const site = await t.createSite(owner.token, { name: 'Shared shop (late)' });
    const coOwner = await addMember(t, { site, user: owner }, 'owner');
    expect((await t.request('PATCH', `/api/sites/${site.id}/members/${coOwner.id}`, { token: owner.token, body: { role: 'admin' } })).status).toBe(200);
    const late = await t.request('POST', `/api/sites/${site.id}/invitations`, { token: coOwner.token, body: { email: uniqueEmail('late'), role: 'owner' } });
    expect(late.status).toBe(403);
    expect(await pendingInvitations(site.id)).toEqual([]);
  });
});
