/**
 * Fault injection for tests and chaos runs: per endpoint (`POST /packs/purchase`, or `*`), 500s at
 * a rate, added latency, a dropped connection before or after the order commits, malformed bodies
 * and `needs_review` on card purchases. Rolls use their own seeded stream so faults are reproducible.
 */
import { z } from 'zod';
import { Rng } from '../core/prng.js';

const Rate = z.number().min(0).max(1);
export const FaultRule = z.strictObject({
  error_rate: Rate.default(0),
  latency_ms: z.number().int().min(0).max(600_000).default(0),
  drop_before_rate: Rate.default(0),
  drop_after_rate: Rate.default(0),
  malformed_rate: Rate.default(0),
  needs_review_rate: Rate.default(0),
  /** How many requests the rule applies to before it removes itself; absent = until cleared. */
  times: z.number().int().min(1).optional(),
});
export type FaultRule = z.infer<typeof FaultRule>;
export const FaultConfig = z.record(z.string().min(1), FaultRule);

export type FaultKind = 'error' | 'drop_before' | 'drop_after' | 'malformed' | 'needs_review';

const RATE_OF: Record<FaultKind, keyof FaultRule> = {
  error: 'error_rate',
  drop_before: 'drop_before_rate',
  drop_after: 'drop_after_rate',
  malformed: 'malformed_rate',
  needs_review: 'needs_review_rate',
};

export class Faults {
  private rules = new Map<string, FaultRule>();
  private rng: Rng;

  constructor(seed: number) {
    this.rng = new Rng(seed ^ 0xfa017);
  }

  /** Replaces the rules for the given endpoints (others are kept). */
  set(config: Record<string, FaultRule>): void {
    for (const [endpoint, rule] of Object.entries(config)) this.rules.set(endpoint, { ...rule });
  }

  clear(): void {
    this.rules.clear();
  }

  list(): Record<string, FaultRule> {
    return Object.fromEntries(this.rules);
  }

  private rule(endpoint: string): [string, FaultRule] | undefined {
    const r = this.rules.get(endpoint);
    if (r) return [endpoint, r];
    const any = this.rules.get('*');
    return any ? ['*', any] : undefined;
  }

  latencyMs(endpoint: string): number {
    return this.rule(endpoint)?.[1].latency_ms ?? 0;
  }

  /** Rolls one fault kind; a rule with `times` is used up when it fires. */
  roll(endpoint: string, kind: FaultKind): boolean {
    const found = this.rule(endpoint);
    if (!found) return false;
    const [name, rule] = found;
    const rate = rule[RATE_OF[kind]] as number;
    if (!(rate > 0) || this.rng.next() >= rate) return false;
    if (rule.times !== undefined) {
      rule.times -= 1;
      if (rule.times <= 0) this.rules.delete(name);
    }
    return true;
  }
}
