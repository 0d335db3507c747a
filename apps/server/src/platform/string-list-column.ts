/**
 * A JSON array of strings kept in a text column (e.g. sites.server_only_tags).
 * Anything else in it reads as the strings it holds, never as an error.
 */
export function parseStringListColumn(json: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return [];
  }
  return Array.isArray(parsed) ? parsed.filter((item): item is string => typeof item === 'string') : [];
}
