import { ArrowLeft, ChevronRight, FileText, Search } from 'lucide-react';
import { useId } from 'react';
import { Link, useSearchParams } from 'react-router';
import { Card, CardContent, EmptyState, Input, PageHeader } from '../../../components/ui';
import { plainText } from '../article-markup';
import { ArticleContent } from '../components/article-content';
import { HELP_CATEGORIES, type HelpCategory } from '../help-categories';
import { HELP_SEARCH_MIN_CHARS, articlesIn, findArticle, isSearchable, searchArticles } from '../help-articles';
import type { HelpArticle } from '../help-types';

const linkStyles = 'rounded font-medium text-indigo-700 hover:text-indigo-900 hover:underline focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600';

const articleLink = (id: string) => `/help?article=${encodeURIComponent(id)}`;
const categoryLink = (id: string) => `/help?category=${encodeURIComponent(id)}`;
const articlesCount = (n: number) => `${n} ${n === 1 ? 'article' : 'articles'}`;

function categoryOf(id: string): HelpCategory | undefined {
  return HELP_CATEGORIES.find((category) => category.id === id);
}

/** Spec §2 Help Center (/help): search, topics with article counts, and the article view. State lives in the address (?q=, ?category=, ?article=). */
export function HelpPage() {
  const [params, setParams] = useSearchParams();
  const query = params.get('q') ?? '';
  const article = findArticle(params.get('article'));
  const category = categoryOf(params.get('category') ?? '');
  const searchId = useId();
  const hintId = useId();

  let view;
  if (params.get('article')) view = article ? <ArticleView article={article} /> : <NotFound what="article" />;
  else if (isSearchable(query)) view = <SearchResults query={query} />;
  else if (params.get('category')) view = category ? <CategoryView category={category} /> : <NotFound what="topic" />;
  else view = <CategoryGrid />;

  return (
    <>
      <PageHeader title="Help Center" description="Guides and answers for everything in Herald." />
      <div role="search" className="mb-6">
        <label htmlFor={searchId} className="sr-only">
          Search help articles
        </label>
        <div className="relative">
          <Search className="pointer-events-none absolute top-1/2 left-3 size-4 -translate-y-1/2 text-slate-500" aria-hidden="true" />
          <Input
            id={searchId}
            type="search"
            value={query}
            placeholder="Search articles..."
            aria-describedby={hintId}
            className="pl-9"
            autoComplete="off"
            onChange={(event) => {
              const value = event.target.value;
              // Typing starts a search from wherever the reader is; an emptied box goes back to the topics.
              setParams(value ? { q: value } : {}, { replace: true });
            }}
          />
        </div>
        <p id={hintId} className="mt-1.5 text-xs text-slate-600">
          {query.trim().length > 0 && !isSearchable(query)
            ? `Type at least ${HELP_SEARCH_MIN_CHARS} characters to search.`
            : 'Search titles and text of every article.'}
        </p>
      </div>
      {view}
    </>
  );
}

function CategoryGrid() {
  return (
    <section aria-labelledby="help-topics">
      <h2 id="help-topics" className="mb-3 text-lg font-semibold text-slate-900">
        Browse by topic
      </h2>
      <ul className="grid grid-cols-1 gap-4 sm:grid-cols-2 lg:grid-cols-3">
        {HELP_CATEGORIES.map((category) => {
          const Icon = category.icon;
          const count = articlesIn(category.id).length;
          return (
            <li key={category.id}>
              <Link
                to={categoryLink(category.id)}
                className="flex h-full gap-3 rounded-xl border border-slate-200 bg-white p-4 shadow-sm transition-colors hover:border-indigo-300 hover:bg-indigo-50/40 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600"
              >
                <span className="flex size-10 shrink-0 items-center justify-center rounded-lg bg-indigo-50 text-indigo-700" aria-hidden="true">
                  <Icon className="size-5" />
                </span>
                <span className="flex min-w-0 flex-col gap-0.5">
                  <span className="font-semibold text-slate-900">{category.title}</span>
                  <span className="text-sm text-slate-600">{category.description}</span>
                  <span className="mt-1 text-xs font-medium text-indigo-700">{articlesCount(count)}</span>
                </span>
              </Link>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

function ArticleList({ articles, query }: { articles: HelpArticle[]; query?: string }) {
  return (
    <ul className="divide-y divide-slate-200 overflow-hidden rounded-xl border border-slate-200 bg-white shadow-sm">
      {articles.map((article) => (
        <li key={article.id}>
          <Link
            to={articleLink(article.id)}
            className="flex items-center gap-3 px-4 py-3 hover:bg-slate-50 focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-indigo-600 sm:px-5"
          >
            <FileText className="size-4 shrink-0 text-slate-500" aria-hidden="true" />
            <span className="flex min-w-0 flex-1 flex-col gap-0.5">
              <span className="font-medium break-words text-slate-900">{article.title}</span>
              <span className="text-sm text-slate-600">{query ? matchSnippet(article, query) : article.summary}</span>
              {query ? <span className="text-xs text-slate-600">{categoryOf(article.category)?.title}</span> : null}
            </span>
            <ChevronRight className="size-4 shrink-0 text-slate-400" aria-hidden="true" />
          </Link>
        </li>
      ))}
    </ul>
  );
}

/** The words around the first match in the text, or the summary when the match is in the title. */
function matchSnippet(article: HelpArticle, query: string): string {
  const needle = query.trim().toLocaleLowerCase();
  if (article.title.toLocaleLowerCase().includes(needle)) return article.summary;
  const text = plainText(article.content);
  const at = text.toLocaleLowerCase().indexOf(needle);
  if (at < 0) return article.summary;
  const start = Math.max(0, text.lastIndexOf(' ', Math.max(0, at - 60)) + 1);
  const end = Math.min(text.length, at + needle.length + 90);
  return `${start > 0 ? '…' : ''}${text.slice(start, end).trim()}${end < text.length ? '…' : ''}`;
}

function SearchResults({ query }: { query: string }) {
  const results = searchArticles(query);
  const shown = query.trim();
  return (
    <section aria-labelledby="help-results">
      <h2 id="help-results" className="mb-3 text-lg font-semibold text-slate-900">
        Search results
      </h2>
      <p className="mb-3 text-sm text-slate-600" role="status">
        {results.length === 0 ? `No articles match “${shown}”.` : `${results.length} ${results.length === 1 ? 'article matches' : 'articles match'} “${shown}”.`}
      </p>
      {results.length ? (
        <ArticleList articles={results} query={query} />
      ) : (
        <EmptyState
          icon={<Search className="size-6" />}
          title="Nothing found"
          description="Try another word, or browse the topics."
          action={
            <Link to="/help" className={linkStyles}>
              Browse all topics
            </Link>
          }
        />
      )}
    </section>
  );
}

function BackTo({ to, children }: { to: string; children: string }) {
  return (
    <Link to={to} className={`${linkStyles} mb-4 inline-flex items-center gap-1.5 text-sm`}>
      <ArrowLeft className="size-4" aria-hidden="true" />
      {children}
    </Link>
  );
}

function CategoryView({ category }: { category: HelpCategory }) {
  const articles = articlesIn(category.id);
  return (
    <section aria-labelledby="help-category">
      <BackTo to="/help">All topics</BackTo>
      <h2 id="help-category" className="text-lg font-semibold text-slate-900">
        {category.title}
      </h2>
      <p className="mb-4 text-sm text-slate-600">
        {category.description} {articlesCount(articles.length)}.
      </p>
      <ArticleList articles={articles} />
    </section>
  );
}

function ArticleView({ article }: { article: HelpArticle }) {
  const category = categoryOf(article.category)!;
  const more = articlesIn(article.category).filter((other) => other.id !== article.id);
  return (
    <div className="flex flex-col gap-6">
      <div>
        <nav aria-label="Breadcrumb" className="mb-3 text-sm">
          <ol className="flex flex-wrap items-center gap-1.5 text-slate-600">
            <li>
              <Link to="/help" className={linkStyles}>
                Help Center
              </Link>
            </li>
            <li aria-hidden="true">/</li>
            <li>
              <Link to={categoryLink(category.id)} className={linkStyles}>
                {category.title}
              </Link>
            </li>
          </ol>
        </nav>
        <Card>
          <CardContent className="py-6 sm:py-8">
            <article aria-labelledby="help-article-title" className="mx-auto max-w-3xl">
              <h2 id="help-article-title" className="text-xl font-semibold tracking-tight text-slate-900 sm:text-2xl">
                {article.title}
              </h2>
              <p className="mt-1 mb-6 text-sm text-slate-600">{article.summary}</p>
              <ArticleContent source={article.content} />
            </article>
          </CardContent>
        </Card>
      </div>
      {more.length ? (
        <section aria-labelledby="help-more">
          <h2 id="help-more" className="mb-3 text-base font-semibold text-slate-900">
            More in {category.title}
          </h2>
          <ArticleList articles={more} />
        </section>
      ) : null}
    </div>
  );
}

function NotFound({ what }: { what: 'article' | 'topic' }) {
  return (
    <EmptyState
      icon={<FileText className="size-6" />}
      title={what === 'article' ? 'Article not found' : 'Topic not found'}
      description={`This ${what} does not exist (any more). Browse the topics or search instead.`}
      action={
        <Link to="/help" className={linkStyles}>
          Browse all topics
        </Link>
      }
    />
  );
}
