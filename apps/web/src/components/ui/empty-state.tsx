import type { ReactNode } from 'react';
import { cn } from '../../lib/class-names';

interface EmptyStateProps {
  icon?: ReactNode;
  title: string;
  description?: ReactNode;
  action?: ReactNode;
  className?: string;
  /** Heading level of the title. */
  headingLevel?: 'h2' | 'h3';
}

export function EmptyState({ icon, title, description, action, className, headingLevel: Heading = 'h2' }: EmptyStateProps) {
  return (
    <div className={cn('flex flex-col items-center justify-center gap-3 rounded-xl border border-dashed border-slate-300 bg-white px-6 py-12 text-center', className)}>
      {icon ? (
        <div className="flex size-12 items-center justify-center rounded-full bg-indigo-50 text-indigo-700" aria-hidden="true">
          {icon}
        </div>
      ) : null}
      <Heading className="text-base font-semibold text-slate-900">{title}</Heading>
      {description ? <p className="max-w-md text-sm text-slate-600">{description}</p> : null}
      {action ? <div className="mt-2 flex flex-wrap justify-center gap-3">{action}</div> : null}
    </div>
  );
}
