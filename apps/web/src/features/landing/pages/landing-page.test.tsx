import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { mockApi } from '../../../test/fetch-mock';
import { renderApp } from '../../../test/render-app';

describe('landing page (spec §1, §2 "/")', () => {
  it('has the top navigation, the six features, the three plans and only disabled sign-up buttons', async () => {
    const api = mockApi({});
    renderApp('/');

    const nav = await screen.findByRole('navigation', { name: 'Main' });
    expect(within(nav).getAllByRole('link').map((l) => l.textContent)).toEqual(['Features', 'Benefits', 'Pricing']);
    expect(screen.getAllByRole('link', { name: 'Login' })[0]).toHaveAttribute('href', '/login');

    for (const feature of [
      'Smart Notifications',
      'RSS Automation',
      'Advanced Segmentation',
      'Real-Time Analytics',
      'Welcome Campaigns',
      'Self-Hosted & Secure',
    ]) {
      expect(screen.getByRole('heading', { name: feature })).toBeInTheDocument();
    }
    expect(screen.getByRole('heading', { name: 'Perfect For' })).toBeInTheDocument();

    const pricing = document.getElementById('pricing')!;
    for (const [plan, price] of [
      ['Self-Hosted', '$0'],
      ['Managed Starter', '$29'],
      ['Managed Pro', '$99'],
    ] as const) {
      const card = within(pricing).getByRole('heading', { name: plan }).closest('li')!;
      expect(card).toHaveTextContent(price);
    }
    expect(within(pricing).getByText('Up to 10,000 subscribers')).toBeInTheDocument();
    expect(within(pricing).getByText('99.9% uptime SLA')).toBeInTheDocument();
    expect(within(pricing).getByText('Up to 100,000 subscribers')).toBeInTheDocument();
    expect(within(pricing).getByText('Dedicated infrastructure')).toBeInTheDocument();
    expect(within(pricing).getByText('14-day free trial, no credit card required')).toBeInTheDocument();

    const signUps = screen.getAllByRole('button', { name: /Coming Soon/ });
    expect(signUps.length).toBeGreaterThanOrEqual(4);
    for (const button of signUps) expect(button).toBeDisabled();
    expect(screen.getAllByRole('link', { name: 'Sign In' }).every((link) => link.getAttribute('href') === '/login')).toBe(true);
    expect(api.calls).toHaveLength(0);
  });
});
