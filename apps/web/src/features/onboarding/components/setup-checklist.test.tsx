import type { InstallCheckResult, SetupChecklist } from '@herald/contracts';
import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { mockApi, ok, fail } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { renderApp } from '../../../test/render-app';

// Issue 12 §1: the dashboard's setup checklist, each step from real state,
// updating by itself while it waits.

const site = makeSite({ id: 'site-1', name: 'Pebble & Pine', url: 'https://pebble.example' });
const CHECKLIST = 'GET /api/sites/site-1/checklist';

const fresh: SetupChecklist = { dismissed: false, install_check: null, first_subscriber_at: null, active_subscribers: 0, test_devices: 0, test_sent_at: null };

const installCode = {
  installCode: '<!-- Herald web push -->\n<script src="https://herald.example/sdk/herald.js" data-site-id="site-1" async></script>',
  snippet: '<!-- Herald web push -->\n<script src="https://herald.example/sdk/herald.js" data-site-id="site-1" async></script>',
  serviceWorker: { fileName: 'herald-sw.js', content: 'importScripts("https://herald.example/sdk/herald-sw.js");\n' },
  nextSteps: [],
  warnings: [],
};

const checked: InstallCheckResult = {
  checked_at: '2026-05-12T09:00:00.000Z',
  passed: false,
  checks: [
    { id: 'reachable', ok: true, severity: 'error', message: 'Herald loaded https://pebble.example/ (HTTP 200).', fix: null },
    { id: 'site_https', ok: true, severity: 'error', message: 'https://pebble.example is served over HTTPS.', fix: null },
    { id: 'public_url_https', ok: true, severity: 'error', message: 'Herald is served over HTTPS (https://herald.example).', fix: null },
    { id: 'snippet', ok: true, severity: 'error', message: 'The snippet for this site is on https://pebble.example/.', fix: null },
    { id: 'service_worker', ok: false, severity: 'error', message: 'https://pebble.example/herald-sw.js answered HTTP 404.', fix: 'Create /herald-sw.js at your site root.' },
    { id: 'single_service_worker', ok: true, severity: 'warning', message: 'No other push service or service worker found on the page.', fix: null },
    { id: 'manifest', ok: false, severity: 'warning', message: 'The page links no web app manifest.', fix: 'Add a manifest.' },
  ],
};

function setUp(routes: Parameters<typeof mockApi>[0]) {
  signIn();
  return mockApi({
    'GET /api/auth/me': ok({ user: makeUser() }),
    'GET /api/sites': ok({ sites: [site] }),
    'GET /api/sites/site-1/install-code': ok(installCode),
    'GET /api/sites/site-1/test-devices': ok({ devices: [] }),
    ...routes,
  });
}

const step = (n: number) => document.querySelector(`[data-step="${n}"]`) as HTMLElement;

describe('setup checklist on the dashboard', () => {
  it('walks a new site from the code to the install check, and shows the first subscriber when one arrives', async () => {
    let state: SetupChecklist = fresh;
    const api = setUp({
      [CHECKLIST]: () => ok({ checklist: state }),
      'POST /api/sites/site-1/install-check': () => {
        state = { ...state, install_check: checked };
        return ok(checked);
      },
    });
    const { user } = renderApp('/dashboard');

    const card = await screen.findByTestId('setup-checklist');
    expect(within(card).getByRole('heading', { name: 'Set up Pebble & Pine' })).toBeInTheDocument();
    expect(card).toHaveTextContent('0 of 4 done');
    expect([1, 2, 3, 4].map((n) => step(n).dataset.done)).toEqual(['false', 'false', 'false', 'false']);

    // Step 1: the snippet and the worker line, each with a copy button and where it goes.
    expect(await within(step(1)).findByRole('figure', { name: 'Snippet for your pages' })).toHaveTextContent('data-site-id="site-1"');
    expect(within(step(1)).getByRole('figure', { name: 'Service worker file for your site root' })).toHaveTextContent('importScripts(');
    expect(step(1)).toHaveTextContent('https://pebble.example/herald-sw.js');
    await user.click(within(step(1)).getByRole('button', { name: 'Copy Snippet for your pages' }));
    expect(await navigator.clipboard.readText()).toBe(installCode.installCode);

    // Step 2: the check, with a fix for what failed.
    await user.click(within(step(2)).getByRole('button', { name: 'Check installation' }));
    const results = await within(step(2)).findByRole('list', { name: 'Installation checks' });
    expect(api.callsTo('POST /api/sites/site-1/install-check')).toHaveLength(1);
    const worker = results.querySelector('[data-check="service_worker"]')!;
    expect(worker).toHaveTextContent('Service worker file · Failed');
    expect(worker).toHaveTextContent('Fix: Create /herald-sw.js at your site root.');
    expect(results.querySelector('[data-check="manifest"]')).toHaveTextContent('Web app manifest (iPhone and iPad) · Warning');
    expect(step(2).dataset.done).toBe('false');
    expect(within(step(2)).getByRole('button', { name: 'Check again' })).toBeInTheDocument();

    // Step 3 waits, and turns done by itself when a visitor subscribes.
    expect(within(step(3)).getByRole('heading', { name: /Waiting for your first subscriber…/ })).toBeInTheDocument();
    state = { ...state, first_subscriber_at: '2026-05-12T09:05:00.000Z', active_subscribers: 1 };
    await waitFor(() => expect(step(3).dataset.done).toBe('true'), { timeout: 6000 });
    expect(within(step(3)).getByRole('heading', { name: /First subscriber/ })).toBeInTheDocument();
    expect(step(3)).toHaveTextContent('1 active now');
    // A subscriber proves the code is in place.
    expect(step(1).dataset.done).toBe('true');
    expect(card).toHaveTextContent('2 of 4 done');
  }, 15_000);

  it('makes a test-device link, notices the device, and sends it a test', async () => {
    let devices: Array<{ subscriber_id: string; name: string; browser: string; os: string }> = [];
    const api = setUp({
      [CHECKLIST]: ok({ checklist: fresh }),
      'POST /api/sites/site-1/test-devices/link': ok({ link: { url: 'https://pebble.example/?herald_test=abc123', expires_at: '2026-05-12T10:00:00.000Z' } }),
      'GET /api/sites/site-1/test-devices': () => ok({ devices }),
      'POST /api/sites/site-1/notifications/test': ok({
        test: { devices: 1, sent: 1, failed: 0, results: [{ subscriber_id: 'sub-1', name: 'Firefox on Linux', outcome: 'sent', error: null }] },
      }),
    });
    const { user } = renderApp('/dashboard');
    await screen.findByTestId('setup-checklist');
    expect(within(step(4)).getByRole('button', { name: 'Send test' })).toBeDisabled();

    await user.click(within(step(4)).getByRole('button', { name: 'Create test-device link' }));
    expect(await within(step(4)).findByRole('figure', { name: 'Test-device link' })).toHaveTextContent('https://pebble.example/?herald_test=abc123');
    expect(within(step(4)).getByRole('link', { name: /Open it in this browser/ })).toHaveAttribute('href', 'https://pebble.example/?herald_test=abc123');
    expect(step(4)).toHaveTextContent('Waiting for a browser to open the link…');

    devices = [{ subscriber_id: 'sub-1', name: 'Firefox on Linux', browser: 'Firefox', os: 'Linux' }];
    expect(await within(step(4)).findByText('Firefox on Linux', {}, { timeout: 6000 })).toBeInTheDocument();
    await user.click(within(step(4)).getByRole('button', { name: 'Send test' }));
    expect(await within(step(4)).findByText('Test sent to 1 test device.')).toBeInTheDocument();
    expect(step(4)).toHaveTextContent('Firefox on Linux: sent');
    expect(api.callsTo('POST /api/sites/site-1/notifications/test')[0]?.body).toEqual({
      title: 'Test from Herald',
      message: 'Your test device for Pebble & Pine works.',
      destination_url: 'https://pebble.example',
    });
  }, 15_000);

  it('hides when asked, and stays in Settings → Installation with a way back', async () => {
    let state: SetupChecklist = fresh;
    const api = setUp({
      [CHECKLIST]: () => ok({ checklist: state }),
      'PATCH /api/sites/site-1/checklist': (call) => {
        state = { ...state, dismissed: (call.body as { dismissed: boolean }).dismissed };
        return ok({ checklist: state });
      },
      'GET /api/sites/site-1/prompt-settings': fail(500),
      'GET /api/sites/site-1/analytics/subscribers': fail(500),
    });
    const { user, router } = renderApp('/dashboard');
    await user.click(within(await screen.findByTestId('setup-checklist')).getByRole('button', { name: 'Hide checklist' }));
    await waitFor(() => expect(screen.queryByTestId('setup-checklist')).not.toBeInTheDocument());
    expect(api.callsTo('PATCH /api/sites/site-1/checklist')[0]?.body).toEqual({ dismissed: true });

    await router.navigate('/settings?tab=installation');
    const card = await screen.findByTestId('setup-checklist');
    await user.click(within(card).getByRole('button', { name: 'Show on dashboard' }));
    await waitFor(() => expect(within(card).getByRole('button', { name: 'Hide from dashboard' })).toBeInTheDocument());
    expect(api.callsTo('PATCH /api/sites/site-1/checklist')[1]?.body).toEqual({ dismissed: false });
  });

  it('stays off the dashboard of a site that has subscribers', async () => {
    const api = setUp({
      [CHECKLIST]: ok({ checklist: { ...fresh, first_subscriber_at: new Date(Date.now() - 60_000).toISOString(), active_subscribers: 1 } }),
    });
    renderApp('/dashboard');
    await waitFor(() => expect(api.callsTo(CHECKLIST)).toHaveLength(1));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(screen.queryByTestId('setup-checklist')).not.toBeInTheDocument();
    expect(api.callsTo('GET /api/sites/site-1/install-code')).toHaveLength(0);
  });
});
