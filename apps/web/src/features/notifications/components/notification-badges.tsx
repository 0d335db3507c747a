import type { Notification } from '@herald/contracts';
import { Badge, ProgressBar, Spinner } from '../../../components/ui';
import { formatCount, STATUS_BADGES, TYPE_LABELS } from '../notification-labels';

export function StatusBadge({ status }: { status: Notification['status'] }) {
  const { label, tone } = STATUS_BADGES[status];
  return (
    <Badge tone={tone} className="shrink-0">
      {status === 'sending' ? <Spinner className="[&_svg]:size-3" /> : null}
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
 * Live progress of a notification being sent: deliveries attempted (sent +
 * failed) out of the audience counted at fan-out. Before fan-out has counted
 * the audience, total is 0 and it says so.
 */
export function SendingProgress({ notification }: { notification: Pick<Notification, 'title' | 'stats'> }) {
  const { total, sent, failed } = notification.stats;
  const processed = sent + failed;
  const text = total > 0 ? `${formatCount(processed)} of ${formatCount(total)} sent` : 'Preparing recipients...';
  return (
    <div className="flex flex-col gap-1.5" data-testid="sending-progress">
      <div className="flex items-center justify-between gap-3 text-xs text-slate-700">
        <span className="font-medium">{text}</span>
        {failed > 0 ? <span className="text-red-700">{formatCount(failed)} failed</span> : null}
      </div>
      <ProgressBar label={`Sending progress of ${notification.title}`} value={processed} max={total} valueText={text} />
    </div>
  );
}
