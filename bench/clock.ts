// The one clock of the throughput measures, the same for ours and its peer (issue 46: both sides
// timed over the same part of the work). It covers the work alone: whatever is set up before the
// call (items or jobs created, tokens issued, connections opened) is outside it, and it stops at
// the last unit of work done, so what follows (agents finding the board empty, a worker idling
// for jobs that will not come) is outside it too.
import { readFileSync } from 'node:fs';

/** Linux USER_HZ: /proc/<pid>/stat counts CPU in hundredths of a second. */
const CLK_TCK = 100;

/** A process's CPU time so far (user + system), in microseconds, from /proc/<pid>/stat. */
export function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from 3 (state) on
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLK_TCK; // 14 utime, 15 stime
}

export interface Timed {
  /** Units of work done (cycles, jobs, items created). */
  units: number;
  /** From the call to the last unit done. */
  seconds: number;
  perSecond: number;
  /** CPU of the process named by `cpuOf` over the call, per unit (NaN when none was named). */
  cpuMicrosPerUnit: number;
}

/**
 * Times `work` from the call until the last `done(n)` it reports (n units finished; until it
 * resolves when it reported none). `cpuOf`: the pid of the process that does the work on the far
 * side (our node, redis-server), whose CPU over the call is read from /proc.
 */
export async function timed(work: (done: (units?: number) => void) => Promise<void>, cpuOf?: number): Promise<Timed> {
  let units = 0;
  let last = NaN;
  const cpuBefore = cpuOf === undefined ? NaN : cpuMicros(cpuOf);
  const start = performance.now();
  await work((n = 1) => {
    units += n;
    last = performance.now();
  });
  const cpu = cpuOf === undefined ? NaN : cpuMicros(cpuOf) - cpuBefore;
  const seconds = ((units > 0 ? last : performance.now()) - start) / 1000;
  return { units, seconds, perSecond: units / seconds, cpuMicrosPerUnit: cpu / units };
}
