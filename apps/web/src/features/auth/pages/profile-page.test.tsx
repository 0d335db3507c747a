import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { useAuthStore } from '../../../lib/auth-store';
import { mockApi, ok } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { captureDialogs, renderApp } from '../../../test/render-app';

const me = makeUser({ name: 'Ada Lovelace', email: 'ada@example.com' });

function setUp(extra: Parameters<typeof mockApi>[0] = {}) {
  signIn(me);
  return mockApi({
    'GET /api/auth/me': ok({ user: me }),
    'GET /api/sites': ok({ sites: [makeSite({ id: 'site-1', name: 'Own Shop', role: 'owner' }), makeSite({ id: 'site-2', name: 'Partner Blog', role: 'editor' })] }),
    'GET /api/auth/sessions': ok({
      sessions: [
        { created_at: '2026-01-02T00:00:00.000Z', expires_at: '2026-02-01T00:00:00.000Z', current: true },
        { created_at: '2026-01-01T00:00:00.000Z', expires_at: '2026-01-31T00:00:00.000Z', current: false },
      ],
    }),
    ...extra,
  });
}

describe('profile page', () => {
  it('lists sessions and signs out everywhere', async () => {
    const api = setUp({ 'POST /api/auth/sessions/sign-out-everywhere': ok({ ended: 2 }) });
    captureDialogs(true);
    const { user, pathname } = renderApp('/profile');
    const rows = await screen.findAllByTestId('session-row');
    expect(rows).toHaveLength(2);
    expect(within(rows[0]!).getByText('This browser')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Sign out everywhere' }));
    await waitFor(() => expect(pathname()).toBe('/login'));
    expect(api.callsTo('POST /api/auth/sessions/sign-out-everywhere')).toHaveLength(1);
    expect(useAuthStore.getState().token).toBeNull();
  });

  it('shows the sites shared with me with my role, and leaves one', async () => {
    const api = setUp({ 'POST /api/sites/site-2/leave': ok({ done: true }) });
    captureDialogs(true);
    const { user } = renderApp('/profile');
    const shared = await screen.findByTestId('shared-site');
    expect(within(shared).getByText('Partner Blog')).toBeInTheDocument();
    expect(within(shared).getByText('Editor')).toBeInTheDocument();
    await user.click(within(shared).getByRole('button', { name: 'Leave' }));
    await waitFor(() => expect(api.callsTo('POST /api/sites/site-2/leave')).toHaveLength(1));
  });

  it('changes the password with the current one, and asks for it to change the email', async () => {
    const api = setUp({ 'PATCH /api/auth/profile': ok({ user: me }) });
    const { user } = renderApp('/profile');
    const password = await screen.findByRole('form', { name: 'Change password' });
    await user.type(within(password).getByLabelText(/^Current password/), 'old-password');
    await user.type(within(password).getByLabelText(/^New password/), 'new-password-1');
    await user.type(within(password).getByLabelText(/^Confirm new password/), 'new-password-1');
    await user.click(within(password).getByRole('button', { name: 'Change password' }));
    await waitFor(() => expect(api.callsTo('PATCH /api/auth/profile')[0]?.body).toEqual({ currentPassword: 'old-password', newPassword: 'new-password-1' }));

    const details = screen.getByRole('form', { name: 'Your details' });
    await user.clear(within(details).getByLabelText(/^Email/));
    await user.type(within(details).getByLabelText(/^Email/), 'ada@new.example');
    await user.type(within(details).getByLabelText(/^Current password/), 'new-password-1');
    await user.click(within(details).getByRole('button', { name: 'Save details' }));
    await waitFor(() =>
      expect(api.callsTo('PATCH /api/auth/profile')[1]?.body).toEqual({ name: 'Ada Lovelace', email: 'ada@new.example', currentPassword: 'new-password-1' }),
    );
  });
});
