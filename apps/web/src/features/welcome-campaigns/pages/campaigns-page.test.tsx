import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { fail, mockApi, ok } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { captureDialogs, renderApp } from '../../../test/render-app';
import { makeCampaign, makeStep } from '../../../test/campaign-fixtures';

const site = makeSite();

function setUp(routes: Parameters<typeof mockApi>[0]) {
  signIn();
  return mockApi({
    'GET /api/auth/me': ok({ user: makeUser() }),
    'GET /api/sites': ok({ sites: [site] }),
    ...routes,
  });
}

describe('campaigns list (spec §2 /campaigns)', () => {
  it('shows each campaign: name, badge, created date, "N notification(s) in sequence", and "Step n: Send after X minutes"', async () => {
    setUp({
      'GET /api/sites/site-1/welcome-campaigns': ok({
        campaigns: [
          makeCampaign(),
          makeCampaign({ id: 'campaign-2', name: 'Old series', is_active: false, steps: [makeStep(1, 0), makeStep(2, 90)], created_at: '2026-01-15T12:00:00.000Z' }),
        ],
      }),
    });
    renderApp('/campaigns');

    const first = await screen.findByRole('article', { name: 'Welcome series' });
    expect(screen.getByRole('heading', { level: 1, name: 'Welcome Campaigns' })).toBeInTheDocument();
    expect(screen.getByText(/triggered automatically when a new user subscribes/)).toBeInTheDocument();
    expect(within(first).getByText('Active')).toBeInTheDocument();
    expect(within(first).getByText('Mar 1, 2026').parentElement).toHaveTextContent('Created Mar 1, 2026');
    expect(within(first).getByText('3 notification(s) in sequence')).toBeInTheDocument();
    expect(within(first).getByText('Step 1: Send after 0 minutes')).toBeInTheDocument();
    expect(within(first).getByText('(immediately)')).toBeInTheDocument();
    expect(within(first).getByText('Step 2: Send after 60 minutes')).toBeInTheDocument();
    expect(within(first).getByText('(1 hour)')).toBeInTheDocument();
    expect(within(first).getByText('Step 3: Send after 1440 minutes')).toBeInTheDocument();
    expect(within(first).getByText('(1 day)')).toBeInTheDocument();
    expect(within(first).getByText('Step 2 title')).toBeInTheDocument();
    expect(within(first).getByRole('button', { name: 'Deactivate' })).toBeInTheDocument();
    expect(within(first).getByRole('link', { name: 'Edit Steps' })).toHaveAttribute('href', '/campaigns/campaign-1/edit');
    expect(within(first).getByRole('button', { name: 'Delete' })).toBeInTheDocument();
    expect(within(first).getByText('25%')).toBeInTheDocument();

    const second = screen.getByRole('article', { name: 'Old series' });
    expect(within(second).getByText('Inactive')).toBeInTheDocument();
    expect(within(second).getByText('Jan 15, 2026').parentElement).toHaveTextContent('Created Jan 15, 2026');
    expect(within(second).getByText('2 notification(s) in sequence')).toBeInTheDocument();
    expect(within(second).getByText('Step 2: Send after 90 minutes')).toBeInTheDocument();
    expect(within(second).getByRole('button', { name: 'Activate' })).toBeInTheDocument();
  });

  it('shows what each step sent: sent, delivered, click rate and failures (issue 11), and the campaign’s failures', async () => {
    const first = makeStep(1, 0);
    const second = makeStep(2, 60);
    first.stats = { targeted: 12, sent: 10, failed: 2, expired: 0, skipped: 0, pending: 0, delivered: 8, clicked: 2 };
    setUp({ 'GET /api/sites/site-1/welcome-campaigns': ok({ campaigns: [makeCampaign({ steps: [first, second] })] }) });
    renderApp('/campaigns');

    const card = await screen.findByRole('article', { name: 'Welcome series' });
    const steps = within(within(card).getByRole('list', { name: 'Steps of Welcome series' })).getAllByRole('listitem');
    const summary = within(steps[0]!).getByTestId('outcome-summary');
    expect(within(summary).getByTestId('outcome-sent')).toHaveTextContent('10');
    expect(within(summary).getByTestId('outcome-delivered')).toHaveTextContent('8');
    expect(within(summary).getByTestId('outcome-click-rate')).toHaveTextContent('25%');
    expect(within(summary).getByTestId('outcome-failed')).toHaveTextContent('2 (16.7%)');
    // A step that has not sent anything yet shows no figures.
    expect(within(steps[1]!).queryByTestId('outcome-summary')).not.toBeInTheDocument();
    expect(within(card).getByTestId('campaign-failed')).toHaveTextContent('2 (6.3%)');
  });

  it('renders names and titles as text, never as markup', async () => {
    setUp({
      'GET /api/sites/site-1/welcome-campaigns': ok({
        campaigns: [makeCampaign({ name: '<img src=x onerror=alert(1)>', steps: [makeStep(1, 0, { title: '<b>bold</b>' })] })],
      }),
    });
    renderApp('/campaigns');
    expect(await screen.findByRole('heading', { name: '<img src=x onerror=alert(1)>' })).toBeInTheDocument();
    expect(screen.getByText('<b>bold</b>')).toBeInTheDocument();
    expect(document.querySelector('img[src="x"]')).toBeNull();
  });

  it('toggles with PATCH {is_active} and reloads the list (activating one deactivates the others)', async () => {
    let listCalls = 0;
    const api = setUp({
      'GET /api/sites/site-1/welcome-campaigns': () => {
        listCalls += 1;
        return ok({
          campaigns:
            listCalls === 1
              ? [makeCampaign(), makeCampaign({ id: 'campaign-2', name: 'Old series', is_active: false })]
              : [makeCampaign({ is_active: false }), makeCampaign({ id: 'campaign-2', name: 'Old series', is_active: true })],
        });
      },
      'PATCH /api/welcome-campaigns/campaign-2': ok({ campaign: makeCampaign({ id: 'campaign-2', name: 'Old series', is_active: true }) }),
    });
    const { user } = renderApp('/campaigns');

    const old = await screen.findByRole('article', { name: 'Old series' });
    await user.click(within(old).getByRole('button', { name: 'Activate' }));

    await waitFor(() => expect(within(screen.getByRole('article', { name: 'Welcome series' })).getByText('Inactive')).toBeInTheDocument());
    expect(within(screen.getByRole('article', { name: 'Old series' })).getByText('Active')).toBeInTheDocument();
    expect(api.callsTo('PATCH /api/welcome-campaigns/campaign-2').map((c) => c.body)).toEqual([{ is_active: true }]);
  });

  it('alerts the server message when a toggle fails', async () => {
    setUp({
      'GET /api/sites/site-1/welcome-campaigns': ok({ campaigns: [makeCampaign()] }),
      'PATCH /api/welcome-campaigns/campaign-1': fail(409, 'Try again'),
    });
    const dialogs = captureDialogs();
    const { user } = renderApp('/campaigns');
    await user.click(await screen.findByRole('button', { name: 'Deactivate' }));
    await waitFor(() => expect(dialogs.alerts).toEqual(['Try again']));
  });

  it('deletes after the confirm "Are you sure you want to delete this campaign?"; nothing is sent when declined', async () => {
    let deleted = false;
    const api = setUp({
      'GET /api/sites/site-1/welcome-campaigns': () => ok({ campaigns: deleted ? [] : [makeCampaign()] }),
      'DELETE /api/welcome-campaigns/campaign-1': () => {
        deleted = true;
        return ok({ deleted: true });
      },
    });
    const declined = captureDialogs(false);
    const { user } = renderApp('/campaigns');
    await user.click(await screen.findByRole('button', { name: 'Delete' }));
    expect(declined.confirms).toEqual(['Are you sure you want to delete this campaign?']);
    expect(api.callsTo('DELETE /api/welcome-campaigns/campaign-1')).toHaveLength(0);

    const accepted = captureDialogs(true);
    await user.click(screen.getByRole('button', { name: 'Delete' }));
    expect(accepted.confirms).toEqual(['Are you sure you want to delete this campaign?']);
    expect(await screen.findByText('No campaigns yet')).toBeInTheDocument();
    expect(api.callsTo('DELETE /api/welcome-campaigns/campaign-1')).toHaveLength(1);
  });

  it('shows an empty state with a create link, and a way to create from the header', async () => {
    setUp({ 'GET /api/sites/site-1/welcome-campaigns': ok({ campaigns: [] }) });
    const { user, pathname } = renderApp('/campaigns');
    expect(await screen.findByText('No campaigns yet')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: '+ New Campaign' })).toHaveAttribute('href', '/campaigns/new');
    await user.click(screen.getByRole('link', { name: 'Create your first campaign' }));
    await waitFor(() => expect(pathname()).toBe('/campaigns/new'));
  });

  it('asks for a site when none is selected', async () => {
    signIn();
    mockApi({ 'GET /api/auth/me': ok({ user: makeUser() }), 'GET /api/sites': ok({ sites: [] }) });
    renderApp('/campaigns');
    expect(await screen.findByText('No Site Selected')).toBeInTheDocument();
  });
});
