import type { Clock } from '../../src/platform/clock';

/** A clock tests set and advance by hand (services take a Clock, so time-based rules can be tested). */
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
