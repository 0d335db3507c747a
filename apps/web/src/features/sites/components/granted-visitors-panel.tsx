import { roleNeededMessage, type Site } from '@herald/contracts';
import { Alert, Card, CardContent, CardDescription, CardHeader, CardTitle } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { notify } from '../../../lib/dialogs';
import { usePermission } from '../../../lib/site-role';
import { CheckboxField } from '../../rss-feeds/components/checkbox-field';
import { useUpdateSiteMutation } from '../api';

// Settings → Installation (docs/product.md, Settings, "visitors who already
// allowed notifications"): what the snippet does for a browser whose
// notification permission is already granted, e.g. to the site's previous
// push provider. Each box saves at once with PATCH /sites/{id}.

type Flag = 'resubscribeGranted' | 'replaceForeignSubscription';

export function GrantedVisitorsPanel({ site }: { site: Site }) {
  const admin = usePermission('admin', 'change the site settings');
  const mutation = useUpdateSiteMutation();
  const { resubscribeGranted, replaceForeignSubscription } = site.settings;

  function save(flag: Flag, value: boolean) {
    mutation.mutate({ id: site.id, changes: { settings: { [flag]: value } } }, { onError: (error) => notify(errorMessage(error, 'Failed to update settings')) });
  }

  return (
    <Card>
      <CardHeader>
        <CardTitle>Visitors who already allowed notifications</CardTitle>
        <CardDescription>
          A visitor may have allowed notifications from your site before, for example to the push service you used before Herald. The browser
          does not ask such a visitor again, so no prompt can reach them.
        </CardDescription>
      </CardHeader>
      <CardContent className="flex flex-col gap-4">
        {admin.allowed ? null : <Alert tone="info">{admin.reason}: {roleNeededMessage('admin')}</Alert>}
        <CheckboxField
          label="Re-subscribe visitors who already allowed notifications"
          hint="The snippet subscribes them on their next visit, without showing any prompt."
          checked={resubscribeGranted}
          disabled={!admin.allowed || mutation.isPending}
          onChange={(event) => save('resubscribeGranted', event.target.checked)}
        />
        <CheckboxField
          label="Replace another provider's subscription"
          hint="When the browser still holds your previous provider's subscription on the same service worker, the snippet removes it and subscribes with Herald; that provider can no longer reach this visitor."
          checked={replaceForeignSubscription}
          disabled={!admin.allowed || mutation.isPending}
          onChange={(event) => save('replaceForeignSubscription', event.target.checked)}
        />
      </CardContent>
    </Card>
  );
}
