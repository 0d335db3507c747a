import type { OutcomeCounts } from '@herald/contracts';
import { cn } from '../../lib/class-names';
import { doneOf, formatCount } from './outcome-words';

/** "50 accepted · 34 failed · 2 expired · 8 pending of 94". */
function outcomeText(counts: OutcomeCounts): string {
  if (counts.targeted === 0) return 'Preparing recipients...';
  const parts = [`${formatCount(counts.sent)} accepted`];
  if (counts.failed) parts.push(`${formatCount(counts.failed)} failed`);
  if (counts.expired) parts.push(`${formatCount(counts.expired)} expired`);
  if (counts.skipped) parts.push(`${formatCount(counts.skipped)} skipped`);
  if (counts.pending) parts.push(`${formatCount(counts.pending)} pending`);
  return `${parts.join(' · ')} of ${formatCount(counts.targeted)}`;
}

const SEGMENTS = [
  { key: 'sent', label: 'Accepted', className: 'bg-emerald-600' },
  { key: 'failed', label: 'Failed', className: 'bg-red-600' },
  { key: 'expired', label: 'Expired', className: 'bg-amber-500' },
  { key: 'skipped', label: 'Skipped', className: 'bg-slate-400' },
] as const;

/**
 * A send's progress as separate segments: accepted, failed, expired and
 * skipped, on the track of what is still pending. A failure is never drawn as
 * progress of "sent".
 */
export function OutcomeBar({ counts, label, className }: { counts: OutcomeCounts; label: string; className?: string }) {
  const text = outcomeText(counts);
  const done = doneOf(counts);
  return (
    <div className={cn('flex flex-col gap-1.5', className)} data-testid="outcome-bar">
      <p className="text-xs font-medium text-slate-700" data-testid="outcome-text">
        {text}
      </p>
      <div
        role="progressbar"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={counts.targeted}
        aria-valuenow={Math.min(done, counts.targeted)}
        aria-valuetext={text}
        className="flex h-2 w-full overflow-hidden rounded-full bg-slate-200"
      >
        {counts.targeted > 0
          ? SEGMENTS.map((segment) =>
              counts[segment.key] > 0 ? (
                <div
                  key={segment.key}
                  data-segment={segment.key}
                  className={cn('h-full transition-[width] duration-500', segment.className)}
                  style={{ width: `${(counts[segment.key] / counts.targeted) * 100}%` }}
                />
              ) : null,
            )
          : null}
      </div>
    </div>
  );
}
