import type { Subscriber } from '@herald/contracts';
import { Download, Eraser, FileJson, FileUp, FlaskConical, RefreshCw, Search, Trash2, Users } from 'lucide-react';
import { useEffect, useId, useState, type FormEvent } from 'react';
import { Alert, Badge, Button, ButtonLink, Card, DateTime, EmptyState, Input, PageHeader, Pager, Spinner, ToggleGroup } from '../../../components/ui';
import { RoleGatedButton } from '../../../components/role-gate';
import { errorMessage } from '../../../lib/api-client';
import { confirmAction, notify } from '../../../lib/dialogs';
import { useCurrentSite } from '../../../lib/sites-store';
import { usePermission } from '../../../lib/site-role';
import { useMediaQuery } from '../../../lib/use-media-query';
import {
  SUBSCRIBERS_PAGE_SIZE,
  downloadSubscriberData,
  downloadSubscribersCsv,
  useEraseSubscriberMutation,
  useRemoveSubscriberMutation,
  useSetTestDeviceMutation,
  useSubscribersQuery,
  type ActiveFilter,
} from '../api';
import { SUBSCRIBER_PRIVACY_TEXTS as TEXTS } from '../privacy-texts';
import { countryLabel, orUnknown } from '../subscriber-labels';
import { NoSiteSelected } from '../../../components/no-site-selected';

const FILTERS = [
  { value: 'all', label: 'All' },
  { value: 'active', label: 'Active' },
  { value: 'inactive', label: 'Inactive' },
] as const;

/** Typing pauses this long before the list is searched, so each keystroke is not a request. */
const SEARCH_DEBOUNCE_MS = 300;
/** The table needs this width; narrower screens get cards (spec §2 "a card layout on mobile"). */
const TABLE_MEDIA_QUERY = '(min-width: 768px)';

const numberFormat = new Intl.NumberFormat('en-US');

export function SubscribersPage() {
  const { currentSite, loaded } = useCurrentSite();
  if (!currentSite) {
    return (
      <>
        <PageHeader title="Subscribers" />
        <NoSiteSelected loaded={loaded} icon={<Users className="size-6" />} description="Create or select a site to see its subscribers." />
      </>
    );
  }
  return <SubscribersList key={currentSite.id} siteId={currentSite.id} siteName={currentSite.name} timeZone={currentSite.settings.timezone} />;
}

function useDebounced<T>(value: T, delayMs: number): T {
  const [debounced, setDebounced] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setDebounced(value), delayMs);
    return () => clearTimeout(timer);
  }, [value, delayMs]);
  return debounced;
}

function SubscribersList({ siteId, siteName, timeZone }: { siteId: string; siteName: string; timeZone: string }) {
  const searchId = useId();
  const [searchText, setSearchText] = useState('');
  const [active, setActive] = useState<ActiveFilter>('all');
  // Next and Previous read the page next to the one shown (a cursor); page 1 is always read from the top.
  const [at, setAt] = useState<{ page: number; after?: string; before?: string }>({ page: 1 });
  const page = at.page;
  const search = useDebounced(searchText.trim(), SEARCH_DEBOUNCE_MS);
  const query = useSubscribersQuery(siteId, { active, search, ...at });
  const remove = useRemoveSubscriberMutation(siteId);
  const erase = useEraseSubscriberMutation(siteId);
  const [downloadingId, setDownloadingId] = useState<string | null>(null);
  const wide = useMediaQuery(TABLE_MEDIA_QUERY);

  // A new search or filter starts again at page 1.
  const [shownFor, setShownFor] = useState({ search, active });
  if (shownFor.search !== search || shownFor.active !== active) {
    setShownFor({ search, active });
    setAt({ page: 1 });
  }

  const data = query.data;
  const filtered = search !== '' || active !== 'all';
  const pages = data ? Math.max(1, Math.ceil(data.total / SUBSCRIBERS_PAGE_SIZE)) : 1;
  // The page emptied (its subscribers removed or erased, or gone from the filter): show the new last page, by number.
  const pastTheEnd = data !== undefined && !query.isPlaceholderData && data.subscribers.length === 0 && page > pages;
  useEffect(() => {
    if (pastTheEnd) setAt({ page: pages });
  }, [pastTheEnd, pages]);

  function onRemove(subscriber: Subscriber) {
    if (!confirmAction('Are you sure you want to remove this subscriber?')) return;
    remove.mutate(subscriber.id, {
      onSuccess: () => notify('Subscriber removed successfully'),
      onError: (error) => notify(errorMessage(error, 'Failed to remove subscriber')),
    });
  }
  const removingId = remove.isPending ? remove.variables : null;

  function onErase(subscriber: Subscriber) {
    if (!confirmAction(TEXTS.eraseConfirm)) return;
    erase.mutate(subscriber.id, {
      onSuccess: () => notify(TEXTS.erased),
      onError: (error) => notify(errorMessage(error, TEXTS.eraseFailed)),
    });
  }

  async function onDownloadData(subscriber: Subscriber) {
    setDownloadingId(subscriber.id);
    try {
      await downloadSubscriberData(subscriber.id);
    } catch (error) {
      notify(errorMessage(error, TEXTS.downloadFailed));
    } finally {
      setDownloadingId(null);
    }
  }

  const rowActions: RowActions = {
    onRemove,
    removingId,
    onErase,
    erasingId: erase.isPending ? erase.variables : null,
    onDownloadData: (subscriber) => void onDownloadData(subscriber),
    downloadingId,
  };

  return (
    <>
      <PageHeader
        title="Subscribers"
        description={`People who allowed ${siteName} to send them notifications.`}
        // New subscribers arrive from the site, not from this screen: the list is fetched again on request (results stay fresh for 5 minutes, spec §9).
        actions={
          <div className="flex flex-wrap gap-2">
            {/* Subscribers of another push service come in through Settings → Import (admins and owners). */}
            <ButtonLink to="/settings?tab=import" variant="secondary" size="sm" icon={<FileUp className="size-4" aria-hidden="true" />}>
              Import
            </ButtonLink>
            <Button variant="secondary" size="sm" onClick={() => void query.refetch()} loading={query.isRefetching} icon={<RefreshCw className="size-4" aria-hidden="true" />}>
              Refresh
            </Button>
          </div>
        }
      />

      <Card className="mb-4 flex flex-col gap-3 p-4 md:flex-row md:items-center md:justify-between">
        <div className="relative w-full md:max-w-sm">
          <label htmlFor={searchId} className="sr-only">
            Search subscribers
          </label>
          <Search className="pointer-events-none absolute top-1/2 left-3 size-4 -translate-y-1/2 text-slate-500" aria-hidden="true" />
          <Input
            id={searchId}
            type="search"
            value={searchText}
            onChange={(event) => setSearchText(event.target.value)}
            placeholder="Search by browser or country"
            className="pl-9"
            maxLength={100}
          />
        </div>
        <ToggleGroup label="Filter by status" items={FILTERS} value={active} onValueChange={setActive} />
      </Card>

      <ExportPanel siteId={siteId} active={active} search={search} />

      <div className="mb-3 flex min-h-6 items-center gap-2">
        {data ? (
          <p className="text-sm text-slate-600" role="status" data-testid="subscriber-total">
            {numberFormat.format(data.total)} {data.total === 1 ? 'subscriber' : 'subscribers'}
          </p>
        ) : null}
        {query.isFetching && data ? <Spinner label="Updating" className="text-slate-500" /> : null}
      </div>

      {query.isPending ? (
        <p className="flex items-center gap-3 py-12 text-sm text-slate-600" role="status">
          <Spinner /> Loading subscribers...
        </p>
      ) : query.isError ? (
        <Alert tone="error" title="Could not load subscribers">
          <p>{errorMessage(query.error, 'Please try again.')}</p>
          <Button size="sm" variant="secondary" className="mt-2" onClick={() => void query.refetch()}>
            Retry
          </Button>
        </Alert>
      ) : query.data.subscribers.length === 0 ? (
        <EmptyState
          icon={<Users className="size-6" />}
          title={filtered ? 'No subscribers match your filters' : 'No subscribers yet'}
          description={
            filtered
              ? 'Try another search or status.'
              : 'Install the code snippet on your site (Settings → Installation); visitors who allow notifications appear here.'
          }
          action={filtered ? undefined : <ButtonLink to="/settings?tab=installation" variant="secondary">Installation code</ButtonLink>}
        />
      ) : wide ? (
        <SubscribersTable siteId={siteId} subscribers={query.data.subscribers} timeZone={timeZone} actions={rowActions} />
      ) : (
        <SubscriberCards siteId={siteId} subscribers={query.data.subscribers} timeZone={timeZone} actions={rowActions} />
      )}

      {data && pages > 1 ? (
        <Pager
          page={page}
          pages={pages}
          // Next and Previous read the neighbouring page from its cursor (a deep page costs one page); page 1 needs none.
          onPrevious={() => setAt(page <= 2 || !data.cursors.previous ? { page: Math.max(1, page - 1) } : { page: page - 1, before: data.cursors.previous })}
          onNext={() => setAt(data.cursors.next ? { page: Math.min(pages, page + 1), after: data.cursors.next } : { page: Math.min(pages, page + 1) })}
        />
      ) : null}
    </>
  );
}

/** What a row's buttons do, and which row is busy with what. */
interface RowActions {
  onRemove: (subscriber: Subscriber) => void;
  removingId: string | null;
  onErase: (subscriber: Subscriber) => void;
  erasingId: string | null;
  onDownloadData: (subscriber: Subscriber) => void;
  downloadingId: string | null;
}

interface ListProps {
  siteId: string;
  subscribers: Subscriber[];
  timeZone: string;
  actions: RowActions;
}

/**
 * Herald's export: the subscribers the search and status match, as CSV; with
 * the push keys only when asked, for moving to another push server (an
 * admin's, like removing: it is the audience's personal data).
 */
function ExportPanel({ siteId, active, search }: { siteId: string; active: ActiveFilter; search: string }) {
  const checkboxId = useId();
  const warningId = useId();
  const permission = usePermission('admin', 'export subscribers');
  const [includeKeys, setIncludeKeys] = useState(false);
  const [exporting, setExporting] = useState(false);

  async function onExport() {
    setExporting(true);
    try {
      await downloadSubscribersCsv(siteId, { active, search }, includeKeys);
    } catch (error) {
      notify(errorMessage(error, TEXTS.exportFailed));
    } finally {
      setExporting(false);
    }
  }

  return (
    <Card className="mb-4 flex flex-col gap-3 p-4">
      <div className="flex flex-col gap-3 md:flex-row md:items-center md:justify-between">
        <div className="flex min-w-0 flex-col gap-2">
          <p className="text-sm text-slate-600">{TEXTS.exportDescription}</p>
          <div className="flex items-center gap-2">
            <input
              id={checkboxId}
              type="checkbox"
              className="size-4 shrink-0 rounded border-slate-400 accent-indigo-600"
              checked={includeKeys}
              disabled={!permission.allowed}
              aria-describedby={includeKeys ? warningId : undefined}
              onChange={(event) => setIncludeKeys(event.target.checked)}
            />
            <label htmlFor={checkboxId} className="text-sm font-medium text-slate-800">
              {TEXTS.includeKeys}
            </label>
          </div>
        </div>
        <RoleGatedButton
          needed="admin"
          action="export subscribers"
          variant="secondary"
          size="sm"
          className="self-start md:self-center"
          loading={exporting}
          onClick={() => void onExport()}
          icon={<Download className="size-4" aria-hidden="true" />}
        >
          {TEXTS.exportButton}
        </RoleGatedButton>
      </div>
      {includeKeys ? (
        <div id={warningId}>
          <Alert tone="warning">{TEXTS.keysWarning}</Alert>
        </div>
      ) : null}
    </Card>
  );
}

function StatusBadge({ active }: { active: boolean }) {
  return <Badge tone={active ? 'success' : 'neutral'}>{active ? 'Active' : 'Inactive'}</Badge>;
}

function Tags({ tags }: { tags: string[] }) {
  if (tags.length === 0) return null;
  return (
    <ul className="flex flex-wrap gap-1" aria-label="Tags">
      {tags.map((tag) => (
        <li key={tag}>
          <Badge tone="accent">{tag}</Badge>
        </li>
      ))}
    </ul>
  );
}

function LastSeen({ value, timeZone }: { value: string | null; timeZone: string }) {
  return value ? <DateTime value={value} timeZone={timeZone} /> : <span>Never</span>;
}

function RemoveButton({ subscriber, actions: { onRemove, removingId } }: { subscriber: Subscriber; actions: RowActions }) {
  // Removal unsubscribes; an inactive subscriber has nothing left to remove.
  if (!subscriber.is_active) return null;
  return (
    <RoleGatedButton
      needed="admin"
      action="remove subscribers"
      variant="danger-ghost"
      size="sm"
      onClick={() => onRemove(subscriber)}
      disabled={removingId !== null}
      loading={removingId === subscriber.id}
      icon={<Trash2 className="size-4" aria-hidden="true" />}
    >
      Remove
    </RoleGatedButton>
  );
}

/** A button's text: in the table's narrow actions column only an icon shows, the words stay for screen readers and as a tooltip. */
function ActionLabel({ text, compact }: { text: string; compact: boolean }) {
  return compact ? <span className="sr-only">{text}</span> : <>{text}</>;
}

/**
 * Herald's privacy actions, for every subscriber, active or not: its data as
 * a file, and erasing it for good. `compact`: icons only (the table).
 */
function PrivacyButtons({ subscriber, actions, compact = false }: { subscriber: Subscriber; actions: RowActions; compact?: boolean }) {
  const busy = actions.erasingId !== null;
  // px-1.5! wins over the size's px-3: an icon button is as narrow as it looks.
  const iconOnly = compact ? 'px-1.5!' : undefined;
  return (
    <>
      <RoleGatedButton
        needed="admin"
        action="download subscriber data"
        variant="ghost"
        size="sm"
        className={iconOnly}
        title={compact ? TEXTS.downloadData : undefined}
        onClick={() => actions.onDownloadData(subscriber)}
        loading={actions.downloadingId === subscriber.id}
        icon={<FileJson className="size-4" aria-hidden="true" />}
      >
        <ActionLabel text={TEXTS.downloadData} compact={compact} />
      </RoleGatedButton>
      <RoleGatedButton
        needed="admin"
        action="erase subscribers"
        variant="danger-ghost"
        size="sm"
        className={iconOnly}
        title={compact ? TEXTS.erase : undefined}
        onClick={() => actions.onErase(subscriber)}
        disabled={busy}
        loading={actions.erasingId === subscriber.id}
        icon={<Eraser className="size-4" aria-hidden="true" />}
      >
        <ActionLabel text={TEXTS.erase} compact={compact} />
      </RoleGatedButton>
    </>
  );
}

/**
 * Test devices (issue 12): the owner's own browsers, which "Send test"
 * reaches and nobody else. Marked here or from the checklist's test-device link.
 */
function TestDeviceControls({ siteId, subscriber }: { siteId: string; subscriber: Subscriber }) {
  const update = useSetTestDeviceMutation(siteId);
  const [renaming, setRenaming] = useState(false);
  const [name, setName] = useState('');
  const nameId = useId();
  const fail = (error: unknown) => notify(errorMessage(error, 'The test device could not be changed. Please try again.'));

  if (!subscriber.test_device) {
    if (!subscriber.is_active) return null;
    return (
      <Button
        variant="ghost"
        size="sm"
        loading={update.isPending}
        icon={<FlaskConical className="size-4" aria-hidden="true" />}
        onClick={() => update.mutate({ id: subscriber.id, enabled: true }, { onError: fail })}
      >
        Make test device
      </Button>
    );
  }
  if (renaming) {
    const save = (event: FormEvent) => {
      event.preventDefault();
      update.mutate({ id: subscriber.id, enabled: true, name }, { onSuccess: () => setRenaming(false), onError: fail });
    };
    return (
      <form onSubmit={save} className="flex flex-wrap items-center justify-end gap-2">
        <label htmlFor={nameId} className="sr-only">
          Test device name
        </label>
        <Input id={nameId} value={name} onChange={(event) => setName(event.target.value)} maxLength={60} className="h-8 w-44" autoFocus />
        <Button type="submit" size="sm" loading={update.isPending}>
          Save
        </Button>
        <Button variant="ghost" size="sm" onClick={() => setRenaming(false)}>
          Cancel
        </Button>
      </form>
    );
  }
  return (
    <div className="flex flex-wrap justify-end gap-1">
      <Button
        variant="ghost"
        size="sm"
        onClick={() => {
          setName(subscriber.test_device_name ?? '');
          setRenaming(true);
        }}
      >
        Rename
      </Button>
      <Button variant="ghost" size="sm" loading={update.isPending} onClick={() => update.mutate({ id: subscriber.id, enabled: false }, { onError: fail })}>
        Not a test device
      </Button>
    </div>
  );
}

function TestDeviceBadge({ subscriber }: { subscriber: Subscriber }) {
  if (!subscriber.test_device) return null;
  return (
    <div className="flex flex-col items-start gap-0.5">
      <Badge tone="info" className="whitespace-nowrap">
        <FlaskConical className="size-3 shrink-0" aria-hidden="true" />
        <span className="sr-only">Test device: {subscriber.test_device_name}</span>
        <span aria-hidden="true">Test device</span>
      </Badge>
      <span className="text-xs break-words text-slate-600" aria-hidden="true">
        {subscriber.test_device_name}
      </span>
    </div>
  );
}

function SubscribersTable({ siteId, subscribers, timeZone, actions }: ListProps) {
  return (
    <Card className="overflow-x-auto">
      <table className="min-w-full text-left text-sm">
        <caption className="sr-only">Subscribers</caption>
        <thead className="border-b border-slate-200 bg-slate-50 text-xs text-slate-600 uppercase">
          <tr>
            <th scope="col" className="px-4 py-3 font-semibold">Browser</th>
            <th scope="col" className="px-4 py-3 font-semibold">OS</th>
            <th scope="col" className="px-4 py-3 font-semibold">Country</th>
            <th scope="col" className="px-4 py-3 font-semibold">Subscribed</th>
            <th scope="col" className="px-4 py-3 font-semibold">Last Seen</th>
            <th scope="col" className="px-4 py-3 font-semibold">Status</th>
            <th scope="col" className="px-4 py-3 font-semibold">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-200">
          {subscribers.map((subscriber) => (
            <tr key={subscriber.id} data-testid={`subscriber-${subscriber.id}`} className="align-top">
              <td className="px-4 py-3">
                <span className="font-medium text-slate-900">{orUnknown(subscriber.browser)}</span>
                <div className="mt-1 flex flex-col items-start gap-1">
                  <TestDeviceBadge subscriber={subscriber} />
                  <Tags tags={subscriber.tags} />
                </div>
              </td>
              <td className="px-4 py-3 text-slate-700">{orUnknown(subscriber.os)}</td>
              <td className="px-4 py-3 text-slate-700">{countryLabel(subscriber.country)}</td>
              <td className="px-4 py-3 whitespace-nowrap text-slate-700">
                <DateTime value={subscriber.subscribed_at} timeZone={timeZone} dateOnly />
              </td>
              <td className="px-4 py-3 whitespace-nowrap text-slate-700">
                <LastSeen value={subscriber.last_seen_at} timeZone={timeZone} />
              </td>
              <td className="px-4 py-3">
                <StatusBadge active={subscriber.is_active} />
              </td>
              <td className="px-4 py-2 text-right">
                {/* Wide enough for Remove and the two icons on one line. */}
                <div className="ml-auto flex min-w-44 flex-wrap items-center justify-end gap-1">
                  <TestDeviceControls siteId={siteId} subscriber={subscriber} />
                  <RemoveButton subscriber={subscriber} actions={actions} />
                  <PrivacyButtons subscriber={subscriber} actions={actions} compact />
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Card>
  );
}

function SubscriberCards({ siteId, subscribers, timeZone, actions }: ListProps) {
  return (
    <ul className="flex flex-col gap-3" aria-label="Subscribers">
      {subscribers.map((subscriber) => (
        <li key={subscriber.id} data-testid={`subscriber-${subscriber.id}`}>
          <Card className="flex flex-col gap-3 p-4">
            <div className="flex items-start justify-between gap-3">
              <p className="min-w-0 font-medium text-slate-900">{orUnknown(subscriber.browser)}</p>
              <StatusBadge active={subscriber.is_active} />
            </div>
            <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1 text-sm">
              <dt className="text-slate-600">OS</dt>
              <dd className="text-slate-900">{orUnknown(subscriber.os)}</dd>
              <dt className="text-slate-600">Country</dt>
              <dd className="text-slate-900">{countryLabel(subscriber.country)}</dd>
              <dt className="text-slate-600">Subscribed</dt>
              <dd className="text-slate-900">
                <DateTime value={subscriber.subscribed_at} timeZone={timeZone} dateOnly />
              </dd>
              <dt className="text-slate-600">Last Seen</dt>
              <dd className="text-slate-900">
                <LastSeen value={subscriber.last_seen_at} timeZone={timeZone} />
              </dd>
            </dl>
            <TestDeviceBadge subscriber={subscriber} />
            <Tags tags={subscriber.tags} />
            <div className="flex flex-wrap items-center justify-between gap-2 border-t border-slate-200 pt-2">
              <RemoveButton subscriber={subscriber} actions={actions} />
              <TestDeviceControls siteId={siteId} subscriber={subscriber} />
            </div>
            <div className="flex flex-wrap items-center gap-2">
              <PrivacyButtons subscriber={subscriber} actions={actions} />
            </div>
          </Card>
        </li>
      ))}
    </ul>
  );
}
