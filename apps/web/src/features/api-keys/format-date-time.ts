const formatters = new Map<string, Intl.DateTimeFormat>();

/** "Mar 1, 2026, 9:00 AM" in the site's timezone: the one the owner schedules in. */
export function formatDateTime(iso: string, timeZone: string): string {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    try {
      formatter = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'short', timeZone });
    } catch {
      formatter = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
    }
    formatters.set(timeZone, formatter);
  }
  return formatter.format(new Date(iso));
}
