/**
 * The values a card generated into a band (restock, unseen cards of a truncated band) can take in
 * the dynamic backtest. The simulator draws any whole cent of the band's range, uniformly: the
 * grid is every cent when the range holds at most GRID_POINTS of them, else, for each of
 * GRID_POINTS equal slices of the range, the whole cent nearest the slice's mean. The grid is
 * symmetric (the band's mean exactly) and keeps the band's variance to within 1/GRID_POINTS
 * (0.8%, for ranges just over a multiple of GRID_POINTS cents), under 0.4% for ranges over
 * $3 and 0.03% over $100 (test/backtest/value-grid.test.ts). Evenly spaced values from the
 * minimum to the maximum, as before, added 2/(GRID_POINTS − 1) of variance to every band.
 *
 * Each value is registered once per worker in the pack's scorers (its outcome evaluated once), and
 * a generated card is then an id, not a pull-policy evaluation (two `exp` and four roundings). The
 * tables a worker keeps per distinct value are what card changes and band sums read at random:
 * 128 points keep them near a core's 1 MB L2 cache (256 were twice that, 1024 much slower).
 */
export const GRID_POINTS = 128;

/** The grid of [minCents, maxCents] (`points`: an even count, for the mirrored halves). */
export function valueGrid(minCents: number, maxCents: number, points = GRID_POINTS): Float64Array {
  const cents = Math.max(0, maxCents - minCents) + 1;
  if (cents <= points) return Float64Array.from({ length: cents }, (_, k) => minCents + k);
  const grid = new Float64Array(points);
  for (let k = 0; k < points / 2; k++) {
    // Mean of slice k, in cents above the minimum; a tie between two cents is broken one way and
    // the other in turn (one way only would shift every slice of some ranges towards the centre).
    const x = ((k + 0.5) * cents) / points - 0.5;
    const below = Math.floor(x);
    const offset = x - below === 0.5 ? below + (k % 2) : Math.round(x);
    grid[k] = minCents + offset;
    // Mirrored: the grid is symmetric about the range's centre.
    grid[points - 1 - k] = maxCents - offset;
  }
  return grid;
}
