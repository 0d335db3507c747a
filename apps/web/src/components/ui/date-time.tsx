import { cn } from '../../lib/class-names';

interface FormatOptions {
  /** IANA timezone to show the instant in, e.g. the site's timezone; the browser's own when omitted. */
  timeZone?: string | undefined;
  /** Date only ("Mar 29, 2026") instead of date and time. */
  dateOnly?: boolean;
}

/** Formats an ISO instant for people; an unparsable value comes back unchanged rather than as "Invalid Date". */
export function formatDateTime(iso: string, { timeZone, dateOnly = false }: FormatOptions = {}): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  try {
    return new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', ...(dateOnly ? {} : { timeStyle: 'short' }), timeZone }).format(date);
  } catch {
    // An unknown timezone name: show the instant in the browser's zone instead of failing.
    return new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', ...(dateOnly ? {} : { timeStyle: 'short' }) }).format(date);
  }
}

interface DateTimeProps extends FormatOptions {
  value: string;
  className?: string;
}

/** A machine-readable `<time>` showing an instant in a chosen timezone (named in its title). */
export function DateTime({ value, timeZone, dateOnly, className }: DateTimeProps) {
  return (
    <time dateTime={value} title={timeZone} className={cn('tabular-nums', className)}>
      {formatDateTime(value, { timeZone, dateOnly })}
    </time>
  );
}
