import { useId, type ReactNode } from 'react';
import { cn } from '../../lib/class-names';
import { Tooltip } from './tooltip';

interface SwitchProps {
  /** The visible label; also the switch's accessible name. */
  label: string;
  checked: boolean;
  onCheckedChange: (checked: boolean) => void;
  /** A line under the label explaining what turning it on does. */
  description?: ReactNode;
  /** Optional help text in a tooltip next to the label. */
  tooltip?: ReactNode;
  disabled?: boolean;
  className?: string;
}

/** An on/off toggle (WAI-ARIA switch): a button with role="switch" and its own label. */
export function Switch({ label, checked, onCheckedChange, description, tooltip, disabled, className }: SwitchProps) {
  const id = useId();
  const descriptionId = description ? `${id}-description` : undefined;
  return (
    <div className={cn('flex items-start justify-between gap-4', className)}>
      <div className="min-w-0">
        <span className="inline-flex items-center gap-1.5">
          <label htmlFor={id} className="text-sm font-medium text-slate-800">
            {label}
          </label>
          {tooltip ? <Tooltip content={tooltip} label={`About ${label}`} /> : null}
        </span>
        {description ? (
          <p id={descriptionId} className="text-xs text-slate-600">
            {description}
          </p>
        ) : null}
      </div>
      <button
        id={id}
        type="button"
        role="switch"
        aria-checked={checked}
        aria-describedby={descriptionId}
        disabled={disabled}
        onClick={() => onCheckedChange(!checked)}
        className={cn(
          'relative inline-flex h-6 w-11 shrink-0 items-center rounded-full transition-colors',
          'focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600 disabled:cursor-not-allowed disabled:opacity-60',
          // The off track keeps 3:1 against the card (WCAG 1.4.11), so the control is visible before it is turned on.
          checked ? 'bg-indigo-600' : 'bg-slate-500',
        )}
      >
        <span
          aria-hidden="true"
          className={cn('inline-block size-5 rounded-full bg-white shadow transition-transform', checked ? 'translate-x-5.5' : 'translate-x-0.5')}
        />
      </button>
    </div>
  );
}
