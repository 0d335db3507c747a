import type { Subscriber } from '@herald/contracts';
import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { fail, mockApi, ok, type RecordedCall } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { captureDialogs, renderApp } from '../../../test/render-app';
import { setViewportWidth } from '../../../test/viewport';
import { SUBSCRIBER_PRIVACY_TEXTS as TEXTS } from '../privacy-texts';

const site = makeSite({ id: 'site-1', settings: { ...makeSite().settings, timezone: 'America/New_York' } });
const LIST = 'GET /api/sites/site-1/subscribers';

function makeSubscriber(overrides: Partial<Subscriber> = {}): Subscriber {
  return {
    id: 'sub-1',
    browser: 'Chrome',
    os: 'Windows',
    country: 'DE',
    metadata: { user_agent: 'Mozilla/5.0' },
    language: 'de-DE',
    timezone: 'Europe/Berlin',
    subscribed_at: '2026-02-10T15:00:00.000Z',
    last_seen_at: '2026-02-28T03:30:00.000Z',
    unsubscribed_at: null,
    is_active: true,
    tags: [],
    test_device: false,
    test_device_name: null,
    ...overrides,
  };
}

const chrome = makeSubscriber({ id: 'sub-1', tags: ['vip', 'newsletter'] });
const unknown = makeSubscriber({ id: 'sub-2', browser: 'Unknown', os: '', country: 'Unknown', last_seen_at: null });
const gone = makeSubscriber({ id: 'sub-3', browser: 'Firefox', os: 'Linux', country: 'FR', is_active: false, unsubscribed_at: '2026-02-20T10:00:00.000Z' });

const page = (subscribers: Subscriber[], total = subscribers.length, pageNumber = 1) => ok({ subscribers, total, page: pageNumber, limit: 50 });

function setUp(list: (call: RecordedCall) => ReturnType<typeof ok>, extra: Parameters<typeof mockApi>[0] = {}) {
  signIn();
  return mockApi({ 'GET /api/auth/me': ok({ user: makeUser() }), 'GET /api/sites': ok({ sites: [site] }), [LIST]: list, ...extra });
}

const rowOf = (id: string) => screen.getByTestId(`subscriber-${id}`);

/** Files the page hands to the browser's "save" (saveFile: an object URL on a clicked link), with their names and contents. */
function captureDownloads() {
  const saved: Array<{ name: string; blob: Blob }> = [];
  const blobs = new Map<string, Blob>();
  URL.createObjectURL = (blob: Blob | MediaSource) => {
    const url = `blob:test/${blobs.size + 1}`;
    blobs.set(url, blob as Blob);
    return url;
  };
  URL.revokeObjectURL = () => undefined;
  vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
    saved.push({ name: this.download, blob: blobs.get(this.href)! });
  });
  return saved;
}

const EXPORT = 'GET /api/sites/site-1/subscribers/export';
const CSV = '\uFEFFid,created_at,browser,os,country,language,timezone,tags,external_id,status\r\nsub-1,2026-02-10T15:00:00.000Z,Chrome,Windows,DE,de-DE,Europe/Berlin,newsletter|vip,,active\r\n';

describe('subscribers page (spec §2 Subscribers)', () => {
  it('shows the total and a table with Browser, OS, Country, Subscribed, Last Seen ("Never"), Status; unknown values read "Unknown"', async () => {
    const api = setUp(() => page([chrome, unknown, gone], 3));
    renderApp('/subscribers');

    const table = await screen.findByRole('table', { name: 'Subscribers' });
    expect(screen.getByTestId('subscriber-total')).toHaveTextContent('3 subscribers');
    expect(within(table).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['Browser', 'OS', 'Country', 'Subscribed', 'Last Seen', 'Status', 'Actions']);

    const cells = (id: string) => within(rowOf(id)).getAllByRole('cell').map((c) => c.textContent);
    expect(cells('sub-1')).toEqual(['Chromevipnewsletter', 'Windows', 'Germany (DE)', 'Feb 10, 2026', 'Feb 27, 2026, 10:30 PM', 'Active', 'Make test deviceRemoveDownload dataErase completely']);
    expect(cells('sub-2')).toEqual(['Unknown', 'Unknown', 'Unknown', 'Feb 10, 2026', 'Never', 'Active', 'Make test deviceRemoveDownload dataErase completely']);
    // An inactive subscriber has nothing left to remove, but its data can still be downloaded or erased.
    expect(cells('sub-3')).toEqual(['Firefox', 'Linux', 'France (FR)', 'Feb 10, 2026', 'Feb 27, 2026, 10:30 PM', 'Inactive', 'Download dataErase completely']);
    expect(within(within(rowOf('sub-1')).getByRole('list', { name: 'Tags' })).getAllByRole('listitem').map((t) => t.textContent)).toEqual(['vip', 'newsletter']);

    const query = api.callsTo(LIST)[0]!.url.searchParams;
    expect(query.has('is_active')).toBe(false);
    expect(query.has('search')).toBe(false);
    expect(query.get('page')).toBe('1');
  });

  it('filters All / Active / Inactive with is_active', async () => {
    const api = setUp((call) => {
      const active = call.url.searchParams.get('is_active');
      return page(active === 'true' ? [chrome] : active === 'false' ? [gone] : [chrome, gone]);
    });
    const { user } = renderApp('/subscribers');

    const filters = await screen.findByRole('group', { name: 'Filter by status' });
    expect(within(filters).getAllByRole('button').map((b) => b.textContent)).toEqual(['All', 'Active', 'Inactive']);
    await screen.findByText('2 subscribers');

    await user.click(within(filters).getByRole('button', { name: 'Active' }));
    await screen.findByText('1 subscriber');
    expect(api.callsTo(LIST).at(-1)!.url.searchParams.get('is_active')).toBe('true');
    expect(within(filters).getByRole('button', { name: 'Active' })).toHaveAttribute('aria-pressed', 'true');

    await user.click(within(filters).getByRole('button', { name: 'Inactive' }));
    await waitFor(() => expect(api.callsTo(LIST).at(-1)!.url.searchParams.get('is_active')).toBe('false'));
    expect(await screen.findByTestId('subscriber-sub-3')).toBeInTheDocument();

    await user.click(within(filters).getByRole('button', { name: 'All' }));
    await screen.findByText('2 subscribers');
    expect(api.callsTo(LIST).map((c) => c.url.searchParams.get('is_active'))).toEqual([null, 'true', 'false']);
  });

  it('searches by browser or country after typing pauses, and says when nothing matches', async () => {
    const api = setUp((call) => {
      const search = call.url.searchParams.get('search');
      return page(search === null ? [chrome, gone] : search.toLowerCase() === 'firefox' ? [gone] : [], search === null ? 2 : search.toLowerCase() === 'firefox' ? 1 : 0);
    });
    const { user } = renderApp('/subscribers');

    const search = await screen.findByRole('searchbox', { name: 'Search subscribers' });
    expect(search).toHaveAttribute('placeholder', 'Search by browser or country');
    await screen.findByText('2 subscribers');

    await user.type(search, 'Firefox');
    await screen.findByText('1 subscriber');
    // One request for the whole word, not one per keystroke.
    expect(api.callsTo(LIST).map((c) => c.url.searchParams.get('search'))).toEqual([null, 'Firefox']);
    expect(screen.queryByTestId('subscriber-sub-1')).not.toBeInTheDocument();

    await user.clear(search);
    await user.type(search, 'Narnia');
    expect(await screen.findByRole('heading', { name: 'No subscribers match your filters' })).toBeInTheDocument();
  });

  it('Refresh fetches the list again: someone who just subscribed on the site shows up', async () => {
    let subscribers = [chrome];
    setUp(() => page(subscribers));
    const { user } = renderApp('/subscribers');
    expect(await screen.findByTestId('subscriber-total')).toHaveTextContent('1 subscriber');
    subscribers = [chrome, gone];
    await user.click(screen.getByRole('button', { name: 'Refresh' }));
    await waitFor(() => expect(screen.getByTestId('subscriber-total')).toHaveTextContent('2 subscribers'));
  });

  it('says "No subscribers yet" when the site has none', async () => {
    setUp(() => page([]));
    renderApp('/subscribers');

    expect(await screen.findByRole('heading', { name: 'No subscribers yet' })).toBeInTheDocument();
    expect(screen.getByTestId('subscriber-total')).toHaveTextContent('0 subscribers');
  });

  it('Remove asks first, unsubscribes with DELETE /api/subscribers/{id} and alerts "Subscriber removed successfully"', async () => {
    let removed = false;
    const api = setUp(() => page([removed ? { ...chrome, is_active: false } : chrome]), {
      'DELETE /api/subscribers/sub-1': () => {
        removed = true;
        return ok({ subscriber: { ...chrome, is_active: false } });
      },
    });
    const declined = captureDialogs(false);
    const { user } = renderApp('/subscribers');

    await user.click(await within(await screen.findByTestId('subscriber-sub-1')).findByRole('button', { name: 'Remove' }));
    expect(declined.confirms).toEqual(['Are you sure you want to remove this subscriber?']);
    expect(api.callsTo('DELETE /api/subscribers/sub-1')).toHaveLength(0);

    const dialogs = captureDialogs(true);
    await user.click(within(rowOf('sub-1')).getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(dialogs.alerts).toEqual(['Subscriber removed successfully']));
    expect(api.callsTo('DELETE /api/subscribers/sub-1')).toHaveLength(1);
    // The list is fetched again: the subscriber is now inactive and has nothing left to remove.
    await waitFor(() => expect(within(rowOf('sub-1')).getByText('Inactive')).toBeInTheDocument());
    expect(within(rowOf('sub-1')).queryByRole('button', { name: 'Remove' })).not.toBeInTheDocument();
  });

  it('Remove failing alerts the server message, else "Failed to remove subscriber"', async () => {
    setUp(() => page([chrome]), { 'DELETE /api/subscribers/sub-1': fail(404, 'Subscriber not found') });
    const dialogs = captureDialogs(true);
    const { user } = renderApp('/subscribers');

    await user.click(await within(await screen.findByTestId('subscriber-sub-1')).findByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(dialogs.alerts).toEqual(['Subscriber not found']));
  });

  it('pages through more subscribers than fit on one page', async () => {
    const api = setUp((call) => {
      const n = Number(call.url.searchParams.get('page'));
      return ok({ subscribers: [makeSubscriber({ id: `p${n}` })], total: 120, page: n, limit: 50, cursors: { next: `${n}000.last`, previous: `${n}000.first` } });
    });
    const { user } = renderApp('/subscribers');

    const pager = await screen.findByRole('navigation', { name: 'Pagination' });
    expect(pager).toHaveTextContent('Page 1 of 3');
    expect(within(pager).getByRole('button', { name: 'Previous' })).toBeDisabled();
    await user.click(within(pager).getByRole('button', { name: 'Next' }));
    expect(await screen.findByTestId('subscriber-p2')).toBeInTheDocument();
    expect(pager).toHaveTextContent('Page 2 of 3');
    expect(api.callsTo(LIST).at(-1)!.url.searchParams.get('page')).toBe('2');
    expect(api.callsTo(LIST).at(-1)!.url.searchParams.get('limit')).toBe('50');
    // Next reads on from where page 1 ended; Previous reads back from where the page starts; page 1 from the top.
    expect(api.callsTo(LIST).at(-1)!.url.searchParams.get('after')).toBe('1000.last');
    await user.click(within(pager).getByRole('button', { name: 'Next' }));
    expect(await screen.findByTestId('subscriber-p3')).toBeInTheDocument();
    await user.click(within(pager).getByRole('button', { name: 'Previous' }));
    expect(await screen.findByTestId('subscriber-p2')).toBeInTheDocument();
    expect(api.callsTo(LIST).at(-1)!.url.searchParams.get('before')).toBe('3000.first');
    await user.click(within(pager).getByRole('button', { name: 'Previous' }));
    expect(await screen.findByTestId('subscriber-p1')).toBeInTheDocument();
    expect(pager).toHaveTextContent('Page 1 of 3');
    // Page 1 is the one read from the top (shown again from the cache): no page 1 was asked for by cursor.
    expect(api.callsTo(LIST).filter((call) => call.url.searchParams.get('page') === '1' && (call.url.searchParams.has('before') || call.url.searchParams.has('after')))).toEqual([]);

    // A new filter starts again at page 1.
    await user.click(screen.getByRole('button', { name: 'Active' }));
    await waitFor(() => expect(api.callsTo(LIST).at(-1)!.url.searchParams.get('page')).toBe('1'));
  });

  it('uses cards instead of a table on a phone', async () => {
    setViewportWidth(375);
    setUp(() => page([chrome, unknown]));
    renderApp('/subscribers');

    const cards = await screen.findByRole('list', { name: 'Subscribers' });
    expect(screen.queryByRole('table')).not.toBeInTheDocument();
    const first = within(cards).getByTestId('subscriber-sub-1');
    expect(first).toHaveTextContent('Chrome');
    expect(first).toHaveTextContent('Germany (DE)');
    expect(within(first).getByRole('button', { name: 'Remove' })).toBeInTheDocument();
    expect(within(cards).getByTestId('subscriber-sub-2')).toHaveTextContent(/OSUnknown.*CountryUnknown.*Last SeenNever/);
  });

  it('shows the server message when the list cannot be loaded', async () => {
    setUp(() => fail(403, 'You do not have access to this site'));
    renderApp('/subscribers');

    expect(await screen.findByRole('alert')).toHaveTextContent('You do not have access to this site');
  });

  it('marks a subscriber as a test device, renames it and unmarks it (PATCH /api/subscribers/{id}/test-device)', async () => {
    let current = chrome;
    const api = setUp(() => page([current]), {
      'PATCH /api/subscribers/sub-1/test-device': (call) => {
        const body = call.body as { enabled: boolean; name?: string };
        current = { ...current, test_device: body.enabled, test_device_name: body.enabled ? body.name || 'Chrome on Windows' : null };
        return ok({ device: body.enabled ? { subscriber_id: 'sub-1', name: current.test_device_name, browser: 'Chrome', os: 'Windows' } : null });
      },
    });
    const { user } = renderApp('/subscribers');
    const row = await screen.findByTestId('subscriber-sub-1');
    await user.click(within(row).getByRole('button', { name: 'Make test device' }));
    expect(await within(row).findByText('Test device: Chrome on Windows')).toBeInTheDocument();
    expect(api.callsTo('PATCH /api/subscribers/sub-1/test-device')[0]?.body).toEqual({ enabled: true });

    await user.click(within(row).getByRole('button', { name: 'Rename' }));
    const name = within(row).getByRole('textbox', { name: 'Test device name' });
    expect(name).toHaveValue('Chrome on Windows');
    await user.clear(name);
    await user.type(name, 'Office PC');
    await user.click(within(row).getByRole('button', { name: 'Save' }));
    expect(await within(row).findByText('Test device: Office PC')).toBeInTheDocument();
    expect(api.callsTo('PATCH /api/subscribers/sub-1/test-device')[1]?.body).toEqual({ enabled: true, name: 'Office PC' });

    await user.click(within(row).getByRole('button', { name: 'Not a test device' }));
    await waitFor(() => expect(within(row).queryByText(/Test device:/)).not.toBeInTheDocument());
    expect(api.callsTo('PATCH /api/subscribers/sub-1/test-device')[2]?.body).toEqual({ enabled: false });
  });

  it('offers no test device for an inactive subscriber', async () => {
    setUp(() => page([gone]));
    renderApp('/subscribers');
    const row = await screen.findByTestId('subscriber-sub-3');
    expect(within(row).queryByRole('button', { name: 'Make test device' })).not.toBeInTheDocument();
  });

  describe('export and erasure (Herald: moving in and out, privacy)', () => {
    it('Export CSV saves the subscribers the search and status match; the push keys only when ticked, after a warning', async () => {
      const api = setUp(() => page([chrome]), {
        [EXPORT]: (call) => ({
          text: CSV,
          headers: {
            'Content-Type': 'text/csv; charset=utf-8',
            'Content-Disposition': `attachment; filename="herald-subscribers-site-1${call.url.searchParams.get('include_keys') ? '-with-keys' : ''}.csv"`,
          },
        }),
      });
      const saved = captureDownloads();
      const { user } = renderApp('/subscribers');
      await screen.findByTestId('subscriber-sub-1');

      expect(screen.getByText(TEXTS.exportDescription)).toBeInTheDocument();
      const keys = screen.getByRole('checkbox', { name: TEXTS.includeKeys });
      expect(keys).not.toBeChecked();
      expect(screen.queryByText(TEXTS.keysWarning)).not.toBeInTheDocument();

      // The list's filters go with it.
      await user.click(screen.getByRole('button', { name: 'Active' }));
      await user.type(screen.getByRole('searchbox', { name: 'Search subscribers' }), 'Chrome');
      await waitFor(() => expect(api.callsTo(LIST).at(-1)!.url.searchParams.get('search')).toBe('Chrome'));
      await user.click(screen.getByRole('button', { name: TEXTS.exportButton }));
      await waitFor(() => expect(saved).toHaveLength(1));
      const plain = api.callsTo(EXPORT)[0]!.url.searchParams;
      expect(Object.fromEntries(plain)).toEqual({ is_active: 'true', search: 'Chrome' });
      expect(api.callsTo(EXPORT)[0]!.headers.get('authorization')).toBe('Bearer session-token');
      expect(saved[0]!.name).toBe('herald-subscribers-site-1.csv');
      // Saved byte for byte (Blob.text() drops the byte order mark, the bytes keep it).
      expect([...new Uint8Array(await saved[0]!.blob.arrayBuffer())]).toEqual([...new TextEncoder().encode(CSV)]);

      await user.click(keys);
      expect(keys).toBeChecked();
      expect(screen.getByText(TEXTS.keysWarning)).toBeInTheDocument();
      expect(keys).toHaveAccessibleDescription(TEXTS.keysWarning);
      await user.click(screen.getByRole('button', { name: TEXTS.exportButton }));
      await waitFor(() => expect(saved).toHaveLength(2));
      expect(Object.fromEntries(api.callsTo(EXPORT)[1]!.url.searchParams)).toEqual({ is_active: 'true', search: 'Chrome', include_keys: 'true' });
      expect(saved[1]!.name).toBe('herald-subscribers-site-1-with-keys.csv');

      await user.click(keys);
      expect(screen.queryByText(TEXTS.keysWarning)).not.toBeInTheDocument();
    });

    it('Export CSV failing alerts the server message, else a fallback', async () => {
      setUp(() => page([chrome]), { [EXPORT]: fail(403, 'This needs the admin role or higher.') });
      const saved = captureDownloads();
      const dialogs = captureDialogs(true);
      const { user } = renderApp('/subscribers');
      await user.click(await screen.findByRole('button', { name: TEXTS.exportButton }));
      await waitFor(() => expect(dialogs.alerts).toEqual(['This needs the admin role or higher.']));
      expect(saved).toEqual([]);
    });

    it('Download data saves everything held about one subscriber as JSON', async () => {
      const data = { success: true, data: { subscriber: { id: 'sub-3' }, tags: [], events: [], deliveries: [] } };
      const api = setUp(() => page([chrome, gone]), {
        'GET /api/subscribers/sub-3/export': { body: data, headers: { 'Content-Disposition': 'attachment; filename="herald-subscriber-sub-3.json"' } },
      });
      const saved = captureDownloads();
      const { user } = renderApp('/subscribers');
      await user.click(await within(await screen.findByTestId('subscriber-sub-3')).findByRole('button', { name: TEXTS.downloadData }));
      await waitFor(() => expect(saved).toHaveLength(1));
      expect(api.callsTo('GET /api/subscribers/sub-3/export')).toHaveLength(1);
      expect(saved[0]!.name).toBe('herald-subscriber-sub-3.json');
      expect(JSON.parse(await saved[0]!.blob.text())).toEqual(data);
    });

    it('Erase completely asks first, erases with DELETE ?erase=true, says so, and the subscriber leaves the list', async () => {
      let erased = false;
      const api = setUp(() => page(erased ? [chrome] : [chrome, gone]), {
        'DELETE /api/subscribers/sub-3': () => {
          erased = true;
          return ok({ erased: { id: 'sub-3', deliveries: 4, events: 1 } });
        },
      });
      const declined = captureDialogs(false);
      const { user } = renderApp('/subscribers');

      await user.click(await within(await screen.findByTestId('subscriber-sub-3')).findByRole('button', { name: TEXTS.erase }));
      expect(declined.confirms).toEqual([TEXTS.eraseConfirm]);
      expect(api.callsTo('DELETE /api/subscribers/sub-3')).toHaveLength(0);

      const dialogs = captureDialogs(true);
      await user.click(within(rowOf('sub-3')).getByRole('button', { name: TEXTS.erase }));
      await waitFor(() => expect(dialogs.alerts).toEqual([TEXTS.erased]));
      const call = api.callsTo('DELETE /api/subscribers/sub-3');
      expect(call).toHaveLength(1);
      expect(call[0]!.url.searchParams.get('erase')).toBe('true');
      await waitFor(() => expect(screen.queryByTestId('subscriber-sub-3')).not.toBeInTheDocument());
      expect(screen.getByTestId('subscriber-total')).toHaveTextContent('1 subscriber');
    });

    it('Erase failing alerts the server message, else "Failed to erase subscriber"', async () => {
      setUp(() => page([chrome]), { 'DELETE /api/subscribers/sub-1': fail(500) });
      const dialogs = captureDialogs(true);
      const { user } = renderApp('/subscribers');
      await user.click(await within(await screen.findByTestId('subscriber-sub-1')).findByRole('button', { name: TEXTS.erase }));
      await waitFor(() => expect(dialogs.alerts).toEqual([TEXTS.eraseFailed]));
    });

    it('below admin, export, download and erase are disabled and say why (the server refuses them anyway)', async () => {
      signIn();
      mockApi({ 'GET /api/auth/me': ok({ user: makeUser() }), 'GET /api/sites': ok({ sites: [makeSite({ ...site, role: 'editor' })] }), [LIST]: () => page([chrome]) });
      renderApp('/subscribers');
      const row = await screen.findByTestId('subscriber-sub-1');
      const exportButton = screen.getByRole('button', { name: TEXTS.exportButton });
      expect(exportButton).toBeDisabled();
      expect(exportButton).toHaveAttribute('title', "Editors can't export subscribers");
      expect(screen.getByRole('checkbox', { name: TEXTS.includeKeys })).toBeDisabled();
      expect(within(row).getByRole('button', { name: TEXTS.downloadData })).toBeDisabled();
      expect(within(row).getByRole('button', { name: TEXTS.erase })).toHaveAttribute('title', "Editors can't erase subscribers");
      expect(within(row).getByRole('button', { name: TEXTS.erase })).toBeDisabled();
      expect(within(row).getByRole('button', { name: 'Remove' })).toBeDisabled();
    });

    it('shows the export and the row actions on a phone too', async () => {
      setViewportWidth(375);
      setUp(() => page([gone]));
      renderApp('/subscribers');
      const card = await within(await screen.findByRole('list', { name: 'Subscribers' })).findByTestId('subscriber-sub-3');
      expect(within(card).getByRole('button', { name: TEXTS.downloadData })).toBeInTheDocument();
      expect(within(card).getByRole('button', { name: TEXTS.erase })).toBeInTheDocument();
      expect(screen.getByRole('button', { name: TEXTS.exportButton })).toBeInTheDocument();
    });
  });
});
