import type { Pacer } from '../../src/api/pacing.js';
import type { VirtualClock } from '../../src/core/clock.js';

/**
 * Settles `promise`, advancing the virtual clock to the next sleeper's deadline whenever the
 * program is idle: no HTTP attempt of `pacer` in flight (a reply still on its way would otherwise
 * be seen at a later virtual time on a busy machine). Returns the outcome instead of throwing, so
 * tests can assert on either. `limitMs` of wall time only ends a test that would hang.
 */
export async function drive<T>(
  clock: VirtualClock,
  pacer: Pacer,
  promise: Promise<T>,
  limitMs = 10_000,
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
  const deadline = performance.now() + limitMs;
  while (!outcome) {
    if (performance.now() > deadline) throw new Error(`promise did not settle within ${limitMs} ms`);
    await new Promise<void>((r) => setImmediate(r));
    if (outcome) break;
    const next = clock.nextWakeAt();
    if (pacer.inFlight > 0 || next === undefined) {
      // A request on its way, or work between two awaits: look again shortly.
      await new Promise<void>((r) => setTimeout(r, 1));
      continue;
    }
    await clock.advance(next - clock.now());
  }
  return outcome;
}
