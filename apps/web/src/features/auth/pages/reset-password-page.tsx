import { PASSWORD_MIN_LENGTH } from '@herald/contracts';
import { CheckCircle2, LinkIcon } from 'lucide-react';
import { useEffect, useState, type FormEvent } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { Alert, Button, ButtonLink, Field, Input } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { useResetPasswordMutation } from '../api';
import { AuthLayout, AuthStatus } from '../components/auth-layout';

/** Spec §9: redirect delay after a reset or a verification. */
export const AUTH_REDIRECT_DELAY_MS = 3000;

/** Spec §5: checked in this order on submit; the first failure is shown. */
export function validateNewPassword(token: string, password: string, confirmPassword: string): string | null {
  if (!token) return 'Invalid or missing reset token';
  if (password !== confirmPassword) return 'Passwords do not match';
  if (password.length < PASSWORD_MIN_LENGTH) return 'Password must be at least 8 characters long';
  return null;
}

export function ResetPasswordPage() {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const navigate = useNavigate();
  const mutation = useResetPasswordMutation();
  const [password, setPassword] = useState('');
  const [confirmPassword, setConfirmPassword] = useState('');
  const [validationError, setValidationError] = useState<string | null>(null);

  useEffect(() => {
    if (!mutation.isSuccess) return;
    const timer = setTimeout(() => void navigate('/login', { replace: true }), AUTH_REDIRECT_DELAY_MS);
    return () => clearTimeout(timer);
  }, [mutation.isSuccess, navigate]);

  if (!token) {
    return (
      <AuthStatus icon={<LinkIcon className="size-12 text-red-600" />} title="Invalid Reset Link">
        <p>This password reset link is invalid or has expired.</p>
        <ButtonLink to="/forgot-password" className="w-full">
          Request New Link
        </ButtonLink>
      </AuthStatus>
    );
  }

  if (mutation.isSuccess) {
    return (
      <AuthStatus icon={<CheckCircle2 className="size-12 text-emerald-600" />} title="Password reset successful!">
        <p role="status">You can now sign in with your new password. Redirecting to login...</p>
        <ButtonLink to="/login" variant="secondary" className="w-full">
          Go to Login
        </ButtonLink>
      </AuthStatus>
    );
  }

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const problem = validateNewPassword(token, password, confirmPassword);
    setValidationError(problem);
    if (problem) return;
    mutation.mutate({ token, password });
  }

  const shownError = validationError ?? (mutation.isError ? errorMessage(mutation.error, 'Failed to reset password. Please try again.') : null);

  return (
    <AuthLayout
      title="Set a new password"
      description="Choose a new password for your Herald account. You will be signed out everywhere else."
      footer={
        <Link to="/login" className="rounded font-medium text-indigo-700 hover:text-indigo-900 hover:underline">
          Back to Login
        </Link>
      }
    >
      <form className="flex flex-col gap-5" onSubmit={onSubmit} noValidate>
        {shownError ? <Alert tone="error">{shownError}</Alert> : null}
        <Field label="New Password" required hint="Must be at least 8 characters">
          {(control) => (
            <Input
              {...control}
              type="password"
              name="password"
              autoComplete="new-password"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
            />
          )}
        </Field>
        <Field label="Confirm Password" required>
          {(control) => (
            <Input
              {...control}
              type="password"
              name="confirmPassword"
              autoComplete="new-password"
              value={confirmPassword}
              onChange={(e) => setConfirmPassword(e.target.value)}
            />
          )}
        </Field>
        <Button type="submit" size="lg" className="w-full" loading={mutation.isPending}>
          Reset Password
        </Button>
      </form>
    </AuthLayout>
  );
}
