/**
 * The API scopes a strategy needs, checked against `GET /me` at start: a key that can open packs
 * but not sell them back would miss every 0.9 window, so a missing scope must stop the bot before
 * its first order, not at its first 403.
 */
import type { Scope } from '../api/schemas.js';
import { compilePolicy } from './pull-policy.js';
import type { Strategy } from './strategy-schema.js';

export interface ScopeNeeds {
  /** Without any of these the bot must not start. */
  required: Scope[];
  /** Used when present; the bot runs without them (with a warning). */
  optional: Scope[];
}

/** A pull far above any threshold or listing floor: if the strategy never lists it, it never lists. */
const PROBE_VALUE_CENTS = 1_000_000_000;

/**
 * Whether the strategy can ever list a pull: listing depends on the value only through the
 * threshold and the listing floor (price and fill are ratios of the value), so one very high value
 * decides it.
 */
export function strategyMayList(strategy: Strategy): boolean {
  const value = Math.max(PROBE_VALUE_CENTS, Math.ceil(strategy.sell.threshold_usd * 100) + 1);
  return compilePolicy(strategy).plan(value).action === 'list';
}

/**
 * In dry-run every write goes to the paper market, so only the reads reach the real API. A
 * strategy that never opens (`budget.kill_switch`) needs no write scope. `read:pulls` (the purchase
 * report) is evidence for orders in doubt: useful, not required.
 */
export function scopesNeeded(strategy: Strategy, mode: 'live' | 'dry-run'): ScopeNeeds {
  const required: Scope[] = ['read:catalog', 'read:account'];
  if (mode === 'dry-run') return { required, optional: [] };
  if (!strategy.budget.kill_switch) {
    required.push('rip:packs', 'sell:cards');
    if (strategy.cards.enabled) required.push('buy:cards');
    if (strategyMayList(strategy) || (strategy.cards.enabled && strategy.cards.exit === 'list'))
      required.push('write:listings');
  }
  return { required, optional: ['read:pulls'] };
}

/** What the key lacks: required scopes (fatal) and optional ones (a warning). */
export function missingScopes(
  have: readonly string[],
  needs: ScopeNeeds,
): { required: Scope[]; optional: Scope[] } {
  const owned = new Set(have);
  return {
    required: needs.required.filter((s) => !owned.has(s)),
    optional: needs.optional.filter((s) => !owned.has(s)),
  };
}
