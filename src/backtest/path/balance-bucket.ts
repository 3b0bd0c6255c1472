/**
 * The balance a row is scored at: balances rounded down to 0.5% buckets, so the static market's
 * rows can be cached per bucket (docs/backtest-engine.md).
 */
/** Balances are bucketed (0.5% steps, rounded down) before scoring so rows can be cached. */
const BUCKET = Math.log(1.005);
export function balanceBucketCents(cents: number): number {
  if (cents <= 100) return Math.max(0, Math.floor(cents));
  // Balances move by a few buckets per slot: walk from the last bucket to the one whose interior
  // (shrunk by 1e-9 relative, far beyond log/exp rounding) holds the balance, by a table of the
  // formula's own bucket starts. Near an edge, or after a jump, the formula itself answers.
  let k = lastBucket;
  for (let steps = 0; k >= 0 && steps < 8; steps++) {
    const from = bucketStart(k);
    if (cents <= from * (1 + 1e-9)) {
      k--;
      continue;
    }
    if (cents >= bucketStart(k + 1) * (1 - 1e-9)) {
      k++;
      continue;
    }
    lastBucket = k;
    return Math.floor(from);
  }
  k = Math.floor(Math.log(cents) / BUCKET);
  lastBucket = k;
  return Math.floor(Math.exp(k * BUCKET));
}
let lastBucket = -1;
/** exp(k · BUCKET), k = 0, 1, …: the bucket starts as the formula computes them, extended on demand. */
let bucketStarts = new Float64Array(0);
function bucketStart(k: number): number {
  if (k >= bucketStarts.length) {
    const more = new Float64Array(Math.max(k + 1, 2 * bucketStarts.length, 2048));
    more.set(bucketStarts);
    for (let i = bucketStarts.length; i < more.length; i++) more[i] = Math.exp(i * BUCKET);
    bucketStarts = more;
  }
  return bucketStarts[k]!;
}
