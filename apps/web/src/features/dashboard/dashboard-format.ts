import type { RecurringInterval } from '@herald/contracts';

// How the dashboard writes numbers, dates and schedules (en-US, like the rest of the dashboard).

const integer = new Intl.NumberFormat('en-US');
const percent = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });
const change = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1, signDisplay: 'exceptZero' });

export const formatCount = (value: number) => integer.format(value);

/** 12.5 → "12.5%" (rates arrive as percentages with two decimals). */
export const formatRate = (value: number) => `${percent.format(value)}%`;

/** 25 → "+25%", -7.14 → "-7.1%", 0 → "0%". */
export const formatChange = (value: number) => `${change.format(value)}%`;

/** An amount in the site's currency ("$1,234.50", "¥1,235"); an unknown code falls back to "1,234.50 XYZ". */
export function formatMoney(value: number, currency: string): string {
  try {
    return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(value);
  } catch {
    return `${new Intl.NumberFormat('en-US', { maximumFractionDigits: 2, minimumFractionDigits: 2 }).format(value)} ${currency}`;
  }
}

/** A local day from the API ("2026-05-11") as "May 11"; `long` adds the weekday and year for screen readers and tooltips. */
export function formatDay(date: string, style: 'short' | 'long' = 'short'): string {
  const instant = new Date(`${date}T00:00:00Z`);
  if (Number.isNaN(instant.getTime())) return date;
  return new Intl.DateTimeFormat('en-US', {
    timeZone: 'UTC',
    ...(style === 'short' ? { month: 'short', day: 'numeric' } : { weekday: 'long', month: 'long', day: 'numeric', year: 'numeric' }),
  }).format(instant);
}

/** An instant shown in the site's timezone ("May 11, 2026, 9:30 AM"); an unknown zone falls back to the browser's. */
export function formatDateTime(iso: string, timeZone: string | undefined, dateOnly = false): string {
  const instant = new Date(iso);
  if (Number.isNaN(instant.getTime())) return iso;
  const options: Intl.DateTimeFormatOptions = { dateStyle: 'medium', ...(dateOnly ? {} : { timeStyle: 'short' }) };
  try {
    return new Intl.DateTimeFormat('en-US', { ...options, timeZone }).format(instant);
  } catch {
    return new Intl.DateTimeFormat('en-US', options).format(instant);
  }
}

/** "1 step", "3 steps": the word follows the number. */
export function pluralize(count: number, singular: string, plural = `${singular}s`): string {
  return `${formatCount(count)} ${count === 1 ? singular : plural}`;
}

const INTERVAL_UNITS: Record<RecurringInterval, string> = { DAILY: 'day', WEEKLY: 'week', MONTHLY: 'month' };

/** Spec §2 Dashboard: "Every N day(s)/week(s)/month(s)" — "Every 1 day", "Every 2 weeks". */
export function recurrenceText(intervalType: RecurringInterval, intervalValue: number): string {
  return `Every ${pluralize(intervalValue, INTERVAL_UNITS[intervalType])}`;
}
