import { DASHBOARD_LIST_LIMIT } from '@herald/contracts';
import { Link } from 'react-router';
import { Badge } from '../../../components/ui';
import { DASHBOARD_HELP } from '../../../lib/help-texts';
import { useWelcomeCampaignsQuery } from '../api';
import { formatDateTime, pluralize } from '../dashboard-format';
import { ListCard, ListCardEmpty, ListCardStatus, textLinkStyles } from './list-card';

/** Spec §2 Dashboard: the first 5 welcome campaigns with name, state, step count, created date and a View link. */
export function WelcomeCampaignsPanel({ siteId, timeZone, className }: { siteId: string; timeZone: string; className?: string }) {
  const query = useWelcomeCampaignsQuery(siteId);
  const items = (query.data ?? []).slice(0, DASHBOARD_LIST_LIMIT);
  return (
    <ListCard title="Welcome Campaigns" help={DASHBOARD_HELP.welcomeCampaigns} newLink={{ to: '/campaigns/new', label: 'New welcome campaign' }} className={className}>
      {query.isPending ? (
        <ListCardStatus state="pending" what="welcome campaigns" onRetry={() => void query.refetch()} />
      ) : query.isError ? (
        <ListCardStatus state="error" what="welcome campaigns" onRetry={() => void query.refetch()} />
      ) : items.length === 0 ? (
        <ListCardEmpty>
          No welcome campaigns yet.{' '}
          <Link to="/campaigns/new" className={textLinkStyles}>
            Create a welcome campaign
          </Link>
        </ListCardEmpty>
      ) : (
        <ul className="divide-y divide-slate-200">
          {items.map((campaign) => (
            <li key={campaign.id} className="flex items-center justify-between gap-3 py-3">
              <div className="min-w-0">
                <p className="font-medium break-words text-slate-900">{campaign.name}</p>
                <p className="mt-0.5 flex flex-wrap items-center gap-2 text-xs text-slate-600">
                  <Badge tone={campaign.is_active ? 'success' : 'neutral'}>{campaign.is_active ? 'Active' : 'Inactive'}</Badge>
                  <span>{pluralize(campaign.steps_count, 'step')}</span>
                  <span>
                    Created <time dateTime={campaign.created_at}>{formatDateTime(campaign.created_at, timeZone, true)}</time>
                  </span>
                </p>
              </div>
              <Link to="/campaigns" aria-label={`View ${campaign.name}`} className={`${textLinkStyles} shrink-0 text-sm`}>
                View
              </Link>
            </li>
          ))}
        </ul>
      )}
    </ListCard>
  );
}
