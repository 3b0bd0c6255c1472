/**
 * Money inside packbot is integer cents. USD floats exist only at the API and file boundary,
 * and cross it through these functions. Rounding is half away from zero, to the cent.
 */
export type Cents = number;

/** Exact rounding: a value is a half iff it prints as one in 15 significant digits. */
function roundHalfAwayExact(x: number): number {
  const r = Math.round(Number(Math.abs(x).toPrecision(15)));
  // Math.round rounds .5 up, which for |x| is "away from zero".
  return x < 0 ? -r : r;
}

/** 0.5 · 10^(digits − 15) for `digits` decimal digits: half a unit in the 15th significant digit. */
const HALF_UNIT = Array.from({ length: 23 }, (_, d) => 0.5 * 10 ** (d - 15));
const POW10 = Array.from({ length: 23 }, (_, d) => 10 ** d);

/** `0.5 · 10^(⌊log10 w⌋ + 1 − 15)` for w ≥ 1, by table (Math.log10 and ** cost ~50 ns). */
function halfUlp15(whole: number): number {
  let d = 1;
  while (d < 22 && whole >= POW10[d]!) d++;
  return d < 22 ? HALF_UNIT[d]! : 0.5 * 10 ** (Math.floor(Math.log10(whole)) + 1 - 15);
}

/**
 * Rounds half away from zero; absorbs binary noise such as 1.005 * 100 = 100.49999999999999.
 * Hot: the scorer and the backtest call it per card, so `toPrecision` (about 1 µs) is paid only
 * for values within noise of a half; clear cases, exact ties included, are decided directly.
 */
export function roundHalfAway(x: number): number {
  const frac = x - Math.floor(x);
  if (frac > 0.5 + 1e-7 || frac < 0.5 - 1e-7) return Math.round(x);
  // Near a half (a tie is common: 1235 × 0.9, odd cents × 1.5).
  const a = Math.abs(x);
  const whole = Math.floor(a);
  // At or above the half in magnitude the answer is away from zero, a tie or not (1.1 × 885 =
  // 973.5000000000001): only a value just below a half needs to know whether it is noise.
  if (a - whole >= 0.5) return x < 0 ? -(whole + 1) : whole + 1;
  if (whole >= 1) {
    const eps = halfUlp15(whole);
    const off = Math.abs(a - whole - 0.5);
    if (off <= eps * 0.1) return x < 0 ? -(whole + 1) : whole + 1;
    if (off >= eps * 10) return Math.round(x);
  }
  return roundHalfAwayExact(x);
}

export function toCents(usd: number): Cents {
  if (!Number.isFinite(usd)) throw new RangeError(`not a finite amount: ${usd}`);
  return roundHalfAway(usd * 100);
}

export function toUsd(cents: Cents): number {
  return cents / 100;
}

/** `cents × rate`, rounded half away from zero to the cent (e.g. a 0.9 buyback). */
export function applyRate(cents: Cents, rate: number): Cents {
  return roundHalfAway(cents * rate);
}

/**
 * A whole number with commas between groups of three digits (`1234567` → `1,234,567`), as
 * `toLocaleString('en-US')` prints it, without ICU's number formatting: loading that costs a
 * long-running bot ~6 MiB of resident memory (docs/runner.md, "Footprint").
 */
export function groupThousands(n: number): string {
  const s = String(Math.abs(n));
  let out = s.slice(0, ((s.length - 1) % 3) + 1);
  for (let i = out.length; i < s.length; i += 3) out += `,${s.slice(i, i + 3)}`;
  return n < 0 ? `-${out}` : out;
}

export function formatUsd(cents: Cents): string {
  const sign = cents < 0 ? '-' : '';
  const a = Math.abs(Math.round(cents));
  return `${sign}$${groupThousands(Math.floor(a / 100))}.${String(a % 100).padStart(2, '0')}`;
}
