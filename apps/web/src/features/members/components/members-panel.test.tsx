import type { MembersList, Site } from '@herald/contracts';
import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { mockApi, ok } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { captureDialogs, renderApp } from '../../../test/render-app';

const owner = makeUser({ id: 'user-1', name: 'Olivia Owner', email: 'olivia@example.com' });
const list = (yourRole: MembersList['your_role']): MembersList => ({
  members: [
    { user_id: 'user-1', name: 'Olivia Owner', email: 'olivia@example.com', role: yourRole, joined_at: '2026-01-01T00:00:00.000Z' },
    { user_id: 'user-2', name: 'Eddie Editor', email: 'eddie@example.com', role: 'editor', joined_at: '2026-01-02T00:00:00.000Z' },
  ],
  invitations: yourRole === 'owner' ? [{ id: 'inv-1', email: 'pending@example.com', role: 'viewer', invited_by: 'Olivia Owner', created_at: '2026-01-03T00:00:00.000Z', expires_at: '2026-01-10T00:00:00.000Z' }] : [],
  your_role: yourRole,
});

function setUp(role: Site['role'], extra: Parameters<typeof mockApi>[0] = {}) {
  signIn(owner);
  const sites = [makeSite({ id: 'site-1', name: 'Acme Store', role }), makeSite({ id: 'site-2', name: 'Acme Blog', role: 'owner' })];
  return mockApi({
    'GET /api/auth/me': ok({ user: owner }),
    'GET /api/sites': ok({ sites }),
    'GET /api/sites/site-1/members': ok(list(role)),
    ...extra,
  });
}

describe('Settings → Members', () => {
  it('lets an owner invite by email with a role, to this and other owned sites', async () => {
    const api = setUp('owner', { 'POST /api/sites/site-1/invitations': ok({ invitations: [] }, 201) });
    const { user } = renderApp('/settings?tab=members');
    const form = await screen.findByRole('form', { name: 'Invite a member' });
    await user.type(within(form).getByLabelText(/Email/), 'new@example.com');
    await user.selectOptions(within(form).getByLabelText('Role'), 'viewer');
    await user.click(within(form).getByLabelText('Acme Blog'));
    await user.click(within(form).getByRole('button', { name: 'Send invitation' }));
    await waitFor(() => expect(api.callsTo('POST /api/sites/site-1/invitations')).toHaveLength(1));
    expect(api.callsTo('POST /api/sites/site-1/invitations')[0]!.body).toEqual({ email: 'new@example.com', role: 'viewer', also_site_ids: ['site-2'] });
    expect(await screen.findByText('Invitation sent to new@example.com.')).toBeInTheDocument();
    expect(screen.getByText('pending@example.com')).toBeInTheDocument();
  });

  it('changes a role, transfers ownership and removes a member (owner)', async () => {
    const api = setUp('owner', {
      'PATCH /api/sites/site-1/members/user-2': ok({ member: { ...list('owner').members[1], role: 'admin' } }),
      'POST /api/sites/site-1/transfer-ownership': ok({ done: true }),
      'DELETE /api/sites/site-1/members/user-2': ok({ done: true }),
    });
    const dialogs = captureDialogs(true);
    const { user } = renderApp('/settings?tab=members');
    await user.selectOptions(await screen.findByLabelText('Role of Eddie Editor'), 'admin');
    await waitFor(() => expect(api.callsTo('PATCH /api/sites/site-1/members/user-2')[0]?.body).toEqual({ role: 'admin' }));
    const row = screen.getAllByTestId('member-row')[1]!;
    await user.click(within(row).getByRole('button', { name: 'Transfer ownership' }));
    await waitFor(() => expect(api.callsTo('POST /api/sites/site-1/transfer-ownership')[0]?.body).toEqual({ user_id: 'user-2' }));
    await user.click(within(row).getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(api.callsTo('DELETE /api/sites/site-1/members/user-2')).toHaveLength(1));
    expect(dialogs.confirms).toEqual(['Make Eddie Editor the owner of Acme Store? You stay on as admin.', 'Remove Eddie Editor from Acme Store?']);
  });

  it('shows a viewer the team and the roles, but no invitations or role controls; the viewer can leave', async () => {
    const api = setUp('viewer', { 'POST /api/sites/site-1/leave': ok({ done: true }) });
    captureDialogs(true);
    const { user } = renderApp('/settings?tab=members');
    expect(await screen.findByText('Eddie Editor')).toBeInTheDocument();
    expect(screen.queryByRole('form', { name: 'Invite a member' })).not.toBeInTheDocument();
    expect(screen.queryByLabelText('Role of Eddie Editor')).not.toBeInTheDocument();
    expect(screen.getByText(/Only owners manage members/)).toBeInTheDocument();
    expect(screen.getByText('Read only: dashboard, lists and reports.')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Leave site' }));
    await waitFor(() => expect(api.callsTo('POST /api/sites/site-1/leave')).toHaveLength(1));
  });
});
