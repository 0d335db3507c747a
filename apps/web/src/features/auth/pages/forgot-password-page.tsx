import { MailCheck } from 'lucide-react';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { Alert, Button, ButtonLink, Field, Input } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { useForgotPasswordMutation } from '../api';
import { AuthLayout, AuthStatus } from '../components/auth-layout';

export function ForgotPasswordPage() {
  const mutation = useForgotPasswordMutation();
  const [email, setEmail] = useState('');
  const [sentTo, setSentTo] = useState<string | null>(null);

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const address = email.trim();
    mutation.mutate(address, { onSuccess: () => setSentTo(address) });
  }

  if (sentTo !== null) {
    return (
      <AuthStatus icon={<MailCheck className="size-12 text-emerald-600" />} title="Check your email!">
        <p>
          We&apos;ve sent password reset instructions to <strong className="font-semibold break-all text-slate-900">{sentTo}</strong>. The link
          expires in one hour.
        </p>
        <ButtonLink to="/login" variant="secondary" className="w-full">
          Back to Login
        </ButtonLink>
      </AuthStatus>
    );
  }

  return (
    <AuthLayout
      title="Forgot your password?"
      description="Enter the email address you sign in with and we'll send you a link to reset your password."
      footer={
        <Link to="/login" className="rounded font-medium text-indigo-700 hover:text-indigo-900 hover:underline">
          Back to Login
        </Link>
      }
    >
      <form className="flex flex-col gap-5" onSubmit={onSubmit}>
        {mutation.isError ? <Alert tone="error">{errorMessage(mutation.error, 'Failed to send reset email. Please try again.')}</Alert> : null}
        <Field label="Email" required>
          {(control) => <Input {...control} type="email" name="email" autoComplete="email" value={email} onChange={(e) => setEmail(e.target.value)} />}
        </Field>
        <Button type="submit" size="lg" className="w-full" loading={mutation.isPending}>
          Send Reset Link
        </Button>
      </form>
    </AuthLayout>
  );
}
