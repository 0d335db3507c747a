import '@testing-library/jest-dom/vitest';
import { cleanup } from '@testing-library/react';
import { afterEach, beforeEach, vi } from 'vitest';
import { useAuthStore } from '../lib/auth-store';
import { registerNavigator } from '../lib/navigation';
import { queryClient } from '../lib/query-client';
import { useSitesStore } from '../lib/sites-store';
import { setViewportWidth } from './viewport';

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
