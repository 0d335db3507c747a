import type { SubscriberImport, VapidKey } from '@herald/contracts';
import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { mockApi, ok, fail } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { renderApp } from '../../../test/render-app';

const site = makeSite({ id: 'site-1', name: 'Acme Store' });
const keys: VapidKey[] = [
  { id: 'key-new', public_key: 'BNewPrimaryKeyAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', is_primary: true, subscriber_count: 12, created_at: '2026-03-01T08:00:00.000Z' },
  { id: 'key-old', public_key: 'BOldProviderKeyBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB', is_primary: false, subscriber_count: 3400, created_at: '2026-03-02T08:00:00.000Z' },
];

const anImport = (overrides: Partial<SubscriberImport>): SubscriberImport => ({
  id: 'imp-1',
  site_id: 'site-1',
  status: 'done',
  file_name: 'onesignal.csv',
  bytes_read: 1000,
  file_size: 1000,
  rows_read: 10,
  imported: 8,
  updated: 2,
  rejected: 0,
  enrol_in_welcome_campaign: false,
  error: null,
  report_url: '/api/subscriber-imports/imp-1/report',
  created_at: '2026-03-05T10:00:00.000Z',
  finished_at: '2026-03-05T10:01:00.000Z',
  ...overrides,
});

function setUp(imports: SubscriberImport[] | (() => SubscriberImport[]), extra: Parameters<typeof mockApi>[0] = {}, role: 'owner' | 'editor' = 'owner') {
  signIn();
  return mockApi({
    'GET /api/auth/me': ok({ user: makeUser() }),
    'GET /api/sites': ok({ sites: [{ ...site, role }] }),
    'GET /api/sites/site-1/vapid-keys': ok({ keys }),
    'GET /api/sites/site-1/subscriber-imports': () => ok({ imports: typeof imports === 'function' ? imports() : imports }),
    ...extra,
  });
}

describe('Settings → Import', () => {
  it('uploads the chosen file with the key it was subscribed with and the welcome choice, then follows its progress to the end', async () => {
    let current = anImport({ status: 'queued', bytes_read: 0, file_size: 4000, rows_read: 0, imported: 0, updated: 0, report_url: null, finished_at: null });
    let listed: SubscriberImport[] = [];
    const api = setUp(() => listed, {
      'POST /api/sites/site-1/subscriber-imports': () => {
        listed = [current];
        return ok({ import: current }, 201);
      },
    });
    const { user, router } = renderApp('/settings');
    await user.click(await screen.findByRole('tab', { name: 'Import' }));
    expect(router.state.location.search).toBe('?tab=import');
    expect(await screen.findByText('No imports yet.')).toBeInTheDocument();

    // No file chosen: said at once, nothing sent.
    await user.click(screen.getByRole('button', { name: 'Import subscribers' }));
    expect(await screen.findByText('Choose a CSV or JSON Lines file to import')).toBeInTheDocument();
    expect(api.callsTo('POST /api/sites/site-1/subscriber-imports')).toHaveLength(0);

    const file = new File(['endpoint,p256dh,auth\n'], 'onesignal.csv', { type: 'text/csv' });
    await user.upload(screen.getByLabelText(/^File/), file);
    await user.selectOptions(screen.getByLabelText('Subscribed with'), 'key-old');
    expect(screen.getByRole('switch', { name: 'Send them the welcome campaign' })).toHaveAttribute('aria-checked', 'false');
    await user.click(screen.getByRole('button', { name: 'Import subscribers' }));

    await waitFor(() => expect(api.callsTo('POST /api/sites/site-1/subscriber-imports')).toHaveLength(1));
    const form = api.callsTo('POST /api/sites/site-1/subscriber-imports')[0]!.body as FormData;
    expect(form.get('file')).toBeInstanceOf(File);
    expect((form.get('file') as File).name).toBe('onesignal.csv');
    expect(form.get('vapid_key_id')).toBe('key-old');
    expect(form.get('enrol_in_welcome_campaign')).toBe('false');

    const row = await screen.findByRole('listitem', { name: 'Import of onesignal.csv' });
    expect(within(row).getByText('Queued')).toBeInTheDocument();

    // The job runs: the list is read again while it is in progress.
    current = { ...current, status: 'running', bytes_read: 1000, rows_read: 25, imported: 20, updated: 3, rejected: 2 };
    listed = [current];
    const bar = await within(row).findByRole('progressbar', { name: 'Progress of onesignal.csv' }, { timeout: 4000 });
    await waitFor(() => expect(bar).toHaveAttribute('aria-valuenow', '25'), { timeout: 4000 });
    expect(within(row).getByText('Importing')).toBeInTheDocument();

    current = { ...current, status: 'done', bytes_read: 4000, rows_read: 100, imported: 90, updated: 5, rejected: 5, report_url: '/api/subscriber-imports/imp-1/report', finished_at: '2026-03-05T10:01:00.000Z' };
    listed = [current];
    // Done with rejected rows is a warning, not a green "Done".
    expect(await within(row).findByText('Done, 5 rejected', {}, { timeout: 4000 })).toBeInTheDocument();
    expect(within(row).queryByRole('progressbar')).not.toBeInTheDocument();
    const figures = row.querySelector('dl')!;
    expect(figures).toHaveTextContent('Rows read100');
    expect(figures).toHaveTextContent('Imported90');
    expect(figures).toHaveTextContent('Updated5');
    expect(figures).toHaveTextContent('Rejected5');
    expect(within(row).getByRole('button', { name: 'Download rejected rows (CSV)' })).toBeInTheDocument();
  });

  it('says why an import failed, and shows a clean import as Done without a report button', async () => {
    setUp([
      anImport({ id: 'imp-2', file_name: 'broken.jsonl', status: 'failed', error: 'Line 1 is neither a CSV header nor JSON', report_url: null }),
      anImport({ id: 'imp-1', file_name: 'clean.csv' }),
    ]);
    renderApp('/settings?tab=import');
    const failed = await screen.findByRole('listitem', { name: 'Import of broken.jsonl' });
    expect(within(failed).getByText('Failed')).toBeInTheDocument();
    expect(within(failed).getByText('Line 1 is neither a CSV header nor JSON')).toBeInTheDocument();
    const clean = screen.getByRole('listitem', { name: 'Import of clean.csv' });
    expect(within(clean).getByText('Done')).toBeInTheDocument();
    expect(within(clean).queryByRole('button', { name: /Download rejected rows/ })).not.toBeInTheDocument();
  });

  it("shows the server's message when the upload is refused", async () => {
    setUp([], { 'POST /api/sites/site-1/subscriber-imports': fail(400, 'No VAPID key of this site has the id key-x') });
    const { user } = renderApp('/settings?tab=import');
    await user.upload(await screen.findByLabelText(/^File/), new File(['{}'], 'subs.jsonl'));
    await user.click(screen.getByRole('button', { name: 'Import subscribers' }));
    expect(await screen.findByText('No VAPID key of this site has the id key-x')).toBeInTheDocument();
  });

  it('is for admins and owners: an editor is told so and nothing is loaded', async () => {
    const api = setUp([], {}, 'editor');
    renderApp('/settings?tab=import');
    expect(await screen.findByText(/admin/i, { selector: '[role="alert"], [role="status"], div' })).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Import subscribers' })).not.toBeInTheDocument();
    expect(api.callsTo('GET /api/sites/site-1/subscriber-imports')).toHaveLength(0);
  });
});
