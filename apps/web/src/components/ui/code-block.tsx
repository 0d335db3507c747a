import { Check, Copy } from 'lucide-react';
import { useEffect, useId, useState } from 'react';
import { cn } from '../../lib/class-names';

interface CodeBlockProps {
  code: string;
  /** Names the block (a figure) and its copy button, e.g. "Installation snippet". */
  label: string;
  className?: string;
  /** Wrap long lines (keys, script tags) instead of scrolling sideways. */
  wrap?: boolean;
}

async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

/** Read-only code with a copy button. */
export function CodeBlock({ code, label, className, wrap = true }: CodeBlockProps) {
  const labelId = useId();
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');

  useEffect(() => {
    if (state === 'idle') return;
    const timer = setTimeout(() => setState('idle'), 2000);
    return () => clearTimeout(timer);
  }, [state]);

  return (
    <figure aria-labelledby={labelId} className={cn('overflow-hidden rounded-lg border border-slate-800 bg-slate-900', className)}>
      <div className="flex items-center justify-between gap-3 border-b border-slate-700 px-3 py-1.5">
        <span id={labelId} className="truncate text-xs font-medium text-slate-300">
          {label}
        </span>
        <button
          type="button"
          onClick={() => void copyText(code).then((ok) => setState(ok ? 'copied' : 'failed'))}
          className="inline-flex shrink-0 items-center gap-1.5 rounded-md px-2 py-1 text-xs font-medium text-slate-200 hover:bg-slate-700 focus-visible:outline-2 focus-visible:outline-indigo-400"
          aria-label={`Copy ${label}`}
        >
          {state === 'copied' ? <Check className="size-3.5" aria-hidden="true" /> : <Copy className="size-3.5" aria-hidden="true" />}
          <span aria-hidden="true">{state === 'copied' ? 'Copied!' : state === 'failed' ? 'Copy failed' : 'Copy'}</span>
        </button>
        <span className="sr-only" role="status">
          {state === 'copied' ? `${label} copied to clipboard` : state === 'failed' ? 'Copying failed; select the text and copy it manually' : ''}
        </span>
      </div>
      <pre
        // A block that scrolls sideways must be reachable by keyboard to be scrolled.
        tabIndex={wrap ? undefined : 0}
        className={cn(
          'overflow-x-auto p-4 text-xs leading-relaxed text-slate-100 focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-indigo-400',
          wrap && 'break-all whitespace-pre-wrap',
        )}
      >
        <code className="font-mono">{code}</code>
      </pre>
    </figure>
  );
}
