import type { Clock } from '../../core/clock.js';

/**
 * The runner's clock, replaceable once: the embedded simulator may move time on when it resumes a
 * previous session, after the ledger and the logger already read it.
 */
export class ClockBox implements Clock {
  constructor(private current: Clock) {}
  set(clock: Clock): void {
    this.current = clock;
  }
  now(): number {
    return this.current.now();
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return this.current.sleep(ms, signal);
  }
}
