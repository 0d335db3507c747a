import { RSS_DRAFTS_PER_CHECK, RSS_ITEM_ID_SHOWN_LENGTH, type RssFeed, type RssFeedCheck } from '@herald/contracts';
import { ExternalLink, Pause, Pencil, Play, RefreshCw, Trash2 } from 'lucide-react';
import { useState } from 'react';
import { Badge, Card, DateTime } from '../../../components/ui';
import { RoleGatedButton } from '../../../components/role-gate';
import { errorMessage } from '../../../lib/api-client';
import { confirmAction, notify } from '../../../lib/dialogs';
import { useCheckRssFeedMutation, useDeleteRssFeedMutation, useUpdateRssFeedMutation } from '../api';

/** Spec §2: the last item id is shown by its first 20 characters. */
export function shortItemId(id: string): string {
  return id.length > RSS_ITEM_ID_SHOWN_LENGTH ? `${id.slice(0, RSS_ITEM_ID_SHOWN_LENGTH)}…` : id;
}

type CheckMessage = { tone: 'success' | 'error'; text: string };

function checkMessage(check: RssFeedCheck): CheckMessage {
  return check.outcome === 'error' ? { tone: 'error', text: `Check failed: ${check.error ?? check.summary}` } : { tone: 'success', text: check.summary };
}

interface RssFeedCardProps {
  siteId: string;
  /** The site's timezone: "Last checked" reads like every other time on the dashboard. */
  timeZone: string;
  feed: RssFeed;
  onEdit: () => void;
}

/** One feed in the list (spec §2): name, state, address, last check, last item, actions and what went wrong. */
export function RssFeedCard({ siteId, timeZone, feed, onEdit }: RssFeedCardProps) {
  const toggle = useUpdateRssFeedMutation(siteId);
  const remove = useDeleteRssFeedMutation(siteId);
  const check = useCheckRssFeedMutation(siteId);
  const [checkResult, setCheckResult] = useState<CheckMessage | null>(null);

  function onToggle() {
    toggle.mutate(
      { id: feed.id, changes: { is_active: !feed.is_active } },
      { onError: (error) => notify(errorMessage(error, feed.is_active ? 'Failed to pause RSS feed' : 'Failed to activate RSS feed')) },
    );
  }

  function onDelete() {
    if (!confirmAction('Are you sure you want to delete this feed?')) return;
    remove.mutate(feed.id, { onError: (error) => notify(errorMessage(error, 'Failed to delete RSS feed')) });
  }

  function onCheck() {
    setCheckResult(null);
    check.mutate(feed.id, {
      onSuccess: (result) => setCheckResult(checkMessage(result.check)),
      onError: (error) => setCheckResult({ tone: 'error', text: errorMessage(error, 'The feed could not be checked. Please try again.') }),
    });
  }

  const headingId = `rss-feed-${feed.id}`;
  return (
    <Card className="p-4 sm:p-5" aria-labelledby={headingId} role="article">
      <div className="flex flex-col gap-3 sm:flex-row sm:items-start sm:justify-between">
        <div className="min-w-0 flex-1">
          <div className="flex flex-wrap items-center gap-2">
            <h3 id={headingId} className="min-w-0 text-base font-semibold break-words text-slate-900">
              {feed.name}
            </h3>
            <Badge tone={feed.is_active ? 'success' : 'neutral'}>{feed.is_active ? 'Active' : 'Inactive'}</Badge>
            {feed.create_draft ? <Badge tone="info">Drafts</Badge> : null}
          </div>
          <a
            href={feed.url}
            target="_blank"
            rel="noopener noreferrer"
            className="mt-1 inline-flex max-w-full items-center gap-1 text-sm break-all text-indigo-700 hover:underline focus-visible:outline-2 focus-visible:outline-indigo-600"
          >
            {feed.url}
            <ExternalLink className="size-3.5 shrink-0" aria-hidden="true" />
            <span className="sr-only">(opens in a new tab)</span>
          </a>
          <dl className="mt-3 grid gap-x-6 gap-y-1 text-sm sm:grid-cols-[auto_1fr]">
            <dt className="text-slate-600">Last checked</dt>
            <dd className="text-slate-900">{feed.last_fetched_at ? <DateTime value={feed.last_fetched_at} timeZone={timeZone} /> : 'Not checked yet'}</dd>
            <dt className="text-slate-600">Last item</dt>
            <dd className="font-mono text-slate-900" title={feed.last_item_guid ?? undefined}>
              {feed.last_item_guid ? shortItemId(feed.last_item_guid) : '—'}
            </dd>
            <dt className="text-slate-600">Pushes today</dt>
            <dd className="text-slate-900">
              {feed.create_draft ? 'Drafts only' : `${feed.pushes_today} of ${feed.max_pushes_per_day}`}
              {feed.skipped_today > 0 ? (
                <span className="text-amber-800">
                  {' '}
                  · {feed.skipped_today} new {feed.skipped_today === 1 ? 'post' : 'posts'}{' '}
                  {feed.create_draft ? `not drafted (at most ${RSS_DRAFTS_PER_CHECK} drafts per check)` : 'not sent (daily maximum reached)'}
                </span>
              ) : null}
            </dd>
          </dl>
        </div>
        <div className="flex flex-wrap gap-2 sm:justify-end">
          <RoleGatedButton
            needed="editor"
            action="change feeds"
            variant="secondary"
            size="sm"
            onClick={onCheck}
            loading={check.isPending}
            disabled={!feed.is_active}
            title={feed.is_active ? undefined : 'Activate the feed to check it'}
            icon={<RefreshCw className="size-4" aria-hidden="true" />}
          >
            Check now
          </RoleGatedButton>
          <RoleGatedButton needed="editor" action="change feeds" variant="secondary" size="sm" onClick={onEdit} icon={<Pencil className="size-4" aria-hidden="true" />} aria-label={`Edit ${feed.name}`}>
            Edit
          </RoleGatedButton>
          <RoleGatedButton
            needed="editor"
            action="change feeds"
            variant="secondary"
            size="sm"
            onClick={onToggle}
            loading={toggle.isPending}
            icon={feed.is_active ? <Pause className="size-4" aria-hidden="true" /> : <Play className="size-4" aria-hidden="true" />}
          >
            {feed.is_active ? 'Pause' : 'Activate'}
          </RoleGatedButton>
          <RoleGatedButton needed="editor" action="change feeds" variant="danger-ghost" size="sm" onClick={onDelete} loading={remove.isPending} icon={<Trash2 className="size-4" aria-hidden="true" />}>
            Delete
          </RoleGatedButton>
        </div>
      </div>
      {feed.last_error ? (
        <p className="mt-3 rounded-lg border border-red-200 bg-red-50 px-3 py-2 text-sm break-words text-red-800">
          <span className="font-semibold">Last error:</span> {feed.last_error}
        </p>
      ) : null}
      <p role="status" className={checkResult ? `mt-3 text-sm ${checkResult.tone === 'error' ? 'text-red-700' : 'text-emerald-800'}` : 'sr-only'}>
        {checkResult?.text ?? ''}
      </p>
    </Card>
  );
}
