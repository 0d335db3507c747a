import type { Site, SiteEvent } from '@herald/contracts';
import { Activity, RefreshCw } from 'lucide-react';
import { Alert, Badge, Button, Card, CardContent, CardDescription, CardHeader, CardTitle, CodeBlock, EmptyState, Spinner } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { useSiteEventsQuery } from '../api';
import { formatDateTime } from '../format-date-time';

/** Herald serves the dashboard and the API from one origin, so the page's origin is the API's. */
function heraldOrigin(): string {
  return window.location.origin;
}

export function browserExample(): string {
  return [
    '// On a page with the Herald snippet, in a subscribed browser:',
    "herald.track('cart_abandoned', { items: 2, total: 49.5 });",
    '',
    '// A retried call with the same key counts once:',
    "herald.track('purchase', { amount: 49.5 }, { idempotencyKey: 'order-1001' });",
    '',
    '// Your own user id, so your backend can address this person,',
    '// with the hash your server computed for it (Identity verification above):',
    "herald.identify('customer-42', identityHashFromYourServer);",
  ].join('\n');
}

export function curlExample(siteId: string, origin: string): string {
  const body = JSON.stringify({ event: 'order_shipped', external_id: 'customer-42', data: { order: 1001 }, idempotency_key: 'order-1001-shipped' });
  return [
    `curl -X POST ${origin}/api/v1/sites/${siteId}/events \\`,
    '  -H "Authorization: Bearer $HERALD_API_KEY" \\',
    '  -H "Content-Type: application/json" \\',
    `  -d '${body}'`,
  ].join('\n');
}

function summariseData(data: SiteEvent['data']): string | null {
  if (!data) return null;
  const text = JSON.stringify(data);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

function triggeredText(event: SiteEvent): string {
  if (event.subscribers === 0) return 'No active subscriber matched';
  if (event.triggered === 0) return 'No notification sent';
  return event.triggered === 1 ? '1 notification scheduled' : `${event.triggered} notifications scheduled`;
}

function EventRow({ event, site }: { event: SiteEvent; site: Site }) {
  const data = summariseData(event.data);
  const who = event.external_id ? `User ${event.external_id}` : event.subscriber_id ? `Subscriber ${event.subscriber_id.slice(0, 8)}` : null;
  return (
    <li className="flex flex-col gap-1.5 py-3 sm:flex-row sm:items-start sm:justify-between sm:gap-4">
      <div className="flex min-w-0 flex-col gap-1">
        <div className="flex flex-wrap items-center gap-2">
          <code className="font-mono text-sm font-semibold break-all text-slate-900">{event.event}</code>
          <Badge tone={event.source === 'api' ? 'accent' : 'info'}>{event.source === 'api' ? 'API' : 'Browser'}</Badge>
        </div>
        <p className="text-xs text-slate-600">
          {who ? `${who} · ` : ''}
          {triggeredText(event)}
        </p>
        {data ? <p className="font-mono text-xs break-all text-slate-600">{data}</p> : null}
      </div>
      <p className="shrink-0 text-xs text-slate-600">
        <time dateTime={event.received_at}>{formatDateTime(event.received_at, site.settings.timezone)}</time>
      </p>
    </li>
  );
}

function RecentEvents({ site }: { site: Site }) {
  const query = useSiteEventsQuery(site.id);
  return (
    <Card>
      <CardHeader>
        <div className="flex flex-wrap items-start justify-between gap-3">
          <div className="flex min-w-0 flex-col gap-1">
            <CardTitle>Recent events</CardTitle>
            <CardDescription>The latest events Herald received for {site.name}, newest first (kept for 30 days).</CardDescription>
          </div>
          <Button
            variant="secondary"
            size="sm"
            onClick={() => void query.refetch()}
            loading={query.isFetching}
            icon={<RefreshCw className="size-4" aria-hidden="true" />}
          >
            Refresh
          </Button>
        </div>
      </CardHeader>
      <CardContent>
        {query.isPending ? (
          <p className="flex items-center gap-2 text-sm text-slate-600" role="status">
            <Spinner /> Loading events...
          </p>
        ) : query.isError ? (
          <Alert tone="error">{errorMessage(query.error, 'Failed to load events')}</Alert>
        ) : query.data.length === 0 ? (
          <EmptyState
            headingLevel="h3"
            icon={<Activity className="size-6" />}
            title="No events received yet"
            description="Events appear here as soon as your site sends them with herald.track() or the events API."
          />
        ) : (
          <ul className="divide-y divide-slate-200" aria-label="Recent events">
            {query.data.map((event) => (
              <EventRow key={event.id} event={event} site={site} />
            ))}
          </ul>
        )}
      </CardContent>
    </Card>
  );
}

/** Settings → Automation: how events reach Herald and fire triggered notifications, and what arrived lately. */
export function AutomationPanel({ site }: { site: Site }) {
  return (
    <div className="flex flex-col gap-6">
      <Card>
        <CardHeader>
          <CardTitle>How automation works</CardTitle>
          <CardDescription>
            A triggered notification is sent to one subscriber when your site reports an event with its name, after the delay you choose. Create one
            under Notifications → New Notification with the type TRIGGERED and the event name, for example{' '}
            <code className="rounded bg-slate-100 px-1 py-0.5 font-mono text-xs text-slate-800">cart_abandoned</code>.
          </CardDescription>
        </CardHeader>
        <CardContent className="flex flex-col gap-6">
          <section aria-labelledby="automation-browser-title" className="flex flex-col gap-2">
            <h3 id="automation-browser-title" className="text-sm font-semibold text-slate-900">
              1. From the browser, with the Herald snippet
            </h3>
            <p className="text-sm text-slate-600">
              Call <code className="rounded bg-slate-100 px-1 py-0.5 font-mono text-xs text-slate-800">herald.track()</code> on your pages. The event is
              about the subscriber in that browser; nothing is sent for visitors who have not subscribed.
            </p>
            <CodeBlock code={browserExample()} label="Browser example" />
          </section>
          <section aria-labelledby="automation-backend-title" className="flex flex-col gap-2">
            <h3 id="automation-backend-title" className="text-sm font-semibold text-slate-900">
              2. From your backend, with an API key
            </h3>
            <p className="text-sm text-slate-600">
              Send the event to the events API with a key from the API Keys tab. Address a person by the{' '}
              <code className="rounded bg-slate-100 px-1 py-0.5 font-mono text-xs text-slate-800">external_id</code> you gave them with{' '}
              <code className="rounded bg-slate-100 px-1 py-0.5 font-mono text-xs text-slate-800">herald.identify()</code> (all their subscribed browsers
              receive it), or one browser by its{' '}
              <code className="rounded bg-slate-100 px-1 py-0.5 font-mono text-xs text-slate-800">subscriber_id</code>. The same{' '}
              <code className="rounded bg-slate-100 px-1 py-0.5 font-mono text-xs text-slate-800">idempotency_key</code> sent twice counts once.
            </p>
            <CodeBlock code={curlExample(site.id, heraldOrigin())} label="curl example" />
            <p className="text-sm text-slate-600">
              <code className="rounded bg-slate-100 px-1 py-0.5 font-mono text-xs text-slate-800">herald.identify()</code> runs in the visitor&apos;s
              browser. With identity verification on, an external id only counts when your server signed it; with it off, an external id is what
              that browser claims, not proof of who it is.
            </p>
          </section>
        </CardContent>
      </Card>
      <RecentEvents site={site} />
    </div>
  );
}
