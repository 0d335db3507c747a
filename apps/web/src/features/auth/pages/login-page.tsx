import { useState, type FormEvent } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';
import { Alert, Button, Field, Input } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { useAuthStore } from '../../../lib/auth-store';
import { useLoginMutation } from '../api';
import { AuthLayout } from '../components/auth-layout';

/** Where to go after signing in: back to the protected page that sent the visitor here, else the dashboard (spec §4). */
function returnPath(state: unknown): string {
  const from = typeof state === 'object' && state !== null && 'from' in state ? (state as { from: unknown }).from : undefined;
  return typeof from === 'string' && from.startsWith('/') && !from.startsWith('//') ? from : '/dashboard';
}

export function LoginPage() {
  const navigate = useNavigate();
  const location = useLocation();
  const signIn = useAuthStore((s) => s.login);
  const mutation = useLoginMutation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    mutation.mutate(
      { email, password },
      {
        onSuccess: ({ user, token }) => {
          signIn(user, token);
          void navigate(returnPath(location.state), { replace: true });
        },
      },
    );
  }

  return (
    <AuthLayout
      title="Sign in to Herald"
      description="Welcome back. Enter your details to manage your sites and notifications."
      footer={
        <>
          Don&apos;t have an account?{' '}
          <button type="button" disabled className="cursor-not-allowed font-medium text-slate-600">
            Sign up (Coming Soon)
          </button>
        </>
      }
    >
      <form className="flex flex-col gap-5" onSubmit={onSubmit}>
        {mutation.isError ? <Alert tone="error">{errorMessage(mutation.error, 'Login failed. Please try again.')}</Alert> : null}
        <Field label="Email" required>
          {(control) => (
            <Input {...control} type="email" name="email" autoComplete="email" value={email} onChange={(e) => setEmail(e.target.value)} />
          )}
        </Field>
        <div className="flex flex-col gap-1.5">
          <Field label="Password" required>
            {(control) => (
              <Input
                {...control}
                type="password"
                name="password"
                autoComplete="current-password"
                value={password}
                onChange={(e) => setPassword(e.target.value)}
              />
            )}
          </Field>
          <Link to="/forgot-password" className="self-end rounded text-sm font-medium text-indigo-700 hover:text-indigo-900 hover:underline">
            Forgot password?
          </Link>
        </div>
        <Button type="submit" size="lg" className="w-full" loading={mutation.isPending} data-testid="login-submit">
          {mutation.isPending ? 'Signing in...' : 'Sign In'}
        </Button>
      </form>
    </AuthLayout>
  );
}
