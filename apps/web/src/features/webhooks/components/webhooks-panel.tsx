import { WEBHOOK_EVENT_LABELS, WEBHOOK_EVENT_TYPES, createWebhookBody, type CreatedWebhook, type Site, type Webhook, type WebhookAttempt, type WebhookEventType } from '@herald/contracts';
import { ListChecks, Plus, Send, Trash2, Webhook as WebhookIcon } from 'lucide-react';
import { useId, useState, type FormEvent } from 'react';
import { Alert, Badge, Button, Card, CardContent, CardDescription, CardHeader, CardTitle, CodeBlock, EmptyState, Field, Input, Spinner, formatDateTime } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { confirmAction, notify } from '../../../lib/dialogs';
import { useCreateWebhookMutation, useDeleteWebhookMutation, useTestWebhookMutation, useWebhookDeliveriesQuery, useWebhooksQuery } from '../api';

/** The secret just created: shown once, until the admin says they have stored it. */
function NewSecretNotice({ created, onDone }: { created: CreatedWebhook; onDone: () => void }) {
  return (
    <section aria-labelledby="new-webhook-title" className="flex flex-col gap-4 rounded-lg border border-amber-300 bg-amber-50/60 p-4">
      <h3 id="new-webhook-title" className="text-sm font-semibold text-slate-900">
        Signing secret of the webhook to <span className="break-all">{created.url}</span>
      </h3>
      <Alert tone="warning" title="Copy this secret now: it will not be shown again">
        Your endpoint uses it to check that each request comes from Herald (the <code>webhook-signature</code> header, as the Standard Webhooks
        specification says). Keep it in your server&apos;s secret settings. If it is lost or leaked, delete the webhook and add it again.
      </Alert>
      <CodeBlock code={created.secret} label="Webhook signing secret" />
      <div>
        <Button variant="secondary" onClick={onDone}>
          I have copied the secret
        </Button>
      </div>
    </section>
  );
}

function AddWebhookForm({ site, onCreated }: { site: Site; onCreated: (created: CreatedWebhook) => void }) {
  const mutation = useCreateWebhookMutation(site.id);
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<WebhookEventType[]>([]);
  const [errors, setErrors] = useState<{ url?: string; events?: string }>({});
  const legendId = useId();

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    const parsed = createWebhookBody.safeParse({ url, events });
    if (!parsed.success) {
      const issues = parsed.error.issues;
      setErrors({ url: issues.find((issue) => issue.path[0] === 'url')?.message, events: issues.find((issue) => issue.path[0] === 'events')?.message });
      return;
    }
    setErrors({});
    mutation.mutate(parsed.data, {
      onSuccess: (created) => {
        setUrl('');
        setEvents([]);
        onCreated(created);
      },
    });
  }

  const toggle = (type: WebhookEventType, checked: boolean) => setEvents((current) => (checked ? [...current, type] : current.filter((t) => t !== type)));

  return (
    <form onSubmit={onSubmit} noValidate aria-label="Add a webhook" className="flex flex-col gap-4">
      <Field label="Endpoint URL" required error={errors.url} hint="Herald POSTs signed JSON events here, e.g. https://shop.example/hooks/herald.">
        {(control) => <Input {...control} value={url} onChange={(e) => setUrl(e.target.value)} type="url" autoComplete="off" placeholder="https://shop.example/hooks/herald" />}
      </Field>
      <fieldset aria-labelledby={legendId} className="flex flex-col gap-2">
        <legend id={legendId} className="text-sm font-medium text-slate-900">
          Events <span className="text-red-700">*</span>
        </legend>
        {WEBHOOK_EVENT_TYPES.map((type) => (
          <label key={type} className="flex items-start gap-2 text-sm text-slate-700">
            <input type="checkbox" className="mt-0.5 size-4" checked={events.includes(type)} onChange={(e) => toggle(type, e.target.checked)} />
            <span>
              <code className="font-mono text-xs text-slate-900">{type}</code> — {WEBHOOK_EVENT_LABELS[type]}
            </span>
          </label>
        ))}
        {errors.events ? (
          <p className="text-sm text-red-700" role="alert">
            {errors.events}
          </p>
        ) : null}
      </fieldset>
      <div>
        <Button type="submit" loading={mutation.isPending} icon={<Plus className="size-4" aria-hidden="true" />}>
          Add webhook
        </Button>
      </div>
      {mutation.isError ? <Alert tone="error">{errorMessage(mutation.error, 'Failed to add webhook')}</Alert> : null}
    </form>
  );
}

function attemptResult(attempt: WebhookAttempt, timeZone: string): string {
  if (attempt.error === null) return 'Delivered';
  if (attempt.delivery_status === 'delivered') return `${attempt.error} (delivered later)`;
  if (attempt.delivery_status === 'failed') return `${attempt.error} (gave up)`;
  return attempt.next_attempt_at ? `${attempt.error} (next try ${formatDateTime(attempt.next_attempt_at, { timeZone })})` : attempt.error;
}

function DeliveryLog({ webhook, site }: { webhook: Webhook; site: Site }) {
  const query = useWebhookDeliveriesQuery(webhook.id, true);
  const timeZone = site.settings.timezone;
  if (query.isPending) {
    return (
      <p className="flex items-center gap-2 text-sm text-slate-600" role="status">
        <Spinner /> Loading the delivery log...
      </p>
    );
  }
  if (query.isError) {
    return (
      <div className="flex flex-col items-start gap-3">
        <Alert tone="error">{errorMessage(query.error, 'Failed to load the delivery log')}</Alert>
        <Button variant="secondary" size="sm" onClick={() => void query.refetch()}>
          Try again
        </Button>
      </div>
    );
  }
  if (!query.data.length) return <p className="text-sm text-slate-600">No deliveries yet. Events appear here with each attempt and the status code your endpoint answered.</p>;
  return (
    <div className="overflow-x-auto">
      <table className="w-full min-w-[36rem] text-left text-sm" aria-label={`Delivery log of ${webhook.url}`}>
        <thead className="text-xs uppercase text-slate-600">
          <tr>
            <th scope="col" className="py-2 pr-3 font-medium">Time</th>
            <th scope="col" className="py-2 pr-3 font-medium">Event</th>
            <th scope="col" className="py-2 pr-3 font-medium">Attempt</th>
            <th scope="col" className="py-2 pr-3 font-medium">Status code</th>
            <th scope="col" className="py-2 font-medium">Result</th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-200">
          {query.data.map((attempt) => (
            <tr key={attempt.id}>
              <td className="py-2 pr-3 whitespace-nowrap text-slate-700">{formatDateTime(attempt.attempted_at, { timeZone })}</td>
              <td className="py-2 pr-3 font-mono text-xs text-slate-900">{attempt.event_type}</td>
              <td className="py-2 pr-3 text-slate-700">{attempt.attempt}</td>
              <td className="py-2 pr-3">
                <Badge tone={attempt.status_code !== null && attempt.status_code >= 200 && attempt.status_code < 300 ? 'success' : 'danger'}>{attempt.status_code ?? 'No answer'}</Badge>
              </td>
              <td className="py-2 text-slate-700">{attemptResult(attempt, timeZone)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function WebhookRow({ webhook, site }: { webhook: Webhook; site: Site }) {
  const remove = useDeleteWebhookMutation(site.id);
  const test = useTestWebhookMutation(webhook.id);
  const [showLog, setShowLog] = useState(false);

  function onDelete() {
    if (!confirmAction(`Delete the webhook to ${webhook.url}? Its pending events and delivery log are deleted too.`)) return;
    remove.mutate(webhook.id, { onError: (error) => notify(errorMessage(error, 'Failed to delete webhook')) });
  }

  const tested = test.data;
  return (
    <li className="flex flex-col gap-3 py-4">
      <div className="flex flex-col gap-3 sm:flex-row sm:items-start sm:justify-between">
        <div className="flex min-w-0 flex-col gap-1">
          <p className="text-sm font-semibold break-all text-slate-900">{webhook.url}</p>
          <p className="flex flex-wrap gap-1" aria-label="Events">
            {webhook.events.map((type) => (
              <Badge key={type}>{type}</Badge>
            ))}
          </p>
          <p className="text-xs text-slate-600">Added {formatDateTime(webhook.created_at, { timeZone: site.settings.timezone })}</p>
        </div>
        <div className="flex flex-wrap gap-2">
          <Button variant="secondary" size="sm" onClick={() => test.mutate()} loading={test.isPending} icon={<Send className="size-4" aria-hidden="true" />} aria-label={`Send test event to ${webhook.url}`}>
            Send test event
          </Button>
          <Button variant="secondary" size="sm" onClick={() => setShowLog((v) => !v)} aria-expanded={showLog} icon={<ListChecks className="size-4" aria-hidden="true" />} aria-label={`Delivery log of ${webhook.url}`}>
            {showLog ? 'Hide delivery log' : 'Delivery log'}
          </Button>
          <Button variant="secondary" size="sm" onClick={onDelete} loading={remove.isPending} icon={<Trash2 className="size-4" aria-hidden="true" />} aria-label={`Delete the webhook to ${webhook.url}`}>
            Delete
          </Button>
        </div>
      </div>
      {tested ? (
        <Alert tone={tested.error === null ? 'success' : 'error'}>
          {tested.error === null ? `Test event delivered: your endpoint answered ${tested.status_code}.` : `Test event not delivered: ${tested.error}. Herald will try again.`}
        </Alert>
      ) : null}
      {test.isError ? <Alert tone="error">{errorMessage(test.error, 'Failed to send test event')}</Alert> : null}
      {showLog ? <DeliveryLog webhook={webhook} site={site} /> : null}
    </li>
  );
}

/** Settings → Webhooks: endpoints of the site's own servers that Herald tells of subscribers, sends and clicks. */
export function WebhooksPanel({ site }: { site: Site }) {
  const query = useWebhooksQuery(site.id);
  const [created, setCreated] = useState<CreatedWebhook | null>(null);

  return (
    <Card>
      <CardHeader>
        <CardTitle>Webhooks</CardTitle>
        <CardDescription>
          Herald POSTs signed events about {site.name} to your endpoints: new and removed subscribers, finished sends with their counts, and clicks
          (at most once a minute). A failed delivery is retried for 24 hours.
        </CardDescription>
      </CardHeader>
      <CardContent className="flex flex-col gap-6">
        <AddWebhookForm site={site} onCreated={setCreated} />
        {created ? <NewSecretNotice created={created} onDone={() => setCreated(null)} /> : null}
        <section aria-labelledby="webhooks-list-title" className="flex flex-col gap-2">
          <h3 id="webhooks-list-title" className="text-sm font-semibold text-slate-900">
            Your webhooks
          </h3>
          {query.isPending ? (
            <p className="flex items-center gap-2 text-sm text-slate-600" role="status">
              <Spinner /> Loading webhooks...
            </p>
          ) : query.isError ? (
            <div className="flex flex-col items-start gap-3">
              <Alert tone="error">{errorMessage(query.error, 'Failed to load webhooks')}</Alert>
              <Button variant="secondary" size="sm" onClick={() => void query.refetch()}>
                Try again
              </Button>
            </div>
          ) : query.data.length === 0 ? (
            <EmptyState headingLevel="h3" icon={<WebhookIcon className="size-6" />} title="No webhooks yet" description="Add one to have your servers told of subscribers, sends and clicks." />
          ) : (
            <ul className="divide-y divide-slate-200" aria-label="Webhooks">
              {query.data.map((webhook) => (
                <WebhookRow key={webhook.id} webhook={webhook} site={site} />
              ))}
            </ul>
          )}
        </section>
      </CardContent>
    </Card>
  );
}
