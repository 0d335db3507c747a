import { PASSWORD_MIN_LENGTH, ROLE_LABELS } from '@herald/contracts';
import { LogOut, MonitorSmartphone } from 'lucide-react';
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { Alert, Badge, Button, Card, CardContent, CardDescription, CardHeader, CardTitle, DateTime, Field, Input, PageHeader, Spinner } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { useAuthStore } from '../../../lib/auth-store';
import { confirmAction, notify } from '../../../lib/dialogs';
import { clearSession } from '../../../lib/session';
import { useSitesStore } from '../../../lib/sites-store';
import { useLeaveSiteMutation } from '../../members/api';
import { useSessionsQuery, useSignOutEverywhereMutation, useUpdateProfileMutation } from '../api';

function DetailsForm() {
  const user = useAuthStore((s) => s.user);
  const token = useAuthStore((s) => s.token);
  const signIn = useAuthStore((s) => s.login);
  const mutation = useUpdateProfileMutation();
  const [name, setName] = useState(user?.name ?? '');
  const [email, setEmail] = useState(user?.email ?? '');
  const [currentPassword, setCurrentPassword] = useState('');
  const emailChanged = email.trim().toLowerCase() !== (user?.email ?? '');

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    mutation.mutate(
      { name: name.trim(), ...(emailChanged ? { email: email.trim(), currentPassword } : {}) },
      {
        onSuccess: (result) => {
          if (token) signIn(result.user, token);
          setCurrentPassword('');
        },
      },
    );
  }

  return (
    <form onSubmit={onSubmit} aria-label="Your details" className="flex flex-col gap-4">
      <Field label="Name" required>
        {(control) => <Input {...control} value={name} onChange={(event) => setName(event.target.value)} autoComplete="name" />}
      </Field>
      <Field label="Email" required hint={emailChanged ? 'A new address has to be verified again.' : undefined}>
        {(control) => <Input {...control} type="email" value={email} onChange={(event) => setEmail(event.target.value)} autoComplete="email" />}
      </Field>
      {emailChanged ? (
        <Field label="Current password" required hint="Needed to change your email.">
          {(control) => <Input {...control} type="password" value={currentPassword} onChange={(event) => setCurrentPassword(event.target.value)} autoComplete="current-password" />}
        </Field>
      ) : null}
      {mutation.isError ? <Alert tone="error">{errorMessage(mutation.error, 'Failed to save your details')}</Alert> : null}
      {mutation.isSuccess ? <Alert tone="success">Your details are saved.</Alert> : null}
      <div>
        <Button type="submit" loading={mutation.isPending}>
          Save details
        </Button>
      </div>
    </form>
  );
}

function PasswordForm() {
  const mutation = useUpdateProfileMutation();
  const [currentPassword, setCurrentPassword] = useState('');
  const [newPassword, setNewPassword] = useState('');
  const [confirmPassword, setConfirmPassword] = useState('');
  const [problem, setProblem] = useState<string | null>(null);

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    const found =
      newPassword !== confirmPassword ? 'Passwords do not match' : newPassword.length < PASSWORD_MIN_LENGTH ? 'Password must be at least 8 characters long' : null;
    setProblem(found);
    if (found) return;
    mutation.mutate(
      { currentPassword, newPassword },
      {
        onSuccess: () => {
          setCurrentPassword('');
          setNewPassword('');
          setConfirmPassword('');
        },
      },
    );
  }

  const shown = problem ?? (mutation.isError ? errorMessage(mutation.error, 'Failed to change your password') : null);
  return (
    <form onSubmit={onSubmit} aria-label="Change password" className="flex flex-col gap-4" noValidate>
      <Field label="Current password" required>
        {(control) => <Input {...control} type="password" value={currentPassword} onChange={(event) => setCurrentPassword(event.target.value)} autoComplete="current-password" />}
      </Field>
      <Field label="New password" required hint="Must be at least 8 characters">
        {(control) => <Input {...control} type="password" value={newPassword} onChange={(event) => setNewPassword(event.target.value)} autoComplete="new-password" />}
      </Field>
      <Field label="Confirm new password" required>
        {(control) => <Input {...control} type="password" value={confirmPassword} onChange={(event) => setConfirmPassword(event.target.value)} autoComplete="new-password" />}
      </Field>
      {shown ? <Alert tone="error">{shown}</Alert> : null}
      {mutation.isSuccess ? <Alert tone="success">Your password is changed. Your other sessions were signed out.</Alert> : null}
      <div>
        <Button type="submit" loading={mutation.isPending} disabled={!currentPassword || !newPassword}>
          Change password
        </Button>
      </div>
    </form>
  );
}

function Sessions() {
  const navigate = useNavigate();
  const query = useSessionsQuery();
  const everywhere = useSignOutEverywhereMutation();

  function onSignOutEverywhere() {
    if (!confirmAction('Sign out on every device, this one included?')) return;
    everywhere.mutate(undefined, {
      onSuccess: () => {
        clearSession();
        void navigate('/login', { replace: true });
      },
      onError: (error) => notify(errorMessage(error, 'Failed to sign out everywhere')),
    });
  }

  return (
    <div className="flex flex-col gap-4">
      {query.isPending ? (
        <p className="flex items-center gap-2 text-sm text-slate-600" role="status">
          <Spinner /> Loading sessions...
        </p>
      ) : query.isError ? (
        <Alert tone="error">{errorMessage(query.error, 'Failed to load your sessions')}</Alert>
      ) : (
        <ul className="divide-y divide-slate-200" aria-label="Sessions">
          {query.data.map((session) => (
            <li key={`${session.created_at}-${session.expires_at}`} className="flex items-center gap-3 py-2 text-sm text-slate-700" data-testid="session-row">
              <MonitorSmartphone className="size-4 shrink-0 text-slate-400" aria-hidden="true" />
              <span className="flex-1">
                Signed in <DateTime value={session.created_at} />, ends <DateTime value={session.expires_at} dateOnly />
              </span>
              {session.current ? <Badge tone="accent">This browser</Badge> : null}
            </li>
          ))}
        </ul>
      )}
      <div>
        <Button variant="danger-ghost" onClick={onSignOutEverywhere} loading={everywhere.isPending} icon={<LogOut className="size-4" aria-hidden="true" />}>
          Sign out everywhere
        </Button>
      </div>
    </div>
  );
}

function YourSites() {
  const sites = useSitesStore((s) => s.sites);
  const leave = useLeaveSiteMutation();
  const shared = sites.filter((site) => site.role !== 'owner');
  const own = sites.filter((site) => site.role === 'owner');
  return (
    <div className="flex flex-col gap-4">
      <section aria-labelledby="own-sites">
        <h3 id="own-sites" className="mb-1 text-sm font-semibold text-slate-900">
          Your sites
        </h3>
        {own.length ? <p className="text-sm text-slate-700">{own.map((site) => site.name).join(', ')}</p> : <p className="text-sm text-slate-600">You own no site.</p>}
      </section>
      <section aria-labelledby="shared-sites">
        <h3 id="shared-sites" className="mb-1 text-sm font-semibold text-slate-900">
          Sites shared with me
        </h3>
        {shared.length === 0 ? (
          <p className="text-sm text-slate-600">Nobody has shared a site with you yet.</p>
        ) : (
          <ul className="divide-y divide-slate-200">
            {shared.map((site) => (
              <li key={site.id} className="flex items-center gap-3 py-2" data-testid="shared-site">
                <span className="min-w-0 flex-1 truncate text-sm text-slate-800">{site.name}</span>
                <Badge tone="neutral">{ROLE_LABELS[site.role]}</Badge>
                <Button
                  size="sm"
                  variant="danger-ghost"
                  onClick={() => {
                    if (!confirmAction(`Leave ${site.name}? You lose access until someone invites you again.`)) return;
                    leave.mutate(site.id, { onError: (error) => notify(errorMessage(error, 'Failed to leave the site')) });
                  }}
                >
                  Leave
                </Button>
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}

/** Your own account: details, password, where you are signed in, and the sites you work on. */
export function ProfilePage() {
  return (
    <>
      <PageHeader title="Profile" description="Your name, email and password, your sessions, and the sites you work on." />
      <div className="grid gap-6 lg:grid-cols-2">
        <Card>
          <CardHeader>
            <CardTitle>Your details</CardTitle>
          </CardHeader>
          <CardContent>
            <DetailsForm />
          </CardContent>
        </Card>
        <Card>
          <CardHeader>
            <CardTitle>Password</CardTitle>
            <CardDescription>Changing it signs out your other sessions.</CardDescription>
          </CardHeader>
          <CardContent>
            <PasswordForm />
          </CardContent>
        </Card>
        <Card>
          <CardHeader>
            <CardTitle>Sites</CardTitle>
          </CardHeader>
          <CardContent>
            <YourSites />
          </CardContent>
        </Card>
        <Card>
          <CardHeader>
            <CardTitle>Sessions</CardTitle>
            <CardDescription>Where your account is signed in.</CardDescription>
          </CardHeader>
          <CardContent>
            <Sessions />
          </CardContent>
        </Card>
      </div>
    </>
  );
}
