import type { InstallCheck, InstallCheckId } from '@herald/contracts';
import { AlertCircle, CheckCircle2, TriangleAlert } from 'lucide-react';
import { cn } from '../../../lib/class-names';

/** What each check of POST /sites/{id}/install-check looks at, as the owner reads it. */
export const INSTALL_CHECK_LABELS: Record<InstallCheckId, string> = {
  reachable: 'Site reachable',
  site_https: 'Site on HTTPS',
  public_url_https: 'Herald on HTTPS',
  snippet: 'Snippet on the page',
  service_worker: 'Service worker file',
  single_service_worker: 'One push service worker',
  manifest: 'Web app manifest (iPhone and iPad)',
};

function statusOf(check: InstallCheck) {
  if (check.ok) return { Icon: CheckCircle2, tone: 'text-emerald-700', word: 'Passed' };
  if (check.severity === 'warning') return { Icon: TriangleAlert, tone: 'text-amber-700', word: 'Warning' };
  return { Icon: AlertCircle, tone: 'text-red-700', word: 'Failed' };
}

/** The install check's results: one line per check, with the fix for what failed. */
export function InstallCheckList({ checks }: { checks: InstallCheck[] }) {
  return (
    <ul className="flex flex-col divide-y divide-slate-200 rounded-lg border border-slate-200" aria-label="Installation checks">
      {checks.map((check) => {
        const { Icon, tone, word } = statusOf(check);
        return (
          <li key={check.id} className="flex gap-3 px-3 py-2.5 text-sm" data-check={check.id}>
            <Icon className={cn('mt-0.5 size-4 shrink-0', tone)} aria-hidden="true" />
            <div className="flex min-w-0 flex-col gap-0.5">
              <p className="font-medium text-slate-900">
                {INSTALL_CHECK_LABELS[check.id]} <span className={cn('text-xs font-semibold', tone)}>· {word}</span>
              </p>
              <p className="break-words text-slate-700">{check.message}</p>
              {check.fix ? (
                <p className="break-words text-slate-600">
                  <span className="font-medium text-slate-800">Fix: </span>
                  {check.fix}
                </p>
              ) : null}
            </div>
          </li>
        );
      })}
    </ul>
  );
}
