import { screen, waitFor } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { useAuthStore } from '../../../lib/auth-store';
import { fail, mockApi, ok } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { renderApp } from '../../../test/render-app';

const preview = (hasAccount: boolean) => ({
  email: 'new@example.com',
  sites: [{ name: 'Acme Store', role: 'editor' }],
  invited_by: 'Olivia Owner',
  has_account: hasAccount,
  expires_at: '2026-01-08T00:00:00.000Z',
});
const joined = makeUser({ id: 'user-9', name: 'Nina New', email: 'new@example.com' });

describe('invitation page (/invitation?token=)', () => {
  it('lets a person without an account set a name and password, then signs them in', async () => {
    const api = mockApi({
      'POST /api/invitations/preview': ok(preview(false)),
      'POST /api/invitations/accept-new': ok({ site_ids: ['site-1'], token: 'new-session', user: joined }, 201),
      'GET /api/auth/me': ok({ user: joined }),
      'GET /api/sites': ok({ sites: [makeSite({ role: 'editor' })] }),
    });
    const { user, pathname } = renderApp('/invitation?token=tok-1');
    expect(await screen.findByText('Acme Store')).toBeInTheDocument();
    expect(screen.getByText('Olivia Owner invited new@example.com to work on this site in Herald.')).toBeInTheDocument();
    await user.type(screen.getByLabelText(/^Name/), 'Nina New');
    await user.type(screen.getByLabelText(/^Password/), 'short');
    await user.type(screen.getByLabelText(/^Confirm Password/), 'short');
    await user.click(screen.getByRole('button', { name: 'Create account and join' }));
    expect(screen.getByText('Password must be at least 8 characters long')).toBeInTheDocument();
    expect(api.callsTo('POST /api/invitations/accept-new')).toEqual([]);

    await user.clear(screen.getByLabelText(/^Password/));
    await user.clear(screen.getByLabelText(/^Confirm Password/));
    await user.type(screen.getByLabelText(/^Password/), 'a-good-password');
    await user.type(screen.getByLabelText(/^Confirm Password/), 'a-good-password');
    await user.click(screen.getByRole('button', { name: 'Create account and join' }));
    await waitFor(() => expect(pathname()).toBe('/dashboard'));
    expect(api.callsTo('POST /api/invitations/accept-new')[0]!.body).toEqual({ token: 'tok-1', name: 'Nina New', password: 'a-good-password' });
    expect(useAuthStore.getState().token).toBe('new-session');
  });

  it('asks someone with an account to sign in, and refuses a different signed-in address', async () => {
    mockApi({ 'POST /api/invitations/preview': ok(preview(true)) });
    renderApp('/invitation?token=tok-2');
    expect(await screen.findByRole('link', { name: 'Sign in to accept' })).toHaveAttribute('href', '/login');

    signIn(makeUser({ email: 'someone.else@example.com' }));
    mockApi({ 'POST /api/invitations/preview': ok(preview(true)), 'GET /api/auth/me': ok({ user: makeUser() }) });
    renderApp('/invitation?token=tok-2');
    expect(await screen.findByText(/You are signed in as someone.else@example.com, but this invitation is for new@example.com/)).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Accept invitation' })).not.toBeInTheDocument();
  });

  it('accepts for the signed-in invited account', async () => {
    signIn(joined);
    const api = mockApi({
      'POST /api/invitations/preview': ok(preview(true)),
      'POST /api/invitations/accept': ok({ site_ids: ['site-1'] }),
      'GET /api/auth/me': ok({ user: joined }),
      'GET /api/sites': ok({ sites: [makeSite({ role: 'editor' })] }),
    });
    const { user, pathname } = renderApp('/invitation?token=tok-3');
    await user.click(await screen.findByRole('button', { name: 'Accept invitation' }));
    await waitFor(() => expect(pathname()).toBe('/dashboard'));
    expect(api.callsTo('POST /api/invitations/accept')[0]!.body).toEqual({ token: 'tok-3' });
  });

  it('says when the link is used or expired', async () => {
    mockApi({ 'POST /api/invitations/preview': fail(400, 'This invitation link is invalid or has expired. Ask for a new one.') });
    renderApp('/invitation?token=old');
    expect(await screen.findByText('This invitation link is invalid or has expired. Ask for a new one.')).toBeInTheDocument();
  });
});
