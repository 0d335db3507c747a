import { render, screen } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { describe, expect, it } from 'vitest';
import { renderApp } from '../test/render-app';
import { ErrorScreen } from './error-screen';

describe('error screen (spec §2)', () => {
  it('shows "Unexpected Application Error!" with the status for an unknown address', async () => {
    renderApp('/no-such-page');

    expect(await screen.findByRole('heading', { name: 'Unexpected Application Error!' })).toBeInTheDocument();
    expect(screen.getByTestId('error-detail')).toHaveTextContent('404 Not Found');
    expect(screen.getByRole('link', { name: 'Go to home page' })).toHaveAttribute('href', '/');
    // Only an unknown address is about the address.
    expect(screen.getByTestId('error-hint')).toHaveTextContent('The page may have moved, or the address may be mistyped.');
  });

  it('a page whose code cannot be loaded (after an upgrade) says so and offers Reload, not "mistyped"', async () => {
    const router = createMemoryRouter(
      [
        {
          path: '/',
          errorElement: <ErrorScreen />,
          loader: () => {
            throw new TypeError('Failed to fetch dynamically imported module: http://herald.test/assets/page-old.js');
          },
          element: null,
        },
      ],
      { initialEntries: ['/'] },
    );
    render(<RouterProvider router={router} />);

    expect(await screen.findByRole('heading', { name: 'Unexpected Application Error!' })).toBeInTheDocument();
    expect(screen.getByTestId('error-hint')).toHaveTextContent('Herald was updated while this page was open. Reload the page to get the new version.');
    expect(screen.getByTestId('error-hint')).not.toHaveTextContent('mistyped');
    expect(screen.getByRole('button', { name: 'Reload' })).toBeInTheDocument();
  });
});
