import type { Segment, Site } from '@herald/contracts';
import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { deferred, fail, mockApi, ok, type RecordedCall } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { captureDialogs, renderApp } from '../../../test/render-app';

// Spec §2 Segments, §7 Segments.

const site = makeSite({ id: 'site-1', settings: { ...makeSite().settings, timezone: 'Asia/Tokyo' } });

function makeSegment(overrides: Partial<Segment> = {}): Segment {
  return {
    id: 'seg-1',
    site_id: 'site-1',
    name: 'Chrome in Germany',
    rules: { browser: 'Chrome', country: 'DE' },
    estimated_count: 1234,
    is_estimate: false,
    sample_size: null,
    created_at: '2026-03-01T10:00:00.000Z',
    // 23:30 UTC is already the next day in Tokyo.
    updated_at: '2026-03-04T23:30:00.000Z',
    ...overrides,
  };
}

function setUp(segments: Segment[], extra: Parameters<typeof mockApi>[0] = {}, sites: Site[] = [site]) {
  signIn();
  return mockApi({
    'GET /api/auth/me': ok({ user: makeUser() }),
    'GET /api/sites': ok({ sites }),
    'GET /api/sites/site-1/segments': ok({ segments }),
    ...extra,
  });
}

const card = async (name: string) => {
  const heading = await screen.findByRole('heading', { name });
  return heading.closest('article') as HTMLElement;
};

describe('segments page', () => {
  it('lists each segment with its name, count, rule chips and updated date', async () => {
    setUp([
      makeSegment(),
      makeSegment({ id: 'seg-2', name: 'Loyal VIPs', rules: { os: 'macOS', subscribed_days_ago: 7, tags: ['vip', 'newsletter'] }, estimated_count: 1 }),
      makeSegment({ id: 'seg-3', name: 'Everyone', rules: {}, estimated_count: 0 }),
    ]);
    renderApp('/segments');

    const first = await card('Chrome in Germany');
    expect(within(first).getByTestId('segment-count')).toHaveTextContent('1,234 subscribers');
    expect(within(within(first).getByRole('list', { name: 'Rules' })).getAllByRole('listitem').map((li) => li.textContent)).toEqual([
      'Browser: Chrome',
      'Country: DE',
    ]);
    expect(within(first).getByText('Mar 5, 2026')).toHaveAttribute('datetime', '2026-03-04T23:30:00.000Z');

    const second = await card('Loyal VIPs');
    expect(within(second).getByTestId('segment-count')).toHaveTextContent('1 subscriber');
    expect(within(second).getAllByRole('listitem').map((li) => li.textContent)).toEqual(['OS: macOS', 'Subscribed 7+ days ago', 'Tags: vip, newsletter']);

    const third = await card('Everyone');
    expect(within(third).getByTestId('segment-count')).toHaveTextContent('0 subscribers');
    expect(within(third).getAllByRole('listitem').map((li) => li.textContent)).toEqual(['All subscribers']);
  });

  it('shows an empty state that opens the form', async () => {
    setUp([]);
    const { user } = renderApp('/segments');
    expect(await screen.findByRole('heading', { name: 'No segments yet' })).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Create your first segment' }));
    expect(screen.getByRole('form', { name: 'New Segment' })).toBeInTheDocument();
    expect(screen.queryByRole('heading', { name: 'No segments yet' })).not.toBeInTheDocument();
  });

  it('handles "no site selected"', async () => {
    setUp([], {}, []);
    renderApp('/segments');
    expect(await screen.findByRole('heading', { name: 'No Site Selected' })).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: '+ New Segment' })).not.toBeInTheDocument();
  });

  it('offers the spec choices and requires a name', async () => {
    const api = setUp([]);
    const { user } = renderApp('/segments');
    await user.click(await screen.findByRole('button', { name: '+ New Segment' }));

    const form = screen.getByRole('form', { name: 'New Segment' });
    const options = (name: string) => [...(within(form).getByRole('combobox', { name }) as HTMLSelectElement).options].map((o) => o.textContent);
    expect(options('Browser')).toEqual(['Any', 'Chrome', 'Firefox', 'Safari', 'Edge']);
    expect(options('Operating System')).toEqual(['Any', 'Windows', 'macOS', 'Linux', 'Android', 'iOS']);
    expect(within(form).getByText('7 for users subscribed 7+ days ago')).toBeInTheDocument();
    expect(within(form).getByLabelText(/^Segment Name/)).toBeRequired();
    expect(within(form).getByLabelText(/^Segment Name/)).toHaveFocus();

    await user.click(within(form).getByRole('button', { name: 'Create Segment' }));
    expect(await within(form).findByText('Segment name is required')).toBeInTheDocument();
    expect(api.callsTo('POST /api/sites/site-1/segments')).toHaveLength(0);

    await user.type(within(form).getByLabelText(/^Segment Name/), 'Typo');
    await user.type(within(form).getByLabelText('Country'), 'DE, Narnia');
    await user.type(within(form).getByLabelText('Subscribed Days Ago'), '0');
    await user.click(within(form).getByRole('button', { name: 'Create Segment' }));
    expect(await within(form).findByText(/"Narnia" is not a country code/)).toBeInTheDocument();
    expect(within(form).getByText('Enter a whole number of days from 1 to 3650')).toBeInTheDocument();
    expect(api.callsTo('POST /api/sites/site-1/segments')).toHaveLength(0);
  });

  it('creates a segment sending only the rules that are filled in', async () => {
    const dialogs = captureDialogs();
    const created = makeSegment({ id: 'seg-9', name: 'Week-old Safari', rules: { browser: 'Safari', subscribed_days_ago: 7 }, estimated_count: 42 });
    const api = setUp([makeSegment()], { 'POST /api/sites/site-1/segments': ok({ segment: created }, 201) });
    const { user } = renderApp('/segments');
    await user.click(await screen.findByRole('button', { name: '+ New Segment' }));
    const form = screen.getByRole('form', { name: 'New Segment' });

    await user.type(within(form).getByLabelText(/^Segment Name/), '  Week-old Safari ');
    await user.selectOptions(within(form).getByRole('combobox', { name: 'Browser' }), 'Safari');
    await user.type(within(form).getByLabelText('Subscribed Days Ago'), '7');
    await user.type(within(form).getByLabelText(/^Tags/), ' , ');
    await user.click(within(form).getByRole('button', { name: 'Create Segment' }));

    await waitFor(() => expect(dialogs.alerts).toEqual(['Segment created successfully!']));
    const [call] = api.callsTo('POST /api/sites/site-1/segments') as [RecordedCall];
    expect(call.body).toEqual({ name: 'Week-old Safari', rules: { browser: 'Safari', subscribed_days_ago: 7 } });
    expect(call.headers.get('authorization')).toBe('Bearer session-token');

    expect(screen.queryByRole('form', { name: 'New Segment' })).not.toBeInTheDocument();
    const item = await card('Week-old Safari');
    expect(within(item).getByTestId('segment-count')).toHaveTextContent('42 subscribers');
    // Newest first, as the server lists them.
    expect(screen.getAllByRole('heading', { level: 2 }).map((h) => h.textContent)).toEqual(['Week-old Safari', 'Chrome in Germany']);
    expect(screen.getByRole('button', { name: '+ New Segment' })).toHaveFocus();
  });

  it('sends every rule when all are filled in, and shows the server message on failure', async () => {
    const dialogs = captureDialogs();
    const api = setUp([], { 'POST /api/sites/site-1/segments': fail(409, 'A segment named "All" already exists for this site') });
    const { user } = renderApp('/segments');
    await user.click(await screen.findByRole('button', { name: '+ New Segment' }));
    const form = screen.getByRole('form', { name: 'New Segment' });
    await user.type(within(form).getByLabelText(/^Segment Name/), 'All');
    await user.selectOptions(within(form).getByRole('combobox', { name: 'Browser' }), 'Edge');
    await user.selectOptions(within(form).getByRole('combobox', { name: 'Operating System' }), 'Windows');
    await user.type(within(form).getByLabelText('Country'), ' de, fr ');
    await user.type(within(form).getByLabelText('Subscribed Days Ago'), '30');
    await user.type(within(form).getByLabelText(/^Tags/), 'vip, newsletter,vip');
    await user.click(within(form).getByRole('button', { name: 'Create Segment' }));

    await waitFor(() => expect(dialogs.alerts).toEqual(['A segment named "All" already exists for this site']));
    expect(api.callsTo('POST /api/sites/site-1/segments')[0]!.body).toEqual({
      name: 'All',
      rules: { browser: 'Edge', os: 'Windows', country: 'de, fr', subscribed_days_ago: 30, tags: ['vip', 'newsletter'] },
    });
    // The form stays open with what was typed.
    expect(within(form).getByLabelText(/^Segment Name/)).toHaveValue('All');
  });

  it('edits a segment in place: the form opens filled in, PATCH sends the new rule set', async () => {
    const dialogs = captureDialogs();
    const segment = makeSegment({ rules: { browser: 'Chrome', country: 'DE, FR', subscribed_days_ago: 3, tags: ['vip'] } });
    const updated = makeSegment({ name: 'Chrome anywhere', rules: { browser: 'Chrome', tags: ['vip'] }, estimated_count: 5000, updated_at: '2026-04-01T00:00:00.000Z' });
    const api = setUp([segment], { 'PATCH /api/segments/seg-1': ok({ segment: updated }) });
    const { user } = renderApp('/segments');

    await user.click(within(await card('Chrome in Germany')).getByRole('button', { name: 'Edit Chrome in Germany' }));
    const form = screen.getByRole('form', { name: 'Edit Segment' });
    expect(within(form).getByLabelText(/^Segment Name/)).toHaveValue('Chrome in Germany');
    expect(within(form).getByRole('combobox', { name: 'Browser' })).toHaveValue('Chrome');
    expect(within(form).getByRole('combobox', { name: 'Operating System' })).toHaveValue('');
    expect(within(form).getByLabelText('Country')).toHaveValue('DE, FR');
    expect(within(form).getByLabelText('Subscribed Days Ago')).toHaveValue(3);
    expect(within(form).getByLabelText(/^Tags/)).toHaveValue('vip');

    const name = within(form).getByLabelText(/^Segment Name/);
    await user.clear(name);
    await user.type(name, 'Chrome anywhere');
    await user.clear(within(form).getByLabelText('Country'));
    await user.clear(within(form).getByLabelText('Subscribed Days Ago'));
    await user.click(within(form).getByRole('button', { name: 'Save Changes' }));

    await waitFor(() => expect(dialogs.alerts).toEqual(['Segment updated successfully!']));
    expect(api.callsTo('PATCH /api/segments/seg-1')[0]!.body).toEqual({ name: 'Chrome anywhere', rules: { browser: 'Chrome', tags: ['vip'] } });
    const item = await card('Chrome anywhere');
    expect(within(item).getByTestId('segment-count')).toHaveTextContent('5,000 subscribers');
    expect(within(item).getAllByRole('listitem').map((li) => li.textContent)).toEqual(['Browser: Chrome', 'Tag: vip']);
    expect(within(item).getByRole('button', { name: 'Edit Chrome anywhere' })).toHaveFocus();
  });

  it('cancels an edit without a request', async () => {
    const api = setUp([makeSegment()]);
    const { user } = renderApp('/segments');
    await user.click(within(await card('Chrome in Germany')).getByRole('button', { name: /^Edit/ }));
    await user.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('form')).not.toBeInTheDocument();
    expect(await card('Chrome in Germany')).toBeInTheDocument();
    expect(api.calls.filter((c) => c.method !== 'GET')).toHaveLength(0);
  });

  it('deletes after the spec confirm, and not without it', async () => {
    const declined = captureDialogs(false);
    const api = setUp([makeSegment(), makeSegment({ id: 'seg-2', name: 'Other' })], { 'DELETE /api/segments/seg-1': ok({ deleted: true }) });
    const { user } = renderApp('/segments');

    await user.click(within(await card('Chrome in Germany')).getByRole('button', { name: 'Delete Chrome in Germany' }));
    expect(declined.confirms).toEqual(['Are you sure you want to delete this segment?']);
    expect(api.callsTo('DELETE /api/segments/seg-1')).toHaveLength(0);

    const accepted = captureDialogs(true);
    await user.click(within(await card('Chrome in Germany')).getByRole('button', { name: 'Delete Chrome in Germany' }));
    expect(accepted.confirms).toEqual(['Are you sure you want to delete this segment?']);
    await waitFor(() => expect(screen.queryByRole('heading', { name: 'Chrome in Germany' })).not.toBeInTheDocument());
    expect(api.callsTo('DELETE /api/segments/seg-1')).toHaveLength(1);
    expect(screen.getByRole('heading', { name: 'Other' })).toBeInTheDocument();
  });

  it('explains why a segment in use cannot be deleted', async () => {
    const dialogs = captureDialogs(true);
    const message = 'This segment is used by 1 notification ("Summer sale"). Change their target to All Subscribers or another segment first.';
    setUp([makeSegment()], { 'DELETE /api/segments/seg-1': fail(409, message) });
    const { user } = renderApp('/segments');
    await user.click(within(await card('Chrome in Germany')).getByRole('button', { name: /^Delete/ }));
    await waitFor(() => expect(dialogs.alerts).toEqual([message]));
    expect(screen.getByRole('heading', { name: 'Chrome in Germany' })).toBeInTheDocument();
  });

  it('refreshes the estimated count on request', async () => {
    const answer = deferred();
    const api = setUp([makeSegment({ estimated_count: 10 })], { 'POST /api/segments/seg-1/estimate': () => answer.promise });
    const { user } = renderApp('/segments');
    const item = await card('Chrome in Germany');
    const refresh = within(item).getByRole('button', { name: 'Refresh count of Chrome in Germany' });
    await user.click(refresh);
    await waitFor(() => expect(refresh).toBeDisabled());
    answer.resolve(ok({ estimated_count: 12 }));
    await waitFor(() => expect(within(item).getByTestId('segment-count')).toHaveTextContent('12 subscribers'));
    expect(api.callsTo('POST /api/segments/seg-1/estimate')[0]!.body).toBeUndefined();
  });

  it('says when a count is estimated from a sample, and a refresh keeps saying so (docs/product.md, "Segments")', async () => {
    setUp([makeSegment({ estimated_count: 512000, is_estimate: true, sample_size: 11702 })], {
      'POST /api/segments/seg-1/estimate': ok({ estimated_count: 512000, is_estimate: false, sample_size: null }),
    });
    const { user } = renderApp('/segments');
    const item = await card('Chrome in Germany');
    expect(within(item).getByTestId('segment-count')).toHaveTextContent('≈ 512,000 subscribers (estimated from a sample of 11,702)');
    await user.click(within(item).getByRole('button', { name: 'Refresh count of Chrome in Germany' }));
    // The site shrank below the estimate threshold: the fresh count is exact and no longer marked.
    await waitFor(() => expect(within(item).getByTestId('segment-count')).toHaveTextContent(/^512,000 subscribers$/));
  });

  it('shows a load failure with a retry', async () => {
    let calls = 0;
    setUp([], {
      'GET /api/sites/site-1/segments': () => (++calls <= 2 ? fail(500, 'Database is down') : ok({ segments: [makeSegment()] })),
    });
    const { user } = renderApp('/segments');
    expect(await screen.findByText('Database is down')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('heading', { name: 'Chrome in Germany' })).toBeInTheDocument();
  });
});
