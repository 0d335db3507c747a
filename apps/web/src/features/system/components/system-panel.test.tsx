import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { fail, mockApi, ok } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { renderApp } from '../../../test/render-app';

const checks = [
  { id: 'public-url-https', title: 'PUBLIC_URL uses https', status: 'ok', detail: 'https://push.example.com', action: null },
  { id: 'smtp', title: 'SMTP login', status: 'warn', detail: 'SMTP_URL is not set', action: 'Set SMTP_URL so people get their reset mails.' },
  {
    id: 'push-fcm',
    title: 'Push service fcm (fcm.googleapis.com:443) is reachable',
    status: 'fail',
    detail: 'DNS 12 ms (142.250.1.95), TCP connection to port 443 failed after 5000 ms: no answer',
    action: 'Allow outbound TCP 443 from this machine to fcm.googleapis.com (firewall, security group, egress proxy).',
  },
];

function setUp(answer: ReturnType<typeof ok> | ReturnType<typeof fail>) {
  signIn();
  return mockApi({ 'GET /api/auth/me': ok({ user: makeUser() }), 'GET /api/sites': ok({ sites: [makeSite()] }), 'GET /api/system/checks': answer });
}

describe('Settings → System', () => {
  it("lists the server's checks with their status and what to do, and runs them again on request", async () => {
    const api = setUp(ok({ checks, checkedAt: Date.UTC(2026, 4, 1, 12) }));
    renderApp('/settings?tab=system');

    const panel = await screen.findByRole('tabpanel', { name: 'System' });
    expect(await within(panel).findByText('1 OK, 1 WARN, 1 FAIL', { exact: false })).toBeInTheDocument();
    const rows = within(panel).getAllByRole('listitem');
    expect(rows.map((row) => within(row).getByText(/^(OK|WARN|FAIL)$/).textContent)).toEqual(['OK', 'WARN', 'FAIL']);
    expect(within(rows[2]!).getByText('Push service fcm (fcm.googleapis.com:443) is reachable')).toBeInTheDocument();
    expect(within(rows[2]!).getByText(/Allow outbound TCP 443/)).toBeInTheDocument();
    // OK lines have nothing to do.
    expect(within(rows[0]!).queryByText(/Set|Allow/)).not.toBeInTheDocument();

    const before = api.callsTo('GET /api/system/checks').length;
    await userEvent.click(within(panel).getByRole('button', { name: 'Run checks again' }));
    await within(panel).findByText('1 OK, 1 WARN, 1 FAIL', { exact: false });
    expect(api.callsTo('GET /api/system/checks').length).toBe(before + 1);
  });

  it('tells any other account that only the owner sees the checks', async () => {
    setUp(fail(403, 'Only the owner of this Herald install (its first account) can see its system checks.'));
    renderApp('/settings?tab=system');
    const panel = await screen.findByRole('tabpanel', { name: 'System' });
    expect(await within(panel).findByText('Only the owner of this Herald install (its first account) can see its system checks.')).toBeInTheDocument();
    expect(within(panel).getByText('Owner only')).toBeInTheDocument();
    expect(within(panel).getByRole('button', { name: 'Run checks again' })).toBeDisabled();
  });
});
