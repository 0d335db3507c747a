import { CURRENCIES, DEFAULT_PROMPT_SETTINGS, LANGUAGES, type Site } from '@herald/contracts';
import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { SETTINGS_HELP } from '../../../lib/help-texts';
import { useSitesStore } from '../../../lib/sites-store';
import { fail, mockApi, ok } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { captureDialogs, renderApp } from '../../../test/render-app';

const site = makeSite({
  id: 'site-1',
  name: 'Acme Store',
  url: 'https://shop.acme.example',
  vapid_public_key: 'BEl62iUYgUivxIkv69yViEuiBIa-Ib9-SkvMeAtA3LFgDzkrxZJjSgSnfckjBJuBkr3qBUYIHBQFLXYp5Nksh8U',
  settings: { icon: null, language: 'en', timezone: 'UTC', valueCurrency: 'USD', valuePerSubscriber: 0, valuePerClick: 0, identityVerification: true, serverOnlyTags: [], frequencyCap: null, quietHours: null, resubscribeGranted: true, replaceForeignSubscription: false },
});

const installCode = {
  installCode: '<script src="https://herald.example/sdk/herald.js" data-site-id="site-1" async></script>',
  snippet: '<script src="https://herald.example/sdk/herald.js" data-site-id="site-1" async></script>',
  serviceWorker: { fileName: 'herald-sw.js', content: 'importScripts("https://herald.example/sdk/herald-sw.js");\n' },
  nextSteps: ['Paste the snippet before </body>.', 'Serve your site over HTTPS.'],
  warnings: [],
};

/** The Installation tab's other cards (setup checklist, opt-in prompt), answered so they stay quiet. */
const installationTabRoutes = {
  'GET /api/sites/site-1/checklist': ok({
    checklist: { dismissed: true, install_check: null, first_subscriber_at: '2025-01-01T00:00:00.000Z', active_subscribers: 3, test_devices: 0, test_sent_at: null },
  }),
  'GET /api/sites/site-1/test-devices': ok({ devices: [] }),
  'GET /api/sites/site-1/prompt-settings': ok({ prompt: DEFAULT_PROMPT_SETTINGS }),
};

function setUp(sites: Site[], extra: Parameters<typeof mockApi>[0] = {}) {
  signIn();
  return mockApi({ 'GET /api/auth/me': ok({ user: makeUser() }), 'GET /api/sites': ok({ sites }), ...installationTabRoutes, ...extra });
}

describe('settings page (spec §2 Settings)', () => {
  it('handles "no site selected"', async () => {
    setUp([]);
    renderApp('/settings');

    expect(await screen.findByRole('heading', { name: 'No Site Selected' })).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'New Site' })).toHaveAttribute('href', '/sites/new');
    expect(screen.queryByRole('tablist')).not.toBeInTheDocument();
  });

  it('has the General, Installation and VAPID Keys tabs (then Import, API Keys, Webhooks, Automation, Members, Audit log and System), General first', async () => {
    setUp([site]);
    renderApp('/settings');

    const tabs = within(await screen.findByRole('tablist', { name: 'Settings sections' })).getAllByRole('tab');
    expect(tabs.map((t) => t.textContent)).toEqual(['General', 'Installation', 'VAPID Keys', 'Import', 'API Keys', 'Webhooks', 'Automation', 'Members', 'Audit log', 'System']);
    expect(tabs[0]).toHaveAttribute('aria-selected', 'true');
    expect(screen.getByRole('tabpanel', { name: 'General' })).toBeInTheDocument();
  });

  it('General: offers the spec choices and number rules', async () => {
    setUp([site]);
    renderApp('/settings');

    const language = await screen.findByRole('combobox', { name: /Primary Language/ });
    expect([...(language as HTMLSelectElement).options].map((o) => o.value)).toEqual(LANGUAGES.map((l) => l.code));
    expect([...(screen.getByRole('combobox', { name: /Timezone/ }) as HTMLSelectElement).options].map((o) => o.textContent)).toEqual([
      'UTC',
      'New York',
      'Chicago',
      'Denver',
      'Los Angeles',
      'London',
      'Paris',
      'Tokyo',
    ]);
    expect([...(screen.getByRole('combobox', { name: 'Currency' }) as HTMLSelectElement).options].map((o) => o.value)).toEqual([...CURRENCIES]);
    for (const name of [/Value per New Subscriber/, /Value per Click/]) {
      const input = screen.getByRole('spinbutton', { name });
      expect(input).toHaveAttribute('step', '0.01');
      expect(input).toHaveAttribute('min', '0');
    }
    expect(screen.getByLabelText(/^Site Name/)).toBeRequired();
    expect(screen.getByLabelText(/^Website URL/)).toBeRequired();
  });

  it('General and VAPID Keys: every field explains itself in a tooltip (spec §2 Help Center: settings help texts)', async () => {
    setUp([site]);
    const { user } = renderApp('/settings');
    await screen.findByRole('textbox', { name: /Site Name/ });
    const expected: [string, string][] = [
      ['Site Name', SETTINGS_HELP.siteName],
      ['Website URL', SETTINGS_HELP.websiteUrl],
      ['Notification Icon', SETTINGS_HELP.icon],
      ['Primary Language', SETTINGS_HELP.language],
      ['Timezone', SETTINGS_HELP.timezone],
      ['Currency', SETTINGS_HELP.currency],
      ['Value per New Subscriber', SETTINGS_HELP.valuePerSubscriber],
      ['Value per Click', SETTINGS_HELP.valuePerClick],
    ];
    for (const [field, help] of expected) expect(screen.getByRole('button', { name: `About ${field}` })).toHaveAccessibleDescription(help);

    await user.click(screen.getByRole('tab', { name: 'VAPID Keys' }));
    expect(screen.getByRole('button', { name: 'About Public Key' })).toHaveAccessibleDescription(SETTINGS_HELP.vapidPublicKey);
    expect(screen.getByRole('button', { name: 'About Private Key' })).toHaveAccessibleDescription(SETTINGS_HELP.vapidPrivateKey);
  });

  it('General: keeps a create-time timezone the settings list does not offer', async () => {
    setUp([makeSite({ settings: { ...site.settings, timezone: 'Australia/Sydney' } })]);
    renderApp('/settings');

    expect(await screen.findByRole('combobox', { name: /Timezone/ })).toHaveValue('Australia/Sydney');
  });

  it('General: saves with PATCH /api/sites/{id}, updates the current site and alerts "Settings updated successfully!"', async () => {
    const api = setUp([site], {
      'PATCH /api/sites/site-1': (call) => {
        const body = call.body as { name: string; url: string; settings: Site['settings'] };
        return ok({ site: { ...site, name: body.name, url: body.url, settings: { ...site.settings, ...body.settings } } });
      },
    });
    const dialogs = captureDialogs();
    const { user } = renderApp('/settings');

    const name = await screen.findByLabelText(/^Site Name/);
    await user.clear(name);
    await user.type(name, 'Acme Shop');
    await user.type(screen.getByLabelText(/^Notification Icon/), 'https://shop.acme.example/icon.png');
    await user.selectOptions(screen.getByRole('combobox', { name: /Primary Language/ }), 'pt-BR');
    await user.selectOptions(screen.getByRole('combobox', { name: /Timezone/ }), 'Europe/Paris');
    await user.selectOptions(screen.getByRole('combobox', { name: 'Currency' }), 'EUR');
    await user.clear(screen.getByRole('spinbutton', { name: /Value per New Subscriber/ }));
    await user.type(screen.getByRole('spinbutton', { name: /Value per New Subscriber/ }), '1.25');
    await user.clear(screen.getByRole('spinbutton', { name: /Value per Click/ }));
    await user.type(screen.getByRole('spinbutton', { name: /Value per Click/ }), '0.05');
    await user.click(screen.getByRole('button', { name: 'Save Settings' }));

    await waitFor(() => expect(dialogs.alerts).toEqual(['Settings updated successfully!']));
    expect(api.callsTo('PATCH /api/sites/site-1')[0]?.body).toEqual({
      name: 'Acme Shop',
      url: 'https://shop.acme.example',
      settings: {
        icon: 'https://shop.acme.example/icon.png',
        language: 'pt-BR',
        timezone: 'Europe/Paris',
        valueCurrency: 'EUR',
        valuePerSubscriber: 1.25,
        valuePerClick: 0.05,
      },
    });
    expect(useSitesStore.getState().currentSite?.name).toBe('Acme Shop');
    expect(within(screen.getByTestId('current-site')).getByText('Acme Shop')).toBeInTheDocument();
  });

  it('General: refuses negative values and an empty name before sending', async () => {
    const api = setUp([site]);
    const { user } = renderApp('/settings');

    await user.clear(await screen.findByLabelText(/^Site Name/));
    await user.clear(screen.getByRole('spinbutton', { name: /Value per Click/ }));
    await user.type(screen.getByRole('spinbutton', { name: /Value per Click/ }), '-1');
    await user.click(screen.getByRole('button', { name: 'Save Settings' }));

    expect(await screen.findByText('Site name is required')).toBeInTheDocument();
    expect(screen.getByText('Must be 0 or more')).toBeInTheDocument();
    expect(api.callsTo('PATCH /api/sites/site-1')).toHaveLength(0);
  });

  it('General: alerts the server message when saving fails', async () => {
    setUp([site], { 'PATCH /api/sites/site-1': fail(400, 'Unknown timezone') });
    const dialogs = captureDialogs();
    const { user } = renderApp('/settings');

    await user.click(await screen.findByRole('button', { name: 'Save Settings' }));
    await waitFor(() => expect(dialogs.alerts).toEqual(['Unknown timezone']));
  });

  it('Delete site asks first; confirmed, it deletes and forgets the site', async () => {
    const other = makeSite({ id: 'site-2', name: 'Acme Blog' });
    const api = setUp([site, other], { 'DELETE /api/sites/site-1': ok({ deleted: true }) });
    const dialogs = captureDialogs(false);
    const { user } = renderApp('/settings');

    await user.click(await screen.findByRole('button', { name: 'Delete site' }));
    expect(dialogs.confirms[0]).toContain('Are you sure you want to delete "Acme Store"?');
    expect(api.callsTo('DELETE /api/sites/site-1')).toHaveLength(0);

    captureDialogs(true);
    await user.click(screen.getByRole('button', { name: 'Delete site' }));
    await waitFor(() => expect(api.callsTo('DELETE /api/sites/site-1')).toHaveLength(1));
    await waitFor(() => expect(useSitesStore.getState().sites.map((s) => s.id)).toEqual(['site-2']));
    expect(useSitesStore.getState().currentSite?.id).toBe('site-2');
  });

  it('Installation: "Show Installation Code" fetches and shows the snippet, the service worker and next steps', async () => {
    const api = setUp([site], { 'GET /api/sites/site-1/install-code': ok(installCode) });
    const { user } = renderApp('/settings');

    await user.click(await screen.findByRole('tab', { name: 'Installation' }));
    expect(api.callsTo('GET /api/sites/site-1/install-code')).toHaveLength(0);
    await user.click(screen.getByRole('button', { name: 'Show Installation Code' }));

    expect(await screen.findByRole('figure', { name: 'Installation snippet' })).toHaveTextContent(installCode.snippet);
    expect(screen.getByText(/closing/)).toHaveTextContent('</body>');
    expect(screen.getByRole('figure', { name: 'herald-sw.js' })).toHaveTextContent('importScripts("https://herald.example/sdk/herald-sw.js");');
    expect(screen.getByText('Paste the snippet before </body>.')).toBeInTheDocument();
    expect(screen.getByText('Serve your site over HTTPS.')).toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'Copy Installation snippet' }));
    expect(await screen.findByText('Copied!')).toBeInTheDocument();
    expect(await navigator.clipboard.readText()).toBe(installCode.snippet);
    expect(screen.queryByText(/mixed content/)).not.toBeInTheDocument();
  });

  it('Installation: warns when Herald itself is on http, which https pages block', async () => {
    const warning = "Herald's address (PUBLIC_URL) is http://herald.example, not https: pages served over https block the script and the worker as mixed content.";
    setUp([site], { 'GET /api/sites/site-1/install-code': ok({ ...installCode, warnings: [warning] }) });
    const { user } = renderApp('/settings?tab=installation');
    await user.click(await screen.findByRole('button', { name: 'Show Installation Code' }));
    expect(await screen.findByText(warning)).toBeInTheDocument();
    expect(screen.getByText(warning).closest('[role="status"]')).toHaveTextContent('Herald is not on HTTPS');
  });

  it('Installation: shows the error and lets the user retry', async () => {
    setUp([site], { 'GET /api/sites/site-1/install-code': fail(404, 'Site not found') });
    const { user } = renderApp('/settings?tab=installation');

    await user.click(await screen.findByRole('button', { name: 'Show Installation Code' }));
    // One automatic retry (spec §9) happens first.
    expect(await screen.findByRole('alert')).toHaveTextContent('Site not found');

    setUp([site], { 'GET /api/sites/site-1/install-code': ok(installCode) });
    await user.click(screen.getByRole('button', { name: 'Show Installation Code' }));
    expect(await screen.findByRole('figure', { name: 'Installation snippet' })).toHaveTextContent(installCode.snippet);
  });

  it('VAPID Keys: shows the public key, a masked private key and a warning not to share it', async () => {
    setUp([site], {
      'GET /api/sites/site-1/vapid-keys': ok({ keys: [{ id: 'k1', public_key: site.vapid_public_key, is_primary: true, subscriber_count: 3, created_at: '2025-01-01T00:00:00.000Z' }] }),
    });
    const { user } = renderApp('/settings');

    await user.click(await screen.findByRole('tab', { name: 'VAPID Keys' }));

    expect(screen.getByRole('figure', { name: 'VAPID public key' })).toHaveTextContent(site.vapid_public_key);
    expect(screen.getByRole('img', { name: 'Private key hidden' })).toHaveTextContent(/^•+$/);
    expect(screen.getByText('Never share your private key')).toBeInTheDocument();
  });

  it('tabs work from the keyboard', async () => {
    setUp([site]);
    mockApi({
      'GET /api/auth/me': ok({ user: makeUser() }),
      'GET /api/sites': ok({ sites: [site] }),
      'GET /api/sites/site-1/events': ok({ events: [] }),
      'GET /api/sites/site-1/api-keys': ok({ api_keys: [] }),
      'GET /api/sites/site-1/webhooks': ok({ webhooks: [] }),
      'GET /api/sites/site-1/subscriber-imports': ok({ imports: [] }),
      'GET /api/sites/site-1/vapid-keys': ok({ keys: [] }),
      'GET /api/system/checks': ok({ checks: [], checkedAt: 0 }),
      'GET /api/sites/site-1/audit-log': ok({ entries: [], next_cursor: null }),
      'GET /api/sites/site-1/members': ok({ members: [], invitations: [], your_role: 'owner' }),
    });
    const { user } = renderApp('/settings');

    await user.click(await screen.findByRole('tab', { name: 'General' }));
    await user.keyboard('{ArrowRight}');
    expect(screen.getByRole('tab', { name: 'Installation' })).toHaveAttribute('aria-selected', 'true');
    expect(screen.getByRole('tab', { name: 'Installation' })).toHaveFocus();
    await user.keyboard('{End}');
    expect(screen.getByRole('tab', { name: 'System' })).toHaveAttribute('aria-selected', 'true');
    await user.keyboard('{ArrowLeft}{ArrowLeft}{ArrowLeft}{ArrowLeft}{ArrowLeft}{ArrowLeft}{ArrowLeft}');
    expect(screen.getByRole('tab', { name: 'VAPID Keys' })).toHaveAttribute('aria-selected', 'true');
  });
});
