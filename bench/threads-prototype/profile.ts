// Issue 46 step 3, part 1: where the claim → submit cycle's time goes, as bench/engine.ts runs it
// (32 agents, 5,000 items, shipped logging to a file, BOARD_RATE_SCALE=10000).
//   npx tsx bench/threads-prototype/profile.ts [--items=5000] [--agents=32] [--prof=DIR]
// Reads, over the measured window only (first claim to last submit):
//  - wall time, and the CPU of every thread of the node process (/proc/<pid>/task/*/stat: the main
//    thread, lmdb-js's writer, libuv's pool, V8's GC helpers), of the load generator (this process),
//    and of the whole machine (/proc/stat, iowait included);
//  - with --prof=DIR the node runs with --cpu-prof into DIR; analyse.ts cuts its samples to the
//    window printed here (CLOCK_MONOTONIC µs, the clock V8's profiler stamps samples with).
import { readFileSync, readdirSync } from 'node:fs';
import { claimSubmitCycles } from '../board.js';
import { startNode } from '../node.js';

const flag = (name: string): string | undefined =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const items = Number(flag('items') ?? 5000);
const agents = Number(flag('agents') ?? 32);
const profDir = flag('prof');

const CLK_TCK = 100;
/** CPU ticks (user, system) of each thread of `pid`, by thread name and id. */
function threads(pid: number): Map<string, { name: string; user: number; sys: number }> {
  const out = new Map<string, { name: string; user: number; sys: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, { name, user: Number(f[11]), sys: Number(f[12]) });
    } catch {
      /* a thread that ended */
    }
  }
  return out;
}
function machine(): number[] {
  return readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
}

const node = await startNode(
  { BOARD_RATE_SCALE: '10000', LEASE_MIN_TTL_SECONDS: '1' },
  profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [],
  'file',
);
let t0 = 0n;
let before = new Map<string, { name: string; user: number; sys: number }>();
let m0: number[] = [];
let own0 = process.cpuUsage();
try {
  const r = await claimSubmitCycles(node, items, agents, 60, () => {
    before = threads(node.pid);
    m0 = machine();
    own0 = process.cpuUsage();
    t0 = process.hrtime.bigint();
  });
  const t1 = process.hrtime.bigint();
  const after = threads(node.pid);
  const m1 = machine();
  const own = process.cpuUsage(own0);
  const wall = Number(t1 - t0) / 1e9;
  const perCycle = (ticks: number) => ((ticks / CLK_TCK) * 1e6) / r.cycles;
  console.log(
    `cycles ${r.cycles} in ${wall.toFixed(2)} s wall (the clock's window ends at the last submit: ${(r.cycles / r.cyclesPerSecond).toFixed(2)} s): ${r.cyclesPerSecond.toFixed(0)} cycles/s, claim p50 ${r.claimP50.toFixed(2)} ms p99 ${r.claimP99.toFixed(2)} ms, node CPU ${r.serverCpuMicrosPerCycle.toFixed(0)} µs/cycle`,
  );
  console.log(`window monotonic µs ${Number(t0 / 1000n)} ${Number(t1 / 1000n)}`);
  const byName = new Map<string, { user: number; sys: number; n: number }>();
  for (const [tid, a] of after) {
    const b = before.get(tid) ?? { user: 0, sys: 0 };
    const key = tid === String(node.pid) ? 'main (JS, uWS)' : a.name;
    const e = byName.get(key) ?? { user: 0, sys: 0, n: 0 };
    e.user += a.user - b.user;
    e.sys += a.sys - b.sys;
    e.n++;
    byName.set(key, e);
  }
  let total = 0;
  for (const [name, e] of [...byName].sort((x, y) => y[1].user + y[1].sys - (x[1].user + x[1].sys))) {
    const t = e.user + e.sys;
    total += t;
    if (t === 0) continue;
    console.log(
      `  node thread ${name.padEnd(16)} x${e.n}: ${((t / CLK_TCK / wall) * 100).toFixed(0)}% of a core, ${perCycle(t).toFixed(0)} µs/cycle (user ${perCycle(e.user).toFixed(0)}, sys ${perCycle(e.sys).toFixed(0)})`,
    );
  }
  console.log(
    `  node total: ${((total / CLK_TCK / wall) * 100).toFixed(0)}% of a core, ${perCycle(total).toFixed(0)} µs/cycle`,
  );
  const ownMicros = own.user + own.system;
  console.log(
    `  load generator (this process, node:http clients): ${((ownMicros / 1e6 / wall) * 100).toFixed(0)}% of a core, ${(ownMicros / r.cycles).toFixed(0)} µs/cycle (user ${(own.user / r.cycles).toFixed(0)}, sys ${(own.system / r.cycles).toFixed(0)})`,
  );
  const d = m1.map((v, i) => v - m0[i]!);
  const all = d.reduce((a, b) => a + b, 0);
  const names = ['user', 'nice', 'system', 'idle', 'iowait', 'irq', 'softirq', 'steal'];
  console.log(
    `  machine (2 cores = 200%): ${names.map((n, i) => `${n} ${((d[i]! / all) * 200).toFixed(0)}%`).join(', ')}`,
  );
} finally {
  await node.stop();
}
