/**
 * `packbot record`'s loop: a snapshot series, one file per interval in a directory, named by the
 * server's time so the files sort in time order. Polite (one full sync per interval, sequential
 * reads the client paces), resumable (a restart counts the files already there and keeps their
 * schedule), and it never leaves a half-written file: writes are atomic, and an interrupted
 * snapshot is dropped, not written. Time and sleep come from the injected clock.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isPartnerApiError } from '../../api/errors.js';
import type { PartnerApi } from '../../api/partner-api.js';
import type { Category } from '../../api/schemas.js';
import type { Clock } from '../../core/clock.js';
import { type SnapshotOptions, takeSnapshot, writeSnapshot } from './snapshot.js';

/** `snapshot-20261123T100000Z.json`: the server's time, to the second, in a sortable name. */
const NAME = /^snapshot-(\d{8}T\d{6})Z\.json$/;
/** What `writeSnapshot` leaves behind if the process dies between write and rename. */
const TEMP = /^snapshot-.*\.json\.tmp-\d+$/;

export function snapshotName(serverMs: number): string {
  const s = new Date(serverMs).toISOString().replace(/[-:]/g, '').slice(0, 15);
  return `snapshot-${s}Z.json`;
}

export interface RecordOptions {
  api: PartnerApi;
  clock: Clock;
  dir: string;
  everyMs: number;
  /** Stop after this many snapshots in the directory (those already there count). */
  count?: number;
  /** Stop once the next snapshot would be this long after the directory's first. */
  durationMs?: number;
  categories?: readonly Category[];
  shop: boolean;
  source: string;
  serverNow?: SnapshotOptions['serverNow'];
  signal?: AbortSignal;
  /** A snapshot was written (its file, the number in the directory). */
  onWritten?: (file: string, total: number) => void;
  /** An interval failed for a reason worth retrying; recording goes on. */
  onSkipped?: (error: unknown, retryAt: number) => void;
  /** Waiting for the next snapshot, due at this time (local clock). */
  onWaiting?: (dueAt: number, total: number) => void;
}

export interface RecordResult {
  written: number;
  total: number;
  interrupted: boolean;
}

interface Existing {
  files: string[];
  /** Local clock of the first and the last snapshot in the directory (`local_time`, else `taken_at`). */
  firstAt: number | null;
  lastAt: number | null;
}

/** The complete snapshots already in `dir` (temporary leftovers of a crash are removed). */
function existingSeries(dir: string): Existing {
  const names = readdirSync(dir);
  for (const n of names) if (TEMP.test(n)) rmSync(join(dir, n), { force: true });
  const files = names.filter((n) => NAME.test(n)).sort();
  const timeOf = (f: string): number | null => {
    try {
      const s = JSON.parse(readFileSync(join(dir, f), 'utf8')) as { local_time?: string; taken_at?: string };
      const t = Date.parse(s.local_time ?? s.taken_at ?? '');
      return Number.isFinite(t) ? t : null;
    } catch {
      return null;
    }
  };
  return {
    files,
    firstAt: files.length ? timeOf(files[0]!) : null,
    lastAt: files.length ? timeOf(files[files.length - 1]!) : null,
  };
}

/** Errors that another try may cure (network, 5xx, 429): the rest stop the recording. */
function worthRetrying(e: unknown): boolean {
  return isPartnerApiError(e) && e.kind === 'retryable';
}

/** A failed interval is tried once more after this share of the interval (at most 5 minutes). */
const RETRY_SHARE = 0.1;
const RETRY_MAX_MS = 5 * 60_000;

export async function recordSeries(o: RecordOptions): Promise<RecordResult> {
  const existing = existingSeries(o.dir);
  let total = existing.files.length;
  let firstAt = existing.firstAt;
  const now = () => o.clock.now();
  /** The interval's scheduled time, and when the next try is (a failed interval retries once sooner). */
  let slot = existing.lastAt === null ? now() : existing.lastAt + o.everyMs;
  let attemptAt = slot;
  let retried = false;
  let written = 0;
  const nextSlot = () => {
    slot += o.everyMs;
    // Behind schedule (a slow sync, a long stop): the next slot from now, keeping the cadence.
    while (slot < now()) slot += o.everyMs;
    attemptAt = slot;
    retried = false;
  };
  const done = () =>
    (o.count !== undefined && total >= o.count) ||
    (o.durationMs !== undefined && firstAt !== null && slot - firstAt >= o.durationMs);
  for (;;) {
    if (o.signal?.aborted) return { written, total, interrupted: true };
    if (done()) return { written, total, interrupted: false };
    const wait = attemptAt - now();
    if (wait > 0) {
      o.onWaiting?.(attemptAt, total);
      try {
        await o.clock.sleep(wait, o.signal);
      } catch {
        return { written, total, interrupted: true };
      }
    }
    try {
      const startedAt = now();
      const snap = await takeSnapshot(o.api, {
        clock: o.clock,
        source: o.source,
        shop: o.shop,
        ...(o.categories ? { categories: o.categories } : {}),
        ...(o.serverNow ? { serverNow: o.serverNow } : {}),
      });
      // Interrupted while reading: the snapshot is dropped, never half-written.
      if (o.signal?.aborted) return { written, total, interrupted: true };
      const file = join(o.dir, snapshotName(Date.parse(snap.taken_at)));
      writeSnapshot(file, snap);
      written++;
      total++;
      firstAt ??= startedAt;
      o.onWritten?.(file, total);
      nextSlot();
    } catch (e) {
      if (!worthRetrying(e)) throw e;
      const soon = now() + Math.min(RETRY_MAX_MS, Math.max(1000, o.everyMs * RETRY_SHARE));
      if (!retried && soon < slot + o.everyMs) {
        retried = true;
        attemptAt = soon;
      } else nextSlot();
      o.onSkipped?.(e, attemptAt);
    }
  }
}
