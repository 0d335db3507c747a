import { PASSWORD_MIN_LENGTH } from '@herald/contracts';
import { CheckCircle2, LinkIcon } from 'lucide-react';
import { useState, type FormEvent } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { Alert, Button, ButtonLink, Field, Input, Spinner } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { useAuthStore } from '../../../lib/auth-store';
import { useCompleteSetupMutation, useSetupStatusQuery } from '../api';
import { AuthLayout, AuthStatus } from '../components/auth-layout';

/**
 * First run: sign-up is "coming soon" (spec §1), so the server prints a
 * one-time /setup?token=… link and the owner creates their account here.
 */
export function SetupPage() {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const status = useSetupStatusQuery(token);

  if (status.isPending) {
    return (
      <AuthStatus icon={<Spinner className="text-indigo-600 [&_svg]:size-12" />} title="Checking your setup link...">
        <p role="status">This only takes a moment.</p>
      </AuthStatus>
    );
  }

  if (status.isError) {
    return (
      <AuthStatus icon={<LinkIcon className="size-12 text-red-600" />} title="Could not check the setup link">
        <p role="alert">{errorMessage(status.error, 'The server could not be reached. Please try again.')}</p>
        <Button onClick={() => void status.refetch()} className="w-full">
          Try again
        </Button>
      </AuthStatus>
    );
  }

  if (!status.data.setupRequired) {
    return (
      <AuthStatus icon={<CheckCircle2 className="size-12 text-emerald-600" />} title="Herald is already set up">
        <p>The owner account already exists, so this setup link no longer works. Sign in with your email and password instead.</p>
        <ButtonLink to="/login" className="w-full">
          Go to Login
        </ButtonLink>
      </AuthStatus>
    );
  }

  if (!status.data.tokenValid) {
    return (
      <AuthStatus icon={<LinkIcon className="size-12 text-red-600" />} title="Invalid setup link">
        <p>
          This setup link is invalid or has expired. Restart the Herald server to print a new one-time link in its log, or set ADMIN_EMAIL and
          ADMIN_PASSWORD to create the owner account at start-up.
        </p>
      </AuthStatus>
    );
  }

  return <OwnerAccountForm token={token} />;
}

function OwnerAccountForm({ token }: { token: string }) {
  const navigate = useNavigate();
  const signIn = useAuthStore((s) => s.login);
  const mutation = useCompleteSetupMutation();
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    mutation.mutate(
      { token, name: name.trim(), email: email.trim(), password },
      {
        onSuccess: ({ user, token: sessionToken }) => {
          signIn(user, sessionToken);
          void navigate('/sites/new', { replace: true });
        },
      },
    );
  }

  return (
    <AuthLayout title="Create owner account" description="Welcome to Herald. Create the account that owns this server; you can add your first site next.">
      <form className="flex flex-col gap-5" onSubmit={onSubmit}>
        {mutation.isError ? <Alert tone="error">{errorMessage(mutation.error, 'Failed to create the owner account. Please try again.')}</Alert> : null}
        <Field label="Name" required>
          {(control) => <Input {...control} name="name" autoComplete="name" maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />}
        </Field>
        <Field label="Email" required>
          {(control) => <Input {...control} type="email" name="email" autoComplete="email" value={email} onChange={(e) => setEmail(e.target.value)} />}
        </Field>
        <Field label="Password" required hint="Must be at least 8 characters">
          {(control) => (
            <Input
              {...control}
              type="password"
              name="password"
              autoComplete="new-password"
              minLength={PASSWORD_MIN_LENGTH}
              value={password}
              onChange={(e) => setPassword(e.target.value)}
            />
          )}
        </Field>
        <Button type="submit" size="lg" className="w-full" loading={mutation.isPending}>
          {mutation.isPending ? 'Creating account...' : 'Create account'}
        </Button>
      </form>
    </AuthLayout>
  );
}
