import { useId, type InputHTMLAttributes, type ReactNode } from 'react';
import { cn } from '../../../lib/class-names';

interface CheckboxFieldProps extends Omit<InputHTMLAttributes<HTMLInputElement>, 'type' | 'id'> {
  label: string;
  hint?: ReactNode;
  className?: string;
}

/** A checkbox with its label beside it and an optional hint, wired for screen readers. */
export function CheckboxField({ label, hint, className, ...input }: CheckboxFieldProps) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  return (
    <div className={cn('flex items-start gap-3', className)}>
      <input
        id={id}
        type="checkbox"
        aria-describedby={hintId}
        className="mt-0.5 size-4 shrink-0 rounded border-slate-400 accent-indigo-600 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600"
        {...input}
      />
      <div className="flex min-w-0 flex-col gap-0.5">
        <label htmlFor={id} className="text-sm font-medium text-slate-800">
          {label}
        </label>
        {hint ? (
          <p id={hintId} className="text-xs text-slate-600">
            {hint}
          </p>
        ) : null}
      </div>
    </div>
  );
}
