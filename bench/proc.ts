/** What /proc says of another process (Linux): its resident set and the CPU time it has used. */
import { readFileSync } from 'node:fs';

/** Resident set (VmRSS) of a process, in MiB. */
export function rssMib(pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return kb === undefined ? Number.NaN : Number(kb) / 1024;
}

/** Clock ticks per second of /proc/PID/stat's times (USER_HZ, 100 on Linux). */
const CLOCK_TICKS = 100;

/** CPU time (user + system) a process has used, in ms. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / CLOCK_TICKS;
}
