import { act, screen, waitFor } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { deferred, fail, mockApi, ok } from '../../../test/fetch-mock';
import { signIn } from '../../../test/fixtures';
import { captureDialogs, renderApp } from '../../../test/render-app';

describe('verify email page (spec §2 /verify-email, §4, §8)', () => {
  it('verifies automatically: "Verifying your email..." then "Email Verified!" and /login after 3 seconds', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const response = deferred();
    const api = mockApi({ 'POST /api/auth/verify-email': () => response.promise });
    const { pathname, router } = renderApp('/verify-email?token=verify-me', { fakeTimers: true });

    expect(await screen.findByRole('heading', { name: 'Verifying your email...' })).toBeInTheDocument();
    response.resolve(ok({ message: 'Email verified' }));
    expect(await screen.findByRole('heading', { name: 'Email Verified!' })).toBeInTheDocument();
    expect(api.callsTo('POST /api/auth/verify-email').map((c) => c.body)).toEqual([{ token: 'verify-me' }]);

    await act(async () => vi.advanceTimersByTime(2800));
    expect(router.state.navigation.state).toBe('idle');
    expect(pathname()).toBe('/verify-email');
    await act(async () => vi.advanceTimersByTime(200));
    await waitFor(() => expect(pathname()).toBe('/login'));
  });

  it('on failure shows "Verification Failed" with the error, a resend button and a link back to login', async () => {
    signIn();
    mockApi({
      'POST /api/auth/verify-email': fail(400, 'Invalid or expired verification link'),
      'POST /api/auth/resend-verification': ok({ message: 'Verification email sent' }),
    });
    const dialogs = captureDialogs();
    const { user } = renderApp('/verify-email?token=stale');

    expect(await screen.findByRole('heading', { name: 'Verification Failed' })).toBeInTheDocument();
    expect(screen.getByRole('alert')).toHaveTextContent('Invalid or expired verification link');
    expect(screen.getByRole('link', { name: 'Back to Login' })).toHaveAttribute('href', '/login');

    await user.click(screen.getByRole('button', { name: 'Resend Verification Email' }));
    await waitFor(() => expect(dialogs.alerts).toEqual(['Verification email sent! Please check your inbox.']));
  });

  it('uses the fallback texts when the server gives no message, for both verify and resend', async () => {
    signIn();
    mockApi({
      'POST /api/auth/verify-email': { status: 500, text: '' },
      'POST /api/auth/resend-verification': fail(429),
    });
    const dialogs = captureDialogs();
    const { user } = renderApp('/verify-email?token=x');

    expect(await screen.findByText('Failed to verify email. The link may be invalid or expired.')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Resend Verification Email' }));
    await waitFor(() => expect(dialogs.alerts).toEqual(['Failed to resend verification email. Please try again later.']));
  });

  it('without a token says "Invalid verification link" and calls nothing', async () => {
    const api = mockApi({});
    renderApp('/verify-email');

    expect(await screen.findByRole('heading', { name: 'Invalid verification link' })).toBeInTheDocument();
    expect(api.calls).toHaveLength(0);
  });
});
