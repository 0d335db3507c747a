import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { fail, mockApi, ok, type MockResponse } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { captureDialogs, renderApp } from '../../../test/render-app';
import { makeCampaign, makeStep } from '../../../test/campaign-fixtures';

const site = makeSite({ url: 'https://shop.acme.example' });

function setUp(routes: Record<string, MockResponse | ((call: { body: unknown }) => MockResponse)> = {}) {
  signIn();
  return mockApi({
    'GET /api/auth/me': ok({ user: makeUser() }),
    'GET /api/sites': ok({ sites: [site] }),
    'GET /api/sites/site-1/segments': ok({ segments: [] }),
    ...routes,
  });
}

const step = (n: number) => screen.getByTestId(`campaign-step-${n}`);

describe('new campaign form (spec §2 /campaigns/new)', () => {
  it('starts active, with one notification sent immediately after subscription, and Save disabled until there is a name', async () => {
    setUp();
    const { user } = renderApp('/campaigns/new');

    expect(await screen.findByRole('switch', { name: 'Active' })).toHaveAttribute('aria-checked', 'true');
    expect(screen.getByRole('switch', { name: 'UTM parameters' })).toHaveAttribute('aria-checked', 'false');
    expect(screen.getByText('The timeline begins immediately after subscription.')).toBeInTheDocument();
    expect(within(step(1)).getByText('Immediately after subscription')).toBeInTheDocument();
    // No delay for the first notification, and nothing to remove while it is the only one.
    expect(within(step(1)).queryByRole('spinbutton')).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /Remove Notification/ })).not.toBeInTheDocument();
    expect([...(screen.getByRole('combobox', { name: 'Target Segment' }) as HTMLSelectElement).options].map((o) => o.text)).toEqual(['All Subscribers']);
    // The campaign icon, and each step's icon, take a URL or an upload (the shared image picker).
    expect(screen.getByRole('group', { name: 'Campaign Icon' })).toBeInTheDocument();
    expect(within(step(1)).getByRole('group', { name: 'Icon' })).toHaveAccessibleDescription('Leave empty to use the campaign icon.');
    expect(within(step(1)).getByRole('button', { name: 'Upload file' })).toBeInTheDocument();

    const save = screen.getByRole('button', { name: 'Save Campaign' });
    expect(save).toBeDisabled();
    await user.type(screen.getByLabelText(/^Campaign Name/), '   ');
    expect(save).toBeDisabled();
    await user.type(screen.getByLabelText(/^Campaign Name/), 'Welcome');
    expect(save).toBeEnabled();
  });

  it('counts title (50) and message (140) characters and checks every field before sending', async () => {
    const api = setUp();
    const { user } = renderApp('/campaigns/new');
    await user.type(await screen.findByLabelText(/^Campaign Name/), 'Welcome');

    const title = within(step(1)).getByLabelText(/^Title/);
    expect(within(step(1)).getByText('0/50')).toBeInTheDocument();
    await user.type(title, 'Hello there');
    expect(within(step(1)).getByText('11/50')).toBeInTheDocument();
    await user.type(title, 'x'.repeat(60));
    expect(title).toHaveValue(`Hello there${'x'.repeat(39)}`);
    expect(within(step(1)).getByText('50/50')).toBeInTheDocument();
    await user.type(within(step(1)).getByLabelText(/^Message/), 'Thanks');
    expect(within(step(1)).getByText('6/140')).toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: '+ Add Notification' }));
    await user.clear(within(step(2)).getByRole('spinbutton', { name: 'Delay of notification 2' }));
    await user.type(within(step(2)).getByRole('spinbutton', { name: 'Delay of notification 2' }), '-3');
    await user.type(within(step(1)).getByLabelText(/^Destination URL/), 'javascript:alert(1)');
    await user.click(screen.getByRole('button', { name: 'Save Campaign' }));

    expect(await within(step(1)).findByText('Must be a complete URL starting with https:// or http://')).toBeInTheDocument();
    expect(within(step(2)).getByText('Delay must be 0 or more')).toBeInTheDocument();
    expect(within(step(2)).getByText('Title is required')).toBeInTheDocument();
    expect(within(step(2)).getByText('Message is required')).toBeInTheDocument();
    expect(within(step(2)).getByText('Destination URL is required')).toBeInTheDocument();
    expect(api.callsTo('POST /api/sites/site-1/welcome-campaigns')).toHaveLength(0);
  });

  it('converts delays to minutes and sends the exact body (UTM, segment, icon, large image, action buttons), then alerts and goes to /campaigns', { timeout: 30_000 }, async () => {
    const api = setUp({
      'GET /api/sites/site-1/segments': ok({ segments: [{ id: 'seg-1', name: 'Chrome users', rules: {}, estimated_count: 3, updated_at: '2026-01-01T00:00:00.000Z' }] }),
      'POST /api/sites/site-1/welcome-campaigns': ok({ campaign: makeCampaign() }, 201),
    });
    const dialogs = captureDialogs();
    const { user, pathname } = renderApp('/campaigns/new');
    /** Pastes instead of typing key by key: this test fills in a lot. */
    const enter = async (field: HTMLElement, text: string) => {
      await user.click(field);
      await user.paste(text);
    };

    await user.click(await screen.findByRole('switch', { name: 'Active' }));
    await enter(screen.getByLabelText(/^Campaign Name/), '  Onboarding  ');
    await enter(screen.getByLabelText(/^Campaign Icon URL/), 'https://shop.acme.example/icon.png');
    await user.selectOptions(screen.getByRole('combobox', { name: 'Target Segment' }), await screen.findByRole('option', { name: 'Chrome users (3)' }));
    await user.click(screen.getByRole('switch', { name: 'UTM parameters' }));
    await enter(screen.getByLabelText('utm_source'), 'herald');
    await enter(screen.getByLabelText('utm_medium'), 'push');

    const fill = async (n: number, title: string) => {
      await enter(within(step(n)).getByLabelText(/^Title/), title);
      await enter(within(step(n)).getByLabelText(/^Message/), `${title} message`);
      await enter(within(step(n)).getByLabelText(/^Destination URL/), `https://shop.acme.example/${n}`);
    };
    const setDelay = async (n: number, value: string, unit: string) => {
      const box = within(step(n)).getByRole('spinbutton', { name: `Delay of notification ${n}` });
      await user.clear(box);
      await user.type(box, value);
      await user.selectOptions(within(step(n)).getByRole('combobox', { name: `Delay unit of notification ${n}` }), unit);
    };

    await fill(1, 'Welcome');
    await enter(within(step(1)).getByLabelText(/^Icon URL/), 'https://shop.acme.example/step-icon.png');
    await user.click(within(step(1)).getByRole('switch', { name: 'Action buttons' }));
    await enter(within(step(1)).getByLabelText('Button 1 text'), 'Shop now');
    await enter(within(step(1)).getByLabelText('Button 1 URL'), 'https://shop.acme.example/shop');
    await user.click(within(step(1)).getByRole('button', { name: 'Add button' }));
    await enter(within(step(1)).getByLabelText('Button 2 text'), 'Later');
    await enter(within(step(1)).getByLabelText('Button 2 URL'), 'https://shop.acme.example/later');
    expect(within(step(1)).queryByRole('button', { name: 'Add button' })).not.toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: '+ Add Notification' }));
    await fill(2, 'Best sellers');
    await setDelay(2, '2', 'hours');
    await user.click(within(step(2)).getByRole('switch', { name: 'Large image' }));
    await enter(within(step(2)).getByLabelText(/^Image URL/), 'https://shop.acme.example/big.png');
    expect(within(step(2)).getByText('2 hours after notification 1')).toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: '+ Add Notification' }));
    await fill(3, 'A gift');
    await setDelay(3, '3', 'days');
    await user.click(screen.getByRole('button', { name: '+ Add Notification' }));
    await fill(4, 'Last word');
    await setDelay(4, '45', 'minutes');
    // A fifth notification, removed again.
    await user.click(screen.getByRole('button', { name: '+ Add Notification' }));
    await user.click(within(step(5)).getByRole('button', { name: 'Remove Notification 5' }));
    expect(screen.queryByTestId('campaign-step-5')).not.toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'Save Campaign' }));
    await waitFor(() => expect(pathname()).toBe('/campaigns'));
    expect(dialogs.alerts).toEqual(['Campaign created successfully!']);

    const notification = (n: number, title: string, extra: Record<string, unknown> = {}) => ({
      title,
      message: `${title} message`,
      destination_url: `https://shop.acme.example/${n}`,
      icon_url: null,
      image_url: null,
      actions: [],
      ...extra,
    });
    expect(api.callsTo('POST /api/sites/site-1/welcome-campaigns')[0]?.body).toEqual({
      name: 'Onboarding',
      is_active: false,
      icon_url: 'https://shop.acme.example/icon.png',
      utm_params: { utm_source: 'herald', utm_medium: 'push', utm_campaign: null },
      segment_id: 'seg-1',
      steps: [
        {
          sequence_order: 1,
          delay_minutes: 0,
          notification: notification(1, 'Welcome', {
            icon_url: 'https://shop.acme.example/step-icon.png',
            actions: [
              { title: 'Shop now', url: 'https://shop.acme.example/shop' },
              { title: 'Later', url: 'https://shop.acme.example/later' },
            ],
          }),
        },
        { sequence_order: 2, delay_minutes: 120, notification: notification(2, 'Best sellers', { image_url: 'https://shop.acme.example/big.png' }) },
        { sequence_order: 3, delay_minutes: 4320, notification: notification(3, 'A gift') },
        { sequence_order: 4, delay_minutes: 45, notification: notification(4, 'Last word') },
      ],
    });
  });

  it("alerts the server's message, else \"Failed to create campaign\", and stays on the form", async () => {
    let answer = fail(400, 'steps.0.notification.title: Title must be at most 50 characters');
    setUp({ 'POST /api/sites/site-1/welcome-campaigns': () => answer });
    const dialogs = captureDialogs();
    const { user, pathname } = renderApp('/campaigns/new');
    await user.type(await screen.findByLabelText(/^Campaign Name/), 'Welcome');
    await user.type(within(step(1)).getByLabelText(/^Title/), 'Hi');
    await user.type(within(step(1)).getByLabelText(/^Message/), 'Hello');
    await user.type(within(step(1)).getByLabelText(/^Destination URL/), 'https://shop.acme.example/');

    await user.click(screen.getByRole('button', { name: 'Save Campaign' }));
    await waitFor(() => expect(dialogs.alerts).toEqual(['steps.0.notification.title: Title must be at most 50 characters']));
    answer = fail(500);
    await user.click(screen.getByRole('button', { name: 'Save Campaign' }));
    await waitFor(() => expect(dialogs.alerts).toEqual(['steps.0.notification.title: Title must be at most 50 characters', 'Failed to create campaign']));
    expect(pathname()).toBe('/campaigns/new');
  });

  it('takes the campaign icon, a step icon and a step large image as uploads (the shared image picker), and sends their URLs', async () => {
    const uploaded = ['https://herald.example/uploads/campaign.png', 'https://herald.example/uploads/step.png', 'https://herald.example/uploads/banner.png'];
    const api = setUp({
      'POST /api/upload/image': () => ok({ url: uploaded[api.callsTo('POST /api/upload/image').length - 1] }, 201),
      'POST /api/sites/site-1/welcome-campaigns': ok({ campaign: makeCampaign() }, 201),
    });
    captureDialogs();
    const { user, pathname } = renderApp('/campaigns/new');
    const png = (name: string) => new File([new Uint8Array(8)], name, { type: 'image/png' });
    const upload = async (picker: HTMLElement, label: string, file: File) => {
      await user.click(within(picker).getByRole('button', { name: 'Upload file' }));
      await user.upload(within(picker).getByLabelText(`Upload ${label}`), file);
    };

    await user.type(await screen.findByLabelText(/^Campaign Name/), 'Welcome');
    const campaignIcon = screen.getByRole('group', { name: 'Campaign Icon' });
    await upload(campaignIcon, 'Campaign Icon', png('campaign.png'));
    expect(await within(campaignIcon).findByRole('img', { name: 'Campaign Icon preview' })).toHaveAttribute('src', uploaded[0]);

    await user.type(within(step(1)).getByLabelText(/^Title/), 'Hi');
    await user.type(within(step(1)).getByLabelText(/^Message/), 'Hello');
    await user.type(within(step(1)).getByLabelText(/^Destination URL/), 'https://shop.acme.example/');
    const stepIcon = within(step(1)).getByRole('group', { name: 'Icon' });
    await upload(stepIcon, 'Icon', png('step.png'));
    expect(await within(stepIcon).findByRole('img', { name: 'Icon preview' })).toHaveAttribute('src', uploaded[1]);

    await user.click(within(step(1)).getByRole('switch', { name: 'Large image' }));
    // Switched on without an image: the step says what is missing.
    await user.click(screen.getByRole('button', { name: 'Save Campaign' }));
    expect(await within(step(1)).findByText('Image URL is required for a large image')).toBeInTheDocument();
    const image = within(step(1)).getByRole('group', { name: 'Image' });
    await upload(image, 'Image', png('banner.png'));
    expect(await within(image).findByRole('img', { name: 'Image preview' })).toHaveAttribute('src', uploaded[2]);

    await user.click(screen.getByRole('button', { name: 'Save Campaign' }));
    await waitFor(() => expect(pathname()).toBe('/campaigns'));
    const body = api.callsTo('POST /api/sites/site-1/welcome-campaigns')[0]?.body as { icon_url: string; steps: { notification: { icon_url: string; image_url: string } }[] };
    expect(body.icon_url).toBe(uploaded[0]);
    expect(body.steps[0]?.notification).toMatchObject({ icon_url: uploaded[1], image_url: uploaded[2] });
  });

  it('previews the chosen step: text as text, placeholders, host, and when it goes out', async () => {
    setUp();
    const { user } = renderApp('/campaigns/new');
    const preview = await screen.findByTestId('campaign-preview');
    expect(within(preview).getByTestId('preview-title')).toHaveTextContent('Notification Title');
    expect(within(preview).getByTestId('preview-message')).toHaveTextContent('Your notification message will appear here.');
    expect(within(preview).getByTestId('preview-host')).toHaveTextContent('shop.acme.example');
    expect(within(preview).getByTestId('preview-timing')).toHaveTextContent('Immediately after subscription');

    await user.type(within(step(1)).getByLabelText(/^Title/), '<b>Welcome</b>');
    await user.click(screen.getByRole('button', { name: '+ Add Notification' }));
    await user.type(within(step(2)).getByLabelText(/^Title/), 'Second one');
    await user.type(within(step(2)).getByLabelText(/^Destination URL/), 'https://blog.acme.example/post');

    const selector = within(preview).getByRole('combobox', { name: 'Preview step' });
    await user.selectOptions(selector, '0');
    expect(within(preview).getByTestId('preview-title')).toHaveTextContent('<b>Welcome</b>');
    expect(preview.querySelector('b')).toBeNull();

    await user.selectOptions(selector, '1');
    expect(within(preview).getByTestId('preview-title')).toHaveTextContent('Second one');
    expect(within(preview).getByTestId('preview-host')).toHaveTextContent('blog.acme.example');
    expect(within(preview).getByTestId('preview-timing')).toHaveTextContent('1 day after notification 1');
    expect([...(selector as HTMLSelectElement).options].map((o) => o.text)).toEqual([
      'Notification 1 · immediately',
      'Notification 2 · 1 day later',
    ]);
  });
});

describe('edit campaign (/campaigns/{id}/edit)', () => {
  const stored = makeCampaign({
    icon_url: 'https://shop.acme.example/icon.png',
    utm_params: { utm_source: 'herald', utm_medium: null, utm_campaign: 'welcome' },
    steps: [
      makeStep(1, 0, { actions: [{ title: 'Shop', url: 'https://shop.acme.example/shop' }] }),
      makeStep(2, 90, { image_url: 'https://shop.acme.example/big.png' }),
      makeStep(3, 2880),
    ],
  });

  it('fills the form in, explains that changes apply to future subscribers, PATCHes and alerts "Campaign updated successfully!"', async () => {
    const api = setUp({
      'GET /api/welcome-campaigns/campaign-1': ok({ campaign: stored }),
      'GET /api/sites/site-1/welcome-campaigns': ok({ campaigns: [stored] }),
      'PATCH /api/welcome-campaigns/campaign-1': ok({ campaign: stored }),
    });
    const dialogs = captureDialogs();
    const { user, pathname } = renderApp('/campaigns/campaign-1/edit');

    expect(await screen.findByLabelText(/^Campaign Name/)).toHaveValue('Welcome series');
    expect(screen.getByLabelText('Campaign Icon URL')).toHaveValue('https://shop.acme.example/icon.png');
    expect(within(step(2)).getByLabelText('Image URL')).toHaveValue('https://shop.acme.example/big.png');
    expect(screen.getByText(/Changes apply to people who subscribe from now on/)).toBeInTheDocument();
    expect(screen.getByRole('switch', { name: 'UTM parameters' })).toHaveAttribute('aria-checked', 'true');
    expect(screen.getByLabelText('utm_campaign')).toHaveValue('welcome');
    expect(within(step(2)).getByRole('spinbutton', { name: 'Delay of notification 2' })).toHaveValue(90);
    expect(within(step(2)).getByRole('combobox', { name: 'Delay unit of notification 2' })).toHaveValue('minutes');
    expect(within(step(3)).getByRole('spinbutton', { name: 'Delay of notification 3' })).toHaveValue(2);
    expect(within(step(3)).getByRole('combobox', { name: 'Delay unit of notification 3' })).toHaveValue('days');
    expect(within(step(2)).getByRole('switch', { name: 'Large image' })).toHaveAttribute('aria-checked', 'true');
    expect(within(step(1)).getByLabelText('Button 1 text')).toHaveValue('Shop');

    await user.clear(screen.getByLabelText(/^Campaign Name/));
    await user.type(screen.getByLabelText(/^Campaign Name/), 'Welcome v2');
    await user.click(within(step(3)).getByRole('button', { name: 'Remove Notification 3' }));
    await user.click(screen.getByRole('button', { name: 'Save Changes' }));

    await waitFor(() => expect(pathname()).toBe('/campaigns'));
    expect(dialogs.alerts).toEqual(['Campaign updated successfully!']);
    expect(api.callsTo('PATCH /api/welcome-campaigns/campaign-1')[0]?.body).toEqual({
      name: 'Welcome v2',
      is_active: true,
      icon_url: 'https://shop.acme.example/icon.png',
      utm_params: { utm_source: 'herald', utm_medium: null, utm_campaign: 'welcome' },
      segment_id: null,
      steps: [
        {
          sequence_order: 1,
          delay_minutes: 0,
          notification: { ...stored.steps[0]!.notification },
        },
        { sequence_order: 2, delay_minutes: 90, notification: { ...stored.steps[1]!.notification } },
      ],
    });
  });

  it('says so when the campaign does not exist (or is not yours)', async () => {
    setUp({ 'GET /api/welcome-campaigns/missing': fail(404, 'Campaign not found') });
    renderApp('/campaigns/missing/edit');
    expect(await screen.findByText('Campaign not found')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Back to campaigns' })).toHaveAttribute('href', '/campaigns');
  });

  it("alerts the server's message, else \"Failed to update campaign\"", async () => {
    setUp({ 'GET /api/welcome-campaigns/campaign-1': ok({ campaign: stored }), 'PATCH /api/welcome-campaigns/campaign-1': fail(500) });
    const dialogs = captureDialogs();
    const { user } = renderApp('/campaigns/campaign-1/edit');
    await user.click(await screen.findByRole('button', { name: 'Save Changes' }));
    await waitFor(() => expect(dialogs.alerts).toEqual(['Failed to update campaign']));
  });
});
