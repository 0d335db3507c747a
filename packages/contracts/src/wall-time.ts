// Wall-clock times in a timezone, shared by the server and the dashboard. The
// dashboard's date-time inputs carry no offset ("2026-03-29T09:00"); Herald
// reads them in the site's timezone, so "9:00 every day" stays 9:00 across
// daylight-saving changes, and shows instants back in that timezone.

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
      second: '2-digit',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

export interface WallTime {
  year: number;
  /** 1–12 */
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** The wall-clock fields of an instant in a timezone. */
export function wallTimeOf(millis: number, timeZone: string): WallTime {
  const parts: Record<string, number> = {};
  for (const part of formatterFor(timeZone).formatToParts(new Date(millis))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return { year: parts.year!, month: parts.month!, day: parts.day!, hour: parts.hour!, minute: parts.minute!, second: parts.second! };
}

/** Offset of the timezone from UTC at an instant, in milliseconds. */
function offsetAt(millis: number, timeZone: string): number {
  const w = wallTimeOf(millis, timeZone);
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - Math.floor(millis / 1000) * 1000;
}

/**
 * The instant at which a timezone's clocks show the given wall time. In a
 * spring-forward gap the wall time does not exist; the instant one offset
 * later is used (09:30 in a 09:00→10:00 gap runs at 10:30). In a fall-back
 * overlap the first occurrence is used.
 */
export function instantOfWallTime(wall: WallTime, timeZone: string): number {
  const asUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);
  // The offsets in force a day either side cover any transition near this wall time.
  const offsetBefore = offsetAt(asUtc - 86_400_000, timeZone);
  const offsetAfter = offsetAt(asUtc + 86_400_000, timeZone);
  const matches = (t: number) => {
    const w = wallTimeOf(t, timeZone);
    return w.year === wall.year && w.month === wall.month && w.day === wall.day && w.hour === wall.hour && w.minute === wall.minute;
  };
  const candidates = [asUtc - offsetBefore, asUtc - offsetAfter].filter(matches).sort((a, b) => a - b);
  if (candidates.length) return candidates[0]!;
  // A spring-forward gap: clocks jump over this wall time; run one offset later.
  return asUtc - offsetBefore;
}

const LOCAL_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,3})?)?$/;

/**
 * Parses a date-time from the API: with an offset or `Z` it is an instant;
 * without one (a `datetime-local` value) it is a wall time in `timeZone`.
 * Returns undefined for anything that is not a real date-time.
 */
export function parseDateTimeInZone(value: string, timeZone: string): number | undefined {
  const local = LOCAL_DATE_TIME.exec(value.trim());
  if (local) {
    const [, y, mo, d, h, mi, s] = local;
    const wall = { year: Number(y), month: Number(mo), day: Number(d), hour: Number(h), minute: Number(mi), second: Number(s ?? 0) };
    if (wall.month < 1 || wall.month > 12 || wall.day < 1 || wall.day > daysInMonth(wall.year, wall.month) || wall.hour > 23 || wall.minute > 59 || wall.second > 59) {
      return undefined;
    }
    return instantOfWallTime(wall, timeZone);
  }
  const withOffset = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-](\d{2}):(\d{2}))$/i.exec(value.trim());
  if (!withOffset) return undefined;
  // The same ranges as a wall time: Date.parse would roll 2026-02-30 over into March.
  const [, y, mo, d, h, mi, s, oh, om] = withOffset;
  const year = Number(y);
  const month = Number(mo);
  if (month < 1 || month > 12 || Number(d) < 1 || Number(d) > daysInMonth(year, month) || Number(h) > 23 || Number(mi) > 59 || Number(s ?? 0) > 59 || Number(oh ?? 0) > 23 || Number(om ?? 0) > 59) {
    return undefined;
  }
  const millis = Date.parse(value);
  return Number.isFinite(millis) ? millis : undefined;
}

export function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}
