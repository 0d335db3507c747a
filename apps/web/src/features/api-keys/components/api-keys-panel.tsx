import { API_KEY_NAME_MAX, createApiKeyBody, type ApiKey, type CreatedApiKey, type Site } from '@herald/contracts';
import { zodResolver } from '@hookform/resolvers/zod';
import { KeySquare, Plus, Trash2 } from 'lucide-react';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import type { z } from 'zod';
import { Alert, Button, Card, CardContent, CardDescription, CardHeader, CardTitle, CodeBlock, EmptyState, Field, Input, Spinner } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { confirmAction, notify } from '../../../lib/dialogs';
import { useApiKeysQuery, useCreateApiKeyMutation, useRevokeApiKeyMutation } from '../api';
import { formatDateTime } from '../format-date-time';

type CreateKeyForm = z.input<typeof createApiKeyBody>;

/** The key just created: shown once, until the owner says they have stored it. */
function NewKeyNotice({ created, onDone }: { created: CreatedApiKey; onDone: () => void }) {
  return (
    <section aria-labelledby="new-api-key-title" className="flex flex-col gap-4 rounded-lg border border-amber-300 bg-amber-50/60 p-4">
      <h3 id="new-api-key-title" className="text-sm font-semibold text-slate-900">
        Your new API key “{created.api_key.name}”
      </h3>
      <Alert tone="warning" title="Copy this key now: it will not be shown again">
        Herald keeps only a fingerprint of it. Store it in your backend&apos;s secret settings, never in your website&apos;s pages or code
        repositories. If it is lost or leaked, revoke it and create a new one.
      </Alert>
      <CodeBlock code={created.key} label={`API key ${created.api_key.name}`} />
      <div>
        <Button variant="secondary" onClick={onDone}>
          I have copied the key
        </Button>
      </div>
    </section>
  );
}

function CreateKeyForm({ site, onCreated }: { site: Site; onCreated: (created: CreatedApiKey) => void }) {
  const mutation = useCreateApiKeyMutation(site.id);
  const form = useForm<CreateKeyForm>({ resolver: zodResolver(createApiKeyBody), defaultValues: { name: '' } });
  const { errors } = form.formState;

  const onSubmit = form.handleSubmit((values) =>
    mutation.mutate(values.name.trim(), {
      onSuccess: (created) => {
        form.reset({ name: '' });
        onCreated(created);
      },
    }),
  );

  return (
    <form onSubmit={(event) => void onSubmit(event)} noValidate aria-label="Create an API key" className="flex flex-col gap-3">
      <div className="flex flex-col gap-3 sm:flex-row sm:items-start">
        <Field label="Key name" required error={errors.name?.message} hint="Where the key will be used, e.g. “Shop backend”." className="flex-1">
          {(control) => <Input {...control} {...form.register('name')} maxLength={API_KEY_NAME_MAX} autoComplete="off" placeholder="Shop backend" />}
        </Field>
        <Button type="submit" loading={mutation.isPending} icon={<Plus className="size-4" aria-hidden="true" />} className="sm:mt-6">
          Create API Key
        </Button>
      </div>
      {mutation.isError ? <Alert tone="error">{errorMessage(mutation.error, 'Failed to create API key')}</Alert> : null}
    </form>
  );
}

function KeyRow({ apiKey, site }: { apiKey: ApiKey; site: Site }) {
  const mutation = useRevokeApiKeyMutation(site.id);

  function onRevoke() {
    if (!confirmAction(`Are you sure you want to revoke the API key "${apiKey.name}"? Requests that use it will be refused at once.`)) return;
    mutation.mutate(apiKey.id, { onError: (error) => notify(errorMessage(error, 'Failed to revoke API key')) });
  }

  return (
    <li className="flex flex-col gap-3 py-4 sm:flex-row sm:items-center sm:justify-between">
      <div className="flex min-w-0 flex-col gap-1">
        <p className="truncate text-sm font-semibold text-slate-900">{apiKey.name}</p>
        <p className="text-sm text-slate-600">
          <code className="rounded bg-slate-100 px-1.5 py-0.5 font-mono text-xs text-slate-800" aria-label={`Key starting with ${apiKey.prefix}`}>
            {apiKey.prefix}…
          </code>
        </p>
        <p className="text-xs text-slate-600">
          Created {formatDateTime(apiKey.created_at, site.settings.timezone)} · Last used{' '}
          {apiKey.last_used_at ? formatDateTime(apiKey.last_used_at, site.settings.timezone) : 'Never'}
        </p>
      </div>
      <Button
        variant="secondary"
        size="sm"
        onClick={onRevoke}
        loading={mutation.isPending}
        icon={<Trash2 className="size-4" aria-hidden="true" />}
        aria-label={`Revoke ${apiKey.name}`}
        className="self-start sm:self-auto"
      >
        Revoke
      </Button>
    </li>
  );
}

/** Settings → API Keys: keys a site's backend uses to send events to Herald's v1 API. */
export function ApiKeysPanel({ site }: { site: Site }) {
  const query = useApiKeysQuery(site.id);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);

  return (
    <Card>
      <CardHeader>
        <CardTitle>API Keys</CardTitle>
        <CardDescription>
          Your site&apos;s backend sends events to Herald with an API key (see the Automation tab). Each key works for {site.name} only and can be
          revoked at any time.
        </CardDescription>
      </CardHeader>
      <CardContent className="flex flex-col gap-6">
        <CreateKeyForm site={site} onCreated={setCreated} />
        {created ? <NewKeyNotice created={created} onDone={() => setCreated(null)} /> : null}
        <section aria-labelledby="api-keys-list-title" className="flex flex-col gap-2">
          <h3 id="api-keys-list-title" className="text-sm font-semibold text-slate-900">
            Active keys
          </h3>
          {query.isPending ? (
            <p className="flex items-center gap-2 text-sm text-slate-600" role="status">
              <Spinner /> Loading API keys...
            </p>
          ) : query.isError ? (
            <div className="flex flex-col items-start gap-3">
              <Alert tone="error">{errorMessage(query.error, 'Failed to load API keys')}</Alert>
              <Button variant="secondary" size="sm" onClick={() => void query.refetch()}>
                Try again
              </Button>
            </div>
          ) : query.data.length === 0 ? (
            <EmptyState
              headingLevel="h3"
              icon={<KeySquare className="size-6" />}
              title="No API keys yet"
              description="Create one when your backend is ready to send events."
            />
          ) : (
            <ul className="divide-y divide-slate-200" aria-label="API keys">
              {query.data.map((apiKey) => (
                <KeyRow key={apiKey.id} apiKey={apiKey} site={site} />
              ))}
            </ul>
          )}
        </section>
      </CardContent>
    </Card>
  );
}
