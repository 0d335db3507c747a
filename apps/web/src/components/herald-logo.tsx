import { cn } from '../lib/class-names';

/** The product mark and name. Decorative mark; the visible name carries the meaning. */
export function HeraldLogo({ className, inverted = false }: { className?: string; inverted?: boolean }) {
  return (
    <span className={cn('inline-flex items-center gap-2', className)}>
      <svg viewBox="0 0 32 32" className="size-8 shrink-0" aria-hidden="true">
        <rect width="32" height="32" rx="8" fill="#4338ca" />
        <path d="M16 7a6 6 0 0 0-6 6v4.2l-1.7 3.1A1 1 0 0 0 9.2 22h13.6a1 1 0 0 0 .9-1.7L22 17.2V13a6 6 0 0 0-6-6Zm-2.5 16.5a2.5 2.5 0 0 0 5 0Z" fill="#fff" />
      </svg>
      <span className={cn('text-lg font-semibold tracking-tight', inverted ? 'text-white' : 'text-slate-900')}>Herald</span>
    </span>
  );
}
