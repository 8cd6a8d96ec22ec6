/**
 * The only source of "now" for domain code. Production uses the system clock; tests use a
 * ManualClock and move it across months, trial ends and retry schedules.
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = {
  now: () => new Date(),
};

export class ManualClock implements Clock {
  private current: number;

  constructor(start: Date | string = '2026-01-01T00:00:00Z') {
    this.current = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  set(to: Date | string): void {
    this.current = new Date(to).getTime();
  }

  advance(ms: number): void {
    this.current += ms;
  }

  advanceSeconds(s: number): void {
    this.advance(s * 1000);
  }

  advanceDays(days: number): void {
    this.advance(days * 86_400_000);
  }
}
