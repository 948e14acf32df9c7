// npm run bench, first part: issue 28's table. Our server beside its peers in three interleaved
// rounds, every row as min / median / max, its ratio to the peer, the goal and whether it is met.
//   npx tsx bench/engine.ts [--quick] [--rounds=N] [--only=queue,http,...]
//     --quick: short runs and smaller sizes, still three rounds; --rounds and --only serve a check
//     that it runs (the targets need three rounds of every measure, on an idle machine).
// What makes it honest:
//  - Both sides of a ratio are timed over the same part of the work, and every measure and row
//    says which (issue 46): throughput is timed by one clock for both (bench/clock.ts), over the
//    processing alone, the setup (items or jobs created, tokens, connections) done before it; where
//    the setup is worth a figure it is timed on both sides too and has a row of its own.
//  - Our server runs with the shipped defaults. LOG_LEVEL is not set (info: pino writes a line per
//    request to stdout), and that stdout goes to a file in a temp dir: real writes, as a log
//    collector would take them. The variables in STRIPPED below are removed from the environment
//    first, so it is one node on the embedded store, as `npm start` runs it. The non-default
//    settings (bench/node.ts, bench/board.ts, bench/peers.ts) serve setup, not the measured path:
//      BCRYPT_ROUNDS=4                  setup's sign-ups are quick; no measured request hashes;
//      ADDRESS_RATE_PER_MINUTE=1000000  setup's sign-ups from one address are not refused;
//      BOARD_RATE_SCALE=10000           the plan's per-principal budgets never answer 429 under
//                                       load: the same counters are drawn on, the limit is higher;
//      LEASE_MIN_TTL_SECONDS=1          the expiry storm's leases of 1 to 3 s;
//      SECRET_KEY                       a fixed key, as a deployment sets one.
//  - Each measure runs ours and its peers back to back, in the order A B, then B A, then A B, so
//    drift in the machine falls on both alike; a ratio is the median of the rounds' own ratios.
//  - Before each measure, with nothing of ours running, /proc/stat is sampled for a second (calm.ts).
//    When others use more than 10% of all cores it waits (up to 60 s; 5 s with --quick), then runs
//    anyway and flags that measure of that round; the report then says it is not clean.
// Exits 0 once the table is printed, targets met or not; 1 only when a measure failed to run.
import { claimLatency, claimSubmitCycles, expiryStorm, nodeForBoards, whoamiAmongTokens } from './board.js';
import { loadAverage, untilCalm, type Calm } from './calm.js';
import { nodeLogBytes, type BenchNode } from './node.js';
import {
  bullmqThroughput,
  oursFanOut,
  oursSmallJson,
  oursStatusFlood,
  oursSocketMemory,
  peerFanOut,
  peerSmallJson,
  uwsSocketMemory,
  type FanOutFigure,
  type HttpFigure,
  type SocketMemoryFigure,
} from './peers.js';

/** Server settings that would make it something other than the shipped single node. */
const STRIPPED = [
  'LOG_LEVEL',
  'STORE',
  'MONGODB_URI',
  'MONGODB_DB',
  'REDIS_URL',
  'METRICS_PORT',
  'METRICS_HOST',
  'METRICS_TOKEN',
  'TRUSTED_PROXIES',
  'SMTP_URL',
  'STRIPE_SECRET_KEY',
  'STRIPE_API_BASE',
  'STRIPE_WEBHOOK_SECRET',
];
const ROUNDS = 3;
/** Issue 46's flood: 110 Bearer tokens, each past its minute's budget after this long. */
const FLOOD_TOKENS = 110;
const FLOOD_DRAIN_S = 10;
const BUSY_SHARE = 0.1;

type Figures = Record<string, number>;
interface Side {
  name: string;
  run(note: (text: string) => void): Promise<Figures>;
  show(f: Figures): string;
}
interface Measure {
  key: string;
  title: string;
  /** What each side's figures time, the same part of the work on both. */
  timed: string;
  sides: Side[];
}
interface RoundResult {
  calm: Calm;
  figures: Record<string, Figures>;
  notes: string[];
  error?: string;
}

const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
const dec = (n: number, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');
const http = (f: HttpFigure, note: (t: string) => void, what: string) => {
  if (f.non2xx + f.socketErrors > 0)
    note(`${what}: ${f.non2xx} non-2xx, ${f.socketErrors} socket errors of ${f.requests}`);
  return f.requestsPerSecond;
};
const fan = (f: FanOutFigure, note: (t: string) => void, what: string): Figures => {
  if (f.deliveries < f.expected || f.closedEarly > 0)
    note(`${what}: ${f.deliveries} of ${f.expected} delivered, ${f.closedEarly} sockets closed early`);
  // The clients run in this one process: near a full core, deliveries/s reads them, not the server (its CPU per delivery still reads the server).
  if (f.clientCpuShare >= 0.9)
    note(
      `${what}: the clients used ${(f.clientCpuShare * 100).toFixed(0)}% of a core: deliveries/s may be the clients' limit`,
    );
  return { perSecond: f.deliveriesPerSecond, cpu: f.serverCpuMicrosPerDelivery, clientCpu: f.clientCpuShare };
};
/** RSS per socket, or no figure when RSS did not grow: a reading within the noise of a page or a GC. */
const grown = (m: SocketMemoryFigure, note: (t: string) => void, what: string): Figures => {
  if (m.bytesPerSocket <= 0)
    note(
      `${what}: RSS moved ${int(m.rssAfterBytes - m.rssBeforeBytes)} B over ${m.sockets} sockets, within the noise: no figure`,
    );
  return { bytes: m.bytesPerSocket > 0 ? m.bytesPerSocket : NaN };
};
/** Runs `use` on a fresh board node (shipped logging, to a file), stopping it after. */
async function onBoardNode<T>(use: (node: BenchNode) => Promise<T>): Promise<T> {
  const node = await nodeForBoards({}, 'file');
  try {
    return await use(node);
  } finally {
    await node.stop();
  }
}

/** `--name=value` from argv, or undefined. */
const flag = (argv: string[], name: string): string | undefined =>
  argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

export async function main(argv: string[]): Promise<number> {
  const quick = argv.includes('--quick');
  const rounds = Number(flag(argv, 'rounds') ?? ROUNDS);
  const only = flag(argv, 'only')?.split(',');
  const size = {
    http: { seconds: quick ? 2 : 5, connections: 32 },
    statusItems: 200,
    statusTokens: 32,
    jobs: quick ? 1000 : 5000,
    agents: 32,
    fan: { clients: quick ? 300 : 1000, senders: 10, messagesPerSender: quick ? 10 : 100, textBytes: 200 },
    idle: quick ? 2000 : 10_000, // RSS moves by a few hundred bytes a socket: 1,000 sockets are within its noise
    storm: quick ? { boards: 4, perBoard: 250 } : { boards: 20, perBoard: 500 },
    latency: quick ? { small: 100, large: 2000, claims: 50 } : { small: 100, large: 20_000, claims: 200 },
    whoami: quick ? { many: 2000, seconds: 2 } : { many: 10_000, seconds: 4 },
    maxWaitMs: quick ? 5000 : 60_000,
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130)); // bench/node.ts then stops our nodes
  const removed = STRIPPED.filter((k) => process.env[k] !== undefined);
  for (const k of removed) delete process.env[k];
  const began = performance.now();
  console.log(
    `bench/engine.ts${quick ? ' --quick' : ''}: node ${process.version}, ${rounds} rounds${only ? `, only ${only.join(', ')}` : ''}, load average ${loadAverage()} at start`,
  );
  console.log(
    `our server: shipped defaults (LOG_LEVEL unset: info, stdout to a log file), BOARD_RATE_SCALE=10000, BCRYPT_ROUNDS=4, ADDRESS_RATE_PER_MINUTE=1000000, LEASE_MIN_TTL_SECONDS=1`,
  );
  if (removed.length) console.log(`removed from the environment for this run: ${removed.join(', ')}`);
  if (process.env.BENCH_NODE_ARGS)
    console.log(
      `NOTE: BENCH_NODE_ARGS=${process.env.BENCH_NODE_ARGS} adds node flags to our server: not its default flags`,
    );

  const wrkTimed = `wrk -t1 -c${size.http.connections}, ${size.http.seconds} s after an uncounted 1 s warm-up, on both`;
  const allMeasures: Measure[] = [
    {
      key: 'queue',
      title: `claim → submit, ${size.agents} agents, ${size.jobs.toLocaleString('en-US')} items / BullMQ`,
      timed:
        `processing: ours from the first claim to the last submit, BullMQ from worker.run() to the last job completed, ` +
        `each after an untimed warm-up of as many cycles / jobs on a board / queue of its own (a fresh process compiles its first seconds), ` +
        `the items / jobs created and the agents' tokens and connections / the worker's connections made before the clock; ` +
        `setup, timed on its own: ours POST /api/items/batch (500 a request) from the first request to the last answer, BullMQ the one addBulk`,
      sides: [
        {
          name: 'ours',
          run: async () =>
            onBoardNode(async (node) => {
              await claimSubmitCycles(node, size.jobs, size.agents); // the warm-up, on a board of its own
              return { ...(await claimSubmitCycles(node, size.jobs, size.agents)) };
            }),
          show: (f) =>
            `${int(f.cyclesPerSecond!)} cycles/s, claim p50 ${dec(f.claimP50!)} ms p99 ${dec(f.claimP99!)} ms, ${int(f.serverCpuMicrosPerCycle!)} µs node CPU/cycle; setup ${int(f.itemsCreatedPerSecond!)} items created/s`,
        },
        {
          name: 'bullmq',
          run: async () => ({
            ...(await bullmqThroughput({ jobs: size.jobs, concurrency: size.agents, warmUpJobs: size.jobs })),
          }),
          show: (f) =>
            `${int(f.jobsPerSecond!)} jobs/s (appendfsync always), ${int(f.redisCpuMicrosPerJob!)} µs redis-server CPU/job; setup ${int(f.addedPerSecond!)} jobs added/s`,
        },
      ],
    },
    {
      key: 'http',
      title: `small JSON: ours /healthz and /api/status / bare uWS and Fastify hello`,
      timed: `${wrkTimed}; ours' board, ${size.statusItems} items and ${size.statusTokens} tokens made before`,
      sides: [
        {
          name: 'ours',
          run: async (note) => {
            const f = await oursSmallJson(size.http, size.statusItems, size.statusTokens);
            return {
              healthz: http(f.healthz, note, 'ours /healthz'),
              status: http(f.status, note, 'ours /api/status'),
              healthzP99: f.healthz.p99Ms,
              statusP99: f.status.p99Ms,
            };
          },
          show: (f) =>
            `/healthz ${int(f.healthz!)} req/s (p99 ${dec(f.healthzP99!)} ms), /api/status ${int(f.status!)} req/s (p99 ${dec(f.statusP99!)} ms)`,
        },
        {
          name: 'uws',
          run: async (note) => ({ rps: http(await peerSmallJson('uws', size.http), note, 'bare uWS') }),
          show: (f) => `bare uWS ${int(f.rps!)} req/s`,
        },
        {
          name: 'fastify',
          run: async (note) => ({ rps: http(await peerSmallJson('fastify', size.http), note, 'Fastify') }),
          show: (f) => `Fastify ${int(f.rps!)} req/s`,
        },
      ],
    },
    {
      key: 'flood',
      title: `GET /api/status flooded past the budget (shipped budgets, ${FLOOD_TOKENS} tokens) / within budget / Fastify hello`,
      timed: `${wrkTimed}; ours flooded from a budget window's start, after an unmeasured ${FLOOD_DRAIN_S} s that spends every token's minute`,
      sides: [
        {
          name: 'refused',
          run: async (note) => {
            const f = await oursStatusFlood(size.http, FLOOD_TOKENS, FLOOD_DRAIN_S);
            if (f.refused < 1)
              note(`ours flooded: ${(100 * (1 - f.refused)).toFixed(1)}% served (a budget window turned)`);
            return { rps: f.requestsPerSecond, refused: f.refused };
          },
          show: (f) => `flooded ${int(f.rps!)} req/s, ${(100 * f.refused!).toFixed(1)}% of them 429`,
        },
        {
          name: 'served',
          run: async (note) => ({
            rps: http((await oursSmallJson(size.http, size.statusItems, FLOOD_TOKENS)).status, note, 'ours served'),
          }),
          show: (f) => `within budget ${int(f.rps!)} req/s`,
        },
        {
          name: 'fastify',
          run: async (note) => ({ rps: http(await peerSmallJson('fastify', size.http), note, 'Fastify') }),
          show: (f) => `Fastify ${int(f.rps!)} req/s`,
        },
      ],
    },
    {
      key: 'fan',
      title: `fan-out to ${size.fan.clients} sockets / bare uWS publish`,
      timed:
        'from the first send to the last delivery, server CPU from the first send until every delivery is in; ' +
        'the sockets opened and subscribed (ours: their tokens issued) before, on both',
      sides: [
        {
          name: 'ours',
          run: async (note) => fan(await oursFanOut(size.fan), note, 'ours'),
          show: (f) =>
            `${int(f.perSecond!)} deliveries/s, ${dec(f.cpu!)} µs CPU/delivery (client CPU ${int(f.clientCpu! * 100)}%)`,
        },
        {
          name: 'uws',
          run: async (note) => fan(await peerFanOut('uws', size.fan), note, 'bare uWS'),
          show: (f) =>
            `${int(f.perSecond!)} deliveries/s, ${dec(f.cpu!)} µs CPU/delivery (client CPU ${int(f.clientCpu! * 100)}%)`,
        },
      ],
    },
    {
      key: 'idle',
      title: `memory per idle socket, ${size.idle} sockets / bare uWS`,
      timed:
        'no clock: server RSS with the sockets open minus RSS before them, each the median of 5 readings, ' +
        'after 50 sockets opened and closed, on both (ours: its session and socket tokens made before the first reading)',
      sides: [
        {
          name: 'ours',
          run: async (note) => grown(await oursSocketMemory(size.idle), note, 'ours'),
          show: (f) => `${int(f.bytes!)} B/socket`,
        },
        {
          name: 'uws',
          run: async (note) => grown(await uwsSocketMemory(size.idle), note, 'bare uWS'),
          show: (f) => `${int(f.bytes!)} B/socket`,
        },
      ],
    },
    {
      key: 'storm',
      title: `expiry storm, ${(size.storm.boards * size.storm.perBoard).toLocaleString('en-US')} leases`,
      timed:
        "each lease.expired's arrival at its board's socket against the lease's expiresAt, and each /healthz probe meanwhile; " +
        'boards filled, sockets open and leases claimed before',
      sides: [
        {
          name: 'ours',
          run: async (note) => {
            const s = await onBoardNode((node) => expiryStorm(node, size.storm.boards, size.storm.perBoard));
            if (s.received < s.leases) note(`${s.received} of ${s.leases} lease.expired pushed`);
            return { ...s };
          },
          show: (f) =>
            `${f.received}/${f.leases} pushed, lateness p99 ${int(f.p99!)} ms max ${int(f.max!)} ms; /healthz max ${dec(f.probeMax!, 1)} ms`,
        },
      ],
    },
    {
      key: 'latency',
      title: `claim latency, ${size.latency.small} → ${size.latency.large.toLocaleString('en-US')} items`,
      timed:
        'each claim request alone, one agent claiming then submitting (the submit not timed), on both sizes; ' +
        'the board filled before, a node of its own per size',
      sides: [size.latency.small, size.latency.large].map((items) => ({
        name: String(items),
        run: async () => ({ ...(await onBoardNode((node) => claimLatency(node, items, size.latency.claims))) }),
        show: (f: Figures) =>
          `${items.toLocaleString('en-US')} items: claim p50 ${dec(f.p50!)} ms p99 ${dec(f.p99!)} ms`,
      })),
    },
    {
      key: 'whoami',
      title: `GET /api/whoami, 1 → ${size.whoami.many.toLocaleString('en-US')} tokens stored`,
      timed: `wrk -t1 -c32, ${size.whoami.seconds} s after an uncounted 1 s warm-up, on both; the tokens stored before the node starts`,
      sides: [1, size.whoami.many].map((others) => ({
        name: String(others),
        run: async () => ({ rps: await whoamiAmongTokens(others, size.whoami.seconds) }),
        show: (f: Figures) =>
          `${others.toLocaleString('en-US')} ${others === 1 ? 'token' : 'tokens'}: ${int(f.rps!)} req/s`,
      })),
    },
  ];
  const measures = only ? allMeasures.filter((m) => only.includes(m.key)) : allMeasures;
  for (const m of measures) console.log(`  ${m.title}\n    timed: ${m.timed}`);

  const results: Record<string, RoundResult[]> = Object.fromEntries(measures.map((m) => [m.key, []]));
  for (let round = 0; round < rounds; round++) {
    console.log(`\nround ${round + 1} of ${rounds}`);
    for (const m of measures) {
      let told = false;
      const calm = await untilCalm({
        threshold: BUSY_SHARE,
        maxWaitMs: size.maxWaitMs,
        onBusy: (share) => {
          if (!told)
            console.log(
              `  ${m.title}: others use ${(share * 100).toFixed(0)}% of the machine, waiting up to ${size.maxWaitMs / 1000} s`,
            );
          told = true;
        },
      });
      const result: RoundResult = { calm, figures: {}, notes: [] };
      results[m.key]!.push(result);
      const order = round % 2 === 0 ? m.sides : [...m.sides].reverse();
      console.log(
        `  ${m.title} (others ${(calm.share * 100).toFixed(0)}%${calm.waitedSeconds >= 1 ? ` after ${calm.waitedSeconds.toFixed(0)} s` : ''}${calm.busy ? ', BUSY: measured anyway, flagged' : ''})`,
      );
      for (const side of order) {
        try {
          const figures = await side.run((text) => result.notes.push(text));
          result.figures[side.name] = figures;
          console.log(`    ${side.name.padEnd(8)} ${side.show(figures)}`);
        } catch (e) {
          result.error = `${side.name}: ${(e as Error).message.split('\n')[0]}`;
          console.log(`    ${side.name.padEnd(8)} FAILED: ${(e as Error).stack ?? String(e)}`);
          break; // a round without both sides has no ratio
        }
      }
      for (const n of result.notes) console.log(`    note: ${n}`);
    }
  }

  const storm = size.storm.boards * size.storm.perBoard;
  const wrkRows = `${size.http.seconds} s of wrk -c${size.http.connections} after a 1 s warm-up, on both`;
  const allRows: Row[] = [
    {
      measure: 'queue',
      name: `claim → submit, ${size.agents} agents, ${size.jobs.toLocaleString('en-US')} items ÷ BullMQ fsync always (/s)`,
      timed:
        'first claim to last submit ÷ worker.run() to last completion, each after an untimed warm-up of as many; items / jobs, tokens and connections made before',
      ours: (f) => f.ours?.cyclesPerSecond,
      peer: (f) => f.bullmq?.jobsPerSecond,
      fmt: int,
      goal: { of: 'ratio', op: '≥', bound: 0.5 },
    },
    {
      measure: 'queue',
      name: `  setup: ${size.jobs.toLocaleString('en-US')} items created ÷ jobs added (/s)`,
      timed: 'POST /api/items/batch, 500 a request, first request to last answer ÷ the one addBulk; sign-up before',
      ours: (f) => f.ours?.itemsCreatedPerSecond,
      peer: (f) => f.bullmq?.addedPerSecond,
      fmt: int,
    },
    {
      measure: 'http',
      name: 'GET /healthz ÷ bare uWS hello (req/s)',
      timed: wrkRows,
      ours: (f) => f.ours?.healthz,
      peer: (f) => f.uws?.rps,
      fmt: int,
      goal: { of: 'ratio', op: '≥', bound: 0.8 },
    },
    {
      measure: 'http',
      name: 'GET /healthz ÷ Fastify hello (req/s)',
      timed: wrkRows,
      ours: (f) => f.ours?.healthz,
      peer: (f) => f.fastify?.rps,
      fmt: int,
    },
    {
      measure: 'http',
      name: `GET /api/status, Bearer, ${size.statusItems} items ÷ Fastify hello (req/s)`,
      timed: `${wrkRows}; board, items and ${size.statusTokens} tokens made before`,
      ours: (f) => f.ours?.status,
      peer: (f) => f.fastify?.rps,
      fmt: int,
      goal: { of: 'ratio', op: '≥', bound: 1 },
    },
    {
      measure: 'flood',
      name: 'GET /api/status flooded past the budget ÷ Fastify hello (req/s)',
      timed: `wrk -t1 -c32 on both; ours after an unmeasured ${FLOOD_DRAIN_S} s spending every token's budget`,
      ours: (f) => f.refused?.rps,
      peer: (f) => f.fastify?.rps,
      fmt: int,
      goal: { of: 'ratio', op: '≥', bound: 1 },
    },
    {
      measure: 'flood',
      name: 'GET /api/status flooded past the budget ÷ the same route within budget (req/s)',
      timed: `wrk -t1 -c32 on both, ${FLOOD_TOKENS} tokens rotated on both; the flooded node has the shipped budgets`,
      ours: (f) => f.refused?.rps,
      peer: (f) => f.served?.rps,
      fmt: int,
      goal: { of: 'ratio', op: '≥', bound: 1 },
    },
    {
      measure: 'fan',
      name: `fan-out, ${size.fan.clients.toLocaleString('en-US')} sockets ÷ uWS publish (deliveries/s)`,
      timed: 'first send to last delivery, sockets open and subscribed before, on both',
      ours: (f) => f.ours?.perSecond,
      peer: (f) => f.uws?.perSecond,
      fmt: int,
      goal: { of: 'ratio', op: '≥', bound: 0.9 },
    },
    {
      measure: 'fan',
      name: 'server CPU per delivery ÷ uWS (µs)',
      timed: "the server process's utime + stime from the first send until every delivery is in, on both",
      ours: (f) => f.ours?.cpu,
      peer: (f) => f.uws?.cpu,
      fmt: (n) => dec(n),
      goal: { of: 'ratio', op: '≤', bound: 1.2 },
    },
    {
      measure: 'idle',
      name: 'idle socket RSS, default flags ÷ bare uWS (KB)',
      timed: 'no clock: RSS with the sockets open minus before them, after a 50-socket warm-up, on both',
      ours: (f) => (f.ours?.bytes ?? NaN) / 1024,
      peer: (f) => (f.uws?.bytes ?? NaN) / 1024,
      fmt: (n) => dec(n, 1),
      goal: { of: 'ratio', op: '≤', bound: 2 },
    },
    {
      measure: 'storm',
      name: `expiry storm, ${storm.toLocaleString('en-US')} leases: pushed p99 (ms)`,
      timed: "each lease.expired's arrival at the socket minus the lease's expiresAt",
      ours: (f) => f.ours?.p99,
      fmt: int,
      goal: { of: 'ours', op: '≤', bound: 1000 },
    },
    {
      measure: 'storm',
      name: '  the same: pushed max (ms)',
      timed: "each lease.expired's arrival at the socket minus the lease's expiresAt",
      ours: (f) => f.ours?.max,
      fmt: int,
      goal: { of: 'ours', op: '≤', bound: 1500 },
    },
    {
      measure: 'storm',
      name: '  the same: /healthz probe max during it (ms)',
      timed: 'each /healthz request, one at a time, 10 ms apart, from the last claim until the expiries are in',
      ours: (f) => f.ours?.probeMax,
      fmt: (n) => dec(n, 1),
      goal: { of: 'ours', op: '≤', bound: 50 },
    },
    {
      measure: 'latency',
      name: `claim p50 at ${size.latency.large.toLocaleString('en-US')} ÷ at ${size.latency.small} items (ms)`,
      timed: 'each claim request alone (then an untimed submit), board filled before, on both sizes',
      ours: (f) => f[String(size.latency.large)]?.p50,
      peer: (f) => f[String(size.latency.small)]?.p50,
      fmt: (n) => dec(n),
      goal: { of: 'ratio', op: '≤', bound: 1.25, text: '≤ 1.25 (flat)' },
    },
    {
      measure: 'whoami',
      name: `GET /api/whoami with ${size.whoami.many.toLocaleString('en-US')} tokens ÷ with 1 (req/s)`,
      timed: `${size.whoami.seconds} s of wrk -c32 after a 1 s warm-up, on both; tokens stored before the node starts`,
      ours: (f) => f[String(size.whoami.many)]?.rps,
      peer: (f) => f['1']?.rps,
      fmt: int,
      goal: { of: 'ratio', op: '≥', bound: 0.8, text: '≥ 0.8 (flat)' },
    },
  ];
  const rows = allRows.filter((r) => results[r.measure] !== undefined);
  const failed = printReport(rows, results, rounds);
  console.log(`\nour nodes wrote ${(nodeLogBytes() / 2 ** 20).toFixed(1)} MB of log to files (LOG_LEVEL unset: info)`);
  console.log(`load average ${loadAverage()} at the end; done in ${((performance.now() - began) / 1000).toFixed(0)} s`);
  return failed ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// The table: a row reads one figure of ours (and of its peer) from each round's figures.

interface Row {
  measure: string;
  name: string;
  /** What both figures of the row time: the same part of the work on each side. */
  timed: string;
  ours: (f: Record<string, Figures>) => number | undefined;
  peer?: (f: Record<string, Figures>) => number | undefined;
  fmt: (n: number) => string;
  /** Checked against the median of the rounds' ratios, or of our figure. */
  goal?: { of: 'ratio' | 'ours'; op: '≥' | '≤'; bound: number; text?: string };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length === 0 ? NaN : s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const spread = (xs: number[], fmt: (n: number) => string): string =>
  xs.length ? `${fmt(Math.min(...xs))} / ${fmt(median(xs))} / ${fmt(Math.max(...xs))}` : '—';

/** Prints the table, its notes and whether the run was clean; true when a measure failed to run. */
function printReport(rows: Row[], results: Record<string, RoundResult[]>, rounds: number): boolean {
  const table: string[][] = [['measure', 'ours min / median / max', 'peer min / median / max', 'ratio', 'goal', '']];
  const flagged: string[] = [];
  for (const row of rows) {
    const oursValues: number[] = [];
    const peerValues: number[] = [];
    const ratios: number[] = [];
    const flags: string[] = [];
    results[row.measure]!.forEach((r, i) => {
      if (r.calm.busy) flags.push(`busy r${i + 1}: ${(r.calm.share * 100).toFixed(0)}% CPU by others`);
      if (r.error) flags.push(`r${i + 1} failed`);
      if (r.notes.length) flags.push(`r${i + 1}: see notes`);
      const o = row.ours(r.figures);
      const p = row.peer?.(r.figures);
      if (o === undefined || !Number.isFinite(o) || (row.peer && (p === undefined || !Number.isFinite(p)))) return;
      oursValues.push(o);
      if (p === undefined) return;
      peerValues.push(p);
      ratios.push(o / p);
    });
    if (oursValues.length < rounds) flags.push(`${oursValues.length} of ${rounds} rounds`);
    const ratio = median(ratios);
    const goal = row.goal;
    const value = goal?.of === 'ratio' ? ratio : median(oursValues);
    const verdict = !goal
      ? ''
      : !Number.isFinite(value)
        ? 'no figure'
        : (goal.op === '≥' ? value >= goal.bound : value <= goal.bound)
          ? 'met'
          : 'NOT met';
    table.push([
      row.name,
      spread(oursValues, row.fmt),
      row.peer ? spread(peerValues, row.fmt) : '—',
      ratios.length ? ratio.toFixed(2) : '—',
      goal ? (goal.text ?? `${goal.op} ${goal.bound.toLocaleString('en-US')}`) : '—',
      verdict,
    ]);
    flagged.push(flags.join('; '));
  }
  const widths = table[0]!.map((_, c) => Math.max(...table.map((r) => r[c]!.length)));
  console.log(
    `\nIssue 28's table: ${rounds} rounds, ours and its peer back to back in each (ratio: the median of the rounds' ratios; each row's "timed" says what both of its figures time)`,
  );
  for (const [i, r] of table.entries()) {
    console.log(
      `  ${r
        .map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!)))
        .join('  ')
        .trimEnd()}`,
    );
    if (i === 0) {
      console.log(`  ${widths.map((w) => '-'.repeat(w)).join('  ')}`);
      continue;
    }
    console.log(`      timed: ${rows[i - 1]!.timed}`);
    if (flagged[i - 1]) console.log(`      ↳ ${flagged[i - 1]}`);
  }
  const notes = Object.entries(results).flatMap(([key, rs]) =>
    rs.flatMap((r, i) => [...r.notes, ...(r.error ? [`FAILED ${r.error}`] : [])].map((n) => `${key} r${i + 1}: ${n}`)),
  );
  if (notes.length) console.log(`\nnotes:\n${notes.map((n) => `  ${n}`).join('\n')}`);
  const all = Object.values(results).flat();
  const busy = all.filter((r) => r.calm.busy);
  console.log(
    busy.length
      ? `\nNOT CLEAN: ${busy.length} of ${all.length} measure rounds began while others used more than ${BUSY_SHARE * 100}% of the machine (flagged "busy" above); take the figures again on an idle machine.`
      : `\nclean: every measure of every round began while others used at most ${BUSY_SHARE * 100}% of the machine.`,
  );
  return all.some((r) => r.error !== undefined);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
