/**
 * Pauses opening packs without stopping the sell side. Two independent sources: a file on disk
 * (an operator can `touch` it, or a container orchestrator can mount it) and the authenticated
 * local endpoint. Opening is paused while EITHER says so; resuming by endpoint does not override the
 * file, so an operator's file always wins.
 *
 * An endpoint pause is an operator's decision, so it survives a restart: it is kept in a small
 * state file beside the ledger (written atomically, removed by resume).
 */
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { ensurePrivateDir, writePrivateFileAtomic } from '../store/private-files.js';

export type PauseSource = 'file' | 'endpoint';

/** Where a ledger's endpoint pause is kept: `data/packbot.db` → `data/packbot.db.paused`. */
export function endpointPauseFile(ledgerPath: string): string | undefined {
  return ledgerPath === ':memory:' ? undefined : `${ledgerPath}.paused`;
}

export interface PauseStatus {
  paused: boolean;
  /** `file` and/or `endpoint`. */
  reasons: PauseSource[];
  file: string | undefined;
  /** Epoch ms when the endpoint pause was set, if it is set. */
  pausedAt: number | undefined;
  /** Who set the endpoint pause and why (control API), when known. */
  by?: string | undefined;
  note?: string | undefined;
}

export interface KillSwitchOptions {
  /** Where an endpoint pause is kept across restarts; none: in memory only. */
  stateFile?: string | undefined;
}

export class KillSwitch {
  private manualSince: number | undefined;
  private manualBy: { by?: string; note?: string } = {};
  private reported: string | undefined;
  /** Waiting for the next change (`nextChange`), told once each. */
  private readonly waiters = new Set<() => void>();

  /**
   * @param onChange called with the new status whenever the set of reasons changes (a pause or
   *   resume, or the file seen appearing or gone on a check), and once for the first check.
   */
  constructor(
    private readonly file: string | undefined,
    private readonly now: () => number,
    private readonly onChange?: (status: PauseStatus) => void,
    private readonly options: KillSwitchOptions = {},
  ) {
    const saved = readPaused(options.stateFile);
    this.manualSince = saved?.at;
    this.manualBy = saved?.meta ?? {};
  }

  /** Checked before every purchase; cheap (one stat). */
  isPaused(): boolean {
    return this.status().paused;
  }

  /** An endpoint pause; `meta` (who, why) is kept with it. Pausing again keeps the first one. */
  pause(meta: { by?: string; note?: string } = {}): PauseStatus {
    if (this.manualSince === undefined) {
      this.manualSince = this.now();
      this.manualBy = meta;
      const path = this.options.stateFile;
      if (path) {
        ensurePrivateDir(dirname(path));
        const saved = { endpoint_paused_at: this.manualSince, ...meta };
        writePrivateFileAtomic(path, `${JSON.stringify(saved)}\n`);
      }
    }
    return this.status();
  }

  resume(): PauseStatus {
    this.manualSince = undefined;
    this.manualBy = {};
    if (this.options.stateFile) rmSync(this.options.stateFile, { force: true });
    return this.status();
  }

  status(): PauseStatus {
    const reasons: PauseStatus['reasons'] = [];
    if (this.file && existsSync(this.file)) reasons.push('file');
    if (this.manualSince !== undefined) reasons.push('endpoint');
    const s: PauseStatus = {
      paused: reasons.length > 0,
      reasons,
      file: this.file,
      pausedAt: this.manualSince,
    };
    if (this.manualSince !== undefined) Object.assign(s, this.manualBy);
    const key = reasons.join(',');
    if (key !== this.reported) {
      this.reported = key;
      this.onChange?.(s);
      const waiting = [...this.waiters];
      this.waiters.clear();
      for (const w of waiting) w();
    }
    return s;
  }

  /**
   * An AbortSignal aborted at the next change of the reasons as a check sees it (a pause or
   * resume by endpoint at once; the file at the next check of it, e.g. the sell sweep's), or when
   * `until` aborts: a paused loop sleeps on it instead of polling. `done()` stops watching (call it
   * once the sleep is over, so a long pause does not pile up watchers).
   */
  nextChange(until: AbortSignal): { signal: AbortSignal; done(): void } {
    const changed = new AbortController();
    const done = () => {
      this.waiters.delete(wake);
      until.removeEventListener('abort', wake);
    };
    const wake = () => {
      done();
      changed.abort();
    };
    if (until.aborted) wake();
    else {
      this.waiters.add(wake);
      until.addEventListener('abort', wake, { once: true });
    }
    return { signal: changed.signal, done };
  }

  /** Loops waiting for a change (tests). */
  get watchers(): number {
    return this.waiters.size;
  }
}

/** The saved endpoint pause; an unreadable file counts as paused (the safe side), since its mtime. */
function readPaused(
  path: string | undefined,
): { at: number; meta: { by?: string; note?: string } } | undefined {
  if (!path || !existsSync(path)) return undefined;
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as {
      endpoint_paused_at?: unknown;
      by?: unknown;
      note?: unknown;
    };
    if (typeof v.endpoint_paused_at === 'number') {
      const meta: { by?: string; note?: string } = {};
      if (typeof v.by === 'string') meta.by = v.by;
      if (typeof v.note === 'string') meta.note = v.note;
      return { at: v.endpoint_paused_at, meta };
    }
  } catch {
    // fall through: paused
  }
  return { at: statSync(path).mtimeMs, meta: {} };
}
