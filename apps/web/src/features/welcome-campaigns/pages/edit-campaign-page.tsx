import { ArrowLeft } from 'lucide-react';
import { useNavigate, useParams } from 'react-router';
import { Alert, Button, ButtonLink, EmptyState, PageHeader, Spinner } from '../../../components/ui';
import { ApiError, errorMessage } from '../../../lib/api-client';
import { notify } from '../../../lib/dialogs';
import { useSitesStore } from '../../../lib/sites-store';
import { useCampaignQuery, useUpdateCampaignMutation } from '../api';
import { campaignFormValues, toCampaignBody } from '../campaign-form-schema';
import { CampaignForm } from '../components/campaign-form';
import type { WelcomeCampaign } from '@herald/contracts';

const PAGE_TITLE = 'Edit Welcome Campaign';

/** /campaigns/{id}/edit: the New campaign form filled in, saved with PATCH (spec §7). */
export function EditCampaignPage() {
  const { id = '' } = useParams();
  const campaign = useCampaignQuery(id);

  if (campaign.isPending) {
    return (
      <>
        <PageHeader title={PAGE_TITLE} />
        <div className="flex items-center gap-3 py-12 text-sm text-slate-600" role="status">
          <Spinner /> Loading campaign...
        </div>
      </>
    );
  }
  if (campaign.isError) {
    const missing = campaign.error instanceof ApiError && campaign.error.status === 404;
    return (
      <>
        <PageHeader title={PAGE_TITLE} />
        {missing ? (
          <EmptyState
            title="Campaign not found"
            description="It may have been deleted."
            action={
              <ButtonLink to="/campaigns" variant="secondary" icon={<ArrowLeft className="size-4" aria-hidden="true" />}>
                Back to campaigns
              </ButtonLink>
            }
          />
        ) : (
          <Alert tone="error" title="The campaign could not be loaded">
            <p>{errorMessage(campaign.error, 'Failed to load campaign')}</p>
            <Button size="sm" variant="secondary" className="mt-2" onClick={() => void campaign.refetch()}>
              Retry
            </Button>
          </Alert>
        )}
      </>
    );
  }
  return <EditCampaignForm campaign={campaign.data} />;
}

function EditCampaignForm({ campaign }: { campaign: WelcomeCampaign }) {
  const navigate = useNavigate();
  const update = useUpdateCampaignMutation();
  // The campaign's own site (it may not be the one selected in the header).
  const site = useSitesStore((s) => s.sites.find((candidate) => candidate.id === campaign.site_id));

  return (
    <>
      <PageHeader title={PAGE_TITLE} description={campaign.name} />
      <Alert tone="info" className="mb-6">
        Changes apply to people who subscribe from now on. Subscribers already in this campaign keep receiving the notifications they started with.
      </Alert>
      <CampaignForm
        defaultValues={campaignFormValues(campaign)}
        submitLabel="Save Changes"
        submitting={update.isPending}
        siteId={campaign.site_id}
        site={{ url: site?.url ?? '', icon: site?.settings.icon ?? null }}
        onSubmit={(values) =>
          update.mutate(
            { id: campaign.id, changes: toCampaignBody(values) },
            {
              onSuccess: () => {
                notify('Campaign updated successfully!');
                void navigate('/campaigns');
              },
              onError: (error) => notify(errorMessage(error, 'Failed to update campaign')),
            },
          )
        }
      />
    </>
  );
}
