import { DEFAULT_PROMPT_SETTINGS } from '@herald/contracts';
import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { fail, mockApi, ok } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { captureDialogs, renderApp } from '../../../test/render-app';

// Issue 12 §4: Settings → Installation, the opt-in prompt with a live preview
// and each prompt type's conversion.

const site = makeSite({ id: 'site-1', name: 'Pebble & Pine', url: 'https://pebble.example/shop' });
const fresh = { dismissed: true, install_check: null, first_subscriber_at: null, active_subscribers: 0, test_devices: 0, test_sent_at: null };

function setUp(routes: Parameters<typeof mockApi>[0] = {}) {
  signIn();
  return mockApi({
    'GET /api/auth/me': ok({ user: makeUser() }),
    'GET /api/sites': ok({ sites: [site] }),
    'GET /api/sites/site-1/checklist': ok({ checklist: fresh }),
    'GET /api/sites/site-1/install-code': fail(500),
    'GET /api/sites/site-1/test-devices': ok({ devices: [] }),
    'GET /api/sites/site-1/prompt-settings': ok({ prompt: DEFAULT_PROMPT_SETTINGS }),
    'GET /api/sites/site-1/analytics/subscribers': ok({
      from: '2026-04-13',
      to: '2026-05-12',
      interval: 'day',
      timezone: 'UTC',
      totals: { new: 4, unsubscribed: 0, net: 4 },
      series: [],
      prompts: [
        { prompt: 'slide', shown: 300, subscribed: 12, conversion_rate: 4 },
        { prompt: 'native', shown: 0, subscribed: 0, conversion_rate: 0 },
        { prompt: 'bell', shown: 50, subscribed: 1, conversion_rate: 2 },
      ],
    }),
    ...routes,
  });
}

describe('opt-in prompt settings', () => {
  it('previews the prompt live as the owner edits it, and saves the whole choice', async () => {
    const api = setUp({ 'PUT /api/sites/site-1/prompt-settings': (call) => ok({ prompt: { ...DEFAULT_PROMPT_SETTINGS, ...(call.body as object) } }) });
    const dialogs = captureDialogs();
    const { user } = renderApp('/settings?tab=installation');

    const preview = await screen.findByTestId('prompt-preview');
    expect(preview).toHaveTextContent('Get notifications from pebble.example?');
    expect(within(preview).getByText('Allow')).toBeInTheDocument();

    await user.type(screen.getByLabelText('Headline'), 'Never miss a sale');
    await user.type(screen.getByLabelText('Text'), 'One message a week');
    await user.clear(screen.getByLabelText(/^Accept button/));
    await user.type(screen.getByLabelText(/^Accept button/), 'Yes please');
    expect(preview).toHaveTextContent('Never miss a sale');
    expect(preview).toHaveTextContent('One message a week');
    expect(within(preview).getByText('Yes please')).toBeInTheDocument();
    await user.selectOptions(screen.getByLabelText('Position'), 'top');
    await user.clear(screen.getByLabelText('Show after (seconds)'));
    await user.type(screen.getByLabelText('Show after (seconds)'), '15');
    await user.clear(screen.getByLabelText('From page view'));
    await user.type(screen.getByLabelText('From page view'), '2');

    await user.click(screen.getByRole('button', { name: 'Save prompt' }));
    await waitFor(() => expect(dialogs.alerts).toEqual(['Prompt settings saved. Your pages show them within a minute.']));
    expect(api.callsTo('PUT /api/sites/site-1/prompt-settings')[0]?.body).toEqual({
      ...DEFAULT_PROMPT_SETTINGS,
      headline: 'Never miss a sale',
      text: 'One message a week',
      acceptLabel: 'Yes please',
      position: 'top',
      delaySeconds: 15,
      pageViews: 2,
    });

    // The bell and the browser's own prompt preview differently, and drop the fields they do not use.
    await user.click(screen.getByRole('button', { name: 'Bell button' }));
    expect(within(screen.getByTestId('prompt-preview')).getByTitle('Never miss a sale')).toBeInTheDocument();
    expect(screen.queryByLabelText('Text')).not.toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Browser prompt' }));
    expect(screen.getByTestId('prompt-preview')).toHaveTextContent('pebble.example wants to show notifications');
    expect(screen.queryByLabelText('Button tooltip')).not.toBeInTheDocument();
  });

  it('shows the server’s message when a value is refused', async () => {
    setUp({ 'PUT /api/sites/site-1/prompt-settings': fail(400, 'Button colour must be a colour like #1d4ed8') });
    const { user } = renderApp('/settings?tab=installation');
    await screen.findByTestId('prompt-preview');
    await user.click(screen.getByRole('button', { name: 'Save prompt' }));
    expect(await screen.findByText('Button colour must be a colour like #1d4ed8')).toBeInTheDocument();
  });

  it('shows how each prompt converts over the last 30 days', async () => {
    setUp();
    renderApp('/settings?tab=installation');
    const table = await screen.findByRole('table', { name: 'Prompt performance over the last 30 days' });
    const rows = within(table).getAllByRole('row').map((row) => row.textContent);
    expect(rows).toEqual(['PromptShownSubscribedConversion', 'Slide-down banner300124%', 'Browser prompt00—', 'Bell button5012%']);
  });
});
