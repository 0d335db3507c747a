import type { DoctorCheck, DoctorStatus } from '@herald/contracts';
import { RefreshCw } from 'lucide-react';
import { Alert, Badge, Button, Card, CardContent, CardDescription, CardHeader, CardTitle, DateTime, Spinner, type BadgeTone } from '../../../components/ui';
import { ApiError } from '../../../lib/api-client';
import { useSystemChecksQuery } from '../api';

const STATUS_LABEL: Record<DoctorStatus, string> = { ok: 'OK', warn: 'WARN', fail: 'FAIL' };
const STATUS_TONE: Record<DoctorStatus, BadgeTone> = { ok: 'success', warn: 'warning', fail: 'danger' };

function CheckRow({ check }: { check: DoctorCheck }) {
  return (
    <li className="flex flex-col gap-1 py-3 sm:flex-row sm:items-start sm:gap-4">
      <div className="w-14 shrink-0">
        <Badge tone={STATUS_TONE[check.status]}>{STATUS_LABEL[check.status]}</Badge>
      </div>
      <div className="min-w-0 flex-1">
        <p className="text-sm font-medium text-slate-900">{check.title}</p>
        <p className="text-sm break-words text-slate-600">{check.detail}</p>
        {check.action ? <p className="mt-1 text-sm break-words text-slate-800">{check.action}</p> : null}
      </div>
    </li>
  );
}

/**
 * Settings → System: what `herald doctor` checks on the server (README,
 * "herald doctor"), read-only. The server refuses every account but the
 * install's first one; they see why.
 */
export function SystemPanel() {
  const query = useSystemChecksQuery();
  const checks = query.data?.checks ?? [];
  const count = (status: DoctorStatus) => checks.filter((c) => c.status === status).length;

  return (
    <Card>
      <CardHeader>
        <div className="flex flex-wrap items-start justify-between gap-3">
          <div className="min-w-0">
            <CardTitle>System</CardTitle>
            <CardDescription>Checks of this Herald server: configuration, push services, database, Redis, clock and disk. Nothing here changes anything.</CardDescription>
          </div>
          <Button variant="secondary" size="sm" icon={<RefreshCw className="size-4" aria-hidden="true" />} loading={query.isFetching} onClick={() => void query.refetch()} disabled={query.error instanceof ApiError && query.error.status === 403}>
            Run checks again
          </Button>
        </div>
      </CardHeader>
      <CardContent>
        {query.isPending ? (
          <div className="flex items-center gap-3 py-6 text-sm text-slate-600">
            <Spinner /> Running the checks (reaching the push services takes a few seconds)…
          </div>
        ) : query.error ? (
          <Alert tone={query.error instanceof ApiError && query.error.status === 403 ? 'info' : 'error'} title={query.error instanceof ApiError && query.error.status === 403 ? 'Owner only' : 'The checks could not run'}>
            {query.error.message}
          </Alert>
        ) : (
          <>
            <p className="text-sm text-slate-700" aria-live="polite">
              {count('ok')} OK, {count('warn')} WARN, {count('fail')} FAIL · checked <DateTime value={new Date(query.data.checkedAt).toISOString()} />
            </p>
            <ul className="mt-2 divide-y divide-slate-200">
              {checks.map((check) => (
                <CheckRow key={check.id} check={check} />
              ))}
            </ul>
            <p className="mt-4 text-sm text-slate-600">
              The same checks run on the command line with <code className="rounded bg-slate-100 px-1 py-0.5 font-mono text-xs">herald doctor</code>, which exits non-zero on a FAIL.
            </p>
          </>
        )}
      </CardContent>
    </Card>
  );
}
