import type { Site, User } from '@herald/contracts';
import { useAuthStore } from '../lib/auth-store';

export function makeUser(overrides: Partial<User> = {}): User {
  return {
    id: 'user-1',
    name: 'Ada Lovelace',
    email: 'ada@example.com',
    emailVerified: true,
    createdAt: '2025-01-01T00:00:00.000Z',
    ...overrides,
  };
}

export function makeSite(overrides: Partial<Site> = {}): Site {
  return {
    id: 'site-1',
    name: 'Acme Store',
    url: 'https://shop.acme.example',
    settings: { icon: null, language: 'en', timezone: 'UTC', valueCurrency: 'USD', valuePerSubscriber: 0, valuePerClick: 0, identityVerification: true, serverOnlyTags: [], frequencyCap: null, quietHours: null, resubscribeGranted: true, replaceForeignSubscription: false },
    vapid_public_key: 'BPublicKeyForAcme',
    subscriber_count: 0,
    role: 'owner',
    created_at: '2025-01-01T00:00:00.000Z',
    updated_at: '2025-01-01T00:00:00.000Z',
    ...overrides,
  };
}

/** Starts a session the way a successful login does. */
export function signIn(user: User = makeUser(), token = 'session-token'): void {
  useAuthStore.getState().login(user, token);
}
