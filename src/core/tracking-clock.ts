/**
 * A VirtualClock that counts its sleepers, so whoever drives it (tests, the agreement harness, the
 * runner bench) advances time only once every loop of a bot is asleep: behaviour, never wall-clock
 * timing, decides the pace.
 */
import type { Clock, VirtualClock } from './clock.js';

export class TrackingClock implements Clock {
  /** Sleeps in progress. */
  pending = 0;
  constructor(readonly inner: VirtualClock) {}
  now(): number {
    return this.inner.now();
  }
  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.pending++;
    try {
      await this.inner.sleep(ms, signal);
    } finally {
      this.pending--;
    }
  }
}
