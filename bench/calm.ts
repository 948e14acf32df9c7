// Whether the machine is ours to measure on: the share of all cores that other processes used
// over a second, read from /proc/stat (this process's own CPU taken out), and a wait for it to drop.
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';

/** Linux USER_HZ: /proc/stat counts in hundredths of a second. */
const TICKS_PER_SECOND = 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The whole machine's busy and total ticks (every core), from the first line of /proc/stat. */
function machineTicks(): { busy: number; total: number } {
  // cpu  user nice system idle iowait irq softirq steal [guest guest_nice, already inside user and nice]
  const fields = readFileSync('/proc/stat', 'utf8')
    .slice(0, 512)
    .split('\n', 1)[0]!
    .trim()
    .split(/\s+/)
    .slice(1, 9)
    .map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  return { busy: total - fields[3]! - fields[4]!, total };
}

/** The share (0..1) of all cores used by anything but this process over `ms`; steal counts as someone else's. */
export async function othersShare(ms = 1000): Promise<number> {
  const before = machineTicks();
  const own = process.cpuUsage();
  await sleep(ms);
  const after = machineTicks();
  const mine = process.cpuUsage(own);
  const total = after.total - before.total;
  if (total <= 0) return 0;
  const mineTicks = ((mine.user + mine.system) / 1e6) * TICKS_PER_SECOND;
  return Math.max(0, (after.busy - before.busy - mineTicks) / total);
}

export interface Calm {
  /** The share of all cores others used in the last sample. */
  share: number;
  waitedSeconds: number;
  /** Still above the threshold when the wait ran out. */
  busy: boolean;
}

export interface CalmOptions {
  /** Busy above this share of all cores (0.1: a tenth of the machine). */
  threshold?: number;
  maxWaitMs?: number;
  sampleMs?: number;
  /** Called after each busy sample while waiting. */
  onBusy?: (share: number) => void;
}

/** Samples until others use at most `threshold` of the machine, or `maxWaitMs` runs out (then `busy`). */
export async function untilCalm({
  threshold = 0.1,
  maxWaitMs = 60_000,
  sampleMs = 1000,
  onBusy,
}: CalmOptions = {}): Promise<Calm> {
  const started = performance.now();
  for (;;) {
    const share = await othersShare(sampleMs);
    const waitedSeconds = (performance.now() - started - sampleMs) / 1000;
    if (share <= threshold) return { share, waitedSeconds, busy: false };
    if (waitedSeconds * 1000 >= maxWaitMs) return { share, waitedSeconds, busy: true };
    onBusy?.(share);
  }
}

/** The 1, 5 and 15 minute load averages, and the core count they compare with. */
export function loadAverage(): string {
  return `${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')} on ${availableParallelism()} cores`;
}
