import { describe, expect, it } from 'vitest';
import { makeUser } from '../test/fixtures';
import { AUTH_STORAGE_NAME, TOKEN_STORAGE_KEY, useAuthStore } from './auth-store';

function persisted(): unknown {
  return JSON.parse(localStorage.getItem(AUTH_STORAGE_NAME) ?? 'null');
}

describe('auth store (spec §4 Auth, §9 persistence)', () => {
  it('persists { user, token, isAuthenticated } under "auth-storage", version 0, and the token under "token"', () => {
    const user = makeUser();
    useAuthStore.getState().login(user, 'tok-123');

    expect(persisted()).toEqual({ state: { user, token: 'tok-123', isAuthenticated: true }, version: 0 });
    expect(localStorage.getItem(TOKEN_STORAGE_KEY)).toBe('tok-123');
    expect(useAuthStore.getState()).toMatchObject({ user, token: 'tok-123', isAuthenticated: true });
  });

  it('logout returns to logged out and removes the token', () => {
    useAuthStore.getState().login(makeUser(), 'tok-123');
    useAuthStore.getState().logout();

    expect(useAuthStore.getState()).toMatchObject({ user: null, token: null, isAuthenticated: false });
    expect(localStorage.getItem(TOKEN_STORAGE_KEY)).toBeNull();
    expect(persisted()).toEqual({ state: { user: null, token: null, isAuthenticated: false }, version: 0 });
  });

  it('updates the user partially', () => {
    useAuthStore.getState().login(makeUser({ name: 'Ada', emailVerified: false }), 'tok');
    useAuthStore.getState().updateUser({ emailVerified: true });

    expect(useAuthStore.getState().user).toEqual(makeUser({ name: 'Ada', emailVerified: true }));
  });

  it('restores a persisted session on reload', async () => {
    const user = makeUser();
    localStorage.setItem(AUTH_STORAGE_NAME, JSON.stringify({ state: { user, token: 'tok-9', isAuthenticated: true }, version: 0 }));
    localStorage.setItem(TOKEN_STORAGE_KEY, 'tok-9');

    await useAuthStore.persist.rehydrate();

    expect(useAuthStore.getState()).toMatchObject({ user, token: 'tok-9', isAuthenticated: true });
  });

  it('counts a token in storage as signed in even without a persisted session', async () => {
    localStorage.setItem(TOKEN_STORAGE_KEY, 'only-a-token');

    await useAuthStore.persist.rehydrate();

    expect(useAuthStore.getState()).toMatchObject({ user: null, token: 'only-a-token', isAuthenticated: true });
  });

  it('is signed out after reload when no token is stored', async () => {
    localStorage.setItem(AUTH_STORAGE_NAME, JSON.stringify({ state: { user: null, token: null, isAuthenticated: false }, version: 0 }));

    await useAuthStore.persist.rehydrate();

    expect(useAuthStore.getState().isAuthenticated).toBe(false);
  });
});
