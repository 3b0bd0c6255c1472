/**
 * The clock of `packbot sim`: wall time, optionally running `speed` times faster from the moment
 * the simulator starts (`--speed`), plus an offset that the admin endpoint
 * `POST /sim/v1/clock/advance` adds to, so time flows for a human and jumps for a test.
 */
import { type Clock, WallClock } from '../core/clock.js';

/** A clock the admin API can move forward (VirtualClock and SimClock both qualify). */
export interface AdvanceableClock extends Clock {
  advance(ms: number): number | Promise<number>;
}

export const isAdvanceable = (c: Clock): c is AdvanceableClock =>
  typeof (c as Partial<AdvanceableClock>).advance === 'function';

interface Sleeper {
  until: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  resolve: () => void;
}

export class SimClock implements AdvanceableClock {
  private offset = 0;
  private readonly sleepers = new Set<Sleeper>();
  private readonly wallStart: number;

  constructor(
    private readonly wall: Clock = new WallClock(),
    /** Simulated ms per wall ms (1: wall time). */
    readonly speed = 1,
  ) {
    if (!(speed > 0) || !Number.isFinite(speed)) throw new RangeError('SimClock speed must be > 0');
    this.wallStart = wall.now();
  }

  /**
   * The clock as a line through one point: at wall time `wallMs` it read `simMs`, and it runs
   * `speed` times the wall (until the next advance). Another process on this machine rebuilds it
   * exactly: `new ScaledClock(simMs, speed, wallMs)`.
   */
  anchor(): { wallMs: number; simMs: number; speed: number } {
    return { wallMs: this.wallStart, simMs: this.wallStart + this.offset, speed: this.speed };
  }

  /** How far this clock is ahead of the wall clock (what `advance` added up). */
  get offsetMs(): number {
    return this.offset;
  }

  now(): number {
    const w = this.wall.now();
    return (
      (this.speed === 1 ? w : Math.floor(this.wallStart + (w - this.wallStart) * this.speed)) + this.offset
    );
  }

  /** Wakes at wall speed, or at once when an advance jumps past the deadline. */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const s: Sleeper = {
        until: this.now() + ms,
        timer: undefined,
        resolve: () => {
          if (s.timer) clearTimeout(s.timer);
          signal?.removeEventListener('abort', onAbort);
          this.sleepers.delete(s);
          resolve();
        },
      };
      const onAbort = () => {
        if (s.timer) clearTimeout(s.timer);
        this.sleepers.delete(s);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.sleepers.add(s);
      this.arm(s);
    });
  }

  advance(ms: number): number {
    if (!(ms >= 0) || !Number.isFinite(ms)) throw new RangeError('SimClock can only move forward');
    this.offset += ms;
    const now = this.now();
    for (const s of [...this.sleepers]) if (s.until <= now) s.resolve();
    return now;
  }

  private arm(s: Sleeper): void {
    const left = s.until - this.now();
    if (left <= 0) {
      s.resolve();
      return;
    }
    // Re-check on wake: an advance may have moved the deadline closer meanwhile.
    s.timer = setTimeout(() => this.arm(s), Math.min(Math.ceil(left / this.speed), 2 ** 31 - 1));
  }
}
