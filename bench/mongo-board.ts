// The MongoDB store against the embedded one, in the same run, over real HTTP (issue: MongoDB
// costs what the change costs): claim latency (one agent, claim then submit) on boards of 100,
// 1,000 and 10,000 items, and an authenticated GET /api/status on a 100-item board, each side by
// side, three rounds, min/median/max. On MONGODB_URI's server when set, else on FerretDB 2
// (PostgreSQL with DocumentDB, DURABLE=1), which it starts itself (bench/mongo-wire.ts says how).
//   npx tsx bench/mongo-board.ts [--quick]
import { claimLatency, client, nodeForBoards, percentile } from './board.js';
import { benchMongo } from './mongo-wire.js';
import { ownerAndAgent, startNode, type BenchNode } from './node.js';

const quick = process.argv.includes('--quick');
const ROUNDS = 3;
const SIZES = quick ? [100, 1000] : [100, 1000, 10_000];

const mongo = await benchMongo('bench/mongo-board.ts');
const uri = mongo?.uri;
const mongoNode = (): Promise<BenchNode> =>
  startNode({
    STORE: 'mongo',
    MONGODB_URI: uri!,
    MONGODB_DB: `bench_${Date.now()}_${Math.random().toString(36).slice(2, 8)}`,
    BOARD_RATE_SCALE: '10000',
    LEASE_MIN_TTL_SECONDS: '1',
    LOG_LEVEL: 'info',
  });
const embeddedNode = (): Promise<BenchNode> => nodeForBoards({ LOG_LEVEL: 'info' });

/** p50 of an authenticated GET /api/status on a board of `items`, one caller after another. */
async function statusLatency(node: BenchNode, items: number, reads = quick ? 200 : 1000): Promise<number> {
  const owner = await ownerAndAgent(node.url);
  const call = client(node.url, owner.agent);
  for (let made = 0; made < items; made += 500)
    await call('POST', '/api/items/batch', {
      items: Array.from({ length: Math.min(500, items - made) }, (_, i) => ({ title: `item ${made + i}` })),
    });
  const samples: number[] = [];
  for (let i = 0; i < reads; i++) {
    const t = performance.now();
    const res = await call('GET', '/api/status');
    samples.push(performance.now() - t);
    if (res.status !== 200) throw new Error(`status: ${res.status}`);
  }
  return percentile(samples, 0.5);
}

/**
 * Untimed claim → submit cycles on a small board of the node's own, before anything is timed: a
 * fresh node's first requests (its connections to the store opened, its code compiled) are then in
 * no size's figure, on either store. Without them the smallest board, whose 100 claims are all the
 * samples it has, carried a MongoDB node's start into its median.
 */
const WARM_UP_CYCLES = 50;
const warmedUp = async (start: () => Promise<BenchNode>): Promise<BenchNode> => {
  const node = await start();
  try {
    await claimLatency(node, WARM_UP_CYCLES, WARM_UP_CYCLES);
  } catch (e) {
    await node.stop();
    throw e;
  }
  return node;
};

async function measure(start: () => Promise<BenchNode>): Promise<{ claim: Map<number, number>; status: number }> {
  const claim = new Map<number, number>();
  // A node of its own per size, so no size pays for the boards loaded before it.
  for (const items of SIZES) {
    const node = await warmedUp(start);
    try {
      claim.set(items, (await claimLatency(node, items, quick ? 50 : 200)).p50);
    } finally {
      await node.stop();
    }
  }
  const node = await warmedUp(start);
  try {
    return { claim, status: await statusLatency(node, 100) };
  } finally {
    await node.stop();
  }
}

const spread = (xs: number[]): string => {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[0]!.toFixed(2)} / ${s[Math.floor(s.length / 2)]!.toFixed(2)} / ${s.at(-1)!.toFixed(2)}`;
};
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

if (!mongo) process.exit(0);
const rounds: { mongo: Awaited<ReturnType<typeof measure>>; embedded: Awaited<ReturnType<typeof measure>> }[] = [];
for (let r = 0; r < ROUNDS; r++)
  rounds.push({ mongo: await measure(mongoNode), embedded: await measure(embeddedNode) });

console.log(`\nMongoDB (${mongo.label}) beside the embedded store, min / median / max of ${ROUNDS} rounds, ms`);
console.log(
  '  timed, on both stores alike: each claim request alone (one agent, claim then an untimed submit) and each GET /api/status alone, one at a time; the boards filled before, a node of its own per size',
);
for (const items of SIZES) {
  console.log(
    `  claim p50, ${String(items).padStart(6)} items   mongo ${spread(rounds.map((r) => r.mongo.claim.get(items)!))}   embedded ${spread(rounds.map((r) => r.embedded.claim.get(items)!))}`,
  );
}
console.log(
  `  GET /api/status p50, 100 items mongo ${spread(rounds.map((r) => r.mongo.status))}   embedded ${spread(rounds.map((r) => r.embedded.status))}`,
);
const small = SIZES[0]!;
const large = SIZES.at(-1)!;
const growth = median(rounds.map((r) => r.mongo.claim.get(large)! / r.mongo.claim.get(small)!));
const status = median(rounds.map((r) => r.mongo.status / r.embedded.status));
// Issue 43's targets: claim within 2× of the embedded store's at every size, status within 1.5×.
const rows: [string, number, string, boolean][] = [
  ...SIZES.map((items): [string, number, string, boolean] => {
    const ratio = median(rounds.map((r) => r.mongo.claim.get(items)! / r.embedded.claim.get(items)!));
    return [`mongo claim p50 ÷ embedded, ${items} items`, ratio, '≤ 2', ratio <= 2];
  }),
  ['mongo status p50 ÷ embedded, 100 items', status, '≤ 1.5', status <= 1.5],
  [`mongo claim p50 at ${large} ÷ at ${small} items`, growth, '≤ 2', growth <= 2],
];
console.log("\nTargets (medians of the rounds' ratios)");
for (const [name, value, goal, met] of rows)
  console.log(
    `  ${name.padEnd(44)} ${value.toFixed(2).padStart(8)}   goal ${goal.padEnd(5)} ${met ? 'met' : 'NOT met'}`,
  );
process.exit(0);
