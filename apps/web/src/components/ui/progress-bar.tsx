import { cn } from '../../lib/class-names';

interface ProgressBarProps {
  /** Accessible name, e.g. "Sending progress". */
  label: string;
  value: number;
  max: number;
  /** What a screen reader announces instead of a bare percentage, e.g. "120 of 1,000 sent". */
  valueText?: string;
  className?: string;
}

/** A determinate progress bar; with `max` 0 it shows an empty track (work not counted yet). */
export function ProgressBar({ label, value, max, valueText, className }: ProgressBarProps) {
  const clamped = max > 0 ? Math.min(Math.max(value, 0), max) : 0;
  const percent = max > 0 ? (clamped / max) * 100 : 0;
  return (
    <div
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={max}
      aria-valuenow={clamped}
      aria-valuetext={valueText}
      className={cn('h-2 w-full overflow-hidden rounded-full bg-slate-200', className)}
    >
      <div className="h-full rounded-full bg-indigo-600 transition-[width] duration-500" style={{ width: `${percent}%` }} />
    </div>
  );
}
