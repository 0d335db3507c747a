import { act, screen, waitFor } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { fail, mockApi, ok } from '../../../test/fetch-mock';
import { renderApp } from '../../../test/render-app';
import { validateNewPassword } from './reset-password-page';

describe('reset password page (spec §2 /reset-password, §5)', () => {
  it('without a token shows "Invalid Reset Link" and a "Request New Link" button to /forgot-password', async () => {
    renderApp('/reset-password');

    expect(await screen.findByRole('heading', { name: 'Invalid Reset Link' })).toBeInTheDocument();
    expect(screen.getByText(/invalid or has expired/)).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Request New Link' })).toHaveAttribute('href', '/forgot-password');
  });

  it('checks token, then match, then length, in that order', () => {
    expect(validateNewPassword('', 'a', 'b')).toBe('Invalid or missing reset token');
    expect(validateNewPassword('t', 'short', 'different')).toBe('Passwords do not match');
    expect(validateNewPassword('t', 'short', 'short')).toBe('Password must be at least 8 characters long');
    expect(validateNewPassword('t', 'long enough', 'long enough')).toBeNull();
  });

  it('shows each validation message on submit before calling the server', async () => {
    const api = mockApi({});
    const { user } = renderApp('/reset-password?token=abc');

    expect(await screen.findByText('Must be at least 8 characters')).toBeInTheDocument();
    await user.type(screen.getByLabelText(/^New Password/), 'short');
    await user.type(screen.getByLabelText(/^Confirm Password/), 'shorter');
    await user.click(screen.getByRole('button', { name: 'Reset Password' }));
    expect(screen.getByRole('alert')).toHaveTextContent('Passwords do not match');

    await user.clear(screen.getByLabelText(/^Confirm Password/));
    await user.type(screen.getByLabelText(/^Confirm Password/), 'short');
    await user.click(screen.getByRole('button', { name: 'Reset Password' }));
    expect(screen.getByRole('alert')).toHaveTextContent('Password must be at least 8 characters long');
    expect(api.calls).toHaveLength(0);
  });

  it('on success shows "Password reset successful!" and goes to /login after 3 seconds', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const api = mockApi({ 'POST /api/auth/reset-password': ok({ message: 'Password reset successful' }) });
    const { user, pathname, router } = renderApp('/reset-password?token=tok-1', { fakeTimers: true });

    await user.type(await screen.findByLabelText(/^New Password/), 'new password');
    await user.type(screen.getByLabelText(/^Confirm Password/), 'new password');
    await user.click(screen.getByRole('button', { name: 'Reset Password' }));

    expect(await screen.findByRole('heading', { name: 'Password reset successful!' })).toBeInTheDocument();
    expect(api.calls[0]?.body).toEqual({ token: 'tok-1', password: 'new password' });
    // The fake clock also follows real time (shouldAdvanceTime), so stop a little short of 3 s.
    await act(async () => vi.advanceTimersByTime(2800));
    expect(router.state.navigation.state).toBe('idle');
    expect(pathname()).toBe('/reset-password');
    await act(async () => vi.advanceTimersByTime(200));
    await waitFor(() => expect(pathname()).toBe('/login'));
  });

  it("shows the server's message, else the fallback", async () => {
    mockApi({ 'POST /api/auth/reset-password': fail(400, 'Invalid or expired reset token. Please request a new link.') });
    const { user } = renderApp('/reset-password?token=old');
    await user.type(await screen.findByLabelText(/^New Password/), 'new password');
    await user.type(screen.getByLabelText(/^Confirm Password/), 'new password');
    await user.click(screen.getByRole('button', { name: 'Reset Password' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('Invalid or expired reset token. Please request a new link.');

    mockApi({ 'POST /api/auth/reset-password': { status: 500, text: '' } });
    await user.click(screen.getByRole('button', { name: 'Reset Password' }));
    expect(await screen.findByText('Failed to reset password. Please try again.')).toBeInTheDocument();
  });
});
