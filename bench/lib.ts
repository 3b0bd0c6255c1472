/**
 * Benchmark helpers. Every goal is reported as a ratio against a baseline measured in the same
 * run on the same machine, so numbers compare across machines; tests never assert timings.
 */
export interface BenchResult {
  name: string;
  /** Human-readable figure, e.g. "1.2M draws/s". */
  value: string;
  /** Ratio to the in-run baseline, when the benchmark has one. */
  ratio?: number;
  /** The goal the ratio (or value) is held to, for the report. */
  goal?: string;
  ok?: boolean;
}

export interface Benchmark {
  name: string;
  run(): Promise<BenchResult[]>;
}

/** Runs `fn` repeatedly for about `ms` milliseconds of wall time; returns operations per second. */
export function opsPerSecond(fn: () => number, ms = 1000): number {
  fn(); // warm-up
  let ops = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < ms) {
    ops += fn();
    elapsed = performance.now() - start;
  }
  return (ops / elapsed) * 1000;
}

export function fmtRate(n: number, unit: string): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M ${unit}/s`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k ${unit}/s`;
  return `${n.toFixed(1)} ${unit}/s`;
}
