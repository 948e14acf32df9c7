// Several nodes add capacity (issue 22): 16 agents doing claim → submit on one 60,000-item board,
// on MongoDB and Redis, one node beside two nodes (each request to the next node in turn, or each
// agent pinned to one), and two busy boards on one node beside two (each board homed on its own
// node, requests round-robin; and, for reference, each board's agents sent to its home, so
// nothing is forwarded), each layout on a fresh database, three rounds; then what one forwarding
// hop adds to a claim (one agent, through the board's home and through the other node). Server
// and store CPU per cycle are read from /proc. Needs REDIS_URL; runs on MONGODB_URI's server when
// set, else on FerretDB 2 (PostgreSQL with DocumentDB, DURABLE=1) it starts itself (bench/mongo-wire.ts).
//   npx tsx bench/board-homes.ts        (HOMES_BENCH_SECONDS, default 15; HOMES_BENCH_ROUNDS, default 3;
//                                        HOMES_BENCH_WARM_UP_SECONDS, default 10;
//                                        HOMES_BENCH_SETTLE_SECONDS, default 10;
//                                        HOMES_BENCH_ITEMS, default 60,000;
//                                        HOMES_BENCH_LAYOUTS, some layouts by name, separated by ';';
//                                        HOMES_BENCH_WINDOWS, a directory: each layout's timed window is
//                                        written there, in the monotonic µs of a --cpu-prof given by
//                                        BENCH_NODE_ARGS, so a profile can be cut to the window)
import { writeFileSync } from 'node:fs';
import { client, percentile } from './board.js';
import { cpuMicros, timed } from './clock.js';
import { benchMongo } from './mongo-wire.js';
import { ownerAndAgent, startNode, tokenFor, type BenchNode } from './node.js';

const redisUrl = process.env.REDIS_URL;
const mongo = redisUrl ? await benchMongo('bench/board-homes.ts') : null;
const uri = mongo?.uri;
const SECONDS = Number(process.env.HOMES_BENCH_SECONDS ?? 15);
const ROUNDS = Number(process.env.HOMES_BENCH_ROUNDS ?? 3);
const WARM_UP_SECONDS = Number(process.env.HOMES_BENCH_WARM_UP_SECONDS ?? 10);
const AGENTS = Number(process.env.HOMES_BENCH_AGENTS ?? 16);
/**
 * Enough for the settle and a 15 s window not to run out of ready items: the embedded store's
 * node does about 2,300 cycles a second on a 2-core machine, MongoDB's about 1,100 (5,000 ran out
 * in 3 and 6 s).
 */
const ITEMS = Number(process.env.HOMES_BENCH_ITEMS ?? 60_000);
/**
 * Before each window, the layout's own work on its boards, unmeasured. Filling a board (batches of
 * 500 items) and issuing its tokens right before the window left the nodes' optimized code
 * stale: the window then paid for V8 re-optimizing it. With --trace-opt, one node's 10 s window
 * held 164 TurboFan compilations (611 ms of compiler time, about 60 µs a cycle) after "wrong map"
 * deoptimizations the fill had caused, decaying through the window; perf put the compiler threads
 * at 3.8% of the machine with one node and 6.8% with two (each node compiles its own). What is
 * measured is the nodes' steady state on the boards they serve (the warm-up before still takes
 * each node through both roles, home and entry, before anything is filled).
 */
const SETTLE_SECONDS = Number(process.env.HOMES_BENCH_SETTLE_SECONDS ?? 10);

type Layout =
  | 'one node'
  | 'one node, embedded store'
  | 'two nodes, round-robin'
  | 'two nodes, pinned'
  | 'two boards, one node'
  | 'two boards, two nodes'
  | 'two boards, two nodes, each at home';
interface Run {
  cyclesPerSecond: number;
  claimP50: number;
  claimP99: number;
  serverCpuPerCycle: number;
  storeCpuPerCycle: number;
  commitsPerCycle: number;
  /** PostgreSQL's write-ahead log per board commit, in bytes (NaN when not known). */
  walPerCommit: number;
}

async function withNodes<T>(
  count: number,
  use: (nodes: BenchNode[]) => Promise<T>,
  store: 'mongo' | 'embedded' = 'mongo',
): Promise<T> {
  const db = `bench_homes_${Date.now()}_${Math.random().toString(36).slice(2, 8)}`;
  const nodes: BenchNode[] = [];
  try {
    for (let i = 0; i < count; i++)
      nodes.push(
        await startNode({
          ...(store === 'mongo' ? { STORE: 'mongo', MONGODB_URI: uri!, MONGODB_DB: db } : { STORE: 'embedded' }),
          REDIS_URL: redisUrl!,
          NODE_ID: `bench-${i}`,
          BOARD_RATE_SCALE: '10000',
          LOG_LEVEL: 'info',
        }),
      );
    return await use(nodes);
  } finally {
    for (const n of nodes) await n.stop();
    const { MongoClient } = await import('mongodb');
    const mongo = await MongoClient.connect(uri!);
    await mongo.db(db).dropDatabase();
    await mongo.close();
  }
}

/** A board of `items` items, filled through `home` (so `home` becomes the board's home), and `agents` tokens. */
async function boardOn(home: BenchNode, agents: number, items = ITEMS) {
  const owner = await ownerAndAgent(home.url);
  const call = client(home.url, owner.agent);
  for (let made = 0; made < items; made += 500) {
    const res = await call('POST', '/api/items/batch', {
      items: Array.from({ length: 500 }, (_, i) => ({ title: `item ${made + i}` })),
    });
    if (res.status !== 201) throw new Error(`batch: ${res.status}`);
  }
  return Promise.all(
    Array.from({ length: agents }, (_, i) => tokenFor(home.url, owner, owner.projectId, `agent-${i}`)),
  );
}

async function cycles(layout: Layout): Promise<Run> {
  const nodeCount = layout.startsWith('one node') || layout === 'two boards, one node' ? 1 : 2;
  const boards = layout.startsWith('two boards') ? 2 : 1;
  const store = layout === 'one node, embedded store' ? 'embedded' : 'mongo';
  return withNodes(
    nodeCount,
    async (nodes) => {
      await warmUp(nodes);
      // With two boards on two nodes, each board is filled through its own node, its home.
      const tokens = (
        await Promise.all(Array.from({ length: boards }, (_, b) => boardOn(nodes[b % nodes.length]!, AGENTS)))
      ).flat();
      const clients = tokens.map((t) => nodes.map((n) => client(n.url, t)));
      // Each board's version counts its commits; one agent of each board reads it.
      const versions = () =>
        Promise.all(
          Array.from({ length: boards }, async (_, b) => {
            const res = await clients[b * AGENTS]![0]!('GET', '/api/status');
            if (res.status !== 200) throw new Error(`status: ${res.status}`);
            return res.body.version as number;
          }),
        ).then((vs) => vs.reduce((a, b) => a + b, 0));
      let turn = 0;
      let emptied = false;
      /** The layout's agents at work for `seconds`: each claims, then submits, through the node the layout sends it to. */
      const work = (seconds: number, cycled: (claimMs: number) => void) => {
        const end = performance.now() + seconds * 1000;
        return Promise.all(
          clients.map(async (mine, k) => {
            // Agent k works on board ⌊k / AGENTS⌋, whose home is node ⌊k / AGENTS⌋ (it was filled there).
            const next = () =>
              layout === 'two nodes, pinned'
                ? mine[k % mine.length]!
                : layout === 'two boards, two nodes, each at home'
                  ? mine[Math.floor(k / AGENTS)]!
                  : mine[turn++ % mine.length]!;
            while (performance.now() < end) {
              const t = performance.now();
              const lease = await next()('POST', '/api/claim', {});
              if (lease.status === 409) return void (emptied = true); // NOTHING_READY: the board is done before the window
              if (lease.status !== 200) throw new Error(`claim: ${lease.status} ${JSON.stringify(lease.body)}`);
              const claimMs = performance.now() - t;
              const submitted = await next()('POST', '/api/submit', { leaseId: lease.body.leaseId, head: 'abcdef1' });
              if (submitted.status !== 200)
                throw new Error(`submit: ${submitted.status} ${JSON.stringify(submitted.body)}`);
              cycled(claimMs);
            }
          }),
        );
      };
      await work(SETTLE_SECONDS, () => undefined);
      const storeKnown = store === 'mongo' && mongo!.cpuMicros() !== null;
      const versionBefore = await versions();
      const walBefore = store === 'mongo' ? mongo!.walBytes() : null;
      const claims: number[] = [];
      const cpuBefore = nodes.map((n) => cpuMicros(n.pid));
      const storeBefore = mongo!.cpuMicros() ?? 0;
      // Timed (bench/clock.ts): from the first claim to the last submit, within SECONDS.
      const windowStart = process.hrtime.bigint() / 1000n;
      const window = await timed((cycled) =>
        work(SECONDS, (claimMs) => {
          claims.push(claimMs);
          cycled();
        }).then(() => undefined),
      );
      const { seconds, units: done } = window;
      if (process.env.HOMES_BENCH_WINDOWS)
        writeFileSync(
          `${process.env.HOMES_BENCH_WINDOWS}/window-${layout.replace(/\W+/g, '-')}-${nodes.map((n) => n.pid).join('-')}.json`,
          JSON.stringify({ start: Number(windowStart), end: Number(process.hrtime.bigint() / 1000n) }),
        );
      if (emptied)
        console.log(
          `bench/board-homes.ts: ${layout}: a board ran out of ready items after ${seconds.toFixed(1)} s; cycles/s is over that time`,
        );
      const serverCpu = nodes.reduce((sum, n, i) => sum + cpuMicros(n.pid) - cpuBefore[i]!, 0);
      const storeCpu = storeKnown ? mongo!.cpuMicros()! - storeBefore : NaN;
      const walAfter = walBefore === null ? null : mongo!.walBytes();
      const commits = (await versions()) - versionBefore;
      return {
        cyclesPerSecond: done / seconds,
        claimP50: percentile(claims, 0.5),
        claimP99: percentile(claims, 0.99),
        serverCpuPerCycle: serverCpu / done,
        storeCpuPerCycle: storeCpu / done,
        commitsPerCycle: commits / done,
        walPerCommit: walBefore !== null && walAfter !== null ? (walAfter - walBefore) / commits : NaN,
      };
    },
    store,
  );
}

/**
 * Before a layout's window: agents working through every node on a board homed on each node, for
 * WARM_UP_SECONDS, so what is measured is the nodes' steady state. A fresh process spends its
 * first seconds compiling the request path (V8's optimizing compiler took a fifth of a 15-second
 * window's CPU, measured with perf), and two fresh processes compile it twice: without this the
 * two-node layouts paid for their start-up in CPU per cycle. The layout's own boards then settle
 * (SETTLE_SECONDS) after they are filled.
 */
async function warmUp(nodes: BenchNode[]): Promise<void> {
  const end = performance.now() + WARM_UP_SECONDS * 1000;
  // Enough items for the warm-up not to run out: about 100 cycles a second per board here.
  const tokens = (
    await Promise.all(
      [0, 1].map((b) => boardOn(nodes[b % nodes.length]!, AGENTS / 2, Math.ceil((WARM_UP_SECONDS * 150) / 500) * 500)),
    )
  ).flat();
  await Promise.all(
    tokens.map(async (token, k) => {
      const through = nodes.map((n) => client(n.url, token));
      for (let turn = k; performance.now() < end; turn++) {
        const lease = await through[turn % through.length]!('POST', '/api/claim', {});
        if (lease.status !== 200) return; // the warm-up board is done
        await through[(turn + 1) % through.length]!('POST', '/api/submit', {
          leaseId: lease.body.leaseId,
          head: 'abcdef1',
        });
      }
    }),
  );
}

/** Claim p50 of one agent through the board's home, and through the other node (one forwarding hop). */
async function hop(): Promise<{ home: number; forwarded: number }> {
  return withNodes(2, async (nodes) => {
    const [token] = await boardOn(nodes[0]!, 1);
    const p50Through = async (node: BenchNode) => {
      const call = client(node.url, token!);
      const samples: number[] = [];
      for (let i = 0; i < 150; i++) {
        const t = performance.now();
        const lease = await call('POST', '/api/claim', {});
        samples.push(performance.now() - t);
        await call('POST', '/api/submit', { leaseId: lease.body.leaseId, head: 'abcdef1' });
      }
      return percentile(samples, 0.5);
    };
    return { home: await p50Through(nodes[0]!), forwarded: await p50Through(nodes[1]!) };
  });
}

const spread = (xs: number[], digits = 1): string => {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[0]!.toFixed(digits)} / ${s[Math.floor(s.length / 2)]!.toFixed(digits)} / ${s.at(-1)!.toFixed(digits)}`;
};
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

if (!redisUrl) console.log('bench/board-homes.ts: REDIS_URL is needed; skipped.');
if (!mongo) process.exit(0);
const allLayouts: Layout[] = [
  'one node',
  'one node, embedded store',
  'two nodes, round-robin',
  'two nodes, pinned',
  'two boards, one node',
  'two boards, two nodes',
  'two boards, two nodes, each at home',
];
/** HOMES_BENCH_LAYOUTS picks some layouts by name, separated by ';' (to profile one); the targets need them all. */
const layouts = process.env.HOMES_BENCH_LAYOUTS
  ? allLayouts.filter((l) =>
      process.env
        .HOMES_BENCH_LAYOUTS!.split(';')
        .map((x) => x.trim())
        .includes(l),
    )
  : allLayouts;
const whole = layouts.length === allLayouts.length;
const rounds: Record<Layout, Run>[] = [];
const hops: { home: number; forwarded: number }[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const round = {} as Record<Layout, Run>;
  for (const layout of layouts) round[layout] = await cycles(layout);
  rounds.push(round);
  if (whole) hops.push(await hop());
}

console.log(
  `\n${AGENTS} agents, claim → submit, one ${ITEMS}-item board, ${SECONDS} s a layout, min / median / max of ${ROUNDS} rounds`,
);
console.log(
  `timed, every layout alike: from the first claim to the last submit (the nodes warmed up, the board filled, the agents' tokens issued and the layout's own work settled for ${SETTLE_SECONDS} s before); CPU over that window, per cycle`,
);
console.log(
  '| layout | cycles/s | claim p50 ms | claim p99 ms | server CPU µs/cycle | store CPU µs/cycle | commits/cycle | store WAL B/commit |',
);
console.log('|---|---|---|---|---|---|---|---|');
for (const layout of layouts) {
  const runs = rounds.map((r) => r[layout]);
  const column = (of: (x: Run) => number, digits = 1) =>
    runs.some((x) => Number.isNaN(of(x))) ? 'n/a' : spread(runs.map(of), digits);
  console.log(
    `| ${layout} | ${[
      column((x) => x.cyclesPerSecond),
      column((x) => x.claimP50),
      column((x) => x.claimP99),
      column((x) => x.serverCpuPerCycle, 0),
      column((x) => x.storeCpuPerCycle, 0),
      column((x) => x.commitsPerCycle, 2),
      column((x) => x.walPerCommit, 0),
    ].join(' | ')} |`,
  );
}
const ran = (...names: Layout[]) => names.every((n) => layouts.includes(n));
if (ran('one node', 'one node, embedded store')) {
  // Issue 43's targets for one node on MongoDB: its own figures are in the same rounds as the peer's.
  const embedded = median(
    rounds.map((r) => r['one node'].cyclesPerSecond / r['one node, embedded store'].cyclesPerSecond),
  );
  const storeToNode = median(rounds.map((r) => r['one node'].storeCpuPerCycle / r['one node'].serverCpuPerCycle));
  console.log("\nOne node on MongoDB (medians of the rounds' ratios)");
  console.log(
    `  cycles/s ÷ the embedded store's: ${embedded.toFixed(2)}   goal ≥ 0.4 ${embedded >= 0.4 ? 'met' : 'NOT met'}`,
  );
  console.log(
    `  store CPU ÷ node CPU per cycle: ${storeToNode.toFixed(2)}   goal ≤ 1 ${storeToNode <= 1 ? 'met' : 'NOT met'}`,
  );
}
if (whole) {
  console.log(
    `\nOne forwarding hop, one agent: claim p50 through the home ${spread(
      hops.map((h) => h.home),
      2,
    )} ms, through the other node ${spread(
      hops.map((h) => h.forwarded),
      2,
    )} ms`,
  );
  const ratio = (layout: Layout) =>
    median(rounds.map((r) => r[layout].cyclesPerSecond / r['one node'].cyclesPerSecond));
  const cpu = (layout: Layout, base: Layout) =>
    median(rounds.map((r) => r[layout].serverCpuPerCycle / r[base].serverCpuPerCycle));
  const twoBoards = median(
    rounds.map((r) => r['two boards, two nodes'].cyclesPerSecond / r['two boards, one node'].cyclesPerSecond),
  );
  console.log("\nTargets (medians of the rounds' ratios)");
  for (const [name, value, goal, met] of [
    [
      'two nodes round-robin ÷ one node, cycles/s',
      ratio('two nodes, round-robin'),
      '≥ 0.9',
      ratio('two nodes, round-robin') >= 0.9,
    ],
    ['two nodes pinned ÷ one node, cycles/s', ratio('two nodes, pinned'), '≥ 0.9', ratio('two nodes, pinned') >= 0.9],
    [
      'two boards: two nodes ÷ one node, server CPU/cycle',
      cpu('two boards, two nodes', 'two boards, one node'),
      '≤ 1.3',
      cpu('two boards, two nodes', 'two boards, one node') <= 1.3,
    ],
    ['two boards: two nodes ÷ one node, cycles/s', twoBoards, 'report', true],
    [
      'two boards, nothing forwarded: two nodes ÷ one node, server CPU/cycle',
      cpu('two boards, two nodes, each at home', 'two boards, one node'),
      'report',
      true,
    ],
    ['hop: claim p50 added, ms', median(hops.map((h) => h.forwarded - h.home)), 'report', true],
  ] as const)
    console.log(
      `  ${name.padEnd(70)} ${value.toFixed(2).padStart(8)}   goal ${goal.padEnd(6)} ${met ? (goal === 'report' ? '' : 'met') : 'NOT met'}`,
    );
}
