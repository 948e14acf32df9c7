// Issue 46, step 3: the prototype (bench/threads-prototype/node.ts) beside the real node and
// BullMQ, with the same load generator as bench/engine.ts's queue measure (bench/board.ts's
// client: 32 keep-alive node:http agents in this process), rounds in alternating order.
//   npx tsx bench/threads-prototype/compare.ts [--rounds=3] [--items=5000] [--agents=32] [--sides=real,t2,t1,t0,bullmq]
//   --wait=S: before each side, wait up to S s (default 120) for others to use at most 10% of the machine.
// Sides: real (src/main.ts, as the bench runs it), tN (the prototype with N front threads; t0: the
// same front on the actors' thread, the control), bullmq (redis-server with appendfsync always).
// For each: cycles/s (first claim to last submit, bench/clock.ts), claim p50, the server's CPU per
// cycle split by thread, the load generator's CPU per cycle, and the machine's busy share.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { client, fillBoard, percentile, type Call } from '../board.js';
import { othersShare, untilCalm } from '../calm.js';
import { timed } from '../clock.js';
import { freePort } from '../free-port.js';
import { served, startNode, tokenFor, untilAnswers, type BenchNode } from '../node.js';

const flag = (name: string): string | undefined =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const rounds = Number(flag('rounds') ?? 3);
const items = Number(flag('items') ?? 5000);
const agents = Number(flag('agents') ?? 32);
const sides = (flag('sides') ?? 'real,t2,t1,t0,bullmq').split(',');
const maxWaitMs = Number(flag('wait') ?? 120) * 1000;
/** --prof=DIR: the servers run with --cpu-prof into DIR (a file per thread); the windows are printed to cut them with analyse.ts. */
const profDir = flag('prof');
const profFlags = profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [];
const ENV = {
  BCRYPT_ROUNDS: '4',
  ADDRESS_RATE_PER_MINUTE: '1000000',
  LEASE_MIN_TTL_SECONDS: '1',
  BOARD_RATE_SCALE: '10000',
  SECRET_KEY: 'bench-secret-key-of-at-least-32-characters',
};
for (const k of ['LOG_LEVEL', 'STORE', 'MONGODB_URI', 'REDIS_URL', 'METRICS_PORT', 'SMTP_URL', 'STRIPE_SECRET_KEY'])
  delete process.env[k];

const CLK_TCK = 100;
type Ticks = Map<string, { name: string; t: number }>;
/** Thread ids to name "front" (the prototype's worker threads), set before each prototype run. */
let fronts = new Set<string>();
function threadTicks(pid: number): Ticks {
  const out: Ticks = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, {
        name:
          tid === String(pid)
            ? 'main'
            : fronts.has(tid)
              ? 'front'
              : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
        t: Number(f[11]) + Number(f[12]),
      });
    } catch {
      /* ended */
    }
  }
  return out;
}
function machineBusy(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - f[3]! - f[4]!, total };
}

interface Figure {
  cyclesPerSecond: number;
  claimP50: number;
  serverCpu: number;
  /** Per thread of the server: µs per cycle, the busiest threads first. */
  threads: string;
  /** The busiest server thread's share of a core over the window. */
  busiestThread: number;
  loadGenCpu: number;
  machineShare: number;
  othersBefore: number;
}

/** Samples CPU around `work`: the server's threads, this process, the machine. */
async function sampled(
  pid: number,
  work: (start: () => void) => Promise<{ units: number; seconds: number; claims: number[] }>,
): Promise<Figure> {
  const othersBefore = await othersShare(1000);
  let t0: Ticks = new Map();
  let m0 = machineBusy();
  let own0 = process.cpuUsage();
  let w0 = 0n;
  const r = await work(() => {
    w0 = process.hrtime.bigint();
    t0 = threadTicks(pid);
    m0 = machineBusy();
    own0 = process.cpuUsage();
  });
  const t1 = threadTicks(pid);
  if (profDir) console.log(`   pid ${pid} window (monotonic µs) ${w0 / 1000n} ${process.hrtime.bigint() / 1000n}`);
  const m1 = machineBusy();
  const own = process.cpuUsage(own0);
  const per = new Map<string, number>();
  let total = 0;
  let busiest = 0;
  for (const [tid, a] of t1) {
    const d = a.t - (t0.get(tid)?.t ?? 0);
    total += d;
    busiest = Math.max(busiest, d);
    per.set(a.name, (per.get(a.name) ?? 0) + d);
  }
  const us = (ticks: number) => ((ticks / CLK_TCK) * 1e6) / r.units;
  return {
    cyclesPerSecond: r.units / r.seconds,
    claimP50: percentile(r.claims, 0.5),
    serverCpu: us(total),
    threads: [...per]
      .filter(([, d]) => d > 0)
      .sort((a, b) => b[1] - a[1])
      .map(([n, d]) => `${n} ${us(d).toFixed(0)}`)
      .join(', '),
    busiestThread: busiest / CLK_TCK / r.seconds,
    loadGenCpu: (own.user + own.system) / r.units,
    machineShare: (m1.busy - m0.busy) / (m1.total - m0.total),
    othersBefore,
  };
}

/** As bench/board.ts's cycleUntilEmpty. */
async function cycleUntilEmpty(call: Call, end: number, claims: number[], done: () => void): Promise<void> {
  while (performance.now() < end) {
    const t = performance.now();
    const lease = await call('POST', '/api/claim', {});
    if (lease.status === 409) return;
    if (lease.status !== 200) throw new Error(`claim: ${lease.status} ${JSON.stringify(lease.body)}`);
    claims.push(performance.now() - t);
    const submitted = await call('POST', '/api/submit', { leaseId: lease.body.leaseId, head: 'abcdef1' });
    if (submitted.status !== 200) throw new Error(`submit: ${submitted.status} ${JSON.stringify(submitted.body)}`);
    done();
  }
}

/** bench/board.ts's claimSubmitCycles, the setup on `setup`'s URL and the cycles on `url`. */
async function cycles(setup: BenchNode, url: string): Promise<Figure> {
  const owner = await fillBoard(setup, items);
  const calls = await Promise.all(
    Array.from({ length: agents }, async (_, i) => {
      const call = client(url, await tokenFor(setup.url, owner, owner.projectId, `cycler-${i}`));
      const probe = await call('GET', '/healthz');
      if (probe.status !== 200) throw new Error(`healthz: ${probe.status}`);
      return call;
    }),
  );
  return sampled(setup.pid, async (start) => {
    const claims: number[] = [];
    start();
    const t = await timed(async (done) => {
      const end = performance.now() + 60_000;
      await Promise.all(calls.map((call) => cycleUntilEmpty(call, end, claims, done)));
    });
    return { units: t.units, seconds: t.seconds, claims };
  });
}

async function real(): Promise<Figure> {
  fronts = new Set();
  const node = await startNode(ENV, profFlags, 'file');
  try {
    return await cycles(node, node.url);
  } finally {
    await node.stop();
  }
}

async function prototype(threads: number): Promise<Figure> {
  const [port, frontPort] = [await freePort(), await freePort()];
  const dir = await mkdtemp(join(tmpdir(), 'threads-prototype-'));
  const logFd = openSync(join(dir, 'stdout.log'), 'a');
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/threads-prototype/node.ts'], {
    env: {
      ...process.env,
      ...ENV,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: join(dir, 'data'),
      FRONT_PORT: String(frontPort),
      FRONT_THREADS: String(threads),
      TIDS_FILE: join(dir, 'tids.json'),
      ...(profDir && { PROF_DIR: profDir }),
    },
    stdio: ['ignore', logFd, 'inherit'],
  });
  closeSync(logFd);
  try {
    const node = await served(child, `http://127.0.0.1:${port}`, '/readyz', 'prototype');
    try {
      await untilAnswers(`http://127.0.0.1:${frontPort}/healthz`, child, "the prototype's fronts");
      // The first front may answer before the others are up: the node writes their ids once all are.
      for (let i = 0; !existsSync(join(dir, 'tids.json')); i++) {
        if (i > 300) throw new Error('the prototype did not start its fronts');
        await new Promise((r) => setTimeout(r, 100));
      }
      fronts = new Set((JSON.parse(readFileSync(join(dir, 'tids.json'), 'utf8')) as number[]).map(String));
      return await cycles(node, `http://127.0.0.1:${frontPort}`);
    } finally {
      await node.stop();
    }
  } finally {
    child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}

async function bullmq(): Promise<Figure> {
  const dir = await mkdtemp(join(tmpdir(), 'threads-prototype-redis-'));
  const port = await freePort();
  const redis = spawn(
    'redis-server',
    [
      ...['--port', String(port), '--bind', '127.0.0.1', '--dir', dir],
      ...['--appendonly', 'yes', '--appendfsync', 'always', '--save', '', '--daemonize', 'no'],
    ],
    { stdio: 'ignore' },
  );
  const { Queue, Worker } = await import('bullmq');
  const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null };
  await new Promise((r) => setTimeout(r, 300));
  const name = `bench-${Date.now()}`;
  const queue = new Queue(name, { connection });
  const worker = new Worker(name, async (job) => job.data, { connection, concurrency: agents, autorun: false });
  try {
    await queue.waitUntilReady();
    await worker.waitUntilReady();
    await queue.addBulk(Array.from({ length: items }, (_, i) => ({ name: 'job', data: { i } })));
    return await sampled(redis.pid!, async (start) => {
      start();
      const t = await timed(
        (done) =>
          new Promise<void>((resolve, reject) => {
            let completed = 0;
            worker.on('completed', () => {
              done();
              if (++completed === items) resolve();
            });
            worker.run().catch(reject);
          }),
      );
      return { units: t.units, seconds: t.seconds, claims: [] };
    });
  } finally {
    await worker.close();
    await queue.close();
    redis.kill('SIGTERM');
    await new Promise((r) => redis.once('exit', r));
    await rm(dir, { recursive: true, force: true });
  }
}

const run = (side: string): Promise<Figure> =>
  side === 'real' ? real() : side === 'bullmq' ? bullmq() : prototype(Number(side.slice(1)));

const results = new Map<string, Figure[]>(sides.map((s) => [s, []]));
const f0 = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : 'n/a');
console.log(
  `threads-prototype compare: ${items} items, ${agents} agents, ${rounds} rounds, sides ${sides.join(' ')}; started ${new Date().toISOString()}`,
);
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? sides : [...sides].reverse();
  for (const side of order) {
    const calm = await untilCalm({ threshold: 0.1, maxWaitMs });
    if (calm.busy)
      console.log(
        `   (others used ${(calm.share * 100).toFixed(0)}% of the machine after ${calm.waitedSeconds.toFixed(0)} s: BUSY)`,
      );
    const f = await run(side);
    results.get(side)!.push(f);
    console.log(
      `r${round + 1} ${side.padEnd(6)} ${f0(f.cyclesPerSecond)} /s, claim p50 ${f.claimP50.toFixed(1)} ms, server CPU ${f0(f.serverCpu)} µs/cycle [${f.threads}], busiest thread ${(f.busiestThread * 100).toFixed(0)}% of a core, load generator ${f0(f.loadGenCpu)} µs/cycle, machine ${(f.machineShare * 200).toFixed(0)}% of 200%, others before ${(f.othersBefore * 100).toFixed(0)}%`,
    );
  }
}
const spread = (xs: number[], d = 0) => {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[0]!.toFixed(d)} / ${s[Math.floor(s.length / 2)]!.toFixed(d)} / ${s[s.length - 1]!.toFixed(d)}`;
};
console.log('\nmin / median / max');
for (const [side, fs] of results)
  console.log(
    `${side.padEnd(6)} ${spread(fs.map((f) => f.cyclesPerSecond))} /s; claim p50 ${spread(
      fs.map((f) => f.claimP50),
      1,
    )} ms; server CPU ${spread(fs.map((f) => f.serverCpu))} µs/cycle; load generator ${spread(fs.map((f) => f.loadGenCpu))} µs/cycle`,
  );
