// The schedule inputs are `datetime-local` values without an offset
// ("2026-03-29T09:00"); the server reads them as wall-clock time in the
// SITE's timezone (not the browser's). These helpers go the other way, from
// an instant the server sends back to the wall time the site's clocks show.

const WALL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** "2026-03-29T09:00": the instant as a `datetime-local` value in `timeZone`. */
export function toZonedInputValue(instant: number | string, timeZone: string): string {
  // A wall time without an offset is already in the site's timezone.
  if (typeof instant === 'string' && WALL_TIME.test(instant)) return instant.slice(0, 16);
  const date = new Date(instant);
  if (Number.isNaN(date.getTime())) return '';
  const parts: Record<string, string> = {};
  for (const part of formatterFor(timeZone).formatToParts(date)) parts[part.type] = part.value;
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}`;
}

