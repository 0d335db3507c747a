import type { Site } from '@herald/contracts';
import { Trash2 } from 'lucide-react';
import { Button, Card, CardContent, CardDescription, CardHeader, CardTitle } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { confirmAction, notify } from '../../../lib/dialogs';
import { useDeleteSiteMutation } from '../api';

/** Deleting a site removes its whole audience, so it sits apart from the form and asks first. */
export function DeleteSiteSection({ site }: { site: Site }) {
  const mutation = useDeleteSiteMutation();

  function onDelete() {
    const confirmed = confirmAction(
      `Are you sure you want to delete "${site.name}"? Its subscribers, notifications, campaigns, segments and feeds are deleted too. This cannot be undone.`,
    );
    if (!confirmed) return;
    mutation.mutate(site.id, {
      onSuccess: () => notify('Site deleted successfully!'),
      onError: (error) => notify(errorMessage(error, 'Failed to delete site')),
    });
  }

  return (
    <Card className="border-red-200">
      <CardHeader className="border-red-100">
        <CardTitle className="text-red-800">Danger zone</CardTitle>
        <CardDescription>Actions here cannot be undone.</CardDescription>
      </CardHeader>
      <CardContent className="flex flex-col gap-4 sm:flex-row sm:items-center sm:justify-between">
        <div>
          <h3 className="text-sm font-semibold text-slate-900">Delete site</h3>
          <p className="mt-1 text-sm text-slate-600">
            Permanently delete {site.name} with all its subscribers and notifications. Visitors&apos; browsers stop receiving its notifications.
          </p>
        </div>
        <Button variant="danger" onClick={onDelete} loading={mutation.isPending} icon={<Trash2 className="size-4" aria-hidden="true" />}>
          Delete site
        </Button>
      </CardContent>
    </Card>
  );
}
