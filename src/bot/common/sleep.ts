/** Sleeping on the injected clock until `until` or an abort; an abort is a normal way to wake. */
import type { Clock } from '../../core/clock.js';
import type { KillSwitch } from '../../obs/kill-switch.js';

export async function sleepUntil(clock: Clock, until: number, signal: AbortSignal): Promise<boolean> {
  return sleepFor(clock, until - clock.now(), signal);
}

/**
 * A loop's sleep until `until` or an abort; given the kill switch (the loop found it paused), also
 * until the switch changes, so a resume wakes the loop at once instead of at its next look.
 */
export async function sleepUntilChange(
  clock: Clock,
  until: number,
  signal: AbortSignal,
  paused?: KillSwitch,
): Promise<void> {
  const change = paused?.nextChange(signal);
  try {
    await sleepUntil(clock, until, change?.signal ?? signal);
  } finally {
    change?.done();
  }
}

/** Resolves true when the time passed, false when aborted. */
export async function sleepFor(clock: Clock, ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  try {
    await clock.sleep(Math.max(0, ms), signal);
    return true;
  } catch (e) {
    if (signal.aborted) return false;
    throw e;
  }
}

/** Runs async sections one at a time (the sell side must not list a card twice concurrently). */
export class Mutex {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => undefined);
    return next;
  }
}
