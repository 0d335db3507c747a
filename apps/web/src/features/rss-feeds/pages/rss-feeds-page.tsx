import { RSS_CHECK_INTERVAL_MINUTES, type Site } from '@herald/contracts';
import { Plus, Rss } from 'lucide-react';
import { useState } from 'react';
import { Alert, Button, EmptyState, PageHeader, Spinner } from '../../../components/ui';
import { RoleGatedButton } from '../../../components/role-gate';
import { errorMessage } from '../../../lib/api-client';
import { useCurrentSite } from '../../../lib/sites-store';
import { useRssFeedsQuery } from '../api';
import { RssFeedCard } from '../components/rss-feed-card';
import { RssFeedFormCard } from '../components/rss-feed-form';
import { NoSiteSelected } from '../../../components/no-site-selected';

/** Which form is open: none, "add", or the id of the feed being edited. */
type FormState = { mode: 'closed' } | { mode: 'add' } | { mode: 'edit'; feedId: string };

/** Spec §2 RSS Feeds (/rss-feeds). */
export function RssFeedsPage() {
  const { currentSite, loaded } = useCurrentSite();
  if (!currentSite) {
    return (
      <>
        <PageHeader title="RSS Feeds" />
        <NoSiteSelected loaded={loaded} icon={<Rss className="size-6" />} description="Create or select a site to manage its RSS feeds." />
      </>
    );
  }
  // key: another site gets a fresh page (form closed, its own list).
  return <SiteRssFeeds key={currentSite.id} site={currentSite} />;
}

function SiteRssFeeds({ site }: { site: Site }) {
  const feeds = useRssFeedsQuery(site.id);
  const [form, setForm] = useState<FormState>({ mode: 'closed' });
  const editing = form.mode === 'edit' ? feeds.data?.find((f) => f.id === form.feedId) : undefined;
  const close = () => setForm({ mode: 'closed' });

  return (
    <>
      <PageHeader
        title="RSS Feeds"
        description={`Notify ${site.name}'s subscribers automatically when a feed publishes something new.`}
        actions={
          form.mode === 'closed' ? (
            <RoleGatedButton needed="editor" action="add feeds" onClick={() => setForm({ mode: 'add' })} data-testid="add-feed">
              + Add Feed
            </RoleGatedButton>
          ) : null
        }
      />
      <Alert tone="info" className="mb-6">
        Feeds are checked every {RSS_CHECK_INTERVAL_MINUTES} minutes. The first check only notes the posts already in the feed; posts published after
        that are sent, newest first, up to each feed&apos;s daily maximum.
      </Alert>

      {form.mode === 'add' ? <RssFeedFormCard siteId={site.id} onDone={close} /> : null}
      {editing ? <RssFeedFormCard key={editing.id} siteId={site.id} feed={editing} onDone={close} /> : null}

      <section aria-labelledby="rss-feeds-list-heading">
        <h2 id="rss-feeds-list-heading" className="sr-only">
          Your feeds
        </h2>
        {feeds.isPending ? (
          <div className="flex items-center gap-3 py-12 text-sm text-slate-600" role="status">
            <Spinner /> Loading feeds...
          </div>
        ) : feeds.isError ? (
          <Alert tone="error" title="Feeds could not be loaded">
            <p>{errorMessage(feeds.error, 'Please try again.')}</p>
            <Button size="sm" variant="secondary" className="mt-2" onClick={() => void feeds.refetch()}>
              Retry
            </Button>
          </Alert>
        ) : feeds.data.length === 0 ? (
          <EmptyState
            icon={<Rss className="size-6" />}
            title="No RSS feeds yet"
            description="Add your blog's or shop's feed and every new post reaches your subscribers as a push notification."
            action={
              form.mode === 'closed' ? (
                <Button onClick={() => setForm({ mode: 'add' })} icon={<Plus className="size-4" aria-hidden="true" />}>
                  Add your first feed
                </Button>
              ) : undefined
            }
          />
        ) : (
          <>
            <p className="mb-3 text-sm text-slate-600">
              {feeds.data.length} {feeds.data.length === 1 ? 'feed' : 'feeds'}
            </p>
            <ul className="flex flex-col gap-4">
              {feeds.data.map((feed) => (
                <li key={feed.id}>
                  <RssFeedCard siteId={site.id} timeZone={site.settings.timezone} feed={feed} onEdit={() => setForm({ mode: 'edit', feedId: feed.id })} />
                </li>
              ))}
            </ul>
          </>
        )}
      </section>
    </>
  );
}
