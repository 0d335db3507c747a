import type { Notification } from '@herald/contracts';
import { DateTime } from '../../../components/ui';
import { formatCount } from '../notification-labels';
import { expectedFinishAt } from '../throttle-estimate';

/** "Spread at 10 messages a minute: expected to finish about …", while a throttled send is in progress. */
export function ThrottleEstimate({
  notification,
  timeZone,
  now = Date.now(),
}: {
  notification: Pick<Notification, 'status' | 'type' | 'throttle_per_minute' | 'sent_at' | 'counts'>;
  timeZone: string;
  now?: number;
}) {
  const finish = expectedFinishAt(notification, now);
  if (finish === null || notification.throttle_per_minute === null) return null;
  const perMinute = notification.throttle_per_minute;
  return (
    <p className="text-sm text-slate-600" data-testid="throttle-estimate">
      Spread at {formatCount(perMinute)} {perMinute === 1 ? 'message' : 'messages'} a minute: expected to finish about{' '}
      <DateTime value={new Date(finish).toISOString()} timeZone={timeZone} className="font-medium text-slate-800" /> (an estimate from the{' '}
      {formatCount(notification.counts.pending)} still to send and the rate).
    </p>
  );
}
