import { CAMPAIGN_STEPS_IDEAL } from '@herald/contracts';
import { Megaphone } from 'lucide-react';
import { Alert, Button, EmptyState, PageHeader, Spinner } from '../../../components/ui';
import { RoleGatedLink } from '../../../components/role-gate';
import { errorMessage } from '../../../lib/api-client';
import { useCurrentSite } from '../../../lib/sites-store';
import { useCampaignsQuery } from '../api';
import { CampaignCard } from '../components/campaign-card';
import { NoSiteSelected } from '../../../components/no-site-selected';

const PAGE_TITLE = 'Welcome Campaigns';

/** Spec §2 Campaigns list (/campaigns). */
export function CampaignsPage() {
  const { currentSite, loaded } = useCurrentSite();
  if (!currentSite) {
    return (
      <>
        <PageHeader title={PAGE_TITLE} />
        <NoSiteSelected loaded={loaded} icon={<Megaphone className="size-6" />} description="Create or select a site to manage its welcome campaigns." />
      </>
    );
  }
  return <CampaignsOfSite siteId={currentSite.id} siteName={currentSite.name} timeZone={currentSite.settings.timezone} />;
}

function CampaignsOfSite({ siteId, siteName, timeZone }: { siteId: string; siteName: string; timeZone: string }) {
  const campaigns = useCampaignsQuery(siteId);
  return (
    <>
      <PageHeader
        title={PAGE_TITLE}
        description={`Drip sequences for ${siteName}: a campaign is triggered automatically when a new user subscribes.`}
        actions={
          <RoleGatedLink to="/campaigns/new" needed="editor" action="create campaigns">
            + New Campaign
          </RoleGatedLink>
        }
      />
      <Alert tone="info" className="mb-6" title="How welcome campaigns work">
        When someone subscribes, the active campaign sends its first notification immediately and each next one after its delay. Only one campaign can be
        active at a time, and changes apply to people who subscribe afterwards. {CAMPAIGN_STEPS_IDEAL.min}–{CAMPAIGN_STEPS_IDEAL.max} notifications work best.
      </Alert>

      {campaigns.isPending ? (
        <div className="flex items-center gap-3 py-12 text-sm text-slate-600" role="status">
          <Spinner /> Loading campaigns...
        </div>
      ) : campaigns.isError ? (
        <Alert tone="error" title="Campaigns could not be loaded">
          <p>{errorMessage(campaigns.error, 'Failed to load campaigns')}</p>
          <Button size="sm" variant="secondary" className="mt-2" onClick={() => void campaigns.refetch()}>
            Retry
          </Button>
        </Alert>
      ) : campaigns.data.length === 0 ? (
        <EmptyState
          icon={<Megaphone className="size-6" />}
          title="No campaigns yet"
          description="Welcome new subscribers with a short series of notifications, sent automatically after they subscribe."
          action={
            <RoleGatedLink to="/campaigns/new" needed="editor" action="create campaigns">
              Create your first campaign
            </RoleGatedLink>
          }
        />
      ) : (
        <div className="grid gap-5 xl:grid-cols-2">
          {campaigns.data.map((campaign) => (
            <CampaignCard key={campaign.id} campaign={campaign} timeZone={timeZone} />
          ))}
        </div>
      )}
    </>
  );
}
