import { screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { useAuthStore } from '../../../lib/auth-store';
import { fail, mockApi, ok } from '../../../test/fetch-mock';
import { makeUser } from '../../../test/fixtures';
import { renderApp } from '../../../test/render-app';

describe('owner setup page (/setup?token=…)', () => {
  it('creates the owner account with the link, signs in and goes to /sites/new', async () => {
    const owner = makeUser({ name: 'Grace Hopper', email: 'grace@example.com' });
    const api = mockApi({
      'GET /api/auth/setup': ok({ setupRequired: true, tokenValid: true }),
      'POST /api/auth/setup': ok({ user: owner, token: 'owner-session' }, 201),
      'GET /api/auth/me': ok({ user: owner }),
      'GET /api/sites': ok({ sites: [] }),
    });
    const { user, pathname } = renderApp('/setup?token=setup-123');

    expect(await screen.findByRole('heading', { name: 'Create owner account' })).toBeInTheDocument();
    expect(api.callsTo('GET /api/auth/setup')[0]?.url.searchParams.get('token')).toBe('setup-123');
    expect(screen.getByText('Must be at least 8 characters')).toBeInTheDocument();

    await user.type(screen.getByLabelText(/^Name/), 'Grace Hopper');
    await user.type(screen.getByLabelText(/^Email/), 'grace@example.com');
    await user.type(screen.getByLabelText(/^Password/), 'a long password');
    await user.click(screen.getByRole('button', { name: 'Create account' }));

    expect(await screen.findByRole('heading', { name: 'Create a new site' })).toBeInTheDocument();
    expect(pathname()).toBe('/sites/new');
    expect(api.callsTo('POST /api/auth/setup')[0]?.body).toEqual({
      token: 'setup-123',
      name: 'Grace Hopper',
      email: 'grace@example.com',
      password: 'a long password',
    });
    expect(useAuthStore.getState()).toMatchObject({ isAuthenticated: true, token: 'owner-session', user: owner });
  });

  it('says so when Herald is already set up, with a way to sign in', async () => {
    mockApi({ 'GET /api/auth/setup': ok({ setupRequired: false, tokenValid: false }) });
    renderApp('/setup?token=old');

    expect(await screen.findByRole('heading', { name: 'Herald is already set up' })).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Go to Login' })).toHaveAttribute('href', '/login');
  });

  it('says so when the link is invalid or expired', async () => {
    mockApi({ 'GET /api/auth/setup': ok({ setupRequired: true, tokenValid: false }) });
    renderApp('/setup?token=wrong');

    expect(await screen.findByRole('heading', { name: 'Invalid setup link' })).toBeInTheDocument();
    expect(screen.getByText(/invalid or has expired/)).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Create account' })).not.toBeInTheDocument();
  });

  it("shows the server's message when creating the account fails", async () => {
    mockApi({
      'GET /api/auth/setup': ok({ setupRequired: true, tokenValid: true }),
      'POST /api/auth/setup': fail(400, 'This setup link is invalid or has expired. Restart Herald to get a new one.'),
    });
    const { user } = renderApp('/setup?token=t');

    await user.type(await screen.findByLabelText(/^Name/), 'Grace');
    await user.type(screen.getByLabelText(/^Email/), 'grace@example.com');
    await user.type(screen.getByLabelText(/^Password/), 'a long password');
    await user.click(screen.getByRole('button', { name: 'Create account' }));

    expect(await screen.findByRole('alert')).toHaveTextContent('This setup link is invalid or has expired. Restart Herald to get a new one.');
    expect(useAuthStore.getState().isAuthenticated).toBe(false);
  });
});
