import { ArrowLeft } from 'lucide-react';
import { useSearchParams } from 'react-router';
import { ButtonLink, PageHeader, Spinner } from '../../../components/ui';
import { useCurrentSite } from '../../../lib/sites-store';
import { NotificationForm } from '../components/notification-form';
import { typeFromQuery } from '../notification-form';

export const BackToNotifications = () => (
  <ButtonLink to="/notifications" variant="ghost" size="sm" icon={<ArrowLeft className="size-4" aria-hidden="true" />}>
    All notifications
  </ButtonLink>
);

/** Spec §2 /notifications/new; `?type=ONE_TIME|RECURRING|TRIGGERED` preselects the type. */
export function NewNotificationPage() {
  const { currentSite, loaded } = useCurrentSite();
  const [searchParams] = useSearchParams();
  const initialType = typeFromQuery(searchParams.get('type'));
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
        // A different site starts a fresh form (its segments and timezone differ), as does a link asking for another type.
        <NotificationForm key={`${currentSite?.id ?? 'no-site'}:${initialType ?? ''}`} site={currentSite} initialType={initialType} />
      )}
    </>
  );
}
