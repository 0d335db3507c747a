import { QueryClientProvider } from '@tanstack/react-query';
import { render } from '@testing-library/react';
import { StrictMode } from 'react';
import userEvent from '@testing-library/user-event';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { vi } from 'vitest';
import { connectNavigator, routes } from '../app/router';
import { queryClient } from '../lib/query-client';

/** Renders the real route table at `path`, as the browser would after typing that address. */
export function renderApp(path: string, options: { fakeTimers?: boolean } = {}) {
  const router = createMemoryRouter(routes, { initialEntries: [path] });
  connectNavigator(router);
  const user = userEvent.setup(options.fakeTimers ? { advanceTimers: (ms) => vi.advanceTimersByTime(ms) } : {});
  // Strict mode, as in main.tsx: effects run twice, which catches double sends.
  const view = render(
    <StrictMode>
      <QueryClientProvider client={queryClient}>
        <RouterProvider router={router} />
      </QueryClientProvider>
    </StrictMode>,
  );
  return { ...view, router, user, pathname: () => router.state.location.pathname };
}

/** Captures the spec's alerts and answers its confirms. */
export function captureDialogs(confirmAnswer = true) {
  const alerts: string[] = [];
  const confirms: string[] = [];
  vi.spyOn(window, 'alert').mockImplementation((message?: unknown) => void alerts.push(String(message)));
  vi.spyOn(window, 'confirm').mockImplementation((message?: string) => {
    confirms.push(String(message));
    return confirmAnswer;
  });
  return { alerts, confirms };
}
