// The board under load, over real HTTP against a server process of its own (embedded store):
//  1. claim (pull-next) → submit cycles per second with 32 agents on a 5,000-item board, timed
//     from the first claim to the last submit (bench/clock.ts; the items, the agents' tokens and
//     connections made before), and the item creation timed on its own;
//  2. claim latency (one agent, claim then submit) on boards of 100, 1,000, 10,000 and 50,000 items;
//  3. lease expiry with 10,000 active leases (20 boards × 500, 1-3 s): lateness of lease.expired
//     at the boards' sockets against expiresAt, and /healthz latency during the storm.
// Exports each as a function for bench/engine.ts; `npx tsx bench/board.ts [--quick]` prints them.
// The nodes run at the shipped LOG_LEVEL (info), their log written to a file (bench/node.ts).
import { Agent, request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { openEmbeddedStore } from '../store/embedded/index.js';
import { ownerAndAgent, startNode, tokenFor, type BenchNode, type NodeOutput, type OwnerSession } from './node.js';
import { wrk } from './peers.js';
import { timed, type Timed } from './clock.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;
}

/** A keep-alive JSON client (fetch costs more than the server here). */
export function client(
  url: string,
  headers: Record<string, string>,
  agent = new Agent({ keepAlive: true, maxSockets: 1 }),
) {
  const { hostname, port } = new URL(url);
  return (method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = request(
        {
          hostname,
          port,
          method,
          path,
          agent,
          headers: {
            ...headers,
            ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (text += d));
          res.on('end', () =>
            resolve({ status: res.statusCode!, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} }),
          );
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
}

/** One agent's calls through `client`. */
export type Call = ReturnType<typeof client>;

/** A node whose plan budgets are scaled out of the load's way (BOARD_RATE_SCALE) and that allows 1 s leases. */
export const nodeForBoards = (env: Record<string, string> = {}, output: NodeOutput = 'inherit'): Promise<BenchNode> =>
  startNode({ BOARD_RATE_SCALE: '10000', LEASE_MIN_TTL_SECONDS: '1', ...env }, [], output);

/** What `fillBoard` made: the owner's session and board, and the item creation's own clock. */
export type FilledBoard = OwnerSession & { projectId: string; agent: Record<string, string>; created: Timed };

/**
 * A new owner's board of `items` items. `created` times the item creation alone (POST
 * /api/items/batch, 500 items a request, from the first request to the last answer); the sign-up
 * before it is not timed.
 */
export async function fillBoard(node: BenchNode, items: number): Promise<FilledBoard> {
  const owner = await ownerAndAgent(node.url);
  const call = client(node.url, owner.agent);
  const created = await timed(async (done) => {
    for (let made = 0; made < items; made += 500) {
      const n = Math.min(500, items - made);
      const res = await call('POST', '/api/items/batch', {
        items: Array.from({ length: n }, (_, i) => ({ title: `item ${made + i}`, priority: (made + i) % 5 })),
      });
      if (res.status !== 201) throw new Error(`batch: ${res.status} ${JSON.stringify(res.body)}`);
      done(n);
    }
  }, node.pid);
  return { ...owner, created };
}

/** `agents` agents on the owner's board, each with a token of its own and its connection open (a /healthz read). */
async function agentsOn(node: BenchNode, owner: FilledBoard, agents: number): Promise<Call[]> {
  return Promise.all(
    Array.from({ length: agents }, async (_, i) => {
      const call = client(node.url, await tokenFor(node.url, owner, owner.projectId, `cycler-${i}`));
      const probe = await call('GET', '/healthz');
      if (probe.status !== 200) throw new Error(`healthz: ${probe.status}`);
      return call;
    }),
  );
}

/** One agent claims and submits until the board has nothing ready or `end` passes; `done()` after each submit. */
async function cycleUntilEmpty(call: Call, end: number, claims: number[], done: () => void): Promise<void> {
  while (performance.now() < end) {
    const t = performance.now();
    const lease = await call('POST', '/api/claim', {});
    if (lease.status === 409) return; // NOTHING_READY: the board is done
    if (lease.status !== 200) throw new Error(`claim: ${lease.status} ${JSON.stringify(lease.body)}`);
    claims.push(performance.now() - t);
    const submitted = await call('POST', '/api/submit', { leaseId: lease.body.leaseId, head: 'abcdef1' });
    if (submitted.status !== 200) throw new Error(`submit: ${submitted.status} ${JSON.stringify(submitted.body)}`);
    done();
  }
}

/**
 * `agents` agents pull and submit until the board is empty (or `seconds` pass): cycles per second,
 * claim latency and the node's CPU per cycle. Timed (bench/clock.ts): from the first claim to the
 * last submit; the items, the agents' tokens and their connections are made before the clock,
 * and the item creation is timed on its own (`itemsCreatedPerSecond`). `onStart` runs as the
 * measured window opens (a profiler can cut its samples to it).
 */
export async function claimSubmitCycles(
  node: BenchNode,
  items = 5000,
  agents = 32,
  seconds = 60,
  onStart?: () => void,
): Promise<{
  cyclesPerSecond: number;
  cycles: number;
  claimP50: number;
  claimP99: number;
  serverCpuMicrosPerCycle: number;
  itemsCreatedPerSecond: number;
  serverCpuMicrosPerItemCreated: number;
}> {
  const owner = await fillBoard(node, items);
  const calls = await agentsOn(node, owner, agents);
  const claims: number[] = [];
  onStart?.();
  const cycles = await timed(async (done) => {
    const end = performance.now() + seconds * 1000;
    await Promise.all(calls.map((call) => cycleUntilEmpty(call, end, claims, done)));
  }, node.pid);
  return {
    cyclesPerSecond: cycles.perSecond,
    cycles: cycles.units,
    claimP50: percentile(claims, 0.5),
    claimP99: percentile(claims, 0.99),
    serverCpuMicrosPerCycle: cycles.cpuMicrosPerUnit,
    itemsCreatedPerSecond: owner.created.perSecond,
    serverCpuMicrosPerItemCreated: owner.created.cpuMicrosPerUnit,
  };
}

/** One agent claims and submits `rounds` times on a board of `items`: claim latency. */
export async function claimLatency(
  node: BenchNode,
  items: number,
  rounds = 200,
): Promise<{ p50: number; p99: number }> {
  rounds = Math.min(rounds, items);
  const owner = await fillBoard(node, items);
  const call = client(node.url, owner.agent);
  const samples: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    const lease = await call('POST', '/api/claim', {});
    samples.push(performance.now() - t);
    if (lease.status !== 200) throw new Error(`claim: ${lease.status}`);
    await call('POST', '/api/submit', { leaseId: lease.body.leaseId, head: 'abcdef1' });
  }
  return { p50: percentile(samples, 0.5), p99: percentile(samples, 0.99) };
}

/**
 * `boards` boards with `perBoard` leases of 1-3 s each, claimed by name by one agent per board,
 * watched by one socket per board: lease.expired lateness at the socket, and the probe meanwhile.
 */
export async function expiryStorm(
  node: BenchNode,
  boards = 20,
  perBoard = 500,
): Promise<{
  leases: number;
  received: number;
  p50: number;
  p99: number;
  max: number;
  probeMax: number;
  probeP99: number;
}> {
  const lateness: number[] = [];
  const expected: number[] = [];
  const sockets: WebSocket[] = [];
  const setups = [];
  for (let b = 0; b < boards; b++) setups.push(await fillBoard(node, perBoard));
  const deadlines = new Map<string, number>();
  for (const [b, owner] of setups.entries()) {
    const ws = new WebSocket(`${node.url.replace(/^http/, 'ws')}/api/ws`, { headers: owner.agent });
    await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
    ws.send(JSON.stringify({ type: 'subscribe', boardId: owner.projectId, topics: ['leases'] }));
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString()) as { type: string; event?: { type: string; workId: string } };
      if (m.type !== 'event' || m.event!.type !== 'lease.expired') return;
      const due = deadlines.get(`${b}:${m.event!.workId}`);
      if (due !== undefined) lateness.push(Date.now() - due);
    });
    sockets.push(ws);
  }
  await sleep(200);
  // Claim every item by name (one holder per board may hold many leases), deadlines spread over 1-3 s.
  await Promise.all(
    setups.map(async (owner, b) => {
      const call = client(node.url, owner.agent);
      for (let i = 1; i <= perBoard; i++) {
        const lease = await call('POST', '/api/claim', { workId: `W-${i}`, ttlSeconds: 1 + (i % 3) });
        if (lease.status !== 200) throw new Error(`claim: ${lease.status} ${JSON.stringify(lease.body)}`);
        deadlines.set(`${b}:W-${i}`, Date.parse(lease.body.expiresAt as string));
        expected.push(1);
      }
    }),
  );
  const probes: number[] = [];
  const until = Math.max(...deadlines.values()) + 3000;
  while (Date.now() < until && lateness.length < expected.length) {
    const t = performance.now();
    await fetch(`${node.url}/healthz`);
    probes.push(performance.now() - t);
    await sleep(10);
  }
  for (const ws of sockets) ws.close();
  return {
    leases: expected.length,
    received: lateness.length,
    p50: percentile(lateness, 0.5),
    p99: percentile(lateness, 0.99),
    max: Math.max(...lateness),
    probeMax: Math.max(...probes),
    probeP99: percentile(probes, 0.99),
  };
}

/**
 * GET /api/whoami with a token, on a store holding `others` other accounts' tokens besides:
 * the lookup by secret hash is an index read, so the figure should not move with `others`.
 */
export async function whoamiAmongTokens(others: number, seconds = 4): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-tokens-'));
  const store = await openEmbeddedStore(dir);
  for (let i = 0; i < others; i += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, others - i) }, (_, j) =>
        store.tokens.insert({
          _id: `tok_${i + j}`,
          version: 1,
          accountId: `acc_${(i + j) % 997}`,
          agentId: `ag_${i + j}`,
          secretHash: `${(i + j).toString(16).padStart(64, '0')}`,
          prefix: 'agb_xxxxxxxx',
          name: 'other',
          scope: 'account',
          boardId: null,
          role: null,
          resources: null,
          expiresAt: null,
          lastUsedAt: null,
          revoked: false,
          createdAt: 0,
        }),
      ),
    );
  }
  await store.close();
  const node = await startNode({ DATA_DIR: dir, BOARD_RATE_SCALE: '10000' }, [], 'file');
  try {
    const { agent } = await ownerAndAgent(node.url);
    return (await wrk(`${node.url}/api/whoami`, { seconds, connections: 32, headers: agent })).requestsPerSecond;
  } finally {
    await node.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

export interface BoardReport {
  cycles: Awaited<ReturnType<typeof claimSubmitCycles>>;
  latency: { items: number; p50: number; p99: number }[];
  storm: Awaited<ReturnType<typeof expiryStorm>>;
  /** GET /api/whoami req/s with 1 other token in the store and with 10,000. */
  whoami: { one: number; many: number };
}

/** Every board measurement, printed as it is taken. */
export async function main(quick = process.argv.includes('--quick')): Promise<BoardReport> {
  const fmt = (n: number) => n.toFixed(1);
  let node = await nodeForBoards({}, 'file');
  const latency: BoardReport['latency'] = [];
  let cycles: BoardReport['cycles'];
  try {
    cycles = await claimSubmitCycles(node, quick ? 1000 : 5000);
    console.log(
      `claim→submit, 32 agents, ${quick ? 1000 : 5000} items: ${cycles.cyclesPerSecond.toFixed(0)} cycles/s (${cycles.cycles} cycles; timed: first claim to last submit, the items, tokens and connections made before), claim p50 ${fmt(cycles.claimP50)} ms p99 ${fmt(cycles.claimP99)} ms, server CPU ${cycles.serverCpuMicrosPerCycle.toFixed(0)} µs per cycle; setup: ${cycles.itemsCreatedPerSecond.toFixed(0)} items created/s (timed: the POST /api/items/batch requests alone)`,
    );
  } finally {
    await node.stop();
  }
  // A node of its own per size, so no size pays for the boards loaded before it.
  for (const items of quick ? [100, 1000] : [100, 1000, 10_000, 50_000]) {
    node = await nodeForBoards({}, 'file');
    try {
      const l = await claimLatency(node, items, quick ? 50 : 200);
      latency.push({ items, ...l });
      console.log(`claim latency, ${items} items: p50 ${fmt(l.p50)} ms p99 ${fmt(l.p99)} ms`);
    } finally {
      await node.stop();
    }
  }
  node = await nodeForBoards({}, 'file');
  let storm: BoardReport['storm'];
  try {
    storm = await expiryStorm(node, quick ? 4 : 20, quick ? 250 : 500);
    console.log(
      `lease expiry, ${storm.leases} leases: ${storm.received} pushed; lateness p50 ${storm.p50} ms p99 ${storm.p99} ms max ${storm.max} ms; /healthz during the storm p99 ${fmt(storm.probeP99)} ms max ${fmt(storm.probeMax)} ms`,
    );
  } finally {
    await node.stop();
  }
  const whoami = {
    one: await whoamiAmongTokens(1, quick ? 2 : 4),
    many: await whoamiAmongTokens(10_000, quick ? 2 : 4),
  };
  console.log(
    `GET /api/whoami (token): ${whoami.one.toFixed(0)} req/s with 1 other token stored, ${whoami.many.toFixed(0)} with 10,000`,
  );
  return { cycles, latency, storm, whoami };
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
