import { Info } from 'lucide-react';
import { useId, useState, type ReactNode } from 'react';
import { cn } from '../../lib/class-names';

interface TooltipProps {
  /** The help text. */
  content: ReactNode;
  /** Accessible name of the trigger, e.g. "About Site Name". */
  label: string;
  className?: string;
}

/**
 * A small "i" button that reveals help text on hover, focus or tap; Escape
 * hides it. The text is the trigger's accessible description (WAI-ARIA tooltip pattern).
 */
export function Tooltip({ content, label, className }: TooltipProps) {
  const id = useId();
  const [open, setOpen] = useState(false);
  return (
    <span className={cn('relative inline-flex align-middle', className)} onMouseEnter={() => setOpen(true)} onMouseLeave={() => setOpen(false)}>
      <button
        type="button"
        aria-label={label}
        aria-describedby={id}
        className="inline-flex size-5 items-center justify-center rounded-full text-slate-500 hover:text-indigo-700 focus-visible:outline-2 focus-visible:outline-indigo-600"
        onFocus={() => setOpen(true)}
        onBlur={() => setOpen(false)}
        onClick={() => setOpen((value) => !value)}
        onKeyDown={(event) => {
          if (event.key === 'Escape') setOpen(false);
        }}
      >
        <Info className="size-4" aria-hidden="true" />
      </button>
      <span
        id={id}
        role="tooltip"
        hidden={!open}
        className="absolute bottom-full left-1/2 z-50 mb-2 w-64 max-w-[calc(100vw-2rem)] -translate-x-1/2 rounded-lg bg-slate-900 px-3 py-2 text-left text-xs leading-relaxed font-normal text-white shadow-lg"
      >
        {content}
      </span>
    </span>
  );
}
