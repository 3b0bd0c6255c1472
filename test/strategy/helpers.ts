/** Fill 0.8 at market value falling linearly to 0 at 2x: 0.4 at markup 1.5 (easy by hand). */
export const linearFill = {
  model: 'piecewise' as const,
  points: [[1, 0.8] as [number, number], [2, 0] as [number, number]],
};

/**
 * A listing that lives exactly `max_days` at one price (no repricing, no value drift, so the lock
 * never extends it): it sells with the fill model's own probability. Easy by hand.
 */
export const flatLife = { markup_step: 0, value_drift: { daily_volatility: 0 } };
