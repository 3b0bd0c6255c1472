/**
 * Pauses opening packs without stopping the sell side. Two independent sources: a file on disk
 * (an operator can `touch` it, or a container orchestrator can mount it) and the authenticated
 * local endpoint. Opening is paused while EITHER says so; resuming by endpoint does not override the
 * file, so an operator's file always wins.
 */
import { existsSync } from 'node:fs';

export interface PauseStatus {
  paused: boolean;
  /** `file` and/or `endpoint`. */
  reasons: ('file' | 'endpoint')[];
  file: string | undefined;
  /** Epoch ms when the endpoint pause was set, if it is set. */
  pausedAt: number | undefined;
}

export class KillSwitch {
  private manualSince: number | undefined;

  constructor(
    private readonly file: string | undefined,
    private readonly now: () => number,
    private readonly onChange?: (paused: boolean) => void,
  ) {}

  /** Checked before every purchase; cheap (one stat). */
  isPaused(): boolean {
    return this.status().paused;
  }

  pause(): PauseStatus {
    if (this.manualSince === undefined) this.manualSince = this.now();
    return this.report();
  }

  resume(): PauseStatus {
    this.manualSince = undefined;
    return this.report();
  }

  status(): PauseStatus {
    const reasons: PauseStatus['reasons'] = [];
    if (this.file && existsSync(this.file)) reasons.push('file');
    if (this.manualSince !== undefined) reasons.push('endpoint');
    return { paused: reasons.length > 0, reasons, file: this.file, pausedAt: this.manualSince };
  }

  private report(): PauseStatus {
    const s = this.status();
    this.onChange?.(s.paused);
    return s;
  }
}
