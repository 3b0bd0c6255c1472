/**
 * Waiting for a condition, the one way a test waits on something it does not drive itself (a
 * request on the loopback, a child process, a browser): `cond` is looked at again until it holds.
 * The time limit only ends a test that would otherwise hang; it is never what a test measures,
 * so a busy machine makes a test slower, not different.
 */

export interface UntilOptions {
  /** Wall time before giving up (a hang, not a verdict). Default 10 s: in-process events take ms. */
  limitMs?: number;
  /** Pause between looks: 1 ms for in-process state, more for a child process or a browser. */
  everyMs?: number;
}

/** Resolves once `cond` returns true; throws `never happened: <what>` past the limit. */
export async function until(
  cond: () => boolean | Promise<boolean>,
  what = 'condition',
  options: UntilOptions = {},
): Promise<void> {
  const { limitMs = 10_000, everyMs = 1 } = options;
  const deadline = performance.now() + limitMs;
  while (!(await cond())) {
    if (performance.now() > deadline) throw new Error(`never happened within ${limitMs} ms: ${what}`);
    await new Promise<void>((r) => setTimeout(r, everyMs));
  }
}
