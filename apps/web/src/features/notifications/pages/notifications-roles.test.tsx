import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { mockApi, ok } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { makeNotification } from '../../../test/notification-fixtures';
import { renderApp } from '../../../test/render-app';

// docs/product.md, "Teams": what a role cannot do is disabled and says why.

const draft = makeNotification({ id: 'd1', title: 'Draft sale', status: 'draft' });

function setUp(role: 'viewer' | 'editor') {
  signIn();
  const sites = [makeSite({ id: 'site-1', name: 'Acme Store', role }), makeSite({ id: 'site-2', name: 'Own Blog', role: 'owner' })];
  return mockApi({
    'GET /api/auth/me': ok({ user: makeUser() }),
    'GET /api/sites': ok({ sites }),
    'GET /api/sites/site-1/notifications': ok({ notifications: [draft], counts: { all: 1, draft: 1 } }),
  });
}

describe('notifications by role', () => {
  it("a viewer sees Send Now disabled with the reason, no Edit, no New Notification, and the viewer notice", async () => {
    setUp('viewer');
    renderApp('/notifications');
    const card = await screen.findByRole('article', { name: 'Draft sale' });
    const send = within(card).getByRole('button', { name: 'Send Now' });
    expect(send).toBeDisabled();
    expect(send).toHaveAttribute('title', "Viewers can't send notifications");
    expect(within(card).getByRole('button', { name: 'Delete' })).toBeDisabled();
    expect(within(card).queryByRole('link', { name: 'Edit' })).not.toBeInTheDocument();
    expect(within(card).getByRole('link', { name: 'View' })).toBeInTheDocument();
    const create = screen.getAllByRole('button', { name: 'New Notification' })[0]!;
    expect(create).toBeDisabled();
    expect(create).toHaveAttribute('title', "Viewers can't create notifications");
    expect(screen.getByText(/You are a viewer of Acme Store: you can see everything, but not change or send anything\./)).toBeInTheDocument();
  });

  it('an editor can send and edit', async () => {
    setUp('editor');
    renderApp('/notifications');
    const card = await screen.findByRole('article', { name: 'Draft sale' });
    expect(within(card).getByRole('button', { name: 'Send Now' })).toBeEnabled();
    expect(within(card).getByRole('link', { name: 'Edit' })).toBeInTheDocument();
    expect(screen.getAllByRole('link', { name: 'New Notification' }).length).toBeGreaterThan(0);
    expect(screen.queryByText(/You are a viewer/)).not.toBeInTheDocument();
  });

  it('a viewer finds segment changes disabled with the reason', async () => {
    setUp('viewer');
    mockApi({
      'GET /api/auth/me': ok({ user: makeUser() }),
      'GET /api/sites': ok({ sites: [makeSite({ id: 'site-1', name: 'Acme Store', role: 'viewer' })] }),
      'GET /api/sites/site-1/segments': ok({
        segments: [{ id: 'seg-1', site_id: 'site-1', name: 'VIPs', rules: { tags: ['vip'] }, estimated_count: 3, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' }],
      }),
    });
    renderApp('/segments');
    const edit = await screen.findByRole('button', { name: 'Edit VIPs' });
    expect(edit).toBeDisabled();
    expect(edit).toHaveAttribute('title', "Viewers can't change segments");
    expect(screen.getByRole('button', { name: 'Delete VIPs' })).toBeDisabled();
    expect(screen.getByRole('button', { name: '+ New Segment' })).toHaveAttribute('title', "Viewers can't create segments");
  });

  it('the site switcher puts shared sites under "Shared with me" with the role', async () => {
    setUp('editor');
    renderApp('/notifications');
    await screen.findByRole('article', { name: 'Draft sale' });
    const groups = screen.getByTestId('site-selector').querySelectorAll('optgroup');
    expect([...groups].map((g) => [g.label, [...g.querySelectorAll('option')].map((o) => o.textContent)])).toEqual([
      ['Your sites', ['Own Blog']],
      ['Shared with me', ['Acme Store (Editor)']],
    ]);
  });
});
