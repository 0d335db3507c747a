// Every transaction that writes shared rows (counters, rollups, new unique
// keys) takes them in key order, so two of them never wait for each other
// crosswise (delivery/run-counters.ts, "row order"). One comparison for all of
// them: text by code unit, numbers by value, part after part.

type KeyPart = string | number;

function compareParts(a: readonly KeyPart[], b: readonly KeyPart[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    return String(x) < String(y) ? -1 : 1;
  }
  return a.length - b.length;
}

/** The rows sorted by their key (a copy; the input is left as it is). */
export function inKeyOrder<T>(rows: Iterable<T>, key: (row: T) => readonly KeyPart[]): T[] {
  return [...rows].sort((a, b) => compareParts(key(a), key(b)));
}
