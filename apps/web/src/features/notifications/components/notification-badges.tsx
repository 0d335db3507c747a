import type { Notification } from '@herald/contracts';
import { OutcomeBar, statusBadgeOf } from '../../../components/send-outcome';
import { Badge, Spinner } from '../../../components/ui';
import { TYPE_LABELS } from '../notification-labels';

/** The status badge; an armed triggered notification reads "Waiting for event" (issue 11). */
export function StatusBadge({ notification }: { notification: Pick<Notification, 'status' | 'type'> }) {
  const { label, tone } = statusBadgeOf(notification);
  return (
    <Badge tone={tone} className="shrink-0">
      {notification.status === 'sending' ? <Spinner className="[&_svg]:size-3" /> : null}
      <span data-testid="status-badge">{label}</span>
    </Badge>
  );
}

/** Spec §2: a type badge only when the type is not one-time (the list also compares a lowercase "one_time"). */
export function TypeBadge({ type }: { type: Notification['type'] }) {
  if (type.toUpperCase() === 'ONE_TIME') return null;
  return (
    <Badge tone="accent" className="shrink-0">
      <span data-testid="type-badge">{TYPE_LABELS[type]}</span>
    </Badge>
  );
}

/**
 * Live progress of a notification being sent: accepted, failed, expired and
 * skipped as separate segments on the track of what is pending, out of the
 * audience counted at fan-out (before that, "Preparing recipients...").
 */
export function SendingProgress({
  notification,
}: {
  notification: Pick<Notification, 'title' | 'counts'> & Partial<Pick<Notification, 'local_time_progress' | 'delivery'>>;
}) {
  // A send split by zone before its first zone is due has no recipients yet: it is waiting, not preparing. A send at
  // once is split only by the site's quiet hours.
  if (notification.local_time_progress && notification.counts.targeted === 0) {
    return (
      <p className="text-xs text-slate-600" data-testid="sending-progress">
        {notification.delivery?.mode === 'subscriber_local_time' ? <>Waiting for the first zone&apos;s local time</> : <>Held until the site&apos;s quiet hours end</>}
      </p>
    );
  }
  return (
    <div data-testid="sending-progress">
      <OutcomeBar counts={notification.counts} label={`Sending progress of ${notification.title}`} />
    </div>
  );
}
