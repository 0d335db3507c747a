import { screen, waitFor, within } from '@testing-library/react';
import { beforeAll, describe, expect, it } from 'vitest';
import { mockApi, ok } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { renderApp } from '../../../test/render-app';
import { HELP_CATEGORIES } from '../help-categories';
import { HELP_ARTICLES, articlesIn, findArticle, searchArticles } from '../help-articles';
import { HELP_CATEGORY_IDS, type HelpArticle } from '../help-types';

function setUp() {
  signIn();
  mockApi({ 'GET /api/auth/me': ok({ user: makeUser() }), 'GET /api/sites': ok({ sites: [makeSite()] }) });
}

const article = (id: string, title: string, content: string): HelpArticle => ({ id, category: 'dashboard', title, summary: `${title}.`, content });

describe('help search (spec §2: starts after more than 2 characters; title or content, case-insensitive)', () => {
  const articles = [article('a', 'Understanding VAPID keys', 'Keys sign pushes.'), article('b', 'Installing', 'Add importScripts to herald-sw.js; VAPID is automatic.'), article('c', 'Other', 'Nothing here.')];

  it('does not search with 2 characters or fewer', () => {
    expect(searchArticles('', articles)).toEqual([]);
    expect(searchArticles('va', articles)).toEqual([]);
    expect(searchArticles('  va  ', articles)).toEqual([]);
    expect(searchArticles('vap', articles).map((a) => a.id)).toEqual(['a', 'b']);
  });

  it('matches the title or the content, ignoring case, titles first', () => {
    expect(searchArticles('vapid', articles).map((a) => a.id)).toEqual(['a', 'b']);
    expect(searchArticles('VaPiD', articles).map((a) => a.id)).toEqual(['a', 'b']);
    expect(searchArticles('IMPORTSCRIPTS', articles).map((a) => a.id)).toEqual(['b']);
    expect(searchArticles('no such words', articles)).toEqual([]);
  });
});

describe('help content', () => {
  it('has articles in every one of the ten topics, with unique ids', () => {
    expect(HELP_CATEGORIES.map((c) => c.id)).toEqual([...HELP_CATEGORY_IDS]);
    for (const id of HELP_CATEGORY_IDS) expect(articlesIn(id).length, id).toBeGreaterThan(0);
    expect(new Set(HELP_ARTICLES.map((a) => a.id)).size).toBe(HELP_ARTICLES.length);
  });

  it('covers every topic the spec lists', () => {
    const find = (words: string) => searchArticles(words).length;
    for (const words of [
      'Total Subscribers',
      'Value Generated',
      'Last 7 Days',
      'Recurring',
      'Triggered',
      'Failed',
      'Cancelled',
      'Welcome campaign',
      'Remove',
      'Segment',
      'RSS',
      'VAPID',
      'Value per Click',
      'HTTPS',
      'service worker',
      'root',
      '400 Bad Request',
      '500 Internal Server Error',
      'CORS',
      'herald.subscribe()',
      'data-worker',
      'API key',
      'herald.track',
    ]) {
      expect(find(words), words).toBeGreaterThan(0);
    }
  });

  it('the best-practices article is complete, with the spec benchmarks', () => {
    const text = findArticle('push-best-practices')!.content;
    for (const fact of [
      'Excellent: 15% or more',
      'Good: 10–15%',
      'Average: 5–10%',
      'Poor: under 5%',
      'Excellent: 95% or more',
      'Excellent: under 0.5%',
      '1–2 pushes per day at most',
      'Clean inactive subscribers at 90+ days',
      '192×192',
      '1200×628',
      '3–7 steps',
      'Chrome 42+, Firefox 44+, Safari 16+',
      'Edge 17+ and Opera 29+',
    ]) {
      expect(text, fact).toContain(fact);
    }
  });
});

describe('help page (/help)', () => {
  beforeAll(async () => {
    await import('./help-page');
  }, 30_000);

  it('lists the ten topics with their article counts', async () => {
    setUp();
    renderApp('/help');
    const topics = within((await screen.findByRole('heading', { name: 'Browse by topic' })).parentElement!);
    const links = topics.getAllByRole('link');
    expect(links).toHaveLength(10);
    HELP_CATEGORIES.forEach((category, i) => {
      const count = articlesIn(category.id).length;
      expect(links[i]).toHaveTextContent(category.title);
      expect(links[i]).toHaveTextContent(`${count} ${count === 1 ? 'article' : 'articles'}`);
      expect(links[i]).toHaveAttribute('href', `/help?category=${category.id}`);
    });
  });

  it('searches only after more than 2 characters, case-insensitively', async () => {
    setUp();
    const { user, router } = renderApp('/help');
    const box = await screen.findByRole('searchbox', { name: 'Search help articles' });

    await user.type(box, 'va');
    expect(screen.getByText('Type at least 3 characters to search.')).toBeInTheDocument();
    expect(screen.queryByRole('heading', { name: 'Search results' })).not.toBeInTheDocument();
    expect(screen.getByRole('heading', { name: 'Browse by topic' })).toBeInTheDocument();

    await user.type(box, 'PID');
    expect(router.state.location.search).toBe('?q=vaPID');
    const results = within((await screen.findByRole('heading', { name: 'Search results' })).parentElement!);
    const titles = results.getAllByRole('link').map((l) => l.querySelector('span > span')?.textContent);
    expect(titles).toContain('VAPID keys');
    expect(titles).toEqual(searchArticles('vapid').map((a) => a.title));
    expect(results.getByRole('status')).toHaveTextContent(`${titles.length} articles match “vaPID”.`);

    await user.clear(box);
    await user.type(box, 'zzqx nothing');
    expect(await screen.findByText('No articles match “zzqx nothing”.')).toBeInTheDocument();
  });

  it('a content-only match shows the words around it', async () => {
    setUp();
    const { user } = renderApp('/help');
    await user.type(await screen.findByRole('searchbox', { name: 'Search help articles' }), 'importScripts');
    const results = within((await screen.findByRole('heading', { name: 'Search results' })).parentElement!);
    expect(results.getAllByText(/importScripts/i).length).toBeGreaterThan(0);
  });

  it('opens a topic, then an article rendered with headings, and goes back', async () => {
    setUp();
    const { user } = renderApp('/help');
    const topics = within((await screen.findByRole('heading', { name: 'Browse by topic' })).parentElement!);
    await user.click(topics.getByRole('link', { name: /^Dashboard/ }));
    expect(await screen.findByRole('heading', { name: 'Dashboard', level: 2 })).toBeInTheDocument();
    const list = within(screen.getByRole('main')).getAllByRole('link').filter((l) => l.getAttribute('href')?.startsWith('/help?article='));
    expect(list.map((l) => l.querySelector('span > span')?.textContent)).toEqual(articlesIn('dashboard').map((a) => a.title));

    await user.click(screen.getByRole('link', { name: /Understanding the metric cards/ }));
    const title = await screen.findByRole('heading', { name: 'Understanding the metric cards', level: 2 });
    const body = within(title.closest('article')!);
    expect(body.getByRole('heading', { name: 'Total Subscribers', level: 3 })).toBeInTheDocument();
    expect(body.getByText('new subscribers × value per subscriber + clicks × value per click').tagName).toBe('STRONG');
    const breadcrumb = within(screen.getByRole('navigation', { name: 'Breadcrumb' }));
    expect(breadcrumb.getByRole('link', { name: 'Dashboard' })).toHaveAttribute('href', '/help?category=dashboard');
    expect(screen.getByRole('heading', { name: 'More in Dashboard' })).toBeInTheDocument();

    await user.click(breadcrumb.getByRole('link', { name: 'Help Center' }));
    await waitFor(() => expect(screen.getByRole('heading', { name: 'Browse by topic' })).toBeInTheDocument());
  });

  it('says when an article does not exist', async () => {
    setUp();
    renderApp('/help?article=no-such-article');
    expect(await screen.findByRole('heading', { name: 'Article not found' })).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Browse all topics' })).toHaveAttribute('href', '/help');
  });
});
