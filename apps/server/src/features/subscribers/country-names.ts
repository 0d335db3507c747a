// Subscribers store ISO 3166-1 alpha-2 codes; owners search for "germany" as
// often as for "DE" (spec §2: "search by browser or country"). The English
// names come from the runtime's ICU data, so no list is kept here.

let names: Array<[code: string, lowerName: string]> | undefined;

function countryNames(): Array<[string, string]> {
  if (names) return names;
  const display = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
  const list: Array<[string, string]> = [];
  for (let a = 65; a <= 90; a += 1) {
    for (let b = 65; b <= 90; b += 1) {
      const code = String.fromCharCode(a, b);
      const name = display.of(code);
      if (name && name !== code) list.push([code, name.toLowerCase()]);
    }
  }
  names = list;
  return list;
}

/** Codes of the countries whose English name contains `text` (3 characters or more; shorter text matches codes only). */
export function countryCodesNamed(text: string): string[] {
  const needle = text.trim().toLowerCase();
  if (needle.length < 3) return [];
  return countryNames()
    .filter(([, name]) => name.includes(needle))
    .map(([code]) => code);
}
