import type { Notification } from '@herald/contracts';
import { Ban, Copy, Eye, Pause, Pencil, Play, RotateCcw, Send, Trash2 } from 'lucide-react';
import { useNavigate } from 'react-router';
import { Button, ButtonLink } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { confirmAction, notify } from '../../../lib/dialogs';
import { useSiteRole, permissionOf } from '../../../lib/site-role';
import { isEditable } from '../notification-labels';
import { useDeleteNotificationMutation, useNotificationCommandMutation, useRecurringActiveMutation, type NotificationCommand } from '../api';

interface NotificationActionsProps {
  notification: Notification;
  /** Where the actions sit: the list shows Edit/View links; the view page does not link to itself. */
  placement: 'list' | 'view';
  /** Called after the notification was deleted (the view page leaves). */
  onDeleted?: () => void;
}

const icon = (Icon: typeof Send) => <Icon className="size-4" aria-hidden="true" />;

// Texts of the spec's own confirms and alerts (§2 Notifications list) are
// word for word; the others follow their style.
const CONFIRMS: Record<NotificationCommand, string | null> = {
  send: 'Are you sure you want to send this notification?',
  cancel: 'Are you sure you want to cancel this scheduled notification?',
  retry: 'Are you sure you want to retry sending this notification to the subscribers it failed for?',
  duplicate: null,
};
const FAILURES: Record<NotificationCommand, string> = {
  send: 'Failed to send notification',
  cancel: 'Failed to cancel notification',
  retry: 'Failed to retry notification',
  duplicate: 'Failed to duplicate notification',
};

const NOTHING_TO_RETRY = 'Deliveries are kept for a while after a send finishes; this send’s are totals now, so there is nothing left to retry. Duplicate it to send it again.';

/**
 * The spec §4 state machine as buttons: Send Now (draft), Edit (draft,
 * scheduled) or View (others), Delete (draft, scheduled), Cancel
 * (scheduled), Duplicate (completed, cancelled, failed), Retry (failed, and
 * completed with errors: its failed part), and
 * Pause/Resume for a scheduled recurring notification (its active flag).
 */
export function NotificationActions({ notification, placement, onDeleted }: NotificationActionsProps) {
  const navigate = useNavigate();
  const command = useNotificationCommandMutation();
  const remove = useDeleteNotificationMutation();
  const activeFlag = useRecurringActiveMutation();
  const { id, status } = notification;
  // Below editor the buttons stay visible, disabled, their title saying why (docs/product.md, "Teams").
  const role = useSiteRole();
  const canSend = permissionOf(role, 'editor', 'send notifications');
  const canChange = permissionOf(role, 'editor', 'change notifications');
  const refused = { disabled: true, title: canChange.reason, 'aria-description': canChange.reason };
  const gate = canChange.allowed ? {} : refused;
  const busy = command.isPending || remove.isPending || activeFlag.isPending;
  const schedule = notification.type === 'RECURRING' && status === 'scheduled' ? notification.recurringSchedule : null;

  function toggleActive(isActive: boolean) {
    activeFlag.mutate(
      { id, isActive },
      { onError: (error) => notify(errorMessage(error, isActive ? 'Failed to resume notification' : 'Failed to pause notification')) },
    );
  }
  const running = command.isPending ? command.variables.command : null;

  function run(name: NotificationCommand) {
    const question = CONFIRMS[name];
    if (question && !confirmAction(question)) return;
    command.mutate(
      { id, command: name },
      {
        onSuccess: (result) => {
          if (name === 'send') notify('Notification sent successfully!');
          // A copy is a new draft: open it so it can be changed and rescheduled.
          if (name === 'duplicate') void navigate(`/notifications/${encodeURIComponent(result.id)}/edit`);
        },
        onError: (error) => notify(errorMessage(error, FAILURES[name])),
      },
    );
  }

  function onDelete() {
    if (!confirmAction('Are you sure you want to delete this notification?')) return;
    remove.mutate(notification, {
      onSuccess: () => onDeleted?.(),
      onError: (error) => notify(errorMessage(error, 'Failed to delete notification')),
    });
  }

  const editable = isEditable(status);
  return (
    <div className="flex flex-wrap items-center gap-2">
      {status === 'draft' && notification.type === 'ONE_TIME' ? (
        <Button
          size="sm"
          onClick={() => run('send')}
          disabled={busy || !canSend.allowed}
          title={canSend.reason}
          aria-description={canSend.reason}
          loading={running === 'send'}
          icon={icon(Send)}
          data-testid="send-now"
        >
          Send Now
        </Button>
      ) : null}
      {editable && canChange.allowed ? (
        <ButtonLink to={`/notifications/${encodeURIComponent(id)}/edit`} size="sm" variant="secondary" icon={icon(Pencil)}>
          Edit
        </ButtonLink>
      ) : placement === 'list' ? (
        <ButtonLink to={`/notifications/${encodeURIComponent(id)}`} size="sm" variant="secondary" icon={icon(Eye)}>
          View
        </ButtonLink>
      ) : null}
      {schedule ? (
        <Button
          size="sm"
          variant="secondary"
          onClick={() => toggleActive(!schedule.isActive)}
          disabled={busy}
          {...gate}
          loading={activeFlag.isPending}
          icon={icon(schedule.isActive ? Pause : Play)}
        >
          {schedule.isActive ? 'Pause' : 'Resume'}
        </Button>
      ) : null}
      {/* A send split by zone (a local time, or quiet hours holding some zones) can still be cancelled while it sends: the zones
          not yet due (docs/product.md, "Local-time delivery" and "Quiet hours"). */}
      {status === 'scheduled' || (status === 'sending' && notification.type === 'ONE_TIME' && (notification.delivery.mode === 'subscriber_local_time' || notification.quiet_hours_deferred > 0)) ? (
        <Button size="sm" variant="secondary" onClick={() => run('cancel')} disabled={busy} {...gate} loading={running === 'cancel'} icon={icon(Ban)}>
          Cancel
        </Button>
      ) : null}
      {status === 'failed' || status === 'completed_with_errors' ? (
        <Button
          size="sm"
          variant="secondary"
          onClick={() => run('retry')}
          disabled={busy}
          {...gate}
          // Old sends keep their figures but not their deliveries (docs/product.md, "Retention"): nothing to retry.
          {...(notification.deliveries_compacted ? { disabled: true, title: NOTHING_TO_RETRY, 'aria-description': NOTHING_TO_RETRY } : {})}
          loading={running === 'retry'}
          icon={icon(RotateCcw)}
        >
          Retry
        </Button>
      ) : null}
      {status === 'completed' || status === 'completed_with_errors' || status === 'cancelled' || status === 'failed' ? (
        <Button size="sm" variant="secondary" onClick={() => run('duplicate')} disabled={busy} {...gate} loading={running === 'duplicate'} icon={icon(Copy)}>
          Duplicate
        </Button>
      ) : null}
      {editable ? (
        <Button
          size="sm"
          variant="danger-ghost"
          onClick={onDelete}
          disabled={busy}
          {...gate}
          loading={remove.isPending}
          icon={icon(Trash2)}
        >
          Delete
        </Button>
      ) : null}
    </div>
  );
}
