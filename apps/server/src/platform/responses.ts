/** The success envelope of spec §7: `{ success: true, data }`. */
export function ok<T>(data: T): { success: true; data: T } {
  return { success: true, data };
}

/** Epoch milliseconds to the ISO string the API shows; null stays null. */
export function isoOrNull(millis: number | null | undefined): string | null {
  return millis === null || millis === undefined ? null : new Date(millis).toISOString();
}

export function iso(millis: number): string {
  return new Date(millis).toISOString();
}
