import { DEFAULT_PROMPT_SETTINGS, type Site } from '@herald/contracts';
import { screen, waitFor } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { fail, mockApi, ok, type RecordedCall } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { captureDialogs, renderApp } from '../../../test/render-app';

// Settings → Installation, "Visitors who already allowed notifications"
// (docs/product.md, Settings): two boxes, each saved at once with PATCH /sites/{id}.

const RESUBSCRIBE = 'Re-subscribe visitors who already allowed notifications';
const REPLACE = "Replace another provider's subscription";

function setUp(site: Site, patch?: Parameters<typeof mockApi>[0][string]) {
  signIn();
  return mockApi({
    'GET /api/auth/me': ok({ user: makeUser() }),
    'GET /api/sites': ok({ sites: [site] }),
    'GET /api/sites/site-7/checklist': ok({
      checklist: { dismissed: true, install_check: null, first_subscriber_at: '2025-01-01T00:00:00.000Z', active_subscribers: 3, test_devices: 0, test_sent_at: null },
    }),
    'GET /api/sites/site-7/test-devices': ok({ devices: [] }),
    'GET /api/sites/site-7/prompt-settings': ok({ prompt: DEFAULT_PROMPT_SETTINGS }),
    'PATCH /api/sites/site-7':
      patch ??
      ((call: RecordedCall) => {
        const changes = (call.body as { settings: Partial<Site['settings']> }).settings;
        return ok({ site: { ...site, settings: { ...site.settings, ...changes } } });
      }),
  });
}

describe('Settings → Installation: visitors who already allowed notifications', () => {
  it('shows the site’s choices (re-subscribe on, replace off by default) with one line each, and saves each box on its own', async () => {
    const api = setUp(makeSite({ id: 'site-7' }));
    const { user } = renderApp('/settings?tab=installation');

    const resubscribe = await screen.findByRole('checkbox', { name: RESUBSCRIBE });
    const replace = screen.getByRole('checkbox', { name: REPLACE });
    expect(resubscribe).toBeChecked();
    expect(replace).not.toBeChecked();
    expect(resubscribe).toHaveAccessibleDescription('The snippet subscribes them on their next visit, without showing any prompt.');
    expect(replace).toHaveAccessibleDescription(/removes it and subscribes with Herald/);

    await user.click(replace);
    await waitFor(() => expect(screen.getByRole('checkbox', { name: REPLACE })).toBeChecked());
    await user.click(screen.getByRole('checkbox', { name: RESUBSCRIBE }));
    await waitFor(() => expect(screen.getByRole('checkbox', { name: RESUBSCRIBE })).not.toBeChecked());
    expect(api.callsTo('PATCH /api/sites/site-7').map((call) => call.body)).toEqual([
      { settings: { replaceForeignSubscription: true } },
      { settings: { resubscribeGranted: false } },
    ]);
  });

  it('says why and keeps the saved state when Herald refuses the change', async () => {
    setUp(makeSite({ id: 'site-7' }), fail(400, 'resubscribeGranted must be true or false'));
    const dialogs = captureDialogs();
    const { user } = renderApp('/settings?tab=installation');
    const resubscribe = await screen.findByRole('checkbox', { name: RESUBSCRIBE });
    await user.click(resubscribe);
    await waitFor(() => expect(dialogs.alerts).toEqual(['resubscribeGranted must be true or false']));
    expect(screen.getByRole('checkbox', { name: RESUBSCRIBE })).toBeChecked();
  });

  it('shows an editor the boxes disabled, saying admins change them', async () => {
    const api = setUp(makeSite({ id: 'site-7', role: 'editor' }));
    const { user } = renderApp('/settings?tab=installation');
    const resubscribe = await screen.findByRole('checkbox', { name: RESUBSCRIBE });
    expect(resubscribe).toBeDisabled();
    expect(screen.getByRole('checkbox', { name: REPLACE })).toBeDisabled();
    await user.click(resubscribe);
    expect(api.callsTo('PATCH /api/sites/site-7')).toHaveLength(0);
  });
});
