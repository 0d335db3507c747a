import { importVapidKeyBody, roleNeededMessage, type ImportVapidKeyBody, type Site, type VapidKey } from '@herald/contracts';
import { zodResolver } from '@hookform/resolvers/zod';
import { Lock, Star, Trash2, Upload } from 'lucide-react';
import { useForm } from 'react-hook-form';
import { RoleGatedButton } from '../../../components/role-gate';
import { Alert, Badge, Card, CardContent, CardDescription, CardHeader, CardTitle, CodeBlock, Field, Spinner, Textarea, Tooltip } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { confirmAction, notify } from '../../../lib/dialogs';
import { SETTINGS_HELP } from '../../../lib/help-texts';
import { usePermission } from '../../../lib/site-role';
import { useImportVapidKeyMutation, useMakePrimaryVapidKeyMutation, useRetireVapidKeyMutation, useVapidKeysQuery } from '../api';

/** The API never returns a private key (spec §2: "the private key masked"), so a fixed mask stands in for it. */
const PRIVATE_KEY_MASK = '••••••••••••••••••••••••••••••••••••••••••••';

/** Keys are the site's settings: admins and owners (docs/product.md §6; docs/security.md, "Tenancy"). */
const KEYS_ACTION = 'manage VAPID keys';

function MaskedPrivateKey() {
  return (
    <div className="flex items-center gap-3 rounded-lg border border-slate-300 bg-slate-100 px-3 py-2.5">
      <Lock className="size-4 shrink-0 text-slate-600" aria-hidden="true" />
      <span className="truncate font-mono text-sm tracking-widest text-slate-700" aria-label="Private key hidden" role="img">
        {PRIVATE_KEY_MASK}
      </span>
    </div>
  );
}

function subscribersText(count: number): string {
  return count === 1 ? '1 active subscriber' : `${count.toLocaleString('en-US')} active subscribers`;
}

function KeyRow({ site, vapidKey }: { site: Site; vapidKey: VapidKey }) {
  const makePrimary = useMakePrimaryVapidKeyMutation(site.id);
  const retire = useRetireVapidKeyMutation(site.id);
  const inUse = vapidKey.subscriber_count > 0;

  function onMakePrimary() {
    if (
      !confirmAction(
        'Make this key primary? New subscriptions will use it, and browsers subscribed with another key move to it on their next visit (within a day). The installation code changes: paste the new one into your site.',
      )
    )
      return;
    makePrimary.mutate(vapidKey.id, { onError: (error) => notify(errorMessage(error, 'Failed to make the key primary')) });
  }

  function onRetire() {
    if (!confirmAction('Retire this key? Herald stops accepting subscriptions made with it. It cannot be undone.')) return;
    retire.mutate(vapidKey.id, { onError: (error) => notify(errorMessage(error, 'Failed to retire the key')) });
  }

  return (
    <li className="flex flex-col gap-2 rounded-lg border border-slate-200 p-4" aria-label={vapidKey.is_primary ? 'Primary key' : 'Key'}>
      <div className="flex flex-wrap items-center gap-2">
        {vapidKey.is_primary ? <Badge tone="success">Primary</Badge> : null}
        <span className="text-sm text-slate-700">{subscribersText(vapidKey.subscriber_count)}</span>
      </div>
      <CodeBlock code={vapidKey.public_key} label="VAPID public key" />
      <MaskedPrivateKey />
      {vapidKey.is_primary ? null : (
        <div className="flex flex-wrap gap-2">
          <RoleGatedButton
            needed="admin"
            action={KEYS_ACTION}
            variant="secondary"
            size="sm"
            onClick={onMakePrimary}
            loading={makePrimary.isPending}
            icon={<Star className="size-4" aria-hidden="true" />}
          >
            Make primary
          </RoleGatedButton>
          <RoleGatedButton
            needed="admin"
            action={KEYS_ACTION}
            variant="secondary"
            size="sm"
            onClick={onRetire}
            loading={retire.isPending}
            disabled={inUse}
            title={inUse ? 'Subscribers still use this key: it can be retired once they have moved to the primary key' : undefined}
            icon={<Trash2 className="size-4" aria-hidden="true" />}
          >
            Retire
          </RoleGatedButton>
        </div>
      )}
    </li>
  );
}

function ImportForm({ site }: { site: Site }) {
  const mutation = useImportVapidKeyMutation(site.id);
  const form = useForm<ImportVapidKeyBody>({ resolver: zodResolver(importVapidKeyBody), defaultValues: { public_key: '', private_key: '' } });
  const { errors } = form.formState;
  const onSubmit = form.handleSubmit((values) => mutation.mutate(values, { onSuccess: () => form.reset({ public_key: '', private_key: '' }) }));

  return (
    <form onSubmit={(event) => void onSubmit(event)} noValidate aria-label="Import a VAPID key pair" className="flex flex-col gap-3">
      <h3 className="text-sm font-semibold text-slate-900">Import key pair</h3>
      <p className="text-sm text-slate-600">
        Bring the key pair your previous push service used, so the browsers subscribed there keep receiving your notifications. Base64url keys as
        web-push libraries export them, or PEM.
      </p>
      <Field label="Public key" required error={errors.public_key?.message}>
        {(control) => <Textarea {...control} {...form.register('public_key')} autoComplete="off" spellCheck={false} className="font-mono" />}
      </Field>
      <Field label="Private key" required error={errors.private_key?.message} hint="Sent to your Herald server once and never shown again.">
        {(control) => <Textarea {...control} {...form.register('private_key')} autoComplete="off" spellCheck={false} className="font-mono" />}
      </Field>
      {mutation.isError ? <Alert tone="error">{errorMessage(mutation.error, 'Failed to import the key pair')}</Alert> : null}
      <div>
        <RoleGatedButton needed="admin" action={KEYS_ACTION} type="submit" loading={mutation.isPending} icon={<Upload className="size-4" aria-hidden="true" />}>
          Import key pair
        </RoleGatedButton>
      </div>
    </form>
  );
}

/** Settings → VAPID Keys (spec §2; docs/product.md, "VAPID keys"). */
export function VapidKeysPanel({ site }: { site: Site }) {
  const permission = usePermission('admin', KEYS_ACTION);
  const keys = useVapidKeysQuery(site.id, permission.allowed);

  return (
    <Card>
      <CardHeader>
        <CardTitle>VAPID Keys</CardTitle>
        <CardDescription>
          Browsers&apos; push services use these key pairs to check that notifications for {site.name} really come from your Herald server. Each
          subscriber stays on the key it subscribed with.
        </CardDescription>
      </CardHeader>
      <CardContent className="flex flex-col gap-6">
        <div className="flex items-center gap-1.5">
          <h3 className="text-sm font-medium text-slate-800">Public and private keys</h3>
          <Tooltip content={SETTINGS_HELP.vapidPublicKey} label="About Public Key" />
          <Tooltip content={SETTINGS_HELP.vapidPrivateKey} label="About Private Key" />
        </div>
        {permission.allowed ? (
          keys.isPending ? (
            <Spinner />
          ) : keys.isError ? (
            <Alert tone="error">{errorMessage(keys.error, 'Failed to load the VAPID keys')}</Alert>
          ) : (
            <ul className="flex flex-col gap-3" aria-label="VAPID keys">
              {keys.data.map((key) => (
                <KeyRow key={key.id} site={site} vapidKey={key} />
              ))}
            </ul>
          )
        ) : (
          <div className="flex flex-col gap-2">
            <Badge tone="success" className="self-start">
              Primary
            </Badge>
            <CodeBlock code={site.vapid_public_key} label="VAPID public key" />
            <MaskedPrivateKey />
            <p className="text-sm text-slate-600">
              {permission.reason}: {roleNeededMessage('admin')} Ask an admin or owner of the site if you need to import or rotate a key.
            </p>
          </div>
        )}
        <Alert tone="warning" title="Never share your private key">
          Anyone who has it can send push notifications to your subscribers in your name. Herald keeps it on the server; do not copy it into your
          website, code repositories or support requests.
        </Alert>
        <ImportForm site={site} />
      </CardContent>
    </Card>
  );
}
