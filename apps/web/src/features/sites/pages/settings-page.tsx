import { roleNeededMessage } from '@herald/contracts';
import { Activity, Code2, FileUp, History, KeyRound, KeySquare, Settings as SettingsIcon, SlidersHorizontal, Users, Webhook, Zap } from 'lucide-react';
import { useSearchParams } from 'react-router';
import { Alert, PageHeader, TabPanel, Tabs, type TabItem } from '../../../components/ui';
import { usePermission } from '../../../lib/site-role';
import { AuditLogPanel } from '../../audit-log/components/audit-log-panel';
import { MembersPanel } from '../../members/components/members-panel';
import { useCurrentSite } from '../../../lib/sites-store';
import { ApiKeysPanel } from '../../api-keys/components/api-keys-panel';
import { AutomationPanel } from '../../api-keys/components/automation-panel';
import { SystemPanel } from '../../system/components/system-panel';
import { SubscriberImportsPanel } from '../../subscriber-imports/components/subscriber-imports-panel';
import { WebhooksPanel } from '../../webhooks/components/webhooks-panel';
import { DeleteSiteSection } from '../components/delete-site-section';
import { FrequencyCapPanel } from '../components/frequency-cap-panel';
import { QuietHoursPanel } from '../components/quiet-hours-panel';
import { GeneralSettingsForm } from '../components/general-settings-form';
import { GrantedVisitorsPanel } from '../components/granted-visitors-panel';
import { IdentityVerificationPanel } from '../components/identity-verification-panel';
import { InstallationPanel } from '../components/installation-panel';
import { VapidKeysPanel } from '../../vapid-keys/components/vapid-keys-panel';
import { NoSiteSelected } from '../../../components/no-site-selected';
import { SetupChecklist } from '../../onboarding/components/setup-checklist';
import { PromptSettingsPanel } from '../../prompts/components/prompt-settings-panel';

/**
 * Spec §4 "Settings tab: general, installation, vapid", plus API Keys and
 * Automation (the "Automation section" the spec's triggered notifications
 * point to), Import (subscribers from another push service), and System (`herald doctor`'s checks, for the install's owner);
 * kept in the URL (?tab=) so a tab can be linked to.
 */
type SettingsTab = 'general' | 'installation' | 'vapid' | 'import' | 'api-keys' | 'webhooks' | 'automation' | 'members' | 'audit-log' | 'system';

const TABS: readonly TabItem<SettingsTab>[] = [
  { value: 'general', label: 'General', icon: <SlidersHorizontal className="hidden size-4 2xl:block" aria-hidden="true" /> },
  { value: 'installation', label: 'Installation', icon: <Code2 className="hidden size-4 2xl:block" aria-hidden="true" /> },
  { value: 'vapid', label: 'VAPID Keys', icon: <KeyRound className="hidden size-4 2xl:block" aria-hidden="true" /> },
  { value: 'import', label: 'Import', icon: <FileUp className="hidden size-4 2xl:block" aria-hidden="true" /> },
  { value: 'api-keys', label: 'API Keys', icon: <KeySquare className="hidden size-4 2xl:block" aria-hidden="true" /> },
  { value: 'webhooks', label: 'Webhooks', icon: <Webhook className="hidden size-4 2xl:block" aria-hidden="true" /> },
  { value: 'automation', label: 'Automation', icon: <Zap className="hidden size-4 2xl:block" aria-hidden="true" /> },
  { value: 'members', label: 'Members', icon: <Users className="hidden size-4 2xl:block" aria-hidden="true" /> },
  { value: 'audit-log', label: 'Audit log', icon: <History className="hidden size-4 2xl:block" aria-hidden="true" /> },
  { value: 'system', label: 'System', icon: <Activity className="hidden size-4 2xl:block" aria-hidden="true" /> },
];

/** What a member below admin sees instead of a panel that only admins and owners use. */
function AdminOnly() {
  return <Alert tone="info">{roleNeededMessage('admin')} Ask an owner of the site if you need it.</Alert>;
}

function isSettingsTab(value: string | null): value is SettingsTab {
  return TABS.some((tab) => tab.value === value);
}

export function SettingsPage() {
  const { currentSite, loaded } = useCurrentSite();
  const [params, setParams] = useSearchParams();
  const requested = params.get('tab');
  const tab: SettingsTab = isSettingsTab(requested) ? requested : 'general';
  const admin = usePermission('admin', 'change the site settings');
  const owner = usePermission('owner', 'delete the site');

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
            {admin.allowed ? null : <Alert tone="info">{admin.reason}: {roleNeededMessage('admin')}</Alert>}
            {/* A disabled fieldset disables every control in the form. */}
            <fieldset disabled={!admin.allowed} className="min-w-0">
              <GeneralSettingsForm site={currentSite} />
            </fieldset>
            <fieldset disabled={!admin.allowed} className="min-w-0">
              <FrequencyCapPanel site={currentSite} />
            </fieldset>
            <fieldset disabled={!admin.allowed} className="min-w-0">
              <QuietHoursPanel site={currentSite} />
            </fieldset>
            {owner.allowed ? <DeleteSiteSection site={currentSite} /> : null}
          </div>
        ) : null}
        {tab === 'installation' ? (
          <div className="flex flex-col gap-6">
            <SetupChecklist site={currentSite} placement="settings" />
            <InstallationPanel site={currentSite} />
            <PromptSettingsPanel site={currentSite} />
            <GrantedVisitorsPanel site={currentSite} />
          </div>
        ) : null}
        {tab === 'vapid' ? <VapidKeysPanel site={currentSite} /> : null}
        {tab === 'import' ? admin.allowed ? <SubscriberImportsPanel site={currentSite} /> : <AdminOnly /> : null}
        {tab === 'api-keys' ? admin.allowed ? <ApiKeysPanel site={currentSite} /> : <AdminOnly /> : null}
        {tab === 'webhooks' ? admin.allowed ? <WebhooksPanel site={currentSite} /> : <AdminOnly /> : null}
        {tab === 'automation' ? (
          <div className="flex flex-col gap-6">
            {admin.allowed ? <IdentityVerificationPanel site={currentSite} /> : <AdminOnly />}
            <AutomationPanel site={currentSite} />
          </div>
        ) : null}
        {tab === 'members' ? <MembersPanel site={currentSite} /> : null}
        {tab === 'audit-log' ? <AuditLogPanel site={currentSite} /> : null}
        {tab === 'system' ? <SystemPanel /> : null}
      </TabPanel>
    </>
  );
}
