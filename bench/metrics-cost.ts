// npm run bench (its metrics step): what the metrics cost per request at the probe. Two nodes as
// shipped (LOG_LEVEL info, each request logged), one with METRICS_PORT and one without, take wrk's
// load in turn (A B B A ...), so drift in the machine falls on both alike. Each round reports the
// throughput and the server's CPU per request (from /proc: utime + stime over the requests wrk
// counted), which resolves a small difference better than throughput on a shared machine.
// Goal: under 3% at the probe. Needs wrk (apt-get install wrk).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { freePort } from './free-port.js';
import { startNode, type BenchNode } from './node.js';

const seconds = Number(process.env.METRICS_BENCH_SECONDS ?? 2);
const rounds = Number(process.env.METRICS_BENCH_ROUNDS ?? 16);
const concurrency = 32;

if (spawnSync('wrk', ['--version']).error !== undefined) {
  console.log('metrics cost: skipped (wrk is not installed: apt-get install wrk)');
  process.exit(0);
}

const TICK_MS = 1000 / Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim() || 100);

/** utime + stime of a process, in ms. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

interface Sample {
  rps: number;
  cpuUsPerRequest: number;
}

function loadProbe(node: BenchNode): Sample {
  const before = cpuMs(node.pid);
  const out = spawnSync('wrk', ['-t1', `-c${concurrency}`, `-d${seconds}s`, `${node.url}/healthz`], {
    encoding: 'utf8',
  }).stdout;
  const cpu = cpuMs(node.pid) - before;
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  if (!(requests > 0) || non2xx > 0) throw new Error(`wrk: ${out}`);
  return { rps: requests / seconds, cpuUsPerRequest: (cpu * 1000) / requests };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const plain = await startNode({ LOG_LEVEL: 'info' }, [], 'ignore');
const measured = await startNode({ LOG_LEVEL: 'info', METRICS_PORT: String(await freePort()) }, [], 'ignore');
try {
  const samples = { plain: [] as Sample[], measured: [] as Sample[] };
  loadProbe(plain); // warm both up
  loadProbe(measured);
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 ? (['measured', 'plain'] as const) : (['plain', 'measured'] as const);
    for (const which of order) samples[which].push(loadProbe(which === 'plain' ? plain : measured));
  }
  const row = (name: string, s: Sample[]) =>
    console.log(
      `${name.padEnd(26)} ${median(s.map((x) => x.rps))
        .toFixed(0)
        .padStart(7)} req/s   ${median(s.map((x) => x.cpuUsPerRequest))
        .toFixed(2)
        .padStart(6)} µs CPU/request   (per round: ${s.map((x) => x.cpuUsPerRequest.toFixed(1)).join(' ')})`,
    );
  console.log(`metrics cost at the probe: ${rounds} rounds of ${seconds}s each, wrk -c${concurrency}, LOG_LEVEL info`);
  console.log(
    "  timed, on both nodes alike: wrk's run (after one uncounted run of each); CPU: the node's utime + stime over that run, per request wrk counted",
  );
  row('GET /healthz, no metrics', samples.plain);
  row('GET /healthz, METRICS_PORT', samples.measured);
  // Each round's two runs are adjacent: the median of their ratios cancels the machine's drift.
  const paired = (f: (x: Sample) => number) => median(samples.plain.map((p, i) => f(samples.measured[i]!) / f(p)));
  const cpu = paired((x) => x.cpuUsPerRequest) - 1;
  const rps = 1 - paired((x) => x.rps);
  console.log(
    `metrics cost: ${(cpu * 100).toFixed(1)}% more CPU per request, ${(rps * 100).toFixed(1)}% less throughput (medians of the rounds' ratios; goal: under 3%)`,
  );
} finally {
  await plain.stop();
  await measured.stop();
}
