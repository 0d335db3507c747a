import type { RssFeed, RssFeedCheck } from '@herald/contracts';
import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { fail, mockApi, ok } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { captureDialogs, renderApp } from '../../../test/render-app';

// Times are shown in the site's timezone (Paris is UTC+1 in early March).
const site = makeSite({ id: 'site-1', name: 'Acme Blog', settings: { ...makeSite().settings, timezone: 'Europe/Paris' } });

function makeFeed(overrides: Partial<RssFeed> = {}): RssFeed {
  return {
    id: 'feed-1',
    site_id: 'site-1',
    name: 'Acme posts',
    url: 'https://blog.acme.example/feed.xml',
    icon_url: null,
    utm_params: { utm_source: null, utm_medium: null, utm_campaign: null },
    show_action_buttons: false,
    create_draft: false,
    max_pushes_per_day: 2,
    segment_id: null,
    is_active: true,
    last_fetched_at: null,
    last_item_guid: null,
    last_error: null,
    next_check_at: '2026-03-10T09:15:00.000Z',
    pushes_today: 0,
    skipped_today: 0,
    created_at: '2026-03-10T09:00:00.000Z',
    updated_at: '2026-03-10T09:00:00.000Z',
    ...overrides,
  };
}

function makeCheck(overrides: Partial<RssFeedCheck> = {}): RssFeedCheck {
  return {
    outcome: 'checked',
    checked_at: '2026-03-10T10:00:00.000Z',
    items_in_feed: 10,
    new_items: 1,
    sent: 1,
    drafted: 0,
    skipped: 0,
    notification_ids: ['n-1'],
    error: null,
    summary: '1 new item: 1 notification sent.',
    ...overrides,
  };
}

function setUp(routes: Parameters<typeof mockApi>[0] = {}, feeds: RssFeed[] = []) {
  signIn();
  return mockApi({
    'GET /api/auth/me': ok({ user: makeUser() }),
    'GET /api/sites': ok({ sites: [site] }),
    'GET /api/sites/site-1/rss-feeds': ok({ feeds }),
    'GET /api/sites/site-1/segments': ok({ segments: [] }),
    ...routes,
  });
}

describe('RSS feeds page (spec §2 RSS Feeds)', () => {
  it('asks for a site when none is selected', async () => {
    signIn();
    mockApi({ 'GET /api/auth/me': ok({ user: makeUser() }), 'GET /api/sites': ok({ sites: [] }) });
    renderApp('/rss-feeds');
    expect(await screen.findByRole('heading', { name: 'No Site Selected' })).toBeInTheDocument();
  });

  it('says how often feeds are checked and shows the empty state', async () => {
    setUp();
    renderApp('/rss-feeds');
    expect(await screen.findByRole('heading', { name: 'No RSS feeds yet' })).toBeInTheDocument();
    expect(screen.getByText(/Feeds are checked every 15 minutes/)).toBeInTheDocument();
    expect(screen.getByRole('button', { name: '+ Add Feed' })).toBeInTheDocument();
  });

  it('links the Active checkbox to "Create Draft…" as its inverse', async () => {
    setUp();
    const { user } = renderApp('/rss-feeds');
    await user.click(await screen.findByRole('button', { name: '+ Add Feed' }));

    const active = screen.getByRole('checkbox', { name: 'Active' });
    const draft = screen.getByRole('checkbox', { name: 'Create Draft notification of each new blogpost' });
    expect(active).toBeChecked();
    expect(draft).not.toBeChecked();
    await user.click(active);
    expect(active).not.toBeChecked();
    expect(draft).toBeChecked();
    await user.click(draft);
    expect(draft).not.toBeChecked();
    expect(active).toBeChecked();
  });

  it('requires a name, an http(s) URL and at least 1 push per day before sending anything', async () => {
    const api = setUp();
    const { user } = renderApp('/rss-feeds');
    await user.click(await screen.findByRole('button', { name: '+ Add Feed' }));
    const pushes = screen.getByLabelText(/^Maximum RSS Pushes Per Day/);
    await user.clear(pushes);
    await user.type(pushes, '0');
    await user.click(screen.getByRole('button', { name: 'Add Feed' }));

    expect(await screen.findByText('Feed name is required')).toBeInTheDocument();
    expect(screen.getByText('RSS feed URL is required')).toBeInTheDocument();
    expect(screen.getByText('Maximum pushes per day must be at least 1')).toBeInTheDocument();

    await user.type(screen.getByLabelText(/^RSS Feed URL/), 'ftp://files.example/feed');
    await user.click(screen.getByRole('button', { name: 'Add Feed' }));
    expect(await screen.findByText('Must be a complete URL starting with https:// or http://')).toBeInTheDocument();
    expect(api.callsTo('POST /api/sites/site-1/rss-feeds')).toHaveLength(0);
  });

  it('sends the spec §3 payload, alerts "RSS feed added successfully!" and shows the new feed', async () => {
    const created = makeFeed({ id: 'feed-new', name: 'Acme posts' });
    let listed: RssFeed[] = [];
    const api = setUp({
      'GET /api/sites/site-1/rss-feeds': () => ok({ feeds: listed }),
      'GET /api/sites/site-1/segments': ok({ segments: [{ id: 'seg-1', name: 'Chrome users', rules: {}, estimated_count: 3, updated_at: '2026-03-01T00:00:00.000Z' }] }),
      'POST /api/sites/site-1/rss-feeds': () => {
        listed = [created];
        return ok({ feed: created }, 201);
      },
    });
    const dialogs = captureDialogs();
    const { user } = renderApp('/rss-feeds');
    await user.click(await screen.findByRole('button', { name: '+ Add Feed' }));

    await user.type(screen.getByLabelText(/^Feed Name/), '  Acme posts ');
    await user.type(screen.getByLabelText(/^RSS Feed URL/), 'https://blog.acme.example/feed.xml');
    await user.type(screen.getByLabelText('Feed Icon URL'), 'https://blog.acme.example/icon.png');
    expect(within(screen.getByRole('group', { name: 'Feed Icon' })).getByRole('img', { name: 'Feed Icon preview' })).toHaveAttribute('src', 'https://blog.acme.example/icon.png');
    await user.type(screen.getByLabelText('utm_source'), 'herald');
    await user.type(screen.getByLabelText('utm_medium'), 'push');
    await user.type(screen.getByLabelText('utm_campaign'), 'spring');
    await user.click(screen.getByRole('checkbox', { name: 'Show Action Buttons' }));
    await user.click(screen.getByRole('checkbox', { name: 'Active' }));
    const pushes = screen.getByLabelText(/^Maximum RSS Pushes Per Day/);
    await user.clear(pushes);
    await user.type(pushes, '3');
    const segment = screen.getByRole('combobox', { name: /Target Segment/ });
    await waitFor(() => expect([...(segment as HTMLSelectElement).options].map((o) => o.textContent)).toEqual(['All Subscribers', 'Chrome users (3)']));
    await user.selectOptions(segment, 'seg-1');
    await user.click(screen.getByRole('button', { name: 'Add Feed' }));

    await waitFor(() => expect(dialogs.alerts).toEqual(['RSS feed added successfully!']));
    expect(api.callsTo('POST /api/sites/site-1/rss-feeds')[0]?.body).toEqual({
      name: 'Acme posts',
      url: 'https://blog.acme.example/feed.xml',
      iconUrl: 'https://blog.acme.example/icon.png',
      utmParams: { utm_source: 'herald', utm_medium: 'push', utm_campaign: 'spring' },
      showActionButtons: true,
      createDraft: true,
      maxPushesPerDay: 3,
      segmentId: 'seg-1',
    });
    expect(await screen.findByRole('heading', { name: 'Acme posts' })).toBeInTheDocument();
    expect(screen.queryByRole('form', { name: 'Add RSS Feed' })).not.toBeInTheDocument();
  });

  it('offers only "All Subscribers" when the site has no segments, and sends null', async () => {
    const api = setUp({ 'POST /api/sites/site-1/rss-feeds': ok({ feed: makeFeed() }, 201) });
    const dialogs = captureDialogs();
    const { user } = renderApp('/rss-feeds');
    await user.click(await screen.findByRole('button', { name: '+ Add Feed' }));
    const segment = screen.getByRole('combobox', { name: /Target Segment/ });
    await waitFor(() => expect(api.callsTo('GET /api/sites/site-1/segments')).toHaveLength(1));
    expect([...(segment as HTMLSelectElement).options].map((o) => o.textContent)).toEqual(['All Subscribers']);
    await user.type(screen.getByLabelText(/^Feed Name/), 'News');
    await user.type(screen.getByLabelText(/^RSS Feed URL/), 'http://news.example/rss');
    await user.click(screen.getByRole('button', { name: 'Add Feed' }));
    await waitFor(() => expect(dialogs.alerts).toEqual(['RSS feed added successfully!']));
    expect(api.callsTo('POST /api/sites/site-1/rss-feeds')[0]?.body).toEqual({
      name: 'News',
      url: 'http://news.example/rss',
      iconUrl: null,
      utmParams: { utm_source: '', utm_medium: '', utm_campaign: '' },
      showActionButtons: false,
      createDraft: false,
      maxPushesPerDay: 2,
      segmentId: null,
    });
  });

  it("alerts the server's message when adding fails, and keeps the form", async () => {
    setUp({ 'POST /api/sites/site-1/rss-feeds': fail(400, 'Segment not found') });
    const dialogs = captureDialogs();
    const { user } = renderApp('/rss-feeds');
    await user.click(await screen.findByRole('button', { name: '+ Add Feed' }));
    await user.type(screen.getByLabelText(/^Feed Name/), 'News');
    await user.type(screen.getByLabelText(/^RSS Feed URL/), 'https://news.example/rss');
    await user.click(screen.getByRole('button', { name: 'Add Feed' }));
    await waitFor(() => expect(dialogs.alerts).toEqual(['Segment not found']));
    expect(screen.getByRole('form', { name: 'Add RSS Feed' })).toBeInTheDocument();
  });

  it('lists each feed with its state, address, last check, last item id (20 characters) and last error', async () => {
    const checked = makeFeed({
      id: 'feed-1',
      name: 'Acme posts',
      last_fetched_at: '2026-03-10T09:30:00.000Z',
      last_item_guid: 'https://blog.acme.example/?p=1234567890',
      pushes_today: 2,
      skipped_today: 3,
    });
    // A draft feed's skipped posts are over the drafts one check makes, not over the daily maximum of pushes.
    const drafting = makeFeed({ id: 'feed-3', name: 'Draft posts', url: 'https://drafts.example/rss', create_draft: true, skipped_today: 5 });
    const paused = makeFeed({
      id: 'feed-2',
      name: 'Old news',
      url: 'https://old.example/rss',
      is_active: false,
      last_error: 'Feed server answered HTTP 404 Not Found: there is no feed at this address',
    });
    setUp({}, [checked, paused, drafting]);
    renderApp('/rss-feeds');

    const first = await screen.findByRole('article', { name: 'Acme posts' });
    expect(within(first).getByText('Active')).toBeInTheDocument();
    expect(within(first).getByRole('link', { name: /blog\.acme\.example\/feed\.xml/ })).toHaveAttribute('href', 'https://blog.acme.example/feed.xml');
    expect(within(first).getByText('Mar 10, 2026, 10:30 AM')).toBeInTheDocument();
    const itemId = within(first).getByText('https://blog.acme.ex…');
    expect(itemId).toHaveAttribute('title', 'https://blog.acme.example/?p=1234567890');
    expect(within(first).getByText(/2 of 2/)).toBeInTheDocument();
    expect(within(first).getByText(/3 new posts not sent \(daily maximum reached\)/)).toBeInTheDocument();
    const third = screen.getByRole('article', { name: 'Draft posts' });
    expect(within(third).getByText(/Drafts only/)).toHaveTextContent('Drafts only · 5 new posts not drafted (at most 50 drafts per check)');
    expect(within(first).getByRole('button', { name: 'Pause' })).toBeInTheDocument();

    const second = screen.getByRole('article', { name: 'Old news' });
    expect(within(second).getByText('Inactive')).toBeInTheDocument();
    expect(within(second).getByText('Not checked yet')).toBeInTheDocument();
    expect(within(second).getByText(/there is no feed at this address/)).toBeInTheDocument();
    expect(within(second).getByRole('button', { name: 'Activate' })).toBeInTheDocument();
    expect(within(second).getByRole('button', { name: 'Check now' })).toBeDisabled();
    expect(screen.getByText('3 feeds')).toBeInTheDocument();
  });

  it('pauses and activates with PATCH { is_active }', async () => {
    let feed = makeFeed();
    const api = setUp({
      'GET /api/sites/site-1/rss-feeds': () => ok({ feeds: [feed] }),
      'PATCH /api/rss-feeds/feed-1': (call) => {
        feed = { ...feed, is_active: (call.body as { is_active: boolean }).is_active };
        return ok({ feed });
      },
    });
    const { user } = renderApp('/rss-feeds');
    await user.click(await screen.findByRole('button', { name: 'Pause' }));
    expect(await screen.findByRole('button', { name: 'Activate' })).toBeInTheDocument();
    expect(screen.getByText('Inactive')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Activate' }));
    expect(await screen.findByRole('button', { name: 'Pause' })).toBeInTheDocument();
    expect(api.callsTo('PATCH /api/rss-feeds/feed-1').map((c) => c.body)).toEqual([{ is_active: false }, { is_active: true }]);
  });

  it('asks before deleting, and deletes only when confirmed', async () => {
    let feeds = [makeFeed()];
    const api = setUp({
      'GET /api/sites/site-1/rss-feeds': () => ok({ feeds }),
      'DELETE /api/rss-feeds/feed-1': () => {
        feeds = [];
        return ok({ deleted: true });
      },
    });
    const declined = captureDialogs(false);
    const { user } = renderApp('/rss-feeds');
    await user.click(await screen.findByRole('button', { name: 'Delete' }));
    expect(declined.confirms).toEqual(['Are you sure you want to delete this feed?']);
    expect(api.callsTo('DELETE /api/rss-feeds/feed-1')).toHaveLength(0);

    const accepted = captureDialogs(true);
    await user.click(screen.getByRole('button', { name: 'Delete' }));
    expect(accepted.confirms).toEqual(['Are you sure you want to delete this feed?']);
    expect(await screen.findByRole('heading', { name: 'No RSS feeds yet' })).toBeInTheDocument();
    expect(api.callsTo('DELETE /api/rss-feeds/feed-1')).toHaveLength(1);
  });

  it('"Check now" shows what the check found, or why it failed', async () => {
    let answer = ok({ check: makeCheck(), feed: makeFeed({ last_fetched_at: '2026-03-10T10:00:00.000Z', last_item_guid: 'post-42', pushes_today: 1 }) });
    const api = setUp({ 'POST /api/rss-feeds/feed-1/check': () => answer }, [makeFeed()]);
    const { user } = renderApp('/rss-feeds');
    expect(await screen.findByText('Not checked yet')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Check now' }));
    expect(await screen.findByText('1 new item: 1 notification sent.')).toBeInTheDocument();
    expect(screen.getByText('Mar 10, 2026, 11:00 AM')).toBeInTheDocument();
    expect(screen.getByText('post-42')).toBeInTheDocument();

    answer = ok({
      check: makeCheck({ outcome: 'error', new_items: 0, sent: 0, notification_ids: [], error: 'Feed address points to a private network address', summary: 'x' }),
      feed: makeFeed({ last_fetched_at: '2026-03-10T10:05:00.000Z', last_error: 'Feed address points to a private network address' }),
    });
    await user.click(screen.getByRole('button', { name: 'Check now' }));
    expect(await screen.findByText('Check failed: Feed address points to a private network address')).toBeInTheDocument();
    expect(screen.getByText(/Last error:/)).toBeInTheDocument();

    answer = fail(409, 'This feed is being checked right now. Try again in a moment.');
    await user.click(screen.getByRole('button', { name: 'Check now' }));
    expect(await screen.findByText('This feed is being checked right now. Try again in a moment.')).toBeInTheDocument();
    expect(api.callsTo('POST /api/rss-feeds/feed-1/check')).toHaveLength(3);
  });

  it('"Check now" refused by the limits shows the server\'s message on the card, and the button works again', async () => {
    let answer = fail(429, 'This feed was checked less than a minute ago. Try again in 42 seconds.');
    const api = setUp({ 'POST /api/rss-feeds/feed-1/check': () => answer }, [makeFeed()]);
    const { user } = renderApp('/rss-feeds');
    const card = await screen.findByRole('article', { name: 'Acme posts' });
    await user.click(within(card).getByRole('button', { name: 'Check now' }));
    expect(await within(card).findByRole('status')).toHaveTextContent('This feed was checked less than a minute ago. Try again in 42 seconds.');

    answer = fail(429, 'You have used all 30 feed checks of this hour. Try again in 17 minutes.');
    await user.click(within(card).getByRole('button', { name: 'Check now' }));
    await waitFor(() => expect(within(card).getByRole('status')).toHaveTextContent('You have used all 30 feed checks of this hour. Try again in 17 minutes.'));
    expect(within(card).getByRole('button', { name: 'Check now' })).toBeEnabled();
    expect(api.callsTo('POST /api/rss-feeds/feed-1/check')).toHaveLength(2);
  });

  it('alerts the server\'s message when the feed limit is reached', async () => {
    setUp({ 'POST /api/sites/site-1/rss-feeds': fail(409, 'You can have at most 50 RSS feeds over all your sites. Delete a feed to add another.') });
    const dialogs = captureDialogs();
    const { user } = renderApp('/rss-feeds');
    await user.click(await screen.findByRole('button', { name: '+ Add Feed' }));
    await user.type(screen.getByLabelText(/^Feed Name/), 'One too many');
    await user.type(screen.getByLabelText(/^RSS Feed URL/), 'https://news.example/rss');
    await user.click(screen.getByRole('button', { name: 'Add Feed' }));
    await waitFor(() => expect(dialogs.alerts).toEqual(['You can have at most 50 RSS feeds over all your sites. Delete a feed to add another.']));
  });

  it('edits a feed from the list with PATCH and alerts "RSS feed updated successfully!"', async () => {
    let feed = makeFeed({ utm_params: { utm_source: 'herald', utm_medium: null, utm_campaign: null }, create_draft: true });
    const api = setUp({
      'GET /api/sites/site-1/rss-feeds': () => ok({ feeds: [feed] }),
      'PATCH /api/rss-feeds/feed-1': (call) => {
        feed = { ...feed, name: (call.body as { name: string }).name };
        return ok({ feed });
      },
    });
    const dialogs = captureDialogs();
    const { user } = renderApp('/rss-feeds');
    await user.click(await screen.findByRole('button', { name: 'Edit Acme posts' }));
    const form = screen.getByRole('form', { name: 'Edit Acme posts' });
    expect(within(form).getByRole('checkbox', { name: 'Active' })).not.toBeChecked();
    expect(within(form).getByLabelText('utm_source')).toHaveValue('herald');
    const name = within(form).getByLabelText(/^Feed Name/);
    await user.clear(name);
    await user.type(name, 'Acme articles');
    await user.click(within(form).getByRole('button', { name: 'Save Changes' }));

    await waitFor(() => expect(dialogs.alerts).toEqual(['RSS feed updated successfully!']));
    expect(api.callsTo('PATCH /api/rss-feeds/feed-1')[0]?.body).toEqual({
      name: 'Acme articles',
      url: 'https://blog.acme.example/feed.xml',
      iconUrl: null,
      utmParams: { utm_source: 'herald', utm_medium: '', utm_campaign: '' },
      showActionButtons: false,
      createDraft: true,
      maxPushesPerDay: 2,
      segmentId: null,
    });
    expect(await screen.findByRole('heading', { name: 'Acme articles' })).toBeInTheDocument();
  });
});
