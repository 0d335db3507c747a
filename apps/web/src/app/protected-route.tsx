import { useEffect, useSyncExternalStore } from 'react';
import { Navigate, Outlet, useLocation } from 'react-router';
import { useMeQuery } from '../features/auth/api';
import { useSiteListSync } from '../features/sites/api';
import { hasAuthHydrated, onAuthHydrated, useAuthStore } from '../lib/auth-store';
import { Button } from '../components/ui';
import { FullScreenLoading } from './full-screen-loading';

function useAuthHydrated(): boolean {
  return useSyncExternalStore(onAuthHydrated, hasAuthHydrated);
}

/**
 * Spec §2 Protected routes: visitors without a session go to /login (replacing
 * the history entry); "Loading..." covers the screen while the stored session
 * is restored. A stored token without a stored user is read back from /auth/me.
 */
export function ProtectedRoute() {
  const location = useLocation();
  const hydrated = useAuthHydrated();
  const isAuthenticated = useAuthStore((s) => s.isAuthenticated);
  const user = useAuthStore((s) => s.user);
  const signIn = useAuthStore((s) => s.login);
  const token = useAuthStore((s) => s.token);
  const signedIn = hydrated && isAuthenticated && token !== null;

  const me = useMeQuery(signedIn);
  useSiteListSync(signedIn);

  useEffect(() => {
    // Keep the stored user current (name, email, verification) without blocking the screen.
    if (me.data && token) signIn(me.data, token);
  }, [me.data, token, signIn]);

  if (!hydrated) return <FullScreenLoading />;
  if (!signedIn) return <Navigate to="/login" replace state={{ from: `${location.pathname}${location.search}` }} />;
  if (!user) return me.isError ? <SessionRestoreError onRetry={() => void me.refetch()} /> : <FullScreenLoading />;
  return <Outlet />;
}

function SessionRestoreError({ onRetry }: { onRetry: () => void }) {
  return (
    <div className="flex min-h-dvh flex-col items-center justify-center gap-4 bg-slate-50 px-4 text-center" role="alert">
      <p className="text-sm font-medium text-slate-800">Your session could not be restored. Check your connection and try again.</p>
      <Button onClick={onRetry}>Try again</Button>
    </div>
  );
}
