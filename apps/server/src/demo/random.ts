// A seeded random generator for the demo data: the same seed draws the same
// audience, the same sends and the same outcomes, so two demo folders are
// comparable run after run. Not for anything secret (keys and passwords come
// from node:crypto).

/** FNV-1a: a 32-bit hash of a label, to derive a seed from it. */
function hashLabel(label: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < label.length; i += 1) {
    hash ^= label.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** mulberry32: small, fast, and good enough to make data look organic. */
export class SeededRandom {
  private state: number;

  constructor(seed: number | string) {
    this.state = typeof seed === 'number' ? seed >>> 0 : hashLabel(seed);
  }

  /** A number in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** A generator of its own for one label: what it draws does not depend on how much this one drew before. */
  fork(label: string): SeededRandom {
    return new SeededRandom((hashLabel(label) ^ Math.imul(this.state, 0x9e3779b1)) >>> 0);
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  between(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  /** A whole number in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** One of the entries, each as likely as its weight. */
  weighted<T>(entries: ReadonlyArray<readonly [T, number]>): T {
    const total = entries.reduce((sum, [, weight]) => sum + weight, 0);
    let point = this.next() * total;
    for (const [value, weight] of entries) {
      point -= weight;
      if (point < 0) return value;
    }
    return entries[entries.length - 1]![0];
  }

  /** A waiting time with the given mean (exponential distribution). */
  exponential(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }

  /** `length` characters of the base64url alphabet, as push services put in their endpoints. */
  base64url(length: number): string {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    let text = '';
    for (let i = 0; i < length; i += 1) text += alphabet[Math.floor(this.next() * 64)];
    return text;
  }

  /** A version-4 UUID made of seeded bits, so rows keep the same ids (and order) run after run. */
  uuid(): string {
    const hex = Array.from({ length: 32 }, () => Math.floor(this.next() * 16).toString(16));
    hex[12] = '4';
    hex[16] = (Math.floor(this.next() * 4) + 8).toString(16);
    const text = hex.join('');
    return `${text.slice(0, 8)}-${text.slice(8, 12)}-${text.slice(12, 16)}-${text.slice(16, 20)}-${text.slice(20)}`;
  }
}
