import '@testing-library/jest-dom/vitest';
import { cleanup, configure } from '@testing-library/react';
import { afterEach, beforeEach, vi } from 'vitest';
import { useAuthStore } from '../lib/auth-store';
import { registerNavigator } from '../lib/navigation';
import { queryClient } from '../lib/query-client';
import { useSitesStore } from '../lib/sites-store';
import { setViewportWidth } from './viewport';

// findBy*/waitFor give up after 1 s by default; on a busy 2-core machine a lazy page
// chunk can take longer to load than that, so they wait up to 5 s (well inside the
// 20 s test timeout). A passing test is no slower.
configure({ asyncUtilTimeout: 5000 });

// jsdom has no layout, so media queries are answered from a width the test sets (default: desktop).
beforeEach(() => setViewportWidth(1280));

afterEach(() => {
  cleanup();
  queryClient.clear();
  useAuthStore.setState({ user: null, token: null, isAuthenticated: false });
  useSitesStore.getState().reset();
  localStorage.clear();
  registerNavigator(null);
  vi.useRealTimers();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});
