import { PASSWORD_MIN_LENGTH, ROLE_LABELS, type InvitationPreview } from '@herald/contracts';
import { useQueryClient } from '@tanstack/react-query';
import { LinkIcon } from 'lucide-react';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { Alert, Button, ButtonLink, Field, Input, Spinner } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { useAuthStore } from '../../../lib/auth-store';
import { clearSession } from '../../../lib/session';
import { AuthLayout, AuthStatus } from '../../auth/components/auth-layout';
import { useAcceptInvitationAsNewMutation, useAcceptInvitationMutation, useInvitationPreviewQuery } from '../api';

function SiteList({ preview }: { preview: InvitationPreview }) {
  return (
    <ul className="flex flex-col gap-1 rounded-lg border border-slate-200 bg-slate-50 p-3 text-sm" aria-label="Sites">
      {preview.sites.map((site) => (
        <li key={site.name} className="flex items-center justify-between gap-3">
          <span className="truncate font-medium text-slate-900">{site.name}</span>
          <span className="text-slate-600">{ROLE_LABELS[site.role]}</span>
        </li>
      ))}
    </ul>
  );
}

/** A person without an account: a name and a password, then they are in. */
function NewAccountForm({ token, preview }: { token: string; preview: InvitationPreview }) {
  const navigate = useNavigate();
  const signIn = useAuthStore((s) => s.login);
  const mutation = useAcceptInvitationAsNewMutation();
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [confirmPassword, setConfirmPassword] = useState('');
  const [problem, setProblem] = useState<string | null>(null);

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    const found = !name.trim()
      ? 'Name is required'
      : password !== confirmPassword
        ? 'Passwords do not match'
        : password.length < PASSWORD_MIN_LENGTH
          ? 'Password must be at least 8 characters long'
          : null;
    setProblem(found);
    if (found) return;
    mutation.mutate(
      { token, name: name.trim(), password },
      {
        onSuccess: (result) => {
          signIn(result.user, result.token);
          void navigate('/dashboard', { replace: true });
        },
      },
    );
  }

  const shown = problem ?? (mutation.isError ? errorMessage(mutation.error, 'Failed to accept the invitation') : null);
  return (
    <form className="flex flex-col gap-5" onSubmit={onSubmit} noValidate aria-label="Create your account">
      {shown ? <Alert tone="error">{shown}</Alert> : null}
      <Field label="Email">{(control) => <Input {...control} value={preview.email} readOnly />}</Field>
      <Field label="Name" required>
        {(control) => <Input {...control} value={name} onChange={(event) => setName(event.target.value)} autoComplete="name" />}
      </Field>
      <Field label="Password" required hint="Must be at least 8 characters">
        {(control) => <Input {...control} type="password" value={password} onChange={(event) => setPassword(event.target.value)} autoComplete="new-password" />}
      </Field>
      <Field label="Confirm Password" required>
        {(control) => <Input {...control} type="password" value={confirmPassword} onChange={(event) => setConfirmPassword(event.target.value)} autoComplete="new-password" />}
      </Field>
      <Button type="submit" loading={mutation.isPending} className="w-full">
        Create account and join
      </Button>
    </form>
  );
}

/** Signed in: accept with the account that has the invited address. */
function SignedInAccept({ token, preview }: { token: string; preview: InvitationPreview }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const user = useAuthStore((s) => s.user);
  const mutation = useAcceptInvitationMutation();
  if (user && user.email !== preview.email) {
    return (
      <div className="flex flex-col gap-4">
        <Alert tone="warning">
          You are signed in as {user.email}, but this invitation is for {preview.email}. Sign out, then sign in with that address to accept it.
        </Alert>
        <Button variant="secondary" onClick={() => clearSession()}>
          Sign out
        </Button>
      </div>
    );
  }
  return (
    <div className="flex flex-col gap-4">
      {mutation.isError ? <Alert tone="error">{errorMessage(mutation.error, 'Failed to accept the invitation')}</Alert> : null}
      <Button
        className="w-full"
        loading={mutation.isPending}
        onClick={() =>
          mutation.mutate(token, {
            onSuccess: async () => {
              await queryClient.invalidateQueries({ queryKey: ['sites'] });
              void navigate('/dashboard', { replace: true });
            },
          })
        }
      >
        Accept invitation
      </Button>
    </div>
  );
}

/** The link from an invitation mail (docs/product.md, "Teams"): open to visitors, even while sign-up is closed. */
export function InvitationPage() {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const isAuthenticated = useAuthStore((s) => s.isAuthenticated);
  const query = useInvitationPreviewQuery(token);

  if (!token || query.isError) {
    return (
      <AuthStatus icon={<LinkIcon className="size-12 text-red-600" />} title="Invalid Invitation Link">
        <p>{query.isError ? errorMessage(query.error, 'This invitation link is invalid or has expired.') : 'This invitation link is invalid or has expired.'}</p>
        <ButtonLink to="/login" variant="secondary" className="w-full">
          Go to Login
        </ButtonLink>
      </AuthStatus>
    );
  }
  if (query.isPending) {
    return (
      <AuthStatus icon={<Spinner />} title="Opening your invitation">
        <p role="status">Loading...</p>
      </AuthStatus>
    );
  }
  const preview = query.data;
  const from = `/invitation?token=${encodeURIComponent(token)}`;
  return (
    <AuthLayout
      title="You are invited"
      description={`${preview.invited_by ?? 'A team member'} invited ${preview.email} to work on ${preview.sites.length === 1 ? 'this site' : 'these sites'} in Herald.`}
      footer={
        <Link to="/" className="rounded font-medium text-indigo-700 hover:text-indigo-900 hover:underline">
          What is Herald?
        </Link>
      }
    >
      <div className="flex flex-col gap-5">
        <SiteList preview={preview} />
        {isAuthenticated ? (
          <SignedInAccept token={token} preview={preview} />
        ) : preview.has_account ? (
          <div className="flex flex-col gap-3">
            <p className="text-sm text-slate-700">You already have an account: sign in as {preview.email} to accept.</p>
            <ButtonLink to="/login" state={{ from }} className="w-full">
              Sign in to accept
            </ButtonLink>
          </div>
        ) : (
          <NewAccountForm token={token} preview={preview} />
        )}
      </div>
    </AuthLayout>
  );
}
