/**
 * Time is injected: live code gets a WallClock, the embedded demo a ScaledClock, `packbot sim` a
 * SimClock (src/market/sim-clock.ts), tests a VirtualClock; a backtest path counts its own time in
 * plain numbers. Outside these classes Date.now() is read only to start a clock, by `packbot
 * doctor` to compare the service's clock with ours, and by offline commands asking what time it is
 * (status, calibrate): whatever decides or is recorded takes its time from a Clock.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Resolves once `now()` has moved `ms` forward (or rejects with the signal's reason). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('aborted', 'AbortError');
}

export class WallClock implements Clock {
  now(): number {
    return Date.now();
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(abortError(signal));
      const timer = setTimeout(
        () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        Math.max(0, ms),
      );
      const onAbort = () => {
        clearTimeout(timer);
        reject(abortError(signal!));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/**
 * Wall time running `factor` times faster from `startMs` (the embedded demo's "a day in minutes").
 * `wallStartMs` (default: now) is the wall instant at which it reads `startMs`: two processes given
 * the same pair keep the same time (a sped-up `packbot sim` and a bot talking to it).
 */
export class ScaledClock implements Clock {
  private readonly wallStart: number;

  constructor(
    private readonly startMs: number,
    private readonly factor: number,
    wallStartMs: number = Date.now(),
  ) {
    if (!(factor > 0)) throw new RangeError('ScaledClock factor must be > 0');
    this.wallStart = wallStartMs;
  }

  now(): number {
    return Math.floor(this.startMs + (Date.now() - this.wallStart) * this.factor);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new WallClock().sleep(ms / this.factor, signal);
  }
}

interface Sleeper {
  until: number;
  resolve: () => void;
}

/**
 * A clock that only moves when told to. Sleepers wake in deadline order as `advance` passes them,
 * so a simulated day runs in milliseconds and no test waits on the wall clock.
 */
export class VirtualClock implements Clock {
  private current: number;
  private sleepers: Sleeper[] = [];

  constructor(startMs: number | string = Date.UTC(2026, 0, 1)) {
    this.current = typeof startMs === 'string' ? Date.parse(startMs) : startMs;
    if (!Number.isFinite(this.current)) throw new RangeError('VirtualClock start is not a valid time');
  }

  now(): number {
    return this.current;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(abortError(signal));
      const sleeper: Sleeper = {
        until: this.current + ms,
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.sleepers = this.sleepers.filter((s) => s !== sleeper);
        reject(abortError(signal!));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.sleepers.push(sleeper);
    });
  }

  /** Earliest pending sleeper's deadline, if any: lets a driver jump straight to the next event. */
  nextWakeAt(): number | undefined {
    let next: number | undefined;
    for (const s of this.sleepers) if (next === undefined || s.until < next) next = s.until;
    return next;
  }

  /** Moves time forward, waking sleepers in order; awaits a macrotask between wake-ups. */
  async advance(ms: number): Promise<number> {
    if (ms < 0) throw new RangeError('VirtualClock cannot go backwards');
    const target = this.current + ms;
    for (;;) {
      const due = this.sleepers.filter((s) => s.until <= target).sort((a, b) => a.until - b.until)[0];
      if (!due) break;
      this.current = Math.max(this.current, due.until);
      this.sleepers = this.sleepers.filter((s) => s !== due);
      due.resolve();
      await new Promise<void>((r) => setImmediate(r));
    }
    this.current = target;
    return this.current;
  }

  /** Moves time without yielding (for pure, synchronous users such as the market model). */
  advanceSync(ms: number): number {
    if (ms < 0) throw new RangeError('VirtualClock cannot go backwards');
    this.current += ms;
    for (const s of this.sleepers.filter((x) => x.until <= this.current)) s.resolve();
    this.sleepers = this.sleepers.filter((x) => x.until > this.current);
    return this.current;
  }

  set(ms: number): void {
    if (ms < this.current) throw new RangeError('VirtualClock cannot go backwards');
    this.advanceSync(ms - this.current);
  }
}

export const iso = (ms: number): string => new Date(ms).toISOString();
export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** Next midnight UTC strictly after `ms`. */
export function nextUtcMidnight(ms: number): number {
  return (Math.floor(ms / DAY_MS) + 1) * DAY_MS;
}

/** The UTC day number (days since epoch) that `ms` falls in. */
export const utcDay = (ms: number): number => Math.floor(ms / DAY_MS);
