/**
 * One chaos run: `packbot sim` as its own process, the fault proxy in front of it, the bot
 * started and SIGKILLed for N rounds under seeded faults, a last clean round that settles what is
 * left and stops gracefully, then the audit.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Rng } from '../src/core/prng.js';
import type { Rules } from '../src/market/world-schema.js';
import { Ledger } from '../src/store/ledger.js';
import { type AuditResult, audit } from './audit.js';
import { type Child, logField, logMsg, startBot, startSim } from './processes.js';
import { type FaultProxy, NO_MODES, startFaultProxy } from './proxy.js';
import { type KillPlan, planRound, type Scenario } from './scenarios.js';
import {
  ACCOUNT,
  apiTimeoutSeconds,
  capsAfter,
  FRESH_WINDOW_MS,
  KEY,
  KEY_ENV,
  OPEN_CAPS,
  writeBotFiles,
  writeStrategy,
  writeWorld,
} from './setup.js';
import { SimAdmin, type SimLedgerEntry } from './sim-admin.js';
import { worldLabel, worldRules } from './worlds.js';

export interface ChaosOptions {
  kills: number;
  seed: number;
  scenarios: readonly Scenario[];
  /** Keep the run's files here (created if missing); default: a temp dir removed at the end. */
  keep?: string;
  /**
   * A world file whose `rules` (every choice the spec leaves open) the simulator takes, the
   * suite's own packs and limits kept (worlds.ts); default: the simulator's defaults.
   */
  world?: string;
  /** Progress lines (one per round). */
  log?: (line: string) => void;
}

/*
 * Every wait below is for an event (a log line, an exit, a settled ledger); the times only bound a
 * wait that would otherwise hang, so a slow or busy machine changes how long a round takes, not
 * what it does. They are far above what an idle machine needs (start-up and a first order in 1-3 s).
 */
/** Start-up includes recovery: orders in doubt from the last kill, the sell pass, reconciliation. */
const STARTUP_MS = 120_000;
/**
 * A round's first order (or card: the shop is read first), or the bot saying it does not open (or
 * buy) for now: the spend caps bind, or an order in doubt waits to be settled.
 */
const FIRST_EVENT_MS = 120_000;
/** A `wire` or `crash` kill waits this long for its card purchase, then kills anyway. */
const CARD_KILL_MS = 30_000;
const SETTLE_MS = 180_000;
const STOP_MS = 60_000;

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
const running = (line: string) => logMsg(line) === 'packbot running';
/** An order booked: answered, or an order in doubt settled from evidence as charged. */
const confirmed = (line: string) =>
  ['order confirmed', 'order in doubt settled: charged'].includes(logMsg(line) ?? '');
const cardBought = (line: string) =>
  ['card bought', 'card order in doubt settled: charged'].includes(logMsg(line) ?? '');
/** The open loop stopped at a spend cap: no order (pack or card) comes this round. */
const capsReached = (line: string) =>
  logMsg(line) === 'not opening' && /spend cap .* reached/.test(logField(line, 'reason') ?? '');
/**
 * Why the bot stopped ordering for longer than a round lasts (the spend caps; an order in doubt,
 * settled after `orders.settle_seconds`), or undefined. Short waits (the purchase rate limit
 * between two orders) do not count.
 */
function notOrdering(line: string): string | undefined {
  if (!['not opening', 'not buying cards'].includes(logMsg(line) ?? '')) return undefined;
  const reason = logField(line, 'reason') ?? '';
  return /spend cap .* reached|in doubt/.test(reason) ? reason : undefined;
}

/** What the simulator charged the account so far (purchases less refunds), in cents. */
function spentCents(entries: readonly SimLedgerEntry[]): number {
  return -entries
    .filter((e) => ['pack_purchase', 'pack_refund', 'card_purchase', 'card_fee'].includes(e.kind))
    .reduce((n, e) => n + e.amountCents, 0);
}

/** Nothing left for the bot to do on what it already has: no open intent, no pull waiting. */
function settled(ledgerPath: string): boolean {
  if (!existsSync(ledgerPath)) return false;
  const ledger = Ledger.open(ledgerPath, { readonly: true });
  try {
    return (
      ledger.unresolvedCount() === 0 &&
      ledger.undecidedPulls().length === 0 &&
      ledger.pullsAwaitingSale().length === 0 &&
      ledger.pullsAwaitingListing().length === 0
    );
  } finally {
    ledger.close();
  }
}

/** Lets the started bot settle, then stops it with SIGTERM; returns what went wrong. */
async function cleanRound(bot: Child, ledgerPath: string, log: (line: string) => void): Promise<string[]> {
  const settleStart = Date.now();
  try {
    await bot.waitLine(running, "'packbot running'", STARTUP_MS);
  } catch (e) {
    log('clean round: the bot did not start');
    return [`the clean round did not start: ${(e as Error).message}`];
  }
  const until = Date.now() + SETTLE_MS;
  while (bot.child.exitCode === null && !settled(ledgerPath) && Date.now() < until) await wait(250);
  bot.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const stop = await Promise.race([
    bot.exit,
    new Promise<null>((r) => {
      timer = setTimeout(() => r(null), STOP_MS);
    }),
  ]);
  clearTimeout(timer);
  const ok = stop?.code === 0;
  log(
    `clean round: ${ok ? 'stopped with exit 0' : 'did not stop cleanly'} after ${Date.now() - settleStart} ms`,
  );
  if (stop === null) {
    bot.child.kill('SIGKILL');
    return [`the clean round did not stop within ${STOP_MS} ms of SIGTERM`];
  }
  return ok ? [] : [`the clean round exited with ${stop.code ?? stop.signal} after SIGTERM`];
}

/**
 * A `cards` round whose kill is aimed at a card purchase: `wire`, the proxy holds the bot's nth card
 * purchase while the bot is SIGKILLed, then forwards it or not; `crash`, the bot SIGKILLs itself at
 * a crash point of its nth card intent (PACKBOT_CHAOS_CRASH_AT). Either way a bot still alive after
 * CARD_KILL_MS is SIGKILLed.
 */
async function cardKillRound(
  kill: Exclude<KillPlan, { kind: 'timed' }>,
  config: string,
  env: Record<string, string>,
  proxy: FaultProxy,
): Promise<{ landed: boolean; note: string; ms: number; exitNote?: string }> {
  const started = Date.now();
  let landed = false;
  let bot: Child;
  if (kill.kind === 'wire') {
    bot = startBot(config, env);
    proxy.holdCardPurchase(kill.nth, async () => {
      landed = true;
      bot.child.kill('SIGKILL');
      await bot.exit;
      return kill.forward;
    });
  } else bot = startBot(config, { ...env, PACKBOT_CHAOS_CRASH_AT: `${kill.point}:card:${kill.nth}` });
  // The kill lands (the bot exits), or the caps stop the bot before its nth card, or the bound.
  let capped = false;
  let timer: NodeJS.Timeout | undefined;
  const exit = await Promise.race([
    bot.exit,
    bot.waitLine(capsReached, 'the spend caps reached', STARTUP_MS + CARD_KILL_MS).then(
      () => {
        capped = true;
        return null;
      },
      () => null,
    ),
    new Promise<null>((r) => {
      timer = setTimeout(() => r(null), STARTUP_MS + CARD_KILL_MS);
    }),
  ]);
  clearTimeout(timer);
  if (kill.kind === 'crash') landed = exit?.signal === 'SIGKILL';
  let exitNote: string | undefined;
  if (exit === null) {
    bot.child.kill('SIGKILL');
    await bot.exit;
  } else if (exit.code !== null)
    exitNote = `the bot exited by itself with code ${exit.code}: ${bot.tail(3).replace(/\n/g, ' | ').slice(0, 300)}`;
  proxy.setModes(NO_MODES);
  const what =
    kill.kind === 'wire'
      ? `killed with its card purchase #${kill.nth} held on the wire (${kill.forward ? 'then delivered' : 'never delivered'})`
      : `killed itself at ${kill.point} of card intent #${kill.nth}`;
  return {
    landed,
    note: landed
      ? what
      : `no card purchase #${kill.nth}: killed ${capped ? 'once the spend caps stopped it' : 'after the wait'}`,
    ms: Date.now() - started,
    ...(exitNote ? { exitNote } : {}),
  };
}

export async function runChaos(o: ChaosOptions): Promise<AuditResult & { wallMs: number; dir: string }> {
  const started = Date.now();
  const log = o.log ?? (() => {});
  const dir = o.keep ?? mkdtempSync(join(tmpdir(), 'packbot-chaos-'));
  const rng = new Rng(o.seed);
  // A run with the `cards` family has a shop, and its bot buys from it in every round.
  const cards = o.scenarios.includes('cards');
  // Until the try below owns them, a failed start still stops what started and removes the directory.
  const removeDir = () => {
    if (!o.keep) rmSync(dir, { recursive: true, force: true });
  };
  const server: Partial<Rules> = o.world === undefined ? {} : worldRules(o.world);
  if (o.world !== undefined) log(`world: ${worldLabel(o.world)} (its rules, the suite's packs and limits)`);
  const sim = await startSim(writeWorld(dir, cards, server), o.seed).catch((e: unknown) => {
    removeDir();
    throw e;
  });
  const proxy = await startFaultProxy(sim.url, o.seed).catch(async (e: unknown) => {
    await sim.stop();
    removeDir();
    throw e;
  });
  const admin = new SimAdmin(sim.url, KEY);
  // Spend caps bind from the middle of the run on (see capsAfter): before, orders flow freely;
  // after, any order past the caps is overspend, whatever the faults.
  let caps = OPEN_CAPS;
  const capRound = Math.floor(o.kills / 2) + 1;
  const files = writeBotFiles(
    dir,
    proxy.url,
    caps,
    cards,
    apiTimeoutSeconds(
      o.scenarios.includes('latency'),
      Math.max(server.pack_purchase_answer_ms ?? 0, server.card_purchase_answer_ms ?? 0),
    ),
  );
  const env = { [KEY_ENV]: KEY };
  const extra: string[] = [];
  const roundNotes: string[] = [];
  const kills = { wire: 0, crash: 0, missed: 0 };
  let bot: Child | undefined;
  try {
    for (let round = 1; round <= o.kills; round++) {
      const plan = planRound(rng, o.scenarios);
      if (round === capRound) {
        caps = capsAfter(spentCents(await admin.ledger(ACCOUNT)), cards);
        writeStrategy(files.strategy, caps, cards);
        log(`spend caps set to $${caps.totalCents / 100} (daily and total) from round ${round} on`);
      }
      await admin.setFaults(plan.simFaults);
      proxy.setModes(plan.proxy);
      const kill = plan.kill;
      if (kill.kind !== 'timed') {
        const n = await cardKillRound(kill, files.config, env, proxy);
        kills[n.landed ? kill.kind : 'missed']++;
        if (n.exitNote) roundNotes.push(`round ${round}: ${n.exitNote}`);
        log(`round ${round}/${o.kills}: ${plan.families.join('+')}, ${n.note} (${n.ms} ms)`);
        continue;
      }
      bot = startBot(files.config, env);
      const roundStart = Date.now();
      let note = `killed ${plan.killAfterMs} ms after its first order`;
      try {
        await bot.waitLine(running, "'packbot running'", STARTUP_MS);
        // Kill while it trades: after its first order of the round (a `cards` round: its first
        // card; the shop is read first), or once it says why it does not order now. The first
        // round waits out an order in doubt (settled in `orders.settle_seconds`): it trades under
        // open caps, so the run sees orders however slow the machine.
        const [first, what] = plan.families.includes('cards') ? [cardBought, 'card'] : [confirmed, 'order'];
        const stopped = (l: string) => (round === 1 ? capsReached(l) : notOrdering(l) !== undefined);
        note = `killed ${plan.killAfterMs} ms after its first ${what}`;
        const line = await bot
          .waitLine((l) => first(l) || stopped(l), `'${what}' or a wait`, FIRST_EVENT_MS)
          .catch(() => undefined);
        if (line === undefined) note = `killed before any ${what} (none within ${FIRST_EVENT_MS} ms)`;
        else if (!first(line))
          note = `killed ${plan.killAfterMs} ms after it waited before any ${what} (${notOrdering(line)?.slice(0, 80)})`;
        await wait(plan.killAfterMs);
      } catch {
        // Refusing to start under faults is allowed (exit 1 at start-up); the next round goes on.
      }
      if (bot.child.exitCode !== null) {
        note = `exited by itself with code ${bot.child.exitCode}`;
        roundNotes.push(
          `round ${round}: the bot ${note}: ${bot.tail(3).replace(/\n/g, ' | ').slice(0, 300)}`,
        );
      } else bot.child.kill('SIGKILL');
      await bot.exit;
      log(`round ${round}/${o.kills}: ${plan.families.join('+')}, ${note} (${Date.now() - roundStart} ms)`);
    }
    // The clean round: faults off, no new orders (kill switch file), the bot settles what is left.
    await admin.setFaults({});
    proxy.setModes(NO_MODES);
    writeFileSync(files.pauseFile, 'chaos: settling\n');
    bot = startBot(files.config, env);
    extra.push(...(await cleanRound(bot, files.ledger, log)));
    bot = undefined;

    // Every charge tied to the bot's own key: the simulator's orders (answers it sent, lost or
    // not), their keys mapped back through the proxy's re-keying, plus what the proxy saw.
    const seen = new Map(proxy.charges);
    const cardSales = new Map<string, { originalKey: string; cardId: string; pullId?: string }>();
    for (const order of await admin.orders(ACCOUNT)) {
      seen.set(order.checkoutId, {
        checkoutId: order.checkoutId,
        originalKey: proxy.originalKeyOf(order.key),
        sentKey: order.key,
        pullIds: order.pullIds,
      });
      if (order.transactionId !== undefined)
        cardSales.set(order.transactionId, {
          originalKey: proxy.originalKeyOf(order.key),
          cardId: order.cardId ?? '',
          ...(order.pullId ? { pullId: order.pullId } : {}),
        });
    }
    const result = audit({
      ledgerPath: files.ledger,
      kills: o.kills,
      simEntries: await admin.ledger(ACCOUNT),
      vault: await admin.vault('pokemon'),
      modelProblems: await admin.modelProblems(),
      seen,
      cardSales,
      caps,
      freshWindowMs: FRESH_WINDOW_MS,
      now: await admin.now(),
    });
    if (proxy.rekeyed > 0)
      result.notes.push(`the proxy forwarded ${proxy.rekeyed} re-sent purchase(s) under a fresh key`);
    if (cards)
      result.notes.push(
        `card kills: ${kills.wire} with a card purchase held on the wire, ${kills.crash} at a crash point of a card intent, ${kills.missed} that found no card purchase (the caps, or none within ${STARTUP_MS + CARD_KILL_MS} ms)`,
      );
    result.notes.push(...roundNotes);
    result.problems.push(...extra);
    result.ok &&= extra.length === 0;
    return { ...result, wallMs: Date.now() - started, dir };
  } finally {
    if (bot && bot.child.exitCode === null && bot.child.signalCode === null) {
      bot.child.kill('SIGKILL');
      await bot.exit;
    }
    await proxy.close();
    await sim.stop();
    removeDir();
  }
}
