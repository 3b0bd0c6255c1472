/**
 * The values a card generated into a band (restock, unseen cards of a truncated band) can take in
 * the dynamic backtest: every cent of the band's range when it spans at most GRID_POINTS cents,
 * else GRID_POINTS evenly spaced whole-cent values from its minimum to its maximum. Each value is
 * registered once per worker in the pack's scorers (its outcome evaluated once), and a generated
 * card is then an id, not a pull-policy evaluation (two `exp` and four roundings per card, about a
 * sixth of a dynamic path's time). The simulator draws any cent of the range: the grid's mean is
 * the same (symmetric), its variance is at most about 2/(GRID_POINTS − 1) (0.8%) above the band's. 256 points keep
 * every band's table of a worker within the L2 cache (1024 did not, and every card missed it).
 */
export const GRID_POINTS = 256;

export function valueGrid(minCents: number, maxCents: number): Float64Array {
  const span = Math.max(0, maxCents - minCents);
  const size = span + 1 <= GRID_POINTS ? span + 1 : GRID_POINTS;
  const values = new Float64Array(size);
  for (let k = 0; k < size; k++)
    values[k] = size === span + 1 ? minCents + k : minCents + Math.round((k * span) / (size - 1));
  return values;
}
