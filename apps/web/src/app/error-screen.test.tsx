import { screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { renderApp } from '../test/render-app';

describe('error screen (spec §2)', () => {
  it('shows "Unexpected Application Error!" with the status for an unknown address', async () => {
    renderApp('/no-such-page');

    expect(await screen.findByRole('heading', { name: 'Unexpected Application Error!' })).toBeInTheDocument();
    expect(screen.getByTestId('error-detail')).toHaveTextContent('404 Not Found');
    expect(screen.getByRole('link', { name: 'Go to home page' })).toHaveAttribute('href', '/');
  });
});
