import type { Notification } from '@herald/contracts';
import type { ReactNode } from 'react';
import { Bell } from 'lucide-react';
import { useParams } from 'react-router';
import { Alert, Button, ButtonLink, EmptyState, PageHeader, Spinner } from '../../../components/ui';
import { ApiError, errorMessage } from '../../../lib/api-client';
import { useSitesStore } from '../../../lib/sites-store';
import { useNotificationQuery } from '../api';
import { NotificationForm } from '../components/notification-form';
import { NotificationView } from '../components/notification-view';
import { STATUS_BADGES } from '../../../components/send-outcome';
import { isEditable } from '../notification-labels';
import { BackToNotifications } from './new-notification-page';

/** The notification's own site (for its timezone), else the selected one. */
function useSiteOf(notification: Notification | undefined) {
  const sites = useSitesStore((s) => s.sites);
  const currentSite = useSitesStore((s) => s.currentSite);
  return (notification && sites.find((s) => s.id === notification.site_id)) ?? currentSite;
}

/** Loads the notification named in the address and hands it to `children`, with loading and error states. */
function WithNotification({ heading, children }: { heading: string; children: (notification: Notification) => ReactNode }) {
  const { id = '' } = useParams();
  const query = useNotificationQuery(id);

  if (query.isPending) {
    return (
      <>
        <PageHeader title={heading} actions={<BackToNotifications />} />
        <p className="flex items-center gap-3 py-12 text-sm text-slate-600" role="status">
          <Spinner /> Loading notification...
        </p>
      </>
    );
  }
  if (query.isError) {
    const missing = query.error instanceof ApiError && query.error.status === 404;
    return (
      <>
        <PageHeader title={heading} actions={<BackToNotifications />} />
        {missing ? (
          <EmptyState
            icon={<Bell className="size-6" />}
            title="Notification not found"
            description="It may have been deleted, or it belongs to another account."
            action={<ButtonLink to="/notifications">All notifications</ButtonLink>}
          />
        ) : (
          <Alert tone="error" title="Could not load the notification">
            <p>{errorMessage(query.error, 'Please try again.')}</p>
            <Button size="sm" variant="secondary" className="mt-2" onClick={() => void query.refetch()}>
              Retry
            </Button>
          </Alert>
        )}
      </>
    );
  }
  return <>{children(query.data)}</>;
}

function ViewMode({ notification, note }: { notification: Notification; note?: string }) {
  const site = useSiteOf(notification);
  return (
    <>
      <PageHeader title={notification.title} description="Notification details and performance" actions={<BackToNotifications />} />
      {note ? (
        <Alert tone="info" className="mb-6">
          {note}
        </Alert>
      ) : null}
      <NotificationView notification={notification} site={site} timeZone={site?.settings.timezone ?? 'UTC'} />
    </>
  );
}

/** /notifications/{id}: the read-only view, for any status. */
export function NotificationDetailPage() {
  return <WithNotification heading="Notification">{(notification) => <ViewMode notification={notification} />}</WithNotification>;
}

function EditMode({ notification }: { notification: Notification }) {
  const site = useSiteOf(notification);
  const sitesLoaded = useSitesStore((s) => s.loaded);
  return (
    <>
      <PageHeader title="Edit Notification" actions={<BackToNotifications />} />
      {sitesLoaded ? (
        // The form reads its times in the site's timezone once, when it starts.
        <NotificationForm key={`${notification.id}:${site?.id ?? ''}`} site={site} notification={notification} />
      ) : (
        <p className="flex items-center gap-3 py-12 text-sm text-slate-600" role="status">
          <Spinner /> Loading sites...
        </p>
      )}
    </>
  );
}

/** /notifications/{id}/edit (spec §2: the same form in edit mode); a notification past editing is shown read-only. */
export function EditNotificationPage() {
  return (
    <WithNotification heading="Edit Notification">
      {(notification) =>
        isEditable(notification.status) ? (
          <EditMode notification={notification} />
        ) : (
          <ViewMode
            notification={notification}
            note={`This notification is ${STATUS_BADGES[notification.status].label.toLowerCase()} and can no longer be edited.`}
          />
        )
      }
    </WithNotification>
  );
}
