import { Megaphone } from 'lucide-react';
import { useNavigate } from 'react-router';
import { PageHeader } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { notify } from '../../../lib/dialogs';
import { useCurrentSite } from '../../../lib/sites-store';
import { useCreateCampaignMutation } from '../api';
import { emptyCampaignForm, toCampaignBody } from '../campaign-form-schema';
import { CampaignForm } from '../components/campaign-form';
import { NoSiteSelected } from '../../../components/no-site-selected';

const PAGE_TITLE = 'New Welcome Campaign';

/** Spec §2 New campaign form (/campaigns/new). */
export function NewCampaignPage() {
  const { currentSite, loaded } = useCurrentSite();
  if (!currentSite) {
    return (
      <>
        <PageHeader title={PAGE_TITLE} />
        <NoSiteSelected loaded={loaded} icon={<Megaphone className="size-6" />} description="Create or select a site to manage its welcome campaigns." />
      </>
    );
  }
  return <NewCampaignForSite key={currentSite.id} site={currentSite} />;
}

function NewCampaignForSite({ site }: { site: { id: string; url: string; settings: { icon: string | null } } }) {
  const navigate = useNavigate();
  const create = useCreateCampaignMutation();

  return (
    <>
      <PageHeader title={PAGE_TITLE} description="A series of notifications sent automatically to each new subscriber." />
      <CampaignForm
        defaultValues={emptyCampaignForm()}
        submitLabel="Save Campaign"
        submitting={create.isPending}
        siteId={site.id}
        site={{ url: site.url, icon: site.settings.icon }}
        onSubmit={(values) =>
          create.mutate(
            { siteId: site.id, body: toCampaignBody(values) },
            {
              onSuccess: () => {
                notify('Campaign created successfully!');
                void navigate('/campaigns');
              },
              onError: (error) => notify(errorMessage(error, 'Failed to create campaign')),
            },
          )
        }
      />
    </>
  );
}
