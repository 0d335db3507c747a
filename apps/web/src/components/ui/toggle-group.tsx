import type { ReactNode } from 'react';
import { cn } from '../../lib/class-names';

export interface ToggleItem<V extends string> {
  value: V;
  label: string;
  /** Extra visual detail next to the label (e.g. a count); hidden from the accessible name. */
  adornment?: ReactNode;
  icon?: ReactNode;
}

interface ToggleGroupProps<V extends string> {
  /** Accessible name of the group, e.g. "Filter by status". */
  label: string;
  items: readonly ToggleItem<V>[];
  value: V;
  onValueChange: (value: V) => void;
  className?: string;
  size?: 'sm' | 'md';
}

/**
 * A row of mutually exclusive buttons (filters, mode switches). Each is a
 * toggle button (`aria-pressed`), so the choice reads the same to everyone
 * and works with Tab + Enter/Space like any button.
 */
export function ToggleGroup<V extends string>({ label, items, value, onValueChange, className, size = 'md' }: ToggleGroupProps<V>) {
  return (
    <div role="group" aria-label={label} className={cn('inline-flex max-w-full flex-wrap gap-1 rounded-lg bg-slate-100 p-1', className)}>
      {items.map((item) => {
        const pressed = item.value === value;
        return (
          <button
            key={item.value}
            type="button"
            aria-pressed={pressed}
            onClick={() => onValueChange(item.value)}
            className={cn(
              'inline-flex items-center gap-1.5 rounded-md font-medium whitespace-nowrap transition-colors',
              'focus-visible:outline-2 focus-visible:outline-offset-1 focus-visible:outline-indigo-600',
              size === 'sm' ? 'h-7 px-2.5 text-xs' : 'h-8 px-3 text-sm',
              pressed ? 'bg-white text-indigo-700 shadow-sm ring-1 ring-slate-200' : 'text-slate-700 hover:bg-white/70 hover:text-slate-900',
            )}
          >
            {item.icon}
            {item.label}
            {item.adornment !== undefined ? (
              <span aria-hidden="true" className={cn('rounded-full px-1.5 text-xs tabular-nums', pressed ? 'bg-indigo-50 text-indigo-700' : 'bg-slate-200 text-slate-700')}>
                {item.adornment}
              </span>
            ) : null}
          </button>
        );
      })}
    </div>
  );
}
