import type { Notification, NotificationPerformance } from '@herald/contracts';
import { Clock, MoonStar } from 'lucide-react';
import { Badge } from '../../../components/ui';
import { formatCount } from '../notification-labels';

/**
 * "Local time 09:00 — 7 of 24 zones sent" (issue 14 §1; docs/product.md,
 * "Local-time delivery"): a zone counts once its part of the send finished.
 * Before the send starts, only the time.
 */
export function LocalTimeBadge({ notification }: { notification: Pick<Notification, 'delivery' | 'local_time_progress'> }) {
  if (notification.delivery.mode !== 'subscriber_local_time' || !notification.delivery.local_time) return null;
  const progress = notification.local_time_progress;
  const zones = progress ? ` — ${formatCount(progress.zones_sent)} of ${formatCount(progress.zones)} ${progress.zones === 1 ? 'zone' : 'zones'} sent` : '';
  return (
    <Badge tone="neutral" className="shrink-0">
      <Clock className="size-3" aria-hidden="true" />
      <span data-testid="local-time-badge">
        Local time {notification.delivery.local_time}
        {zones}
      </span>
    </Badge>
  );
}

/** On the list, while a one-time send waits for quiet hours to end somewhere: how many it held. */
export function QuietHoursBadge({ notification }: { notification: Pick<Notification, 'status' | 'quiet_hours_deferred'> }) {
  if (notification.status !== 'sending' || !notification.quiet_hours_deferred) return null;
  return (
    <Badge tone="neutral" className="shrink-0">
      <MoonStar className="size-3" aria-hidden="true" />
      <span data-testid="quiet-hours-badge">{formatCount(notification.quiet_hours_deferred)} deferred for quiet hours</span>
    </Badge>
  );
}

/**
 * Subscribers held for the site's quiet hours (docs/product.md, "Quiet
 * hours"). Not an outcome: their deliveries are created when the window
 * ends in their zone, so until then they are in none of the counts.
 */
export function QuietHoursLine({ deferred, sending }: { deferred: NotificationPerformance['skipped']['quiet_hours_deferred']; sending: boolean }) {
  if (!deferred) return null;
  const who = `${formatCount(deferred)} ${deferred === 1 ? 'subscriber was' : 'subscribers were'} inside the site's quiet hours when it was due`;
  return (
    <p className="mt-3 flex items-start gap-1.5 text-sm text-slate-700" data-testid="quiet-hours-deferred">
      <MoonStar className="mt-0.5 size-4 shrink-0 text-slate-500" aria-hidden="true" />
      <span>
        <span className="font-medium">Deferred:</span> {who}
        {sending ? ': they will be sent when the window ends in their time zone, and only then join the counts above.' : ': they were sent when the window ended in their time zone.'}
      </span>
    </p>
  );
}
