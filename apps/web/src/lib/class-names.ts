import { clsx, type ClassValue } from 'clsx';

/** Joins conditional Tailwind class lists. */
export function cn(...values: ClassValue[]): string {
  return clsx(values);
}
