import { screen, waitFor } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { mockApi, ok } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { captureDialogs, renderApp } from '../../../test/render-app';

const site = makeSite({ id: 'site-1', name: 'Acme Store' });

function setUp(settings = site.settings) {
  signIn();
  return mockApi({
    'GET /api/auth/me': ok({ user: makeUser() }),
    'GET /api/sites': ok({ sites: [{ ...site, settings }] }),
    'PATCH /api/sites/site-1': (call) => ok({ site: { ...site, settings: { ...settings, ...(call.body as { settings: object }).settings } } }),
  });
}

describe('Settings → General, frequency cap', () => {
  it('turns the cap on with its own save, checks the numbers, and sends only frequencyCap', async () => {
    const api = setUp();
    const dialogs = captureDialogs();
    const { user } = renderApp('/settings');
    const toggle = await screen.findByRole('switch', { name: 'Cap pushes per subscriber' });
    expect(toggle).toHaveAttribute('aria-checked', 'false');
    await user.click(toggle);
    const max = screen.getByLabelText(/^At most \(pushes\)/);
    expect(max).toHaveValue(3);
    await user.clear(max);
    await user.type(max, '0');
    await user.click(screen.getByRole('button', { name: 'Save frequency cap' }));
    expect(await screen.findByText('Pushes must be at least 1')).toBeInTheDocument();
    expect(api.callsTo('PATCH /api/sites/site-1')).toHaveLength(0);

    await user.clear(max);
    await user.type(max, '2');
    await user.clear(screen.getByLabelText(/^In any \(hours\)/));
    await user.type(screen.getByLabelText(/^In any \(hours\)/), '12');
    await user.click(screen.getByRole('button', { name: 'Save frequency cap' }));
    await waitFor(() => expect(api.callsTo('PATCH /api/sites/site-1')).toHaveLength(1));
    expect(api.callsTo('PATCH /api/sites/site-1')[0]?.body).toEqual({ settings: { frequencyCap: { max: 2, hours: 12 } } });
    await waitFor(() => expect(dialogs.alerts).toEqual(['Frequency cap saved: at most 2 per subscriber in any 12 hours.']));
  });

  it('shows a saved cap and turns it off with null', async () => {
    const api = setUp({ ...site.settings, frequencyCap: { max: 5, hours: 48 } });
    const dialogs = captureDialogs();
    const { user } = renderApp('/settings');
    const toggle = await screen.findByRole('switch', { name: 'Cap pushes per subscriber' });
    expect(toggle).toHaveAttribute('aria-checked', 'true');
    expect(screen.getByLabelText(/^At most \(pushes\)/)).toHaveValue(5);
    expect(screen.getByLabelText(/^In any \(hours\)/)).toHaveValue(48);
    await user.click(toggle);
    await user.click(screen.getByRole('button', { name: 'Save frequency cap' }));
    await waitFor(() => expect(api.callsTo('PATCH /api/sites/site-1')[0]?.body).toEqual({ settings: { frequencyCap: null } }));
    await waitFor(() => expect(dialogs.alerts).toEqual(['Frequency cap turned off.']));
  });
});
