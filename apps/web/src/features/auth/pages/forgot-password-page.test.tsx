import { screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { fail, mockApi, ok } from '../../../test/fetch-mock';
import { renderApp } from '../../../test/render-app';

describe('forgot password page (spec §2 /forgot-password)', () => {
  it('sends the email and confirms with "Check your email!" naming the address, with a link back to /login', async () => {
    const api = mockApi({ 'POST /api/auth/forgot-password': ok({ message: 'sent' }) });
    const { user } = renderApp('/forgot-password');

    await user.type(await screen.findByLabelText(/^Email/), 'ada@example.com');
    await user.click(screen.getByRole('button', { name: 'Send Reset Link' }));

    expect(await screen.findByRole('heading', { name: 'Check your email!' })).toBeInTheDocument();
    expect(screen.getByText('ada@example.com')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Back to Login' })).toHaveAttribute('href', '/login');
    expect(api.calls[0]?.body).toEqual({ email: 'ada@example.com' });
  });

  it("shows the server's message, else the fallback", async () => {
    mockApi({ 'POST /api/auth/forgot-password': fail(429, 'Too many requests') });
    const { user } = renderApp('/forgot-password');
    await user.type(await screen.findByLabelText(/^Email/), 'ada@example.com');
    await user.click(screen.getByRole('button', { name: 'Send Reset Link' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('Too many requests');

    mockApi({ 'POST /api/auth/forgot-password': { status: 503, text: '' } });
    await user.click(screen.getByRole('button', { name: 'Send Reset Link' }));
    expect(await screen.findByText('Failed to send reset email. Please try again.')).toBeInTheDocument();
  });
});
