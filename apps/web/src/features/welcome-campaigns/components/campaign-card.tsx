import { describeDelay, type WelcomeCampaign } from '@herald/contracts';
import { Pencil, Power, PowerOff, Trash2 } from 'lucide-react';
import { OutcomeSummary, formatCount, shareText } from '../../../components/send-outcome';
import { Badge, Card, DateTime } from '../../../components/ui';
import { RoleGatedButton, RoleGatedLink } from '../../../components/role-gate';
import { errorMessage } from '../../../lib/api-client';
import { confirmAction, notify } from '../../../lib/dialogs';
import { useDeleteCampaignMutation, useUpdateCampaignMutation } from '../api';

/** "2 hours", "3 days": the friendlier reading of a delay next to the spec's "X minutes". */
function friendlyDelay(minutes: number): string {
  return minutes === 0 ? 'immediately' : describeDelay(minutes);
}

/**
 * Spec §2 Campaigns list: name, Active/Inactive, created date, "N
 * notification(s) in sequence", "Step n: Send after X minutes" per step, and
 * Activate/Deactivate, Edit Steps, Delete. Each step shows what it sent
 * (issue 11: sent, delivered, click rate, failures), and the totals name
 * their failures too.
 */
export function CampaignCard({ campaign, timeZone }: { campaign: WelcomeCampaign; timeZone: string }) {
  const update = useUpdateCampaignMutation();
  const remove = useDeleteCampaignMutation();
  const headingId = `campaign-${campaign.id}-name`;
  const { stats } = campaign;

  const toggle = () =>
    update.mutate(
      { id: campaign.id, changes: { is_active: !campaign.is_active } },
      { onError: (error) => notify(errorMessage(error, campaign.is_active ? 'Failed to deactivate campaign' : 'Failed to activate campaign')) },
    );

  const onDelete = () => {
    if (!confirmAction('Are you sure you want to delete this campaign?')) return;
    remove.mutate(campaign, { onError: (error) => notify(errorMessage(error, 'Failed to delete campaign')) });
  };

  return (
    <Card className="flex flex-col" aria-labelledby={headingId} role="article">
      <div className="flex flex-col gap-3 px-5 pt-5 sm:px-6">
        <div className="flex flex-wrap items-center gap-x-3 gap-y-1">
          <h2 id={headingId} className="min-w-0 text-base font-semibold break-words text-slate-900">
            {campaign.name}
          </h2>
          <Badge tone={campaign.is_active ? 'success' : 'neutral'}>{campaign.is_active ? 'Active' : 'Inactive'}</Badge>
        </div>
        <p className="text-sm text-slate-600">
          <span>
            Created <DateTime value={campaign.created_at} timeZone={timeZone} dateOnly />
          </span>
          <span aria-hidden="true"> · </span>
          <span>{campaign.steps_count} notification(s) in sequence</span>
        </p>
      </div>

      <ol className="mx-5 mt-4 flex flex-col divide-y divide-slate-100 rounded-lg border border-slate-200 sm:mx-6" aria-label={`Steps of ${campaign.name}`}>
        {campaign.steps.map((step) => (
          <li key={step.id} className="flex flex-col gap-0.5 px-3 py-2 text-sm">
            <span>
              <span className="font-medium text-slate-800">
                Step {step.sequence_order}: Send after {step.delay_minutes} minutes
              </span>
              {step.delay_minutes % 60 === 0 ? <span className="whitespace-nowrap text-slate-600"> ({friendlyDelay(step.delay_minutes)})</span> : null}
            </span>
            <span className="min-w-0 break-words text-slate-600">{step.notification.title}</span>
            {step.stats.targeted > 0 ? <OutcomeSummary counts={step.stats} className="mt-1" /> : null}
          </li>
        ))}
      </ol>

      <dl className="mx-5 mt-4 mb-5 grid grid-cols-2 gap-3 text-sm sm:mx-6 sm:grid-cols-5">
        {[
          ['Enrolled', formatCount(stats.enrolled)],
          ['Sent', formatCount(stats.sent)],
          ['Clicked', formatCount(stats.clicked)],
          // The rate names its denominator: clicks of the delivered pushes, "—" before any was delivered.
          ['Click rate', stats.delivered > 0 ? `${stats.click_rate}%` : '—', `Clicks ÷ delivered (${formatCount(stats.delivered)} delivered)`],
          ['Failed', stats.failed ? `${formatCount(stats.failed)} (${shareText(stats.failed, stats.targeted)})` : '0'],
        ].map(([label, value, title]) => (
          <div key={label} className="rounded-lg bg-slate-50 px-3 py-2" title={title}>
            <dt className="text-xs text-slate-600">{label}</dt>
            <dd className={label === 'Failed' && stats.failed ? 'font-semibold text-red-700' : 'font-semibold text-slate-900'} data-testid={`campaign-${String(label).toLowerCase().replace(' ', '-')}`}>
              {value}
            </dd>
          </div>
        ))}
      </dl>

      <div className="mt-auto flex flex-wrap gap-2 border-t border-slate-200 px-5 py-4 pt-4 sm:px-6">
        <RoleGatedButton
          needed="editor"
          action="change campaigns"
          variant={campaign.is_active ? 'secondary' : 'primary'}
          size="sm"
          icon={campaign.is_active ? <PowerOff className="size-4" aria-hidden="true" /> : <Power className="size-4" aria-hidden="true" />}
          loading={update.isPending}
          onClick={toggle}
          aria-describedby={headingId}
        >
          {campaign.is_active ? 'Deactivate' : 'Activate'}
        </RoleGatedButton>
        <RoleGatedLink needed="editor" action="change campaigns" to={`/campaigns/${encodeURIComponent(campaign.id)}/edit`} variant="secondary" size="sm" icon={<Pencil className="size-4" aria-hidden="true" />} aria-describedby={headingId}>
          Edit Steps
        </RoleGatedLink>
        <RoleGatedButton
          needed="editor"
          action="change campaigns"
          variant="danger-ghost"
          size="sm"
          icon={<Trash2 className="size-4" aria-hidden="true" />}
          loading={remove.isPending}
          onClick={onDelete}
          aria-describedby={headingId}
        >
          Delete
        </RoleGatedButton>
      </div>
    </Card>
  );
}
