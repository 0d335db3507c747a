/** The source of "now" for every rule that depends on time, so tests can move it. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock set and advanced by hand: tests, and the demo seeder that writes a back-dated history. */
export class ManualClock implements Clock {
  constructor(private current: number = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.current;
  }
  set(millis: number): void {
    this.current = millis;
  }
  advance(millis: number): void {
    this.current += millis;
  }
}
