import type { LucideIcon } from 'lucide-react';
import type { FormEvent, ReactNode } from 'react';
import { RoleGatedButton } from '../../../components/role-gate';
import { Alert, Card, CardContent, CardDescription, CardHeader, CardTitle, Switch } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { notify } from '../../../lib/dialogs';
import { useUpdateSiteMutation } from '../api';

type SiteSettingsChange = Parameters<ReturnType<typeof useUpdateSiteMutation>['mutate']>[0]['changes']['settings'];

/**
 * Saves one site setting on its own (PATCH /sites/{id} with only that key of
 * `settings`), so the spec's general settings form sends what it always sent;
 * says what was saved, or why not.
 */
export function useSaveSiteSetting(siteId: string) {
  const mutation = useUpdateSiteMutation();
  const save = (settings: SiteSettingsChange, savedMessage: string) =>
    mutation.mutate(
      { id: siteId, changes: { settings } },
      {
        onSuccess: () => notify(savedMessage),
        onError: (error) => notify(errorMessage(error, 'Failed to update settings')),
      },
    );
  return { save, mutation };
}

/**
 * A Settings → General card for a setting that is either off or a few
 * fields (the frequency cap, quiet hours): its switch, the fields while it is
 * on, the save error, and an admin-only save button.
 */
export function SwitchedSettingPanel(props: {
  title: string;
  icon: LucideIcon;
  description: ReactNode;
  switchLabel: string;
  switchDescription: string;
  enabled: boolean;
  onEnabledChange: (enabled: boolean) => void;
  saveLabel: string;
  mutation: ReturnType<typeof useSaveSiteSetting>['mutation'];
  onSubmit: () => void;
  /** The fields, shown while the switch is on. */
  children: ReactNode;
}) {
  const { title, icon: Icon, mutation } = props;
  function submit(event: FormEvent) {
    event.preventDefault();
    props.onSubmit();
  }
  return (
    <form onSubmit={submit} noValidate aria-label={title}>
      <Card>
        <CardHeader>
          <CardTitle className="flex items-center gap-2">
            <Icon className="size-5 text-slate-500" aria-hidden="true" /> {title}
          </CardTitle>
          <CardDescription>{props.description}</CardDescription>
        </CardHeader>
        <CardContent className="flex flex-col gap-5">
          <Switch label={props.switchLabel} checked={props.enabled} onCheckedChange={props.onEnabledChange} description={props.switchDescription} />
          {props.enabled ? <div className="grid gap-5 sm:grid-cols-2">{props.children}</div> : null}
          {mutation.isError ? <Alert tone="error">{errorMessage(mutation.error, 'Failed to update settings')}</Alert> : null}
          <div>
            <RoleGatedButton needed="admin" action="change the site settings" type="submit" loading={mutation.isPending}>
              {props.saveLabel}
            </RoleGatedButton>
          </div>
        </CardContent>
      </Card>
    </form>
  );
}
