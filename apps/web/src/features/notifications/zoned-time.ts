// The schedule inputs are `datetime-local` values without an offset
// ("2026-03-29T09:00"); the server reads them as wall-clock time in the
// SITE's timezone (not the browser's). These helpers go the other way, from
// an instant the server sends back to the wall time the site's clocks show.

import { wallTimeOf } from '@herald/contracts';

const WALL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/;

/** "2026-03-29T09:00": the instant as a `datetime-local` value in `timeZone`. */
export function toZonedInputValue(instant: number | string, timeZone: string): string {
  // A wall time without an offset is already in the site's timezone.
  if (typeof instant === 'string' && WALL_TIME.test(instant)) return instant.slice(0, 16);
  const date = new Date(instant);
  if (Number.isNaN(date.getTime())) return '';
  const wall = wallTimeOf(date.getTime(), timeZone);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(wall.year, 4)}-${pad(wall.month)}-${pad(wall.day)}T${pad(wall.hour)}:${pad(wall.minute)}`;
}

