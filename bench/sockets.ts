// npm run bench (second part): WebSocket timing and memory on server processes of their own.
// With REDIS_URL set it runs two nodes on Redis and MongoDB (claims on one, sockets on the other):
// MONGODB_URI's server, else FerretDB 2 it starts itself (bench/mongo-wire.ts); otherwise, or when
// neither can be had, one node on the embedded store.
//  1. Lease expiry pushed to its holder: a socket subscribed to nothing, leases of 1-3 s claimed
//     and left to run out; lease.expiring and lease.expired receipt against expiresAt (goal: the
//     expiry within 1.5 s).
//  2. 1,000 sockets on one board: 800 read its lease events, 200 subscribe to everything and
//     never read a byte, while 8 MB of shouts go out: the nodes' memory, how many stalled sockets
//     were cut off, and whether every reading socket got every lease event. A credential holds at
//     most SOCKETS_PER_CREDENTIAL sockets (src/ws/socket-cap.ts), so each 20 sockets have a token.
//  3. A subscribe flood: one socket sends 1,000 subscribes with since: 0 to a board of 1,500 events
//     while /healthz is probed every 10 ms; the probe's worst latency (goal: under 100 ms; the
//     e2e test test/e2e/ws-budget.test.ts only holds it under 500 ms, a margin a busy CI machine keeps).
// READERS and STALLED change those counts (both 0 skips part 2); ROUNDS repeats part 2 on the same
// nodes, to see whether memory grows round over round.
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import WebSocket from 'ws';
import { benchMongo } from './mongo-wire.js';
import { stalledSocket } from './raw-socket.js';
import { ownerAndAgent, socketCredentials, startNode, tokenFor, type BenchNode } from './node.js';

const READERS = Number(process.env.READERS ?? 800);
const STALLED = Number(process.env.STALLED ?? 200);
const GOAL_MS = 1500;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
const wsUrl = (url: string) => `${url.replace(/^http/, 'ws')}/api/ws`;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const post = (url: string, path: string, body: unknown, auth: Record<string, string>): Promise<any> =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth },
    body: JSON.stringify(body),
  }).then((r) => r.json());

/** Each node's open sockets, as its /readyz counts them. */
const openSockets = (nodes: BenchNode[]): Promise<number[]> =>
  Promise.all(
    nodes.map(async (n) => ((await fetch(`${n.url}/readyz`).then((r) => r.json())) as { sockets: number }).sockets),
  );

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;
}

async function expiryPushes(claimOn: BenchNode, socketOn: BenchNode): Promise<void> {
  const owner = await ownerAndAgent(claimOn.url);
  const { projectId, agent } = owner;
  const samples = 30;
  await post(
    claimOn.url,
    '/api/items/batch',
    { items: Array.from({ length: samples }, (_, i) => ({ title: `expiring ${i}` })) },
    agent,
  );
  // One holder per lease (a holder claiming again gets its live lease back), each with its own socket subscribed to nothing.
  const holders = await Promise.all(
    Array.from({ length: samples }, async (_, i) => {
      const auth = await tokenFor(claimOn.url, owner, projectId, `holder-${i}`);
      const ws = new WebSocket(wsUrl(socketOn.url), { headers: auth });
      const received = new Map<string, number>();
      ws.on('message', (data) => {
        const m = JSON.parse(data.toString());
        if (m.type === 'event' && !received.has(m.event.type)) received.set(m.event.type, Date.now());
      });
      await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
      return { auth, ws, received, ttl: 1 + (i % 3), expiresAt: 0 };
    }),
  );
  for (const h of holders) {
    h.expiresAt = Date.parse((await post(claimOn.url, '/api/claim', { ttlSeconds: h.ttl }, h.auth)).expiresAt);
    await sleep(37); // spread the deadlines
  }
  await sleep(5000);
  for (const h of holders) h.ws.close();
  const lateness = (type: string, due: (h: (typeof holders)[number]) => number) =>
    holders.map((h) => (h.received.get(type) ?? Number.POSITIVE_INFINITY) - due(h));
  const expired = lateness('lease.expired', (h) => h.expiresAt);
  const expiring = lateness('lease.expiring', (h) => h.expiresAt - h.ttl * 1000 * 0.2);
  const line = (name: string, late: number[]) =>
    `${name.padEnd(34)} ${samples} leases: median ${percentile(late, 0.5)} ms, p95 ${percentile(late, 0.95)} ms, max ${Math.max(...late)} ms after due`;
  console.log(line('push lease.expiring (at 80%)', expiring));
  console.log(line('push lease.expired', expired));
  console.log(
    `${''.padEnd(34)} goal: expired pushed within ${GOAL_MS} ms of expiresAt: ${Math.max(...expired) <= GOAL_MS ? 'met' : 'MISSED'}`,
  );
}

async function manySockets(nodes: BenchNode[]): Promise<void> {
  const owner = await ownerAndAgent(nodes[0]!.url);
  const { agent, projectId } = owner;
  const readerAuth = await socketCredentials(nodes[0]!.url, owner, projectId, 'reader', READERS);
  const stalledAuth = await socketCredentials(nodes[0]!.url, owner, projectId, 'stalled', STALLED);
  const memory = () => nodes.map((n) => rssMb(n.pid));
  const fmt = (mb: number[]) => mb.map((m) => `${m.toFixed(0)} MB`).join(' + ');
  const before = memory();

  const readers: { seen: number; last: number; closed: number | null }[] = [];
  for (let i = 0; i < READERS; i++) {
    const ws = new WebSocket(wsUrl(nodes[i % nodes.length]!.url), { headers: readerAuth(i) });
    const r = { seen: 0, last: 0, closed: null as number | null };
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString());
      if (m.type === 'event') {
        r.seen++;
        r.last = m.seq;
      }
    });
    ws.on('close', (code) => (r.closed = code));
    await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
    ws.send(JSON.stringify({ type: 'subscribe', boardId: projectId, topics: ['leases'] }));
    readers.push(r);
  }
  const stalled: Socket[] = [];
  for (let i = 0; i < STALLED; i++)
    stalled.push(
      await stalledSocket(nodes[i % nodes.length]!.url, stalledAuth(i), {
        type: 'subscribe',
        boardId: projectId,
        topics: ['activity'],
      }),
    );
  await sleep(1000);
  const connected = memory();

  // 4,000 shouts of 2 KB (8 MB) from 40 agents: far more than a stalled socket's kernel buffers and
  // backpressure cap, without growing the board itself.
  let peak = connected;
  const sampler = setInterval(() => (peak = memory().map((m, i) => Math.max(m, peak[i]!))), 50);
  const shouters = await Promise.all(
    Array.from({ length: 40 }, (_, i) => tokenFor(nodes[0]!.url, owner, projectId, `shouter-${i}`)),
  );
  const started = performance.now();
  const shouts = shouters.length * 100;
  await Promise.all(
    shouters.map(async (auth, i) => {
      for (let n = 0; n < 100; n++) {
        const res = await post(
          nodes[i % nodes.length]!.url,
          '/api/shouts',
          { text: `${i}-${n} `.padEnd(2000, 'x') },
          auth,
        );
        if (!res.id) throw new Error(`shout refused: ${JSON.stringify(res)}`);
      }
    }),
  );
  const shoutSeconds = (performance.now() - started) / 1000;
  // Then lease events for the readers: claims and releases.
  const cycles = 25;
  await post(
    nodes[0]!.url,
    '/api/items/batch',
    { items: Array.from({ length: cycles }, (_, i) => ({ title: `leased ${i}` })) },
    agent,
  );
  for (let i = 0; i < cycles; i++) {
    const grant = await post(nodes[0]!.url, '/api/claim', {}, agent);
    await post(nodes[0]!.url, '/api/lease', { leaseId: grant.leaseId, action: 'release' }, agent);
  }
  const leaseEvents = cycles * 2;
  for (
    const end = Date.now() + 60_000;
    Date.now() < end && readers.some((r) => r.seen < leaseEvents && r.closed === null);
  )
    await sleep(100);
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  await sleep(500);
  const after = memory();
  const open = await openSockets(nodes);
  const complete = readers.filter((r) => r.seen === leaseEvents && r.closed === null).length;
  const cut = READERS + STALLED - open.reduce((a, b) => a + b, 0);

  console.log(
    `${`${READERS + STALLED} sockets, ${STALLED} never read`.padEnd(34)} ${shouts} shouts of 2 KB to the ${STALLED} in ${shoutSeconds.toFixed(1)} s, then ${leaseEvents} lease events to all, in ${seconds.toFixed(1)} s in all (${nodes.length} node${nodes.length > 1 ? 's' : ''})`,
  );
  console.log(
    `${''.padEnd(34)} RSS: idle ${fmt(before)}, all connected ${fmt(connected)}, peak ${fmt(peak)}, after ${fmt(after)}`,
  );
  console.log(
    `${''.padEnd(34)} readers with every lease event: ${complete}/${READERS}; sockets cut off as slow consumers: ${cut} (of ${STALLED} stalled)`,
  );
  await sleep(15_000);
  console.log(
    `${''.padEnd(34)} RSS 15 s later, the stalled clients still connected: ${fmt(memory())}; open sockets ${(await openSockets(nodes)).join(' + ')}`,
  );
  for (const s of stalled) s.destroy();
  await sleep(2000);
  console.log(`${''.padEnd(34)} RSS once they hung up: ${fmt(memory())}`);
}

const FLOOD_GOAL_MS = 100;

/** Part 3: the probe's worst /healthz latency while one socket floods the node with replaying subscribes. */
async function subscribeFlood(node: BenchNode): Promise<void> {
  const { projectId, agent } = await ownerAndAgent(node.url);
  for (let made = 0; made < 1500; made += 500)
    await post(
      node.url,
      `/api/items/batch?projectId=${projectId}`,
      { items: Array.from({ length: 500 }, (_, i) => ({ title: `event ${made + i}` })) },
      agent,
    );
  const probes: number[] = [];
  let probing = true;
  const prober = (async () => {
    while (probing) {
      const started = performance.now();
      await fetch(`${node.url}/healthz`).then((r) => r.text());
      probes.push(performance.now() - started);
      await sleep(10);
    }
  })();
  await sleep(200); // a few probes of the quiet node first
  const ws = new WebSocket(wsUrl(node.url), { headers: agent });
  await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  for (let i = 0; i < 1000; i++) ws.send(JSON.stringify({ type: 'subscribe', boardId: projectId, since: 0 }));
  const code = await Promise.race([closed, sleep(30_000).then(() => -1)]);
  await sleep(300);
  probing = false;
  await prober;
  const sorted = [...probes].sort((a, b) => a - b);
  const worst = sorted.at(-1)!;
  console.log(
    `${'subscribe flood, 1,500 events'.padEnd(34)} socket closed with ${code}; /healthz during it: ${probes.length} probes, p50 ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} ms, worst ${worst.toFixed(1)} ms (goal < ${FLOOD_GOAL_MS} ms: ${worst < FLOOD_GOAL_MS ? 'met' : 'NOT met'})`,
  );
}

const quiet = { LOG_LEVEL: 'warn' }; // as these figures have always been taken; bench/engine.ts measures the shipped default
const mongo = process.env.REDIS_URL ? await benchMongo('bench/sockets.ts, two nodes on MongoDB') : null;
const shared = mongo ? { ...quiet, STORE: 'mongo', MONGODB_URI: mongo.uri, MONGODB_DB: `bench-${Date.now()}` } : null;
const nodes = shared ? [await startNode(shared), await startNode(shared)] : [await startNode(quiet)];
try {
  console.log(
    `sockets: ${nodes.length === 2 ? 'two nodes on MongoDB and Redis (claims on the first, sockets on the second)' : 'one node, embedded store'}`,
  );
  await expiryPushes(nodes[0]!, nodes.at(-1)!);
  if (READERS + STALLED > 0) await manySockets(nodes);
  for (let i = 1; i < Number(process.env.ROUNDS ?? 1); i++) await manySockets(nodes);
  await subscribeFlood(nodes.at(-1)!);
} finally {
  await Promise.all(nodes.map((n) => n.stop()));
  if (shared) {
    const { MongoClient } = await import('mongodb');
    const client = await MongoClient.connect(shared.MONGODB_URI);
    await client.db(shared.MONGODB_DB).dropDatabase();
    await client.close();
  }
}
