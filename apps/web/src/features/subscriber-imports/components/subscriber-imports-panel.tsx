import { SUBSCRIBER_IMPORT_FIELDS, SUBSCRIBER_IMPORT_MAX_BYTES, formatBytes, type Site, type SubscriberImport } from '@herald/contracts';
import { Download, FileUp } from 'lucide-react';
import { useState, type FormEvent } from 'react';
import { RoleGatedButton } from '../../../components/role-gate';
import { Alert, Badge, Button, Card, CardContent, CardDescription, CardHeader, CardTitle, DateTime, Field, Select, Spinner, Switch, type BadgeTone } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { notify } from '../../../lib/dialogs';
import { usePermission } from '../../../lib/site-role';
import { useVapidKeysQuery } from '../../vapid-keys/api';
import { downloadImportReport, isImportInProgress, useStartSubscriberImportMutation, useSubscriberImportsQuery } from '../api';

/** Importing is a change to the site's audience: admins and owners (docs/security.md, "Tenancy"). */
const IMPORT_ACTION = 'import subscribers';

const count = (value: number) => value.toLocaleString('en-US');

/**
 * What the badge says. "Done" is green only when every row came in: with
 * rejected rows it is a warning, so a partial import never reads as a clean one.
 */
function statusBadge(item: SubscriberImport): { label: string; tone: BadgeTone } {
  switch (item.status) {
    case 'queued':
      return { label: 'Queued', tone: 'neutral' };
    case 'running':
      return { label: 'Importing', tone: 'info' };
    case 'failed':
      return { label: 'Failed', tone: 'danger' };
    case 'done':
      return item.rejected > 0 ? { label: `Done, ${count(item.rejected)} rejected`, tone: 'warning' } : { label: 'Done', tone: 'success' };
  }
}

/** Share of the file read, 0–100; the bar follows bytes because the number of rows is unknown until the end. */
function percentRead(item: SubscriberImport): number {
  if (item.status === 'done') return 100;
  if (item.file_size <= 0) return 0;
  return Math.min(100, Math.floor((item.bytes_read / item.file_size) * 100));
}

function ImportProgress({ item }: { item: SubscriberImport }) {
  const percent = percentRead(item);
  return (
    <div className="flex flex-col gap-1">
      <div
        role="progressbar"
        aria-label={`Progress of ${item.file_name}`}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={percent}
        aria-valuetext={`${percent}% of the file read`}
        className="h-2 w-full overflow-hidden rounded-full bg-slate-200"
      >
        <div className="h-full rounded-full bg-indigo-600 transition-[width]" style={{ width: `${percent}%` }} />
      </div>
      <p className="text-xs text-slate-600">
        {formatBytes(item.bytes_read)} of {formatBytes(item.file_size)} read ({percent}%)
      </p>
    </div>
  );
}

function ImportRow({ item }: { item: SubscriberImport }) {
  const badge = statusBadge(item);
  const [downloading, setDownloading] = useState(false);

  async function onDownload() {
    setDownloading(true);
    try {
      await downloadImportReport(item);
    } catch (error) {
      notify(errorMessage(error, 'Failed to download the report'));
    } finally {
      setDownloading(false);
    }
  }

  return (
    <li className="flex flex-col gap-3 py-4" aria-label={`Import of ${item.file_name}`}>
      <div className="flex flex-wrap items-center justify-between gap-2">
        <div className="flex min-w-0 flex-wrap items-center gap-2">
          <span className="truncate font-medium text-slate-900">{item.file_name}</span>
          <Badge tone={badge.tone}>{badge.label}</Badge>
        </div>
        <span className="text-xs text-slate-600">
          Started <DateTime value={item.created_at} />
        </span>
      </div>
      {isImportInProgress(item) ? <ImportProgress item={item} /> : null}
      <dl className="grid grid-cols-2 gap-x-4 gap-y-1 text-sm sm:grid-cols-4">
        {(
          [
            ['Rows read', item.rows_read],
            ['Imported', item.imported],
            ['Updated', item.updated],
            ['Rejected', item.rejected],
          ] as const
        ).map(([label, value]) => (
          <div key={label} className="flex flex-col">
            <dt className="text-xs text-slate-600">{label}</dt>
            <dd className="font-medium tabular-nums text-slate-900">{count(value)}</dd>
          </div>
        ))}
      </dl>
      {item.status === 'failed' && item.error ? <Alert tone="error">{item.error}</Alert> : null}
      {item.report_url && item.rejected > 0 ? (
        <div>
          <Button variant="secondary" size="sm" onClick={() => void onDownload()} loading={downloading} icon={<Download className="size-4" aria-hidden="true" />}>
            Download rejected rows (CSV)
          </Button>
        </div>
      ) : null}
      {item.enrol_in_welcome_campaign ? <p className="text-xs text-slate-600">New subscribers from this file enter the welcome campaign.</p> : null}
    </li>
  );
}

function StartImportForm({ site }: { site: Site }) {
  const keys = useVapidKeysQuery(site.id, true);
  const start = useStartSubscriberImportMutation(site.id);
  const [file, setFile] = useState<File | null>(null);
  const [fileError, setFileError] = useState<string | undefined>();
  const [vapidKeyId, setVapidKeyId] = useState('');
  const [enrol, setEnrol] = useState(false);
  const [inputKey, setInputKey] = useState(0);

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (!file) {
      setFileError('Choose a CSV or JSON Lines file to import');
      return;
    }
    if (file.size > SUBSCRIBER_IMPORT_MAX_BYTES) {
      setFileError(`The file is ${formatBytes(file.size)}; the largest import is ${formatBytes(SUBSCRIBER_IMPORT_MAX_BYTES)}. Split it into several files.`);
      return;
    }
    start.mutate(
      { file, vapidKeyId, enrolInWelcomeCampaign: enrol },
      {
        onSuccess: () => {
          setFile(null);
          setInputKey((key) => key + 1);
        },
      },
    );
  }

  return (
    <form onSubmit={onSubmit} noValidate aria-label="Import subscribers" className="flex flex-col gap-4">
      <Field
        label="File"
        required
        error={fileError}
        hint={
          <>
            CSV with a header row, or JSON Lines. Required: <code>endpoint</code>, <code>p256dh</code>, <code>auth</code>. Optional:{' '}
            {SUBSCRIBER_IMPORT_FIELDS.slice(3).map((field, index) => (
              <span key={field}>
                {index ? ', ' : ''}
                <code>{field}</code>
              </span>
            ))}{' '}
            (<code>tags</code> separated by <code>|</code>). Herald&apos;s own export with push keys imports as it is.
          </>
        }
      >
        {(control) => (
          <input
            {...control}
            key={inputKey}
            type="file"
            accept=".csv,.jsonl,.ndjson,.json,text/csv,application/x-ndjson"
            onChange={(event) => {
              setFile(event.target.files?.[0] ?? null);
              setFileError(undefined);
            }}
            className="block w-full text-sm text-slate-700 file:mr-3 file:rounded-lg file:border-0 file:bg-slate-100 file:px-3 file:py-2 file:text-sm file:font-medium file:text-slate-800 hover:file:bg-slate-200"
          />
        )}
      </Field>
      <Field
        label="Subscribed with"
        hint="The VAPID key the browsers in the file subscribed with, for rows without a vapid_public_key column. Import the previous service's key pair in the VAPID Keys tab first."
      >
        {(control) => (
          <Select {...control} value={vapidKeyId} onChange={(event) => setVapidKeyId(event.target.value)} disabled={keys.isPending}>
            <option value="">The primary key</option>
            {(keys.data ?? [])
              .filter((key) => !key.is_primary)
              .map((key) => (
                <option key={key.id} value={key.id}>
                  Key {key.public_key.slice(0, 12)}… ({count(key.subscriber_count)} active subscribers)
                </option>
              ))}
          </Select>
        )}
      </Field>
      <Switch
        label="Send them the welcome campaign"
        checked={enrol}
        onCheckedChange={setEnrol}
        description="Off: imported subscribers are already your audience, so they get no welcome steps. On: new ones enter the site's active welcome campaign."
      />
      {start.isError ? <Alert tone="error">{errorMessage(start.error, 'Failed to start the import')}</Alert> : null}
      <div>
        <RoleGatedButton needed="admin" action={IMPORT_ACTION} type="submit" loading={start.isPending} icon={<FileUp className="size-4" aria-hidden="true" />}>
          Import subscribers
        </RoleGatedButton>
      </div>
    </form>
  );
}

/** Settings → Import (docs/product.md, "Importing subscribers"). */
export function SubscriberImportsPanel({ site }: { site: Site }) {
  const permission = usePermission('admin', IMPORT_ACTION);
  const imports = useSubscriberImportsQuery(site.id, permission.allowed);

  return (
    <Card>
      <CardHeader>
        <CardTitle>Import subscribers</CardTitle>
        <CardDescription>
          Move the subscribers of your previous push service to {site.name}. They keep receiving your notifications when Herald signs with the key
          pair they subscribed with; existing subscribers with the same endpoint are updated, not duplicated.
        </CardDescription>
      </CardHeader>
      <CardContent className="flex flex-col gap-6">
        <StartImportForm site={site} />
        <section aria-label="Recent imports" className="flex flex-col">
          <h3 className="text-sm font-semibold text-slate-900">Recent imports</h3>
          {imports.isPending ? (
            <Spinner />
          ) : imports.isError ? (
            <Alert tone="error">{errorMessage(imports.error, 'Failed to load the imports')}</Alert>
          ) : imports.data.length === 0 ? (
            <p className="py-3 text-sm text-slate-600">No imports yet.</p>
          ) : (
            <ul className="divide-y divide-slate-200">
              {imports.data.map((item) => (
                <ImportRow key={item.id} item={item} />
              ))}
            </ul>
          )}
        </section>
      </CardContent>
    </Card>
  );
}
