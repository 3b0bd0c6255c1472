/**
 * What every handler of the simulator's `Market` is given: the current state (replaced on reset
 * and restore, so read through the context, never kept), the injected clock and the fault
 * injector. Handlers are functions over this context; the `Market` class only wires them.
 */
import type { Clock } from '../core/clock.js';
import { advanceDynamics } from './dynamics.js';
import type { Faults } from './faults.js';
import { serverTime } from './server-time.js';
import type { MarketState } from './state.js';

export interface MarketContext {
  readonly s: MarketState;
  readonly clock: Clock;
  readonly faults: Faults;
}

/** The service's now, at the resolution it keeps time in (server-time.ts). */
export function now(ctx: MarketContext): number {
  return serverTime(ctx.s.world.rules, ctx.clock.now());
}

/** Applies background dynamics up to the clock's now; returns that now. */
export function sync(ctx: MarketContext): number {
  const t = now(ctx);
  advanceDynamics(ctx.s, t);
  return t;
}
