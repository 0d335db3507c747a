import { AUDIT_ACTION_LABELS, AUDIT_ACTIONS, roleNeededMessage, type AuditEntry, type Site } from '@herald/contracts';
import { Download, History } from 'lucide-react';
import { useState, type FormEvent } from 'react';
import { Alert, Button, Card, CardContent, CardDescription, CardHeader, CardTitle, DateTime, EmptyState, Field, Input, Select, Spinner } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { notify } from '../../../lib/dialogs';
import { usePermission } from '../../../lib/site-role';
import { EMPTY_AUDIT_FILTERS, downloadAuditCsv, useAuditLogQuery, type AuditFilters } from '../api';

const SUBJECT_NAMES: Record<AuditEntry['subject']['type'], string> = {
  site: 'site',
  notification: 'notification',
  welcome_campaign: 'welcome campaign',
  segment: 'segment',
  rss_feed: 'RSS feed',
  subscriber: 'subscriber',
  api_key: 'API key',
  vapid_key: 'VAPID key',
  member: 'member',
  invitation: 'invitation',
  audit_log: 'audit log',
  webhook: 'webhook',
};

/** One line a person reads: "Updated notification “Spring sale” (title, message)". */
export function describeEntry(entry: AuditEntry): string {
  const label = entry.subject.label ? `“${entry.subject.label}”` : '';
  const fields = entry.changed_fields.length ? ` (${entry.changed_fields.join(', ')})` : '';
  const detail = (key: string) => (typeof entry.detail[key] === 'string' ? (entry.detail[key] as string) : '');
  const aboutSubscribers = entry.subject.type === 'subscriber';
  // Erased subscribers: the entry carries no label, nothing of the subscriber is left to name.
  if (entry.action === 'deleted' && aboutSubscribers && entry.detail.erased === true) return 'Erased a subscriber completely';
  switch (entry.action) {
    case 'member_joined':
      return `Joined the site as ${detail('role')}`;
    case 'member_left':
      return 'Left the site';
    case 'member_invited':
      return `Invited ${detail('email')} as ${detail('role')}`;
    case 'invitation_revoked':
      return `Revoked the invitation of ${detail('email')}`;
    case 'member_removed':
      return `Removed ${label}`;
    case 'role_changed':
      return `Changed the role of ${label}: ${detail('from')} → ${detail('to')}`;
    case 'ownership_transferred':
      return `Transferred the ownership to ${label}`;
    case 'key_created':
      return `Created API key ${label}`;
    case 'key_revoked':
      return `Revoked API key ${label}`;
    case 'vapid_key_created':
      return `Imported VAPID key ${label}`;
    case 'vapid_key_made_primary':
      return `Made VAPID key ${label} primary`;
    case 'vapid_key_retired':
      return `Retired VAPID key ${label}`;
    case 'secret_rotated':
      return 'Rotated the identity secret';
    case 'settings_changed':
      return `Changed the site settings${fields}`;
    case 'export_run':
      if (entry.subject.type === 'notification') return `Exported the report of notification ${label}`;
      if (aboutSubscribers && detail('export') === 'subscriber_data') return 'Downloaded the data of a subscriber';
      if (aboutSubscribers) return entry.detail.include_keys === true ? 'Exported the subscribers with their push keys' : 'Exported the subscribers';
      return 'Exported the audit log';
    default:
      return `${AUDIT_ACTION_LABELS[entry.action]} ${SUBJECT_NAMES[entry.subject.type]}${label ? ` ${label}` : ''}${fields}`;
  }
}

function Filters({ onApply, initial }: { onApply: (filters: AuditFilters) => void; initial: AuditFilters }) {
  const [draft, setDraft] = useState(initial);
  const set = (key: keyof AuditFilters) => (event: { target: { value: string } }) => setDraft((d) => ({ ...d, [key]: event.target.value }));
  function onSubmit(event: FormEvent) {
    event.preventDefault();
    onApply(draft);
  }
  return (
    <form onSubmit={onSubmit} aria-label="Filter the audit log" className="grid gap-3 sm:grid-cols-2 lg:grid-cols-5 lg:items-end">
      <Field label="Who (email)">
        {(control) => <Input {...control} type="email" value={draft.actor} onChange={set('actor')} placeholder="name@example.com" />}
      </Field>
      <Field label="Action">
        {(control) => (
          <Select {...control} value={draft.action} onChange={set('action')}>
            <option value="">All actions</option>
            {AUDIT_ACTIONS.map((action) => (
              <option key={action} value={action}>
                {AUDIT_ACTION_LABELS[action]}
              </option>
            ))}
          </Select>
        )}
      </Field>
      <Field label="From">{(control) => <Input {...control} type="date" value={draft.from} onChange={set('from')} />}</Field>
      <Field label="To">{(control) => <Input {...control} type="date" value={draft.to} onChange={set('to')} />}</Field>
      <Button type="submit" variant="secondary">
        Apply filters
      </Button>
    </form>
  );
}

/** Settings → Audit log: who did what on the site, when and from which address (admins and owners). */
export function AuditLogPanel({ site }: { site: Site }) {
  const permission = usePermission('admin', 'read the audit log');
  const [filters, setFilters] = useState(EMPTY_AUDIT_FILTERS);
  const [exporting, setExporting] = useState(false);
  const query = useAuditLogQuery(site.id, filters, permission.allowed);

  if (!permission.allowed) return <Alert tone="info">{roleNeededMessage('admin')} Ask an owner of the site if you need it.</Alert>;

  async function onExport() {
    setExporting(true);
    try {
      await downloadAuditCsv(site.id, filters);
    } catch (error) {
      notify(errorMessage(error, 'Failed to export the audit log'));
    } finally {
      setExporting(false);
    }
  }

  const entries = query.data?.pages.flatMap((page) => page.entries) ?? [];
  return (
    <Card>
      <CardHeader>
        <div className="flex flex-col gap-3 sm:flex-row sm:items-start sm:justify-between">
          <div>
            <CardTitle>Audit log</CardTitle>
            <CardDescription>Every change to {site.name}: who made it, when, and from which address. Entries are kept 365 days and cannot be edited.</CardDescription>
          </div>
          <Button variant="secondary" onClick={() => void onExport()} loading={exporting} icon={<Download className="size-4" aria-hidden="true" />}>
            Export CSV
          </Button>
        </div>
      </CardHeader>
      <CardContent className="flex flex-col gap-4">
        <Filters initial={filters} onApply={setFilters} />
        {query.isPending ? (
          <p className="flex items-center gap-2 text-sm text-slate-600" role="status">
            <Spinner /> Loading the audit log...
          </p>
        ) : query.isError ? (
          <Alert tone="error">{errorMessage(query.error, 'Failed to load the audit log')}</Alert>
        ) : entries.length === 0 ? (
          <EmptyState icon={<History className="size-6" />} title="No entries" description="Nothing matches these filters." />
        ) : (
          <ol className="divide-y divide-slate-200" aria-label="Audit log entries">
            {entries.map((entry) => (
              <li key={entry.id} className="flex flex-col gap-1 py-3 sm:flex-row sm:gap-4" data-testid="audit-entry">
                <p className="shrink-0 text-xs text-slate-500 sm:w-44">
                  <DateTime value={entry.at} />
                </p>
                <div className="min-w-0 flex-1">
                  <p className="text-sm text-slate-900">{describeEntry(entry)}</p>
                  <p className="truncate text-xs text-slate-600">
                    {entry.actor.label}
                    {entry.address ? ` · ${entry.address}` : ''}
                  </p>
                </div>
              </li>
            ))}
          </ol>
        )}
        {query.hasNextPage ? (
          <div>
            <Button variant="secondary" onClick={() => void query.fetchNextPage()} loading={query.isFetchingNextPage}>
              Load more
            </Button>
          </div>
        ) : null}
      </CardContent>
    </Card>
  );
}
