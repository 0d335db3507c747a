import { useAuthStore } from './auth-store';
import { queryClient } from './query-client';
import { useSitesStore } from './sites-store';

/**
 * Ends the session in this browser: token, user, chosen site and every cached
 * response, so the next person to sign in on this browser sees none of it.
 */
export function clearSession(): void {
  useAuthStore.getState().logout();
  useSitesStore.getState().reset();
  queryClient.clear();
}
