import { Code2, KeyRound, KeySquare, Settings as SettingsIcon, SlidersHorizontal, Zap } from 'lucide-react';
import { useSearchParams } from 'react-router';
import { PageHeader, TabPanel, Tabs, type TabItem } from '../../../components/ui';
import { useCurrentSite } from '../../../lib/sites-store';
import { ApiKeysPanel } from '../../api-keys/components/api-keys-panel';
import { AutomationPanel } from '../../api-keys/components/automation-panel';
import { DeleteSiteSection } from '../components/delete-site-section';
import { GeneralSettingsForm } from '../components/general-settings-form';
import { IdentityVerificationPanel } from '../components/identity-verification-panel';
import { InstallationPanel } from '../components/installation-panel';
import { VapidKeysPanel } from '../components/vapid-keys-panel';
import { NoSiteSelected } from '../../../components/no-site-selected';
import { SetupChecklist } from '../../onboarding/components/setup-checklist';
import { PromptSettingsPanel } from '../../prompts/components/prompt-settings-panel';

/**
 * Spec §4 "Settings tab: general, installation, vapid", plus API Keys and
 * Automation (the "Automation section" the spec's triggered notifications
 * point to); kept in the URL (?tab=) so a tab can be linked to.
 */
type SettingsTab = 'general' | 'installation' | 'vapid' | 'api-keys' | 'automation';

const TABS: readonly TabItem<SettingsTab>[] = [
  { value: 'general', label: 'General', icon: <SlidersHorizontal className="hidden size-4 sm:block" aria-hidden="true" /> },
  { value: 'installation', label: 'Installation', icon: <Code2 className="hidden size-4 sm:block" aria-hidden="true" /> },
  { value: 'vapid', label: 'VAPID Keys', icon: <KeyRound className="hidden size-4 sm:block" aria-hidden="true" /> },
  { value: 'api-keys', label: 'API Keys', icon: <KeySquare className="hidden size-4 sm:block" aria-hidden="true" /> },
  { value: 'automation', label: 'Automation', icon: <Zap className="hidden size-4 sm:block" aria-hidden="true" /> },
];

function isSettingsTab(value: string | null): value is SettingsTab {
  return TABS.some((tab) => tab.value === value);
}

export function SettingsPage() {
  const { currentSite, loaded } = useCurrentSite();
  const [params, setParams] = useSearchParams();
  const requested = params.get('tab');
  const tab: SettingsTab = isSettingsTab(requested) ? requested : 'general';

  if (!currentSite) {
    return (
      <>
        <PageHeader title="Settings" />
        <NoSiteSelected loaded={loaded} icon={<SettingsIcon className="size-6" />} description="Create or select a site to manage its settings." />
      </>
    );
  }

  return (
    <>
      <PageHeader title="Settings" description={`Manage ${currentSite.name}: details, installation, keys and automation.`} />
      <Tabs
        idBase="settings"
        label="Settings sections"
        items={TABS}
        value={tab}
        onValueChange={(next) => setParams(next === 'general' ? {} : { tab: next }, { replace: true })}
        className="mb-6"
      />
      {/* key: a different site gets a fresh form and a fresh install-code request. */}
      <TabPanel idBase="settings" value={tab} key={`${currentSite.id}-${tab}`}>
        {tab === 'general' ? (
          <div className="flex flex-col gap-6">
            <GeneralSettingsForm site={currentSite} />
            <DeleteSiteSection site={currentSite} />
          </div>
        ) : null}
        {tab === 'installation' ? (
          <div className="flex flex-col gap-6">
            <SetupChecklist site={currentSite} placement="settings" />
            <InstallationPanel site={currentSite} />
            <PromptSettingsPanel site={currentSite} />
          </div>
        ) : null}
        {tab === 'vapid' ? <VapidKeysPanel site={currentSite} /> : null}
        {tab === 'api-keys' ? <ApiKeysPanel site={currentSite} /> : null}
        {tab === 'automation' ? (
          <div className="flex flex-col gap-6">
            <IdentityVerificationPanel site={currentSite} />
            <AutomationPanel site={currentSite} />
          </div>
        ) : null}
      </TabPanel>
    </>
  );
}
