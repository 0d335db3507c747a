import { isRouteErrorResponse, Link, useNavigate, useRouteError } from 'react-router';
import { HeraldLogo } from '../components/herald-logo';
import { buttonStyles } from '../components/ui';
import { isChunkLoadError } from '../lib/chunk-reload';

function describe(error: unknown): string {
  if (isRouteErrorResponse(error)) return `${error.status} ${error.statusText}`.trim();
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  return 'Something went wrong.';
}

/** What a person can do about it: only a 404 is about the address. */
function hintFor(error: unknown): string {
  if (isChunkLoadError(error)) return 'Part of Herald could not be loaded, usually because Herald was updated while this page was open. Reload the page to get the new version.';
  if (isRouteErrorResponse(error) && error.status === 404) return 'The page may have moved, or the address may be mistyped.';
  return 'Something went wrong while showing this page. Reloading usually helps; if it does not, go back and try again.';
}

/** Spec §2: the fallback for routing failures and unknown addresses; shows the status or the error's message. */
export function ErrorScreen() {
  const error = useRouteError();
  const navigate = useNavigate();
  return (
    <div className="flex min-h-dvh flex-col items-center justify-center bg-slate-50 px-4 py-16 text-center">
      <header className="mb-8">
        <Link to="/" className="block rounded-md" aria-label="Herald home">
          <HeraldLogo />
        </Link>
      </header>
      <main className="flex max-w-lg flex-col items-center">
        <h1 className="text-2xl font-semibold tracking-tight text-slate-900">Unexpected Application Error!</h1>
        <p className="mt-3 rounded-lg bg-white px-4 py-2 font-mono text-sm break-all text-red-700 ring-1 ring-slate-200" data-testid="error-detail">
          {describe(error)}
        </p>
        <p className="mt-4 text-sm text-slate-600" data-testid="error-hint">
          {hintFor(error)}
        </p>
        <div className="mt-6 flex flex-wrap justify-center gap-3">
          {isRouteErrorResponse(error) && error.status === 404 ? null : (
            <button type="button" onClick={() => window.location.reload()} className={buttonStyles({ variant: 'secondary' })}>
              Reload
            </button>
          )}
          <button type="button" onClick={() => void navigate(-1)} className={buttonStyles({ variant: 'secondary' })}>
            Go back
          </button>
          <Link to="/" className={buttonStyles()}>
            Go to home page
          </Link>
        </div>
      </main>
    </div>
  );
}
