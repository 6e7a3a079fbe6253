/** Machine-wide CPU accounting of the benches, from /proc/stat. */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** Core-seconds since boot: `busy` (all but idle and iowait) and `total`, summed over every core. */
export interface MachineCpu {
  busy: number;
  total: number;
}

export function machineCpu(): MachineCpu {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number); // user nice system idle iowait irq softirq steal
  const total = ticks.reduce((a, b) => a + b, 0);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  return { busy: (total - idle) / 100, total: total / 100 }; // USER_HZ = 100
}

/** What the machine did between two readings: busy core-seconds, and the fraction of all cores that was busy. */
export function cpuBetween(before: MachineCpu, after: MachineCpu): { busySeconds: number; busyFraction: number } {
  const busySeconds = after.busy - before.busy;
  const total = after.total - before.total;
  return { busySeconds, busyFraction: total > 0 ? busySeconds / total : 0 };
}

export const cores = availableParallelism();
