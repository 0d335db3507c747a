import { ArrowLeft } from 'lucide-react';
import { ButtonLink, PageHeader, Spinner } from '../../../components/ui';
import { useCurrentSite } from '../../../lib/sites-store';
import { NotificationForm } from '../components/notification-form';

export const BackToNotifications = () => (
  <ButtonLink to="/notifications" variant="ghost" size="sm" icon={<ArrowLeft className="size-4" aria-hidden="true" />}>
    All notifications
  </ButtonLink>
);

/** Spec §2 /notifications/new. */
export function NewNotificationPage() {
  const { currentSite, loaded } = useCurrentSite();
  return (
    <>
      <PageHeader
        title="New Notification"
        description={currentSite ? `Write a notification for ${currentSite.name}'s subscribers.` : undefined}
        actions={<BackToNotifications />}
      />
      {!currentSite && !loaded ? (
        <p className="flex items-center gap-3 py-12 text-sm text-slate-600" role="status">
          <Spinner /> Loading sites...
        </p>
      ) : (
        // A different site starts a fresh form (its segments and timezone differ).
        <NotificationForm key={currentSite?.id ?? 'no-site'} site={currentSite} />
      )}
    </>
  );
}
