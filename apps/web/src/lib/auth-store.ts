import type { User } from '@herald/contracts';
import { create } from 'zustand';
import { createJSONStorage, persist } from 'zustand/middleware';

/** Spec §7: the bearer token is kept in local storage under this key. */
export const TOKEN_STORAGE_KEY = 'token';
/** Spec §9: the session is persisted under this name, version 0. */
export const AUTH_STORAGE_NAME = 'auth-storage';

export interface AuthState {
  user: User | null;
  token: string | null;
  isAuthenticated: boolean;
  /** Signed in: the user and token are stored (spec §4 Auth). */
  login: (user: User, token: string) => void;
  /** Back to logged out; the token is removed from storage too. */
  logout: () => void;
  /** The user object can be partially updated (spec §4). */
  updateUser: (changes: Partial<User>) => void;
}

type PersistedAuth = Pick<AuthState, 'user' | 'token' | 'isAuthenticated'>;

export function readStoredToken(): string | null {
  try {
    return localStorage.getItem(TOKEN_STORAGE_KEY);
  } catch {
    return null;
  }
}

function writeStoredToken(token: string | null): void {
  try {
    if (token === null) localStorage.removeItem(TOKEN_STORAGE_KEY);
    else localStorage.setItem(TOKEN_STORAGE_KEY, token);
  } catch {
    // Storage can be unavailable (private mode quotas); the in-memory session still works.
  }
}

const loggedOut: PersistedAuth = { user: null, token: null, isAuthenticated: false };

export const useAuthStore = create<AuthState>()(
  persist(
    (set) => ({
      ...loggedOut,
      login: (user, token) => {
        writeStoredToken(token);
        set({ user, token, isAuthenticated: true });
      },
      logout: () => {
        writeStoredToken(null);
        set(loggedOut);
      },
      updateUser: (changes) => set((state) => (state.user ? { user: { ...state.user, ...changes } } : {})),
    }),
    {
      name: AUTH_STORAGE_NAME,
      version: 0,
      storage: createJSONStorage(() => localStorage),
      partialize: (state): PersistedAuth => ({ user: state.user, token: state.token, isAuthenticated: state.isAuthenticated }),
      // Spec §4: "a token in browser storage counts as signed in", so the
      // separately stored token wins over (or fills in) the persisted session.
      merge: (persisted, current) => {
        const restored = { ...current, ...(persisted as Partial<PersistedAuth> | undefined) };
        const token = readStoredToken() ?? restored.token;
        if (!token) return { ...restored, ...loggedOut };
        writeStoredToken(token);
        return { ...restored, token, isAuthenticated: true };
      },
    },
  ),
);

/** Whether the persisted session has been read back (synchronous for localStorage, but not guaranteed). */
export function hasAuthHydrated(): boolean {
  return useAuthStore.persist.hasHydrated();
}

export function onAuthHydrated(listener: () => void): () => void {
  return useAuthStore.persist.onFinishHydration(listener);
}
