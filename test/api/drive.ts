import type { VirtualClock } from '../../src/core/clock.js';

/**
 * Settles `promise`, advancing the virtual clock to each pending sleeper's deadline whenever the
 * program is idle. Returns the outcome instead of throwing, so tests can assert on either.
 */
export async function drive<T>(
  clock: VirtualClock,
  promise: Promise<T>,
  maxSteps = 1000,
): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  let outcome: { ok: true; value: T } | { ok: false; error: unknown } | undefined;
  promise.then(
    (value) => {
      outcome = { ok: true, value };
    },
    (error: unknown) => {
      outcome = { ok: false, error };
    },
  );
  for (let i = 0; i < maxSteps && !outcome; i++) {
    await new Promise<void>((r) => setImmediate(r));
    await new Promise<void>((r) => setTimeout(r, 1));
    if (outcome) break;
    const next = clock.nextWakeAt();
    if (next !== undefined) await clock.advance(next - clock.now());
  }
  if (!outcome) throw new Error('promise did not settle');
  return outcome;
}
