import type { Segment } from '@herald/contracts';
import { Pencil, RefreshCw, Trash2, Users } from 'lucide-react';
import { Button, Card } from '../../../components/ui';
import { RoleGatedButton } from '../../../components/role-gate';
import { cn } from '../../../lib/class-names';
import { formatDate, ruleChips, sampleText, subscriberCountText } from '../segment-labels';

interface SegmentCardProps {
  segment: Segment;
  timeZone: string;
  onEdit: () => void;
  onDelete: () => void;
  onRefresh: () => void;
  deleting: boolean;
  refreshing: boolean;
}

export const editButtonId = (segmentId: string) => `segment-${segmentId}-edit`;

/** One segment in the list (spec §2): name, count, rule chips, updated date, Edit, Delete and a fresh count. */
export function SegmentCard({ segment, timeZone, onEdit, onDelete, onRefresh, deleting, refreshing }: SegmentCardProps) {
  const titleId = `segment-${segment.id}-title`;
  return (
    <Card className="p-4 sm:p-5">
      <article aria-labelledby={titleId} data-testid={`segment-${segment.id}`} className="flex flex-col gap-3 sm:flex-row sm:items-start sm:justify-between">
        <div className="flex min-w-0 flex-1 flex-col gap-2">
          <h2 id={titleId} className="text-base font-semibold break-words text-slate-900">
            {segment.name}
          </h2>
          <div className="flex items-start gap-2 text-sm text-slate-700">
            <Users className="mt-0.5 size-4 shrink-0 text-slate-500" aria-hidden="true" />
            <span data-testid="segment-count" aria-live="polite" className="min-w-0 pt-px">
              {segment.sample_size === null ? (
                subscriberCountText(segment.estimated_count)
              ) : (
                <>
                  ≈ {subscriberCountText(segment.estimated_count)} <span className="text-xs whitespace-nowrap text-slate-600">{sampleText(segment.sample_size)}</span>
                </>
              )}
            </span>
            <Button
              variant="ghost"
              size="sm"
              className="-mt-0.5 h-7 shrink-0 px-2 text-xs"
              onClick={onRefresh}
              disabled={refreshing}
              aria-label={`Refresh count of ${segment.name}`}
              title="Count again now"
            >
              <RefreshCw className={cn('size-3.5', refreshing && 'animate-spin')} aria-hidden="true" />
              Refresh
            </Button>
          </div>
          <ul className="flex flex-wrap gap-1.5" aria-label="Rules">
            {ruleChips(segment.rules).map((chip) => (
              <li key={chip} className="max-w-full rounded-md bg-indigo-50 px-2 py-0.5 text-xs font-medium break-words text-indigo-800 ring-1 ring-indigo-200 ring-inset">
                {chip}
              </li>
            ))}
          </ul>
          <p className="text-xs text-slate-600">
            Updated <time dateTime={segment.updated_at}>{formatDate(segment.updated_at, timeZone)}</time>
          </p>
        </div>
        <div className="flex shrink-0 gap-2">
          <RoleGatedButton needed="editor" action="change segments" id={editButtonId(segment.id)} variant="secondary" size="sm" onClick={onEdit} aria-label={`Edit ${segment.name}`} icon={<Pencil className="size-4" aria-hidden="true" />}>
            Edit
          </RoleGatedButton>
          <RoleGatedButton
            needed="editor"
            action="change segments"
            variant="danger-ghost"
            size="sm"
            onClick={onDelete}
            loading={deleting}
            aria-label={`Delete ${segment.name}`}
            icon={<Trash2 className="size-4" aria-hidden="true" />}
          >
            Delete
          </RoleGatedButton>
        </div>
      </article>
    </Card>
  );
}
