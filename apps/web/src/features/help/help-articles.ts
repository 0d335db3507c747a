import { HELP_CATEGORY_IDS, type HelpArticle, type HelpCategoryId } from './help-types';

/** Spec §2 Help Center / §9: search starts above 2 characters. */
export const HELP_SEARCH_MIN_CHARS = 3;

/**
 * Reads one article file: "---", "title: …", "summary: …", "---", then the
 * text. The file's folder is its category; its name (after the order
 * number) is its id.
 */
export function parseArticle(path: string, raw: string): HelpArticle {
  const match = /\/([a-z-]+)\/\d+-([a-z0-9-]+)\.md$/.exec(path);
  if (!match) throw new Error(`Help article file name not understood: ${path}`);
  const [, category, id] = match as unknown as [string, string, string];
  if (!(HELP_CATEGORY_IDS as readonly string[]).includes(category)) throw new Error(`Unknown help category in ${path}`);
  const front = /^---\n([\s\S]*?)\n---\n/.exec(raw.replace(/\r\n/g, '\n'));
  if (!front) throw new Error(`Help article without a header: ${path}`);
  const fields = Object.fromEntries(
    front[1]!.split('\n').map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).trim(), line.slice(colon + 1).trim()];
    }),
  );
  if (!fields.title || !fields.summary) throw new Error(`Help article needs a title and a summary: ${path}`);
  return {
    id,
    category: category as HelpCategoryId,
    title: fields.title,
    summary: fields.summary,
    content: raw.replace(/\r\n/g, '\n').slice(front[0].length).trim(),
  };
}

const files = import.meta.glob<string>('./articles/*/*.md', { query: '?raw', import: 'default', eager: true });

/** Every article, by category in the spec's order, then by file number. */
export const HELP_ARTICLES: readonly HelpArticle[] = Object.keys(files)
  .sort()
  .map((path) => parseArticle(path, files[path]!))
  .sort((a, b) => HELP_CATEGORY_IDS.indexOf(a.category) - HELP_CATEGORY_IDS.indexOf(b.category));

export function articlesIn(category: HelpCategoryId): HelpArticle[] {
  return HELP_ARTICLES.filter((article) => article.category === category);
}

export function findArticle(id: string | null): HelpArticle | undefined {
  return id ? HELP_ARTICLES.find((article) => article.id === id) : undefined;
}

/** True when a query is long enough to search (more than 2 characters, spaces at the ends ignored). */
export function isSearchable(query: string): boolean {
  return query.trim().length >= HELP_SEARCH_MIN_CHARS;
}

/**
 * Spec §2 Help Center: articles whose title or content contains the query,
 * case-insensitively; titles first. A query of 2 characters or fewer finds nothing.
 */
export function searchArticles(query: string, articles: readonly HelpArticle[] = HELP_ARTICLES): HelpArticle[] {
  if (!isSearchable(query)) return [];
  const needle = query.trim().toLocaleLowerCase();
  const inTitle = articles.filter((a) => a.title.toLocaleLowerCase().includes(needle));
  const inContent = articles.filter((a) => !inTitle.includes(a) && a.content.toLocaleLowerCase().includes(needle));
  return [...inTitle, ...inContent];
}
