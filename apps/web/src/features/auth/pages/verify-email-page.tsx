import { CheckCircle2, LinkIcon, XCircle } from 'lucide-react';
import { useEffect, useRef } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { Button, ButtonLink, Spinner } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { useAuthStore } from '../../../lib/auth-store';
import { notify } from '../../../lib/dialogs';
import { useResendVerificationMutation, useVerifyEmailMutation } from '../api';
import { AuthStatus } from '../components/auth-layout';
import { AUTH_REDIRECT_DELAY_MS } from './reset-password-page';

export function VerifyEmailPage() {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const navigate = useNavigate();
  const verify = useVerifyEmailMutation();
  const resend = useResendVerificationMutation();
  const signedIn = useAuthStore((s) => s.isAuthenticated);
  const { mutate: verifyToken } = verify;
  // A verification token is single-use: never send it twice (React's strict mode mounts effects twice).
  const sentToken = useRef<string | null>(null);

  useEffect(() => {
    if (!token || sentToken.current === token) return;
    sentToken.current = token;
    verifyToken(token);
  }, [token, verifyToken]);

  useEffect(() => {
    if (!verify.isSuccess) return;
    const timer = setTimeout(() => void navigate('/login', { replace: true }), AUTH_REDIRECT_DELAY_MS);
    return () => clearTimeout(timer);
  }, [verify.isSuccess, navigate]);

  if (!token) {
    return (
      <AuthStatus icon={<LinkIcon className="size-12 text-red-600" />} title="Invalid verification link">
        <p>This link is missing its verification code. Open the link from your email again, or request a new one after signing in.</p>
        <ButtonLink to="/login" variant="secondary" className="w-full">
          Back to Login
        </ButtonLink>
      </AuthStatus>
    );
  }

  if (verify.isSuccess) {
    return (
      <AuthStatus icon={<CheckCircle2 className="size-12 text-emerald-600" />} title="Email Verified!">
        <p role="status">Your email address is confirmed. Redirecting to login...</p>
        <ButtonLink to="/login" variant="secondary" className="w-full">
          Go to Login
        </ButtonLink>
      </AuthStatus>
    );
  }

  if (verify.isError) {
    const onResend = () =>
      resend.mutate(undefined, {
        onSuccess: () => notify('Verification email sent! Please check your inbox.'),
        onError: () => notify('Failed to resend verification email. Please try again later.'),
      });
    return (
      <AuthStatus icon={<XCircle className="size-12 text-red-600" />} title="Verification Failed">
        <p role="alert" className="text-red-700">
          {errorMessage(verify.error, 'Failed to verify email. The link may be invalid or expired.')}
        </p>
        <Button onClick={onResend} loading={resend.isPending} className="w-full">
          Resend Verification Email
        </Button>
        {signedIn ? null : <p className="text-xs">You will be asked to sign in first.</p>}
        <Link to="/login" className="rounded font-medium text-indigo-700 hover:text-indigo-900 hover:underline">
          Back to Login
        </Link>
      </AuthStatus>
    );
  }

  return (
    <AuthStatus icon={<Spinner className="text-indigo-600 [&_svg]:size-12" />} title="Verifying your email...">
      <p role="status">This only takes a moment.</p>
    </AuthStatus>
  );
}
