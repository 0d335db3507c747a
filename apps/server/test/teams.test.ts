import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock';
import { addMember, dumpDatabase, invitationTokenFor, nextAddress } from './security/support/fixtures';
import { createTestApp, type TestApp, type TestUser } from './support/test-app';

// Teams (docs/product.md, "Teams"; docs/security.md, "Tenancy" and "Audit log").

const DAY = 86_400_000;
const uniqueEmail = (name: string) => `${name}-${crypto.randomBytes(4).toString('hex')}@example.com`;

describe('invitations', () => {
  const clock = new ManualClock(Date.UTC(2026, 3, 1, 9));
  let t: TestApp;
  let owner: TestUser;
  let site: any;
  beforeAll(async () => {
    t = await createTestApp({ clock });
    owner = await t.createUser({ name: 'Olivia Owner' });
    site = await t.createSite(owner.token, { name: 'Olivia Shop' });
  });
  afterAll(async () => t?.close());

  const invite = (body: Record<string, unknown>, token = owner.token, siteId = site.id) => t.request('POST', `/api/sites/${siteId}/invitations`, { token, body });
  const acceptNew = (token: string, name = 'New Person', password = 'a-good-password') =>
    t.request('POST', '/api/invitations/accept-new', { body: { token, name, password }, remoteAddress: nextAddress() });

  it('mails a single-use link built from PUBLIC_URL, stores only its hash, and lets a new person join with the role', async () => {
    const email = uniqueEmail('ed');
    const sent = await invite({ email, role: 'editor' });
    expect(sent.status).toBe(201);
    const mail = t.outbox().filter((m) => m.to === email).at(-1)!;
    expect(mail.subject).toBe('Olivia Owner invited you to Herald');
    expect(mail.text).toContain('- Olivia Shop (Editor)');
    expect(mail.text).toMatch(/http:\/\/herald\.test\/invitation\?token=/);
    expect(mail.text).toContain('expires in 7 days');
    const token = invitationTokenFor(t, email);
    const stored = await t.ctx.db.selectFrom('site_invitations').selectAll().where('email', '=', email).execute();
    expect(stored).toHaveLength(1);
    expect(stored[0]!.token_hash).not.toContain(token);
    expect(JSON.stringify(stored)).not.toContain(token);

    const preview = await t.request('POST', '/api/invitations/preview', { body: { token } });
    expect(preview.status).toBe(200);
    expect(preview.body.data).toMatchObject({ email, sites: [{ name: 'Olivia Shop', role: 'editor' }], invited_by: 'Olivia Owner', has_account: false });

    // Public sign-up stays closed (ALLOW_REGISTRATION unset), the link still works.
    expect((await t.request('POST', '/api/auth/register', { body: { name: 'X', email: uniqueEmail('x'), password: 'a-good-password' } })).status).toBe(403);
    const joined = await acceptNew(token, 'Eddie Editor');
    expect(joined.status).toBe(201);
    expect(joined.body.data.user).toMatchObject({ email, name: 'Eddie Editor', emailVerified: true });
    expect(joined.body.data.site_ids).toEqual([site.id]);
    const sites = await t.request('GET', '/api/sites', { token: joined.body.data.token });
    expect(sites.body.data.sites.map((s: any) => [s.id, s.role])).toEqual([[site.id, 'editor']]);

    // Single use: neither way works twice.
    const again = await acceptNew(token, 'Someone Else');
    expect(again.status).toBe(400);
    expect(again.body.error.message).toBe('This invitation link is invalid or has expired. Ask for a new one.');
    expect((await t.request('POST', '/api/invitations/accept', { token: joined.body.data.token, body: { token } })).status).toBe(400);
    expect((await t.request('POST', '/api/invitations/preview', { body: { token } })).status).toBe(400);
  });

  it('expires after 7 days', async () => {
    const early = uniqueEmail('early');
    const late = uniqueEmail('late');
    await invite({ email: early, role: 'viewer' });
    await invite({ email: late, role: 'viewer' });
    clock.advance(7 * DAY - 60_000);
    expect((await acceptNew(invitationTokenFor(t, early))).status).toBe(201);
    clock.advance(60_000);
    const expired = await acceptNew(invitationTokenFor(t, late));
    expect(expired.status).toBe(400);
    expect(await t.ctx.db.selectFrom('users').select('id').where('email', '=', late).executeTakeFirst()).toBeUndefined();
  });

  it('refuses a link used by a different signed-in email, and lets the invited account accept after signing in', async () => {
    const invitee = await t.createUser({ name: 'Ivy Invitee' });
    const stranger = await t.createUser({ name: 'Sam Stranger' });
    await invite({ email: invitee.email, role: 'viewer' });
    const token = invitationTokenFor(t, invitee.email);
    expect((await t.request('POST', '/api/invitations/preview', { body: { token } })).body.data.has_account).toBe(true);

    const before = await dumpDatabase(t.ctx.db);
    const wrong = await t.request('POST', '/api/invitations/accept', { token: stranger.token, body: { token } });
    expect(wrong.status).toBe(403);
    expect(wrong.body.error.message).toBe(`This invitation was sent to ${invitee.email}. Sign in with that address to accept it.`);
    expect(await dumpDatabase(t.ctx.db)).toEqual(before);
    // Someone who has the link cannot make an account for an address that has one.
    expect((await acceptNew(token)).status).toBe(409);

    const accepted = await t.request('POST', '/api/invitations/accept', { token: invitee.token, body: { token } });
    expect(accepted.status).toBe(200);
    expect(accepted.body.data.site_ids).toEqual([site.id]);
    expect((await t.request('GET', `/api/sites/${site.id}`, { token: invitee.token })).body.data.site.role).toBe('viewer');
    expect((await t.request('GET', `/api/sites/${site.id}`, { token: stranger.token })).status).toBe(404);
  });

  it('invites to several sites with one link, only sites the inviter owns', async () => {
    const second = await t.createSite(owner.token, { name: 'Olivia Blog' });
    const other = await t.createUser();
    const foreign = await t.createSite(other.token, { name: 'Foreign' });
    const shared = await t.createSite(other.token, { name: 'Shared with Olivia' });
    const adminOfShared = await addMember(t, { site: shared, user: other }, 'admin');
    const email = uniqueEmail('multi');

    expect((await invite({ email, role: 'editor', also_site_ids: [foreign.id] })).status).toBe(404);
    const notOwner = await invite({ email, role: 'editor' }, adminOfShared.token, shared.id);
    expect(notOwner.status).toBe(403);
    expect(notOwner.body.error.message).toBe('This needs the owner role.');
    expect(await t.ctx.db.selectFrom('site_invitations').select('id').where('email', '=', email).execute()).toEqual([]);

    const sent = await invite({ email, role: 'editor', also_site_ids: [second.id] });
    expect(sent.status).toBe(201);
    expect(sent.body.data.invitations.map((i: any) => i.site_id).sort()).toEqual([site.id, second.id].sort());
    expect(t.outbox().filter((m) => m.to === email)).toHaveLength(1);
    const joined = await acceptNew(invitationTokenFor(t, email));
    expect(joined.body.data.site_ids.sort()).toEqual([site.id, second.id].sort());
  });

  it('revokes a pending invitation, replaces an older one, and refuses inviting a member again', async () => {
    const email = uniqueEmail('rev');
    const first = await invite({ email, role: 'viewer' });
    const firstToken = invitationTokenFor(t, email);
    await invite({ email, role: 'admin' });
    const secondToken = invitationTokenFor(t, email);
    expect((await t.request('POST', '/api/invitations/preview', { body: { token: firstToken } })).status).toBe(400);
    const list = await t.request('GET', `/api/sites/${site.id}/members`, { token: owner.token });
    const pending = list.body.data.invitations.filter((i: any) => i.email === email);
    expect(pending).toHaveLength(1);
    expect(pending[0].role).toBe('admin');
    expect(pending[0].id).not.toBe(first.body.data.invitations[0].id);

    expect((await t.request('DELETE', `/api/sites/${site.id}/invitations/${pending[0].id}`, { token: owner.token })).status).toBe(200);
    expect((await t.request('DELETE', `/api/sites/${site.id}/invitations/${pending[0].id}`, { token: owner.token })).status).toBe(404);
    expect((await acceptNew(secondToken)).status).toBe(400);

    const member = await addMember(t, { site, user: owner }, 'viewer');
    const again = await invite({ email: member.email, role: 'editor' });
    expect(again.status).toBe(409);
  });
});

describe('members and roles', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  async function team() {
    const owner = await t.createUser({ name: 'Team Owner' });
    const site = await t.createSite(owner.token, { name: 'Team Site' });
    return { owner, site, tenant: { site, user: owner } };
  }
  const role = (token: string, siteId: string) => t.request('GET', `/api/sites/${siteId}`, { token }).then((r) => r.body.data?.site?.role ?? r.status);

  it('changes roles and removes members; a site always keeps one owner', async () => {
    const { owner, site, tenant } = await team();
    const editor = await addMember(t, tenant, 'editor');
    const changed = await t.request('PATCH', `/api/sites/${site.id}/members/${editor.id}`, { token: owner.token, body: { role: 'admin' } });
    expect(changed.status).toBe(200);
    expect(changed.body.data.member).toMatchObject({ user_id: editor.id, role: 'admin' });
    expect(await role(editor.token, site.id)).toBe('admin');

    const demoteSelf = await t.request('PATCH', `/api/sites/${site.id}/members/${owner.id}`, { token: owner.token, body: { role: 'viewer' } });
    expect(demoteSelf.status).toBe(409);
    expect(demoteSelf.body.error.message).toBe('A site always keeps at least one owner: make another member owner first.');
    expect((await t.request('DELETE', `/api/sites/${site.id}/members/${owner.id}`, { token: owner.token })).status).toBe(409);
    const leave = await t.request('POST', `/api/sites/${site.id}/leave`, { token: owner.token });
    expect(leave.status).toBe(409);
    expect(leave.body.error.message).toBe('You are the only owner of this site: transfer ownership to another member before you leave.');
    expect((await t.request('PATCH', `/api/sites/${site.id}/members/${owner.id}`, { token: editor.token, body: { role: 'viewer' } })).status).toBe(403);

    expect((await t.request('DELETE', `/api/sites/${site.id}/members/${editor.id}`, { token: owner.token })).status).toBe(200);
    expect(await role(editor.token, site.id)).toBe(404);
    expect((await t.request('GET', '/api/sites', { token: editor.token })).body.data.sites).toEqual([]);
  });

  it('lets a member leave, and lists members to every member but pending invitations to owners only', async () => {
    const { owner, site, tenant } = await team();
    const viewer = await addMember(t, tenant, 'viewer');
    await t.request('POST', `/api/sites/${site.id}/invitations`, { token: owner.token, body: { email: uniqueEmail('p'), role: 'viewer' } });
    const asViewer = await t.request('GET', `/api/sites/${site.id}/members`, { token: viewer.token });
    expect(asViewer.body.data.members.map((m: any) => m.role)).toEqual(['owner', 'viewer']);
    expect(asViewer.body.data.invitations).toEqual([]);
    expect(asViewer.body.data.your_role).toBe('viewer');
    expect((await t.request('GET', `/api/sites/${site.id}/members`, { token: owner.token })).body.data.invitations).toHaveLength(1);
    expect((await t.request('POST', `/api/sites/${site.id}/leave`, { token: viewer.token })).status).toBe(200);
    expect(await role(viewer.token, site.id)).toBe(404);
  });

  it('transfers ownership: the member becomes owner and the site’s account, the caller stays as admin', async () => {
    const { owner, site, tenant } = await team();
    const editor = await addMember(t, tenant, 'editor');
    expect((await t.request('POST', `/api/sites/${site.id}/transfer-ownership`, { token: owner.token, body: { user_id: crypto.randomUUID() } })).status).toBe(404);
    expect((await t.request('POST', `/api/sites/${site.id}/transfer-ownership`, { token: owner.token, body: { user_id: editor.id } })).status).toBe(200);
    expect(await role(editor.token, site.id)).toBe('owner');
    expect(await role(owner.token, site.id)).toBe('admin');
    const row = await t.ctx.db.selectFrom('sites').select('user_id').where('id', '=', site.id).executeTakeFirstOrThrow();
    expect(row.user_id).toBe(editor.id);
    expect((await t.request('DELETE', `/api/sites/${site.id}`, { token: owner.token })).status).toBe(403);
  });

  it('two owners demoting each other at once leave one owner (concurrency-safe)', async () => {
    for (let round = 0; round < 3; round++) {
      const { owner, site, tenant } = await team();
      const other = await addMember(t, tenant, 'owner');
      const [a, b] = await Promise.all([
        t.request('PATCH', `/api/sites/${site.id}/members/${other.id}`, { token: owner.token, body: { role: 'viewer' } }),
        t.request('PATCH', `/api/sites/${site.id}/members/${owner.id}`, { token: other.token, body: { role: 'viewer' } }),
      ]);
      // One wins; the other finds itself no longer an owner (403) or the last owner (409).
      expect([a.status, b.status].filter((status) => status === 200)).toHaveLength(1);
      expect([a.status, b.status].filter((status) => status === 403 || status === 409)).toHaveLength(1);
      const owners = await t.ctx.db.selectFrom('site_members').select('user_id').where('site_id', '=', site.id).where('role', '=', 'owner').execute();
      expect(owners).toHaveLength(1);
    }
  });

  it('migrates every existing site’s owner into site_members (one owner row per site)', async () => {
    const { site, owner } = await team();
    const rows = await t.ctx.db.selectFrom('site_members').selectAll().where('site_id', '=', site.id).execute();
    expect(rows.map((r) => [r.user_id, r.role])).toEqual([[owner.id, 'owner']]);
  });
});

describe('sessions', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  it('lists the live sessions (marking this one) and signs out everywhere', async () => {
    const user = await t.createUser();
    const other = await t.request('POST', '/api/auth/login', { body: { email: user.email, password: user.password } });
    const list = await t.request('GET', '/api/auth/sessions', { token: user.token });
    expect(list.status).toBe(200);
    expect(list.body.data.sessions).toHaveLength(2);
    expect(list.body.data.sessions.filter((s: any) => s.current)).toHaveLength(1);
    expect(JSON.stringify(list.body)).not.toContain(user.token);
    const ended = await t.request('POST', '/api/auth/sessions/sign-out-everywhere', { token: user.token });
    expect(ended.body.data.ended).toBe(2);
    expect((await t.request('GET', '/api/auth/me', { token: user.token })).status).toBe(401);
    expect((await t.request('GET', '/api/auth/me', { token: other.body.data.token })).status).toBe(401);
  });
});
