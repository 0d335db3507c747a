import { meResponse, sitesResponse } from '@herald/contracts';
import { describe, expect, it, vi } from 'vitest';
import { fail, mockApi, ok } from '../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../test/fixtures';
import { ApiError, apiRequest, errorMessage } from './api-client';
import { AUTH_STORAGE_NAME, TOKEN_STORAGE_KEY, useAuthStore } from './auth-store';
import { registerNavigator } from './navigation';
import { useSitesStore } from './sites-store';

function fakeNavigator(pathname: string) {
  const navigate = vi.fn();
  registerNavigator({ pathname: () => pathname, navigate });
  return navigate;
}

describe('API client (spec §7, §8)', () => {
  it('calls /api with JSON and the stored bearer token, and returns data', async () => {
    signIn(makeUser(), 'tok-abc');
    const api = mockApi({ 'GET /api/sites': ok({ sites: [makeSite()] }) });

    const data = await apiRequest('/sites', { schema: sitesResponse });

    expect(data.sites).toEqual([makeSite()]);
    const [call] = api.calls;
    expect(call?.headers.get('authorization')).toBe('Bearer tok-abc');
    expect(call?.headers.get('accept')).toBe('application/json');
  });

  it('sends a JSON body with its content type', async () => {
    const api = mockApi({ 'POST /api/auth/login': ok({ user: makeUser(), token: 't' }) });
    const { loginResponse } = await import('@herald/contracts');

    await apiRequest('/auth/login', { method: 'POST', body: { email: 'a@b.co', password: 'pw' }, schema: loginResponse });

    expect(api.calls[0]?.headers.get('content-type')).toBe('application/json');
    expect(api.calls[0]?.body).toEqual({ email: 'a@b.co', password: 'pw' });
    expect(api.calls[0]?.headers.has('authorization')).toBe(false);
  });

  it("throws an ApiError carrying the server's error.message and the status", async () => {
    signIn();
    mockApi({ 'GET /api/sites': fail(404, 'Site not found') });

    const error = await apiRequest('/sites', { schema: sitesResponse }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 404, message: 'Site not found', serverMessage: 'Site not found' });
    expect(errorMessage(error, 'fallback')).toBe('Site not found');
  });

  it('falls back to the screen text when the server sent no message', async () => {
    mockApi({ 'GET /api/sites': { status: 502, text: '<html>Bad gateway</html>' } });

    const error = await apiRequest('/sites', { schema: sitesResponse }).catch((e: unknown) => e);

    expect(error).toMatchObject({ status: 502, serverMessage: undefined });
    expect(errorMessage(error, 'Failed to create site')).toBe('Failed to create site');
    expect(errorMessage(new TypeError('Failed to fetch'), 'Failed to create site')).toBe('Failed to create site');
  });

  it('on any 401 removes the token, clears the session and redirects to /login, replacing history', async () => {
    signIn(makeUser(), 'expired');
    useSitesStore.getState().setSites([makeSite()]);
    const navigate = fakeNavigator('/settings');
    mockApi({ 'GET /api/auth/me': fail(401, 'Your session has expired') });

    await expect(apiRequest('/auth/me', { schema: meResponse })).rejects.toMatchObject({ status: 401 });

    expect(localStorage.getItem(TOKEN_STORAGE_KEY)).toBeNull();
    expect(useAuthStore.getState()).toMatchObject({ user: null, token: null, isAuthenticated: false });
    expect(JSON.parse(localStorage.getItem(AUTH_STORAGE_NAME) ?? '{}').state.isAuthenticated).toBe(false);
    expect(useSitesStore.getState().currentSite).toBeNull();
    expect(navigate).toHaveBeenCalledWith('/login', { replace: true });
  });

  it('does not redirect a failed sign-in on /login: the message is shown there', async () => {
    const navigate = fakeNavigator('/login');
    mockApi({ 'POST /api/auth/login': fail(401, 'Invalid email or password') });
    const { loginResponse } = await import('@herald/contracts');

    const error = await apiRequest('/auth/login', { method: 'POST', body: {}, schema: loginResponse }).catch((e: unknown) => e);

    expect(errorMessage(error, 'Login failed. Please try again.')).toBe('Invalid email or password');
    expect(navigate).not.toHaveBeenCalled();
  });

  it('rejects a success body that does not match the contract', async () => {
    signIn();
    mockApi({ 'GET /api/sites': ok({ sites: 'not a list' }) });

    await expect(apiRequest('/sites', { schema: sitesResponse })).rejects.toBeInstanceOf(ApiError);
  });
});
