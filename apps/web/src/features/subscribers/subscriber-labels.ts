import { UNKNOWN } from '@herald/contracts';

/** Spec §2 Subscribers: "Unknown values show 'Unknown'". */
export function orUnknown(value: string | null | undefined): string {
  const trimmed = value?.trim();
  return trimmed ? trimmed : UNKNOWN;
}

let regionNames: Intl.DisplayNames | null | undefined;

/** "Germany (DE)" for an ISO 3166-1 alpha-2 code; other values as they are. */
export function countryLabel(country: string | null | undefined): string {
  const value = orUnknown(country);
  if (!/^[A-Z]{2}$/.test(value)) return value;
  if (regionNames === undefined) {
    try {
      regionNames = new Intl.DisplayNames(['en'], { type: 'region' });
    } catch {
      regionNames = null;
    }
  }
  const name = regionNames?.of(value);
  return name && name !== value ? `${name} (${value})` : value;
}
