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

describe('Settings → General, quiet hours', () => {
  it('turns quiet hours on with its own save, refuses an empty window, and sends only quietHours', async () => {
    const api = setUp();
    const dialogs = captureDialogs();
    const { user } = renderApp('/settings');
    const toggle = await screen.findByRole('switch', { name: 'Hold pushes during quiet hours' });
    expect(toggle).toHaveAttribute('aria-checked', 'false');
    await user.click(toggle);
    const from = screen.getByLabelText(/^From/);
    const until = screen.getByLabelText(/^Until/);
    expect(from).toHaveValue('22:00');
    expect(until).toHaveValue('08:00');
    await user.clear(until);
    await user.type(until, '22:00');
    await user.click(screen.getByRole('button', { name: 'Save quiet hours' }));
    expect(await screen.findByText('From and Until must differ')).toBeInTheDocument();
    expect(api.callsTo('PATCH /api/sites/site-1')).toHaveLength(0);
    // The API's rules, in the form's words.
    await user.clear(from);
    await user.click(screen.getByRole('button', { name: 'Save quiet hours' }));
    expect(await screen.findByText('From must be a time of day as HH:MM (00:00 to 23:59)')).toBeInTheDocument();
    await user.type(from, '22:00');

    await user.clear(until);
    await user.type(until, '07:30');
    await user.click(screen.getByRole('button', { name: 'Save quiet hours' }));
    await waitFor(() => expect(api.callsTo('PATCH /api/sites/site-1')).toHaveLength(1));
    expect(api.callsTo('PATCH /api/sites/site-1')[0]?.body).toEqual({ settings: { quietHours: { start: '22:00', end: '07:30' } } });
    await waitFor(() => expect(dialogs.alerts).toEqual(["Quiet hours saved: 22:00–07:30 in each subscriber's time zone."]));
  });

  it('shows saved quiet hours and turns them off with null', async () => {
    const api = setUp({ ...site.settings, quietHours: { start: '21:00', end: '09:00' } });
    const dialogs = captureDialogs();
    const { user } = renderApp('/settings');
    const toggle = await screen.findByRole('switch', { name: 'Hold pushes during quiet hours' });
    expect(toggle).toHaveAttribute('aria-checked', 'true');
    expect(screen.getByLabelText(/^From/)).toHaveValue('21:00');
    await user.click(toggle);
    await user.click(screen.getByRole('button', { name: 'Save quiet hours' }));
    await waitFor(() => expect(api.callsTo('PATCH /api/sites/site-1')[0]?.body).toEqual({ settings: { quietHours: null } }));
    await waitFor(() => expect(dialogs.alerts).toEqual(['Quiet hours turned off.']));
  });
});
