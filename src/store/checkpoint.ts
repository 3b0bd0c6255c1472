/**
 * SQLite's WAL checkpoint, run after a write instead of inside it.
 *
 * With SQLite's own autocheckpoint, the commit that takes the WAL past 1,000 pages also copies the
 * WAL into the database file and fsyncs both before it returns. On the bot's pull path that commit
 * is the one an order's sell-back waits on, and it made the path's tail: 4–5 ms at p99 against
 * 0.8 ms at p50 (docs/runner.md). The runner's ledger therefore turns SQLite's mark up to a
 * backstop and checkpoints itself: once every `every` outermost commits it schedules one PASSIVE
 * checkpoint a few milliseconds later, after the path whose commit made it due has sent its
 * request. A checkpoint still takes the thread for 1–4 ms, but once every ~15 orders, where it
 * now falls in the gaps between them rather than on every ~60th order's path.
 *
 * (A worker thread with its own connection would take it off the event loop altogether, but costs
 * 8–10 MiB of RSS, more than the bot's memory goal leaves.)
 *
 * Durability does not depend on checkpoints: each commit is fsynced into the WAL
 * (`synchronous = FULL`) and SQLite replays the WAL after a crash.
 */
import type Database from 'better-sqlite3';

/** Commits between two checkpoints: the bot writes ~4 commits and ~15–20 pages of WAL an order. */
const CHECKPOINT_EVERY_COMMITS = 64;
/**
 * How long after the commit that made it due a checkpoint runs: past the rest of that path (the
 * commit to the request leaving is ~1 ms at p50, ~3 ms at p99).
 */
const CHECKPOINT_DELAY_MS = 20;
/** SQLite's own checkpoint mark, in pages, kept as a backstop for writes outside a counted commit. */
export const BACKSTOP_AUTOCHECKPOINT_PAGES = 10_000;

/** Runs `run` later, off the current path (a timer by default; tests run it by hand). */
export type Schedule = (run: () => void) => void;

const afterThePath: Schedule = (run) => {
  setTimeout(run, CHECKPOINT_DELAY_MS).unref();
};

export interface DeferredCheckpointOptions {
  /** Commits between two checkpoints (default 64). */
  every?: number;
  schedule?: Schedule;
}

export class DeferredCheckpoint {
  private commits = 0;
  private pending = false;
  private readonly every: number;
  private readonly schedule: Schedule;
  /** Checkpoints run, and those that failed (their frames are left to the next one). */
  readonly counts = { runs: 0, failed: 0 };

  constructor(
    private readonly db: Database.Database,
    options: DeferredCheckpointOptions = {},
  ) {
    this.every = options.every ?? CHECKPOINT_EVERY_COMMITS;
    this.schedule = options.schedule ?? afterThePath;
    if (!Number.isInteger(this.every) || this.every < 1)
      throw new RangeError(`checkpoint every ${this.every} commits`);
    db.pragma(`wal_autocheckpoint = ${BACKSTOP_AUTOCHECKPOINT_PAGES}`);
  }

  /** Told after each outermost commit. */
  committed(): void {
    if (++this.commits < this.every || this.pending) return;
    this.pending = true;
    this.schedule(() => this.run());
  }

  private run(): void {
    this.pending = false;
    this.commits = 0;
    if (!this.db.open) return;
    this.counts.runs++;
    try {
      this.db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // A checkpoint that cannot run now (another process checkpointing, a full disk) leaves the
      // frames in the WAL, where readers find them, for the next one or SQLite's backstop; a write
      // that fails for the same cause reports it where it is made.
      this.counts.failed++;
    }
  }
}
