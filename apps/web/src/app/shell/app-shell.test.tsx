import { act, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { TOKEN_STORAGE_KEY } from '../../lib/auth-store';
import { useSitesStore } from '../../lib/sites-store';
import { mockApi, ok } from '../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../test/fixtures';
import { renderApp } from '../../test/render-app';
import { setViewportWidth } from '../../test/viewport';
import { isNavItemActive } from './nav-items';

const user = makeUser({ name: 'Ada Lovelace', email: 'ada@example.com' });

function signedInWith(sites: ReturnType<typeof makeSite>[]) {
  signIn(user, 'tok');
  return mockApi({
    'GET /api/auth/me': ok({ user }),
    'GET /api/sites': ok({ sites }),
    'POST /api/auth/logout': ok({ message: 'Signed out' }),
  });
}

describe('navigation highlight rule (spec §2 Shell)', () => {
  it('highlights an entry when the path equals it or starts with it plus a slash', () => {
    expect(isNavItemActive('/notifications', '/notifications')).toBe(true);
    expect(isNavItemActive('/notifications/new', '/notifications')).toBe(true);
    expect(isNavItemActive('/notifications/42/edit', '/notifications')).toBe(true);
    expect(isNavItemActive('/notificationsarchive', '/notifications')).toBe(false);
    expect(isNavItemActive('/dashboard', '/notifications')).toBe(false);
  });
});

describe('shell (spec §2 Shell)', () => {
  it('lists the eight entries and marks only the current one', async () => {
    signedInWith([makeSite()]);
    renderApp('/settings');

    const nav = await screen.findByRole('navigation', { name: 'Main' });
    const links = within(nav).getAllByRole('link');
    expect(links.map((l) => [l.textContent, l.getAttribute('href')])).toEqual([
      ['Dashboard', '/dashboard'],
      ['Notifications', '/notifications'],
      ['Subscribers', '/subscribers'],
      ['Campaigns', '/campaigns'],
      ['Segments', '/segments'],
      ['RSS Feeds', '/rss-feeds'],
      ['Settings', '/settings'],
      ['Help', '/help'],
    ]);
    expect(within(nav).getByRole('link', { name: 'Settings' })).toHaveAttribute('aria-current', 'page');
    expect(links.filter((l) => l.getAttribute('aria-current') === 'page')).toHaveLength(1);
    expect(screen.getByRole('link', { name: 'New Notification' })).toHaveAttribute('href', '/notifications/new');
    expect(screen.getByRole('link', { name: '+ New Site' })).toHaveAttribute('href', '/sites/new');
  });

  it('shows the user name and email', async () => {
    signedInWith([]);
    renderApp('/settings');

    expect(await screen.findByTestId('user-name')).toHaveTextContent('Ada Lovelace');
    expect(screen.getByTestId('user-email')).toHaveTextContent('ada@example.com');
  });

  it('header: "No sites yet" when there are none', async () => {
    signedInWith([]);
    renderApp('/settings');

    expect(await screen.findByText('No sites yet')).toBeInTheDocument();
    expect(screen.getByText('Create your first site to get started')).toBeInTheDocument();
    expect(screen.getByRole('combobox', { name: 'Current site' })).toHaveDisplayValue('Select a site...');
  });

  it('header: the current site name and URL, and the selector switches sites', async () => {
    const shop = makeSite({ id: 's1', name: 'Acme Store', url: 'https://shop.acme.example' });
    const blog = makeSite({ id: 's2', name: 'Acme Blog', url: 'https://blog.acme.example' });
    signedInWith([shop, blog]);
    const { user: actor } = renderApp('/settings');

    const header = await screen.findByTestId('current-site');
    expect(await within(header).findByText('Acme Store')).toBeInTheDocument();
    expect(within(header).getByRole('link', { name: /https:\/\/shop\.acme\.example/ })).toHaveAttribute('href', 'https://shop.acme.example');

    await actor.selectOptions(screen.getByRole('combobox', { name: 'Current site' }), 'Acme Blog');
    expect(within(screen.getByTestId('current-site')).getByText('Acme Blog')).toBeInTheDocument();
    expect(useSitesStore.getState().currentSite?.id).toBe('s2');
  });

  it('header: "Select a site" when sites exist but none is chosen', async () => {
    signedInWith([makeSite()]);
    renderApp('/settings');
    expect(await within(await screen.findByTestId('current-site')).findByText('Acme Store')).toBeInTheDocument();

    act(() => useSitesStore.getState().setCurrentSite(null));

    expect(within(screen.getByTestId('current-site')).getByText('Select a site')).toBeInTheDocument();
    expect(screen.getByRole('combobox', { name: 'Current site' })).toHaveDisplayValue('Select a site...');
  });

  it('logout calls the server, clears the session and goes to /login', async () => {
    const api = signedInWith([makeSite()]);
    const { user: actor, pathname } = renderApp('/settings');

    await actor.click(await screen.findByRole('button', { name: 'Log out' }));

    expect(await screen.findByRole('heading', { name: 'Sign in to Herald' })).toBeInTheDocument();
    expect(pathname()).toBe('/login');
    expect(api.callsTo('POST /api/auth/logout')[0]?.headers.get('authorization')).toBe('Bearer tok');
    expect(localStorage.getItem(TOKEN_STORAGE_KEY)).toBeNull();
  });

  it('sidebar: open by default on wide screens, toggled by the header button', async () => {
    signedInWith([]);
    const { user: actor } = renderApp('/settings');

    expect(await screen.findByRole('navigation', { name: 'Main' })).toBeInTheDocument();
    await actor.click(screen.getByRole('button', { name: 'Close navigation' }));
    expect(screen.queryByRole('navigation', { name: 'Main' })).not.toBeInTheDocument();
    await actor.click(screen.getByRole('button', { name: 'Open navigation' }));
    expect(screen.getByRole('navigation', { name: 'Main' })).toBeInTheDocument();
  });

  it('sidebar: closed on narrow screens, and closed again after each navigation', async () => {
    setViewportWidth(800);
    signedInWith([makeSite()]);
    const { user: actor, pathname } = renderApp('/settings');

    const toggle = await screen.findByRole('button', { name: 'Open navigation' });
    expect(toggle).toHaveAttribute('aria-expanded', 'false');
    expect(screen.queryByRole('navigation', { name: 'Main' })).not.toBeInTheDocument();

    await actor.click(toggle);
    expect(screen.getByRole('button', { name: 'Close navigation', expanded: true })).toBeInTheDocument();
    await actor.click(within(screen.getByRole('navigation', { name: 'Main' })).getByRole('link', { name: 'Settings' }));

    expect(screen.queryByRole('navigation', { name: 'Main' })).not.toBeInTheDocument();
    expect(pathname()).toBe('/settings');
  });

  it('sidebar: on narrow screens it closes after switching site, showing that site’s page (issue 11)', async () => {
    setViewportWidth(375);
    signedInWith([makeSite({ id: 'a', name: 'Alpha Shop' }), makeSite({ id: 'b', name: 'Beta Shop' })]);
    const { user: actor } = renderApp('/settings');

    await actor.click(await screen.findByRole('button', { name: 'Open navigation' }));
    await screen.findByRole('option', { name: 'Beta Shop' });
    await actor.selectOptions(screen.getByTestId('site-selector'), 'b');
    expect(screen.queryByRole('navigation', { name: 'Main' })).not.toBeInTheDocument();
    expect(useSitesStore.getState().currentSite?.id).toBe('b');
  });

  it('sidebar: on wide screens it stays open after switching site', async () => {
    setViewportWidth(1280);
    signedInWith([makeSite({ id: 'a', name: 'Alpha Shop' }), makeSite({ id: 'b', name: 'Beta Shop' })]);
    const { user: actor } = renderApp('/settings');

    await screen.findByRole('option', { name: 'Beta Shop' });
    await actor.selectOptions(screen.getByTestId('site-selector'), 'b');
    expect(useSitesStore.getState().currentSite?.id).toBe('b');
    expect(screen.getByRole('navigation', { name: 'Main' })).toBeInTheDocument();
  });

  it('sidebar: Escape closes it on narrow screens', async () => {
    setViewportWidth(375);
    signedInWith([]);
    const { user: actor } = renderApp('/settings');

    await actor.click(await screen.findByRole('button', { name: 'Open navigation' }));
    expect(screen.getByRole('navigation', { name: 'Main' })).toBeInTheDocument();
    await actor.keyboard('{Escape}');
    expect(screen.queryByRole('navigation', { name: 'Main' })).not.toBeInTheDocument();
  });

  it('sidebar: follows the 1024 px breakpoint when the window is resized', async () => {
    signedInWith([]);
    renderApp('/settings');

    expect(await screen.findByRole('navigation', { name: 'Main' })).toBeInTheDocument();
    // The settings page loads lazily and may still be rendering when the width changes: wait for the shell to follow.
    act(() => setViewportWidth(1023));
    await waitFor(() => expect(screen.queryByRole('navigation', { name: 'Main' })).not.toBeInTheDocument());
    act(() => setViewportWidth(1024));
    await waitFor(() => expect(screen.getByRole('navigation', { name: 'Main' })).toBeInTheDocument());
  });
});
