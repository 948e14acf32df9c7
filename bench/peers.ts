// npx tsx bench/peers.ts [--quick]: our server beside its peers on this machine, every server in a
// process of its own (the peers are this file re-run with --serve) and the load from this one.
//  1. Small JSON under wrk -t1 -c32 (after an uncounted warm-up second): bare uWebSockets.js,
//     Fastify 5 and node:http serving {"ok":true}, and our GET /healthz and GET /api/status on a
//     200-item board, as agents read it: workspace (Bearer) tokens, 32 of them taken in turn.
//  2. Queue throughput: BullMQ, 5,000 jobs added with addBulk, then a Worker of concurrency 32,
//     on a redis-server of our own with appendfsync always. Timed as our claim → submit is
//     (bench/clock.ts): jobs/s from worker.run() to the last completion, the jobs added and the
//     worker connected before the clock; the addBulk timed on its own, as our item creation is.
//  3. Fan-out: 1,000 WebSocket clients subscribed, 10 senders posting shouts of ~200 bytes over
//     HTTP: bare uWS app.publish, a `ws` server broadcasting, and our /api/ws with POST /api/shouts.
//     Deliveries per second (first send to last receipt) and server CPU per delivery (utime+stime
//     from /proc/<pid>/stat, the same reading for every server).
//  4. Memory per idle socket: server RSS with 1,000 idle WebSockets minus RSS before, / 1,000.
// Each measurement is an exported function returning numbers (bench/engine.ts runs them in
// interleaved rounds); main() prints one round of them and our ratios. Our server runs at the
// shipped LOG_LEVEL (info, a line per request) into a log file, with BOARD_RATE_SCALE=10000 so
// that the plan's per-principal budgets never answer 429 under the load.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, realpathSync, rmSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'bullmq';
import WebSocket from 'ws';
import { cpuMicros, timed } from './clock.js';
import { freePort } from './free-port.js';
import { ownerAndAgent, served, socketCredentials, startNode, tokenFor, type BenchNode } from './node.js';

const SELF = fileURLToPath(import.meta.url);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// Child processes: every one we start is killed when this process exits, however it exits.

const live = new Set<ChildProcess>();
const ourPids = new Set<number>();
const tempDirs = new Set<string>();
let exitHooked = false;

/** Kills every child still running when this process exits (a signal exits through here too) and removes our temp dirs. */
function hookExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  process.once('exit', () => {
    for (const c of live) c.kill('SIGKILL');
    for (const pid of ourPids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
}

function track(child: ChildProcess): ChildProcess {
  hookExit();
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** The environment our server runs with beside the peers: the shipped defaults, plan budgets scaled out of the load's way. */
export const OURS_ENV = { BOARD_RATE_SCALE: '10000' } as const;

/** Our server (src/main.ts in its own process, bench/node.ts, its log to a file), killed with the rest if we die first. */
async function withOurs<T>(
  run: (node: BenchNode) => Promise<T>,
  nodeFlags: string[] = [],
  env: Record<string, string> = OURS_ENV,
): Promise<T> {
  hookExit();
  const node = await startNode({ ...env }, nodeFlags, 'file');
  ourPids.add(node.pid);
  try {
    return await run(node);
  } finally {
    await node.stop();
    ourPids.delete(node.pid);
  }
}

async function tempDir(prefix: string): Promise<string> {
  hookExit();
  const dir = await mkdtemp(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

async function removeTempDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

const rssBytes = (pid: number): number =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

/** The median of `n` RSS readings `gapMs` apart. */
async function settledRss(pid: number, n = 5, gapMs = 200): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    samples.push(rssBytes(pid));
    if (i < n - 1) await sleep(gapMs);
  }
  return samples.sort((a, b) => a - b)[Math.floor(n / 2)]!;
}

// ---------------------------------------------------------------------------------------------
// The peer servers (this file with --serve KIND PORT): GET /x answers {"ok":true}; the uws and ws
// ones also take WebSockets on /ws (a {"type":"subscribe",...} message subscribes, as on ours) and
// POST /publish {"text"} sends every subscriber a message shaped like our shout message.

export type PeerKind = 'uws' | 'fastify' | 'node-http' | 'ws';
const PEER_BOARD = 'p-0123456789abcdef01234567';
const SMALL_JSON = '{"ok":true}';

async function startPeer(kind: PeerKind): Promise<BenchNode> {
  const port = await freePort();
  const child = track(
    spawn(process.execPath, ['--import', 'tsx', SELF, '--serve', kind, String(port)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  return served(child, `http://127.0.0.1:${port}`, '/x', `peer ${kind}`);
}

let published = 0;
function shoutMessage(body: Buffer): string {
  const { text } = JSON.parse(body.toString('utf8')) as { text: string };
  const at = Date.now();
  const id = `${PEER_BOARD}:${at.toString(36).padStart(10, '0')}:${(published++).toString(16).padStart(8, '0')}`;
  return JSON.stringify({
    type: 'shout',
    boardId: PEER_BOARD,
    shout: {
      id,
      from: 'agent:peer-bench-sender',
      text,
      kind: 'info',
      workId: null,
      to: null,
      at: new Date(at).toISOString(),
    },
  });
}
const isSubscribe = (text: string): boolean => {
  try {
    return (JSON.parse(text) as { type?: unknown }).type === 'subscribe';
  } catch {
    return false;
  }
};
const SUBSCRIBED = JSON.stringify({ type: 'subscribed', boardId: PEER_BOARD, topics: ['shouts'] });

async function serve(kind: PeerKind, port: number): Promise<void> {
  process.on('disconnect', () => process.exit(0)); // the bench is gone
  if (kind === 'uws') {
    const { default: uWS } = await import('uWebSockets.js');
    const app = uWS.App();
    app.get('/x', (res) => void res.writeHeader('content-type', 'application/json').end(SMALL_JSON));
    app.post('/publish', (res) => {
      const chunks: Buffer[] = [];
      let aborted = false;
      res.onAborted(() => (aborted = true));
      res.onData((chunk, last) => {
        chunks.push(Buffer.from(chunk.slice(0))); // uWS reuses the chunk's memory
        if (!last || aborted) return;
        app.publish('shouts', shoutMessage(Buffer.concat(chunks)), false);
        res.writeHeader('content-type', 'application/json').end(SMALL_JSON);
      });
    });
    app.ws('/ws', {
      maxPayloadLength: 64 * 1024,
      maxBackpressure: 1024 * 1024 + 4096, // as ours
      idleTimeout: 60,
      sendPingsAutomatically: true,
      message(ws, message) {
        if (isSubscribe(Buffer.from(message).toString('utf8'))) {
          ws.subscribe('shouts');
          ws.send(SUBSCRIBED);
        }
      },
    });
    await new Promise<void>((resolve, reject) =>
      app.listen('127.0.0.1', port, (s) => (s ? resolve() : reject(new Error(`uws: cannot listen on ${port}`)))),
    );
  } else if (kind === 'fastify') {
    const { default: Fastify } = await import('fastify');
    const app = Fastify({ logger: false });
    app.get('/x', async () => ({ ok: true }));
    await app.listen({ host: '127.0.0.1', port });
  } else {
    const { WebSocketServer } = await import('ws');
    const subscribers = new Set<WebSocket>();
    const readBody = (req: IncomingMessage) =>
      new Promise<Buffer>((resolve, reject) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => resolve(Buffer.concat(chunks)));
        req.on('error', reject);
      });
    const server = createServer((req, res) => {
      if (req.method === 'POST' && req.url === '/publish' && kind === 'ws') {
        void readBody(req).then((body) => {
          const frame = Buffer.from(shoutMessage(body)); // encoded once for every client
          for (const ws of subscribers) if (ws.readyState === WebSocket.OPEN) ws.send(frame, { binary: false });
          res.writeHead(200, { 'content-type': 'application/json' }).end(SMALL_JSON);
        });
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(SMALL_JSON);
    });
    if (kind === 'ws') {
      const wss = new WebSocketServer({ server, path: '/ws', perMessageDeflate: false });
      wss.on('connection', (ws) => {
        ws.on('message', (data) => {
          if (isSubscribe(String(data))) {
            subscribers.add(ws);
            ws.send(SUBSCRIBED);
          }
        });
        ws.on('close', () => subscribers.delete(ws));
      });
    }
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  }
}

// ---------------------------------------------------------------------------------------------
// 1. Small JSON under wrk.

export interface HttpFigure {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  non2xx: number;
  socketErrors: number;
}

export interface HttpOptions {
  seconds?: number;
  connections?: number;
  /** Sent with every request. */
  headers?: Record<string, string>;
}

const toMs = (value: string, unit: string): number =>
  Number(value) * (unit === 'us' ? 1e-3 : unit === 's' ? 1e3 : unit === 'm' ? 6e4 : 1);

/** wrk against `url`, after a one-second run that is not counted (JIT, connection pools). */
export async function wrk(url: string, options: HttpOptions, script?: string): Promise<HttpFigure> {
  await wrkOnce(url, { ...options, seconds: 1 }, script);
  return wrkOnce(url, options, script);
}

async function wrkOnce(
  url: string,
  { seconds = 5, connections = 32, headers = {} }: HttpOptions,
  script?: string,
): Promise<HttpFigure> {
  const args = [
    '-t1',
    `-c${connections}`,
    `-d${seconds}s`,
    '--latency',
    ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]),
    ...(script ? ['-s', script] : []),
    url,
  ];
  const child = track(spawn('wrk', args, { stdio: ['ignore', 'pipe', 'inherit'] }));
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve, reject) =>
    child
      .once('exit', resolve)
      .once('error', (e: NodeJS.ErrnoException) =>
        reject(
          e.code === 'ENOENT'
            ? new Error('wrk is not installed: the HTTP measures need it (apt-get install -y wrk)')
            : e,
        ),
      ),
  );
  if (code !== 0) throw new Error(`wrk exited ${code} (apt-get install -y wrk):\n${out}`);
  const pct = (p: string) => {
    const m = new RegExp(`\\s${p}%\\s+([\\d.]+)(us|ms|s|m)\\b`).exec(out);
    return m ? toMs(m[1]!, m[2]!) : NaN;
  };
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    requestsPerSecond: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN),
    p50Ms: pct('50'),
    p99Ms: pct('99'),
    requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    socketErrors: socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
  };
}

/** One peer's GET /x under wrk. */
export async function peerSmallJson(kind: Exclude<PeerKind, 'ws'>, options: HttpOptions = {}): Promise<HttpFigure> {
  const peer = await startPeer(kind);
  try {
    return await wrk(`${peer.url}/x`, options);
  } finally {
    await peer.stop();
  }
}

/**
 * Our GET /healthz and GET /api/status under wrk: status on a board of `items` items, each request
 * with one of `tokens` workspace (Bearer) tokens in turn, as a fleet of agents polls it.
 */
export async function oursSmallJson(
  options: HttpOptions = {},
  items = 200,
  tokens = 32,
): Promise<{ healthz: HttpFigure; status: HttpFigure; statusTokens: number; statusItems: number }> {
  return withOurs(async (node) => {
    const owner = await ownerAndAgent(node.url);
    for (let made = 0; made < items; made += 500) {
      const batch = Array.from({ length: Math.min(500, items - made) }, (_, i) => ({
        title: `status item ${made + i}`,
        priority: (made + i) % 5,
      }));
      const res = await fetch(`${node.url}/api/items/batch`, {
        method: 'POST',
        headers: { ...owner.agent, 'content-type': 'application/json' },
        body: JSON.stringify({ items: batch }),
      });
      if (res.status !== 201) throw new Error(`POST /api/items/batch answered ${res.status}: ${await res.text()}`);
    }
    const bearers = [owner.agent.authorization!];
    while (bearers.length < tokens)
      bearers.push(
        (await tokenFor(node.url, owner, owner.projectId, `status-reader-${bearers.length}`)).authorization!,
      );
    for (const authorization of [bearers[0]!, bearers.at(-1)!]) {
      const probe = await fetch(`${node.url}/api/status`, { headers: { authorization } });
      if (probe.status !== 200) throw new Error(`GET /api/status answered ${probe.status}: ${await probe.text()}`);
      await probe.arrayBuffer();
    }
    const dir = await tempDir('bench-peers-wrk-');
    try {
      const script = join(dir, 'status.lua');
      await writeFile(script, rotatingBearers('/api/status', bearers));
      const healthz = await wrk(`${node.url}/healthz`, options);
      const status = await wrk(`${node.url}/api/status`, options, script);
      return { healthz, status, statusTokens: tokens, statusItems: items };
    } finally {
      await removeTempDir(dir);
    }
  });
}

/**
 * GET /api/status flooded past the budget: a node with the shipped budgets (no BOARD_RATE_SCALE),
 * `tokens` Bearer tokens of one workspace, wrk rotating them from the start of a budget window until
 * every token's minute is spent (unmeasured), then measured in the same window; `refused` is the
 * share of the measured answers that were 429.
 */
export async function oursStatusFlood(
  options: HttpOptions = {},
  tokens = 110,
  drainSeconds = 10,
): Promise<HttpFigure & { refused: number }> {
  return withOurs(
    async (node) => {
      const owner = await ownerAndAgent(node.url);
      const bearers = [owner.agent.authorization!];
      while (bearers.length < tokens)
        bearers.push((await tokenFor(node.url, owner, owner.projectId, `flood-${bearers.length}`)).authorization!);
      const dir = await tempDir('bench-peers-flood-');
      try {
        const script = join(dir, 'flood.lua');
        await writeFile(script, rotatingBearers('/api/status', bearers));
        // Budgets count per minute window: drain and measure within one, from its start.
        const probe = await fetch(`${node.url}/api/status`, { headers: { authorization: bearers[0]! } });
        await probe.arrayBuffer();
        const reset = Number(probe.headers.get('x-ratelimit-reset'));
        if (!reset) throw new Error(`GET /api/status answered ${probe.status} without x-ratelimit-reset`);
        await new Promise((r) => setTimeout(r, Math.max(0, reset * 1000 - Date.now()) + 200));
        await wrkOnce(`${node.url}/api/status`, { ...options, seconds: drainSeconds }, script);
        const figure = await wrkOnce(`${node.url}/api/status`, options, script);
        return { ...figure, refused: figure.non2xx / figure.requests };
      } finally {
        await removeTempDir(dir);
      }
    },
    [],
    {},
  );
}

/** A wrk script sending GET `path` with each bearer in turn. */
function rotatingBearers(path: string, bearers: string[]): string {
  return [
    `local bearers = { ${bearers.map((c) => JSON.stringify(c)).join(', ')} }`,
    'local requests = {}',
    'local n = 0',
    'function init(args)',
    `  for k, b in ipairs(bearers) do requests[k] = wrk.format("GET", ${JSON.stringify(path)}, { ["Authorization"] = b }) end`,
    'end',
    'function request()',
    '  n = n + 1',
    '  return requests[(n % #requests) + 1]',
    'end',
    '',
  ].join('\n');
}

export interface SmallJson {
  uws: HttpFigure;
  fastify: HttpFigure;
  nodeHttp: HttpFigure;
  healthz: HttpFigure;
  status: HttpFigure;
  statusTokens: number;
  statusItems: number;
}

/** Measurement 1: every server of it, one after another. */
export async function smallJson(options: HttpOptions = {}): Promise<SmallJson> {
  const uws = await peerSmallJson('uws', options);
  const fastify = await peerSmallJson('fastify', options);
  const nodeHttp = await peerSmallJson('node-http', options);
  return { uws, fastify, nodeHttp, ...(await oursSmallJson(options)) };
}

// ---------------------------------------------------------------------------------------------
// 2. BullMQ on a redis-server with appendfsync always.

export interface QueueFigure {
  jobs: number;
  concurrency: number;
  /** Processing alone: from worker.run() to the last job completed (the jobs added before the clock). */
  jobsPerSecond: number;
  processSeconds: number;
  /** redis-server's CPU over the processing, per job. */
  redisCpuMicrosPerJob: number;
  /** The setup alone: one addBulk of every job, until it resolves. */
  addedPerSecond: number;
  addSeconds: number;
}

function redisPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => (socket.destroy(), resolve(ok));
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d: Buffer) => done(d.toString().startsWith('+PONG')));
  });
}

/** A redis-server of our own on a free port, every write fsynced before it answers (appendfsync always). */
async function durableRedis(): Promise<{ port: number; pid: number; stop(): Promise<void> }> {
  const dir = await tempDir('bench-peers-redis-');
  const port = await freePort();
  const redis = track(
    spawn(
      'redis-server',
      [
        ...['--port', String(port), '--bind', '127.0.0.1', '--dir', dir],
        ...['--appendonly', 'yes', '--appendfsync', 'always', '--save', '', '--daemonize', 'no'],
      ],
      { stdio: 'ignore' },
    ),
  );
  const exited = new Promise((resolve) => redis.once('exit', resolve));
  redis.once('error', () => undefined);
  const stop = async () => {
    redis.kill('SIGTERM');
    await Promise.race([exited, sleep(5000)]);
    await removeTempDir(dir);
  };
  for (let i = 0; !(await redisPing(port)); i++) {
    if (i > 100 || redis.exitCode !== null) {
      await stop();
      throw new Error('redis-server did not start (apt-get install -y redis-server)');
    }
    await sleep(100);
  }
  return { port, pid: redis.pid!, stop };
}

/**
 * Measurement 2, timed as ours is (bench/clock.ts): the jobs are added with one addBulk and the
 * Worker (concurrency `concurrency`) connected before the clock; the clock runs from worker.run()
 * to the last job completed. The addBulk is timed on its own, as our item creation is.
 */
export async function bullmqThroughput({
  jobs = 5000,
  concurrency = 32,
  warmUpJobs = 0,
}: { jobs?: number; concurrency?: number; warmUpJobs?: number } = {}): Promise<QueueFigure> {
  const redis = await durableRedis();
  const { Queue, Worker } = await import('bullmq');
  const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null };
  const name = `bench-${Date.now()}`;
  const queue = new Queue(name, { connection });
  const worker = new Worker(name, async (job) => job.data, { connection, concurrency, autorun: false });
  try {
    if (warmUpJobs > 0) await warmUp(connection, `${name}-warm-up`, warmUpJobs, concurrency);
    await queue.waitUntilReady();
    await worker.waitUntilReady();
    const added = await timed(async (done) => {
      await queue.addBulk(Array.from({ length: jobs }, (_, i) => ({ name: 'job', data: { i } })));
      done(jobs);
    }, redis.pid);
    const processed = await timed((done) => completeAll(worker, jobs, done), redis.pid);
    return {
      jobs,
      concurrency,
      jobsPerSecond: processed.perSecond,
      processSeconds: processed.seconds,
      redisCpuMicrosPerJob: processed.cpuMicrosPerUnit,
      addedPerSecond: added.perSecond,
      addSeconds: added.seconds,
    };
  } finally {
    await worker.close();
    await queue.close();
    await redis.stop();
  }
}

/** `jobs` jobs added and completed on a queue of their own, untimed: the process's JIT compiles the first of them. */
async function warmUp(
  connection: { host: string; port: number; maxRetriesPerRequest: null },
  name: string,
  jobs: number,
  concurrency: number,
): Promise<void> {
  const { Queue, Worker } = await import('bullmq');
  const queue = new Queue(name, { connection });
  const worker = new Worker(name, async (job) => job.data, { connection, concurrency, autorun: false });
  try {
    await queue.addBulk(Array.from({ length: jobs }, (_, i) => ({ name: 'job', data: { i } })));
    await completeAll(worker, jobs, () => undefined);
  } finally {
    await worker.close();
    await queue.obliterate({ force: true });
    await queue.close();
  }
}

/** Runs the worker until `jobs` jobs have completed (`done()` at each), or fails after 180 s. */
async function completeAll(worker: Worker, jobs: number, done: () => void): Promise<void> {
  let completed = 0;
  let allDone!: () => void;
  const finished = new Promise<'done'>((resolve) => (allDone = () => resolve('done')));
  worker.on('completed', () => {
    done();
    if (++completed === jobs) allDone();
  });
  const stopped = worker.run().then(
    () => new Error('the worker stopped'),
    (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
  );
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Error>(
    (resolve) => (timer = setTimeout(() => resolve(new Error('180 s passed')), 180_000)),
  );
  const outcome = await Promise.race([finished, stopped, timeout]);
  clearTimeout(timer);
  if (outcome !== 'done') throw new Error(`BullMQ: ${completed} of ${jobs} jobs completed: ${outcome.message}`);
}

// ---------------------------------------------------------------------------------------------
// 3. Fan-out to 1,000 subscribed sockets.

export interface FanOutFigure {
  clients: number;
  messages: number;
  /** Messages received across all clients (expected clients × messages). */
  deliveries: number;
  expected: number;
  seconds: number;
  deliveriesPerSecond: number;
  /** The server process's CPU time (user + system) over the run, per delivery. */
  serverCpuMicrosPerDelivery: number;
  /** This process's CPU time over wall time: near 1, the clients were the limit. */
  clientCpuShare: number;
  closedEarly: number;
}

export interface FanOutOptions {
  clients?: number;
  senders?: number;
  messagesPerSender?: number;
  /** Characters of shout text. */
  textBytes?: number;
}

const SHOUT_PREFIX = Buffer.from('{"type":"shout"');

interface Clients {
  sockets: WebSocket[];
  deliveries(): number;
  lastReceipt(): number;
  closedEarly(): number;
  /** Resolves when `n` deliveries have arrived in all. */
  reached(n: number): Promise<void>;
  close(): Promise<void>;
}

/** Opens `count` sockets (50 at a time), each sending `subscribe` (if any) and waiting for its answer. */
/** `headers` are each socket's (by its index), or the same for all (peers have no cap per credential). */
type SocketHeaders = Record<string, string> | ((i: number) => Record<string, string>);

async function openClients(
  url: string,
  headers: SocketHeaders,
  count: number,
  subscribe: string | null,
): Promise<Clients> {
  const headersOf = typeof headers === 'function' ? headers : () => headers;
  const sockets: WebSocket[] = [];
  let deliveries = 0;
  let last = 0;
  let closed = 0;
  let closing = false;
  let target = Infinity;
  let onTarget: () => void = () => undefined;
  const one = (i: number) =>
    new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(url, { headers: headersOf(i), perMessageDeflate: false, skipUTF8Validation: true });
      const timer = setTimeout(
        () => (ws.terminate(), reject(new Error(`socket ${sockets.length}: no answer in 20 s`))),
        20_000,
      );
      ws.once('error', (e) => (clearTimeout(timer), reject(e)));
      ws.on('close', () => {
        if (!closing) closed++;
      });
      ws.once('open', () => {
        if (subscribe === null) return (clearTimeout(timer), resolve(ws));
        ws.once('message', (data: Buffer) => {
          clearTimeout(timer);
          if (!data.toString('utf8').includes('"subscribed"'))
            return reject(new Error(`subscribe answered ${data.toString('utf8').slice(0, 300)}`));
          ws.on('message', (m: Buffer) => {
            if (m.compare(SHOUT_PREFIX, 0, SHOUT_PREFIX.length, 0, SHOUT_PREFIX.length) !== 0) return;
            last = performance.now();
            if (++deliveries === target) onTarget();
          });
          resolve(ws);
        });
        ws.send(subscribe);
      });
    });
  try {
    for (let i = 0; i < count; i += 50)
      sockets.push(...(await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, j) => one(i + j)))));
  } catch (e) {
    for (const ws of sockets) ws.terminate();
    throw e;
  }
  return {
    sockets,
    deliveries: () => deliveries,
    lastReceipt: () => last,
    closedEarly: () => closed,
    reached: (n) =>
      deliveries >= n ? Promise.resolve() : new Promise<void>((resolve) => ((target = n), (onTarget = resolve))),
    async close() {
      closing = true;
      await Promise.all(
        sockets.map((ws) =>
          ws.readyState === WebSocket.CLOSED
            ? undefined
            : new Promise<void>((resolve) => {
                const timer = setTimeout(() => (ws.terminate(), resolve()), 5000);
                ws.once('close', () => (clearTimeout(timer), resolve()));
                ws.close();
              }),
        ),
      );
    },
  };
}

const shoutText = (sender: number, n: number, bytes: number) => `peers bench shout ${sender}-${n} `.padEnd(bytes, 'x');

/** Opens the clients, then runs `senders` loops of `send` and times until every client has every message. */
async function fanOutRun(
  pid: number,
  url: string,
  headers: SocketHeaders,
  subscribe: string,
  send: (sender: number, n: number, text: string) => Promise<void>,
  options: FanOutOptions,
): Promise<FanOutFigure> {
  const { clients = 1000, senders = 10, messagesPerSender = 100, textBytes = 200 } = options;
  const messages = senders * messagesPerSender;
  const expected = clients * messages;
  const socks = await openClients(url, headers, clients, subscribe);
  try {
    await sleep(500);
    const cpu0 = cpuMicros(pid);
    const client0 = process.cpuUsage();
    const started = performance.now();
    const all = socks.reached(expected);
    await Promise.all(
      Array.from({ length: senders }, async (_, s) => {
        for (let n = 0; n < messagesPerSender; n++) await send(s, n, shoutText(s, n, textBytes));
      }),
    );
    // Every delivery, or 60 s past the last send with no socket closed meanwhile.
    for (const end = performance.now() + 60_000; performance.now() < end && socks.deliveries() < expected;) {
      await Promise.race([all, sleep(250)]);
      if (socks.closedEarly() > 0) await sleep(1000);
      if (socks.closedEarly() > 0) break;
    }
    const cpu = (cpuMicros(pid) - cpu0) / 1e6;
    const client = process.cpuUsage(client0);
    const deliveries = socks.deliveries();
    const seconds = ((deliveries ? socks.lastReceipt() : performance.now()) - started) / 1000;
    return {
      clients,
      messages,
      deliveries,
      expected,
      seconds,
      deliveriesPerSecond: deliveries / seconds,
      serverCpuMicrosPerDelivery: (cpu * 1e6) / deliveries,
      clientCpuShare: (client.user + client.system) / 1e6 / ((performance.now() - started) / 1000),
      closedEarly: socks.closedEarly(),
    };
  } finally {
    await socks.close();
  }
}

async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<void> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`POST ${url} answered ${res.status}: ${text.slice(0, 300)}`);
}

/** Fan-out through a peer (uws: app.publish to a topic; ws: a loop over the clients). */
export async function peerFanOut(kind: 'uws' | 'ws', options: FanOutOptions = {}): Promise<FanOutFigure> {
  const peer = await startPeer(kind);
  try {
    const subscribe = JSON.stringify({ type: 'subscribe', boardId: PEER_BOARD, topics: ['shouts'] });
    return await fanOutRun(
      peer.pid,
      `${peer.url.replace(/^http/, 'ws')}/ws`,
      {},
      subscribe,
      (_s, _n, text) => postJson(`${peer.url}/publish`, { text }),
      options,
    );
  } finally {
    await peer.stop();
  }
}

/** Fan-out through ours: sockets on the owner's session, shouts from `senders` workspace tokens. */
export async function oursFanOut(options: FanOutOptions = {}): Promise<FanOutFigure> {
  const senders = options.senders ?? 10;
  return withOurs(async (node) => {
    const owner = await ownerAndAgent(node.url);
    const { projectId, agent } = owner;
    const tokens = [
      agent,
      ...(await Promise.all(
        Array.from({ length: senders - 1 }, (_, i) => tokenFor(node.url, owner, projectId, `peers-shouter-${i}`)),
      )),
    ];
    if (tokens.some((t) => !/^Bearer agb_/.test(t.authorization ?? '')))
      throw new Error('a workspace token was not issued');
    const subscribe = JSON.stringify({ type: 'subscribe', boardId: projectId, topics: ['shouts'] });
    const readers = await socketCredentials(node.url, owner, projectId, 'peers-reader', options.clients ?? 1000);
    return fanOutRun(
      node.pid,
      `${node.url.replace(/^http/, 'ws')}/api/ws`,
      readers,
      subscribe,
      (s, _n, text) => postJson(`${node.url}/api/shouts`, { text }, tokens[s]!),
      { ...options, senders },
    );
  });
}

export interface FanOut {
  uws: FanOutFigure;
  ws: FanOutFigure;
  ours: FanOutFigure;
}

/** Measurement 3. */
export async function fanOut(options: FanOutOptions = {}): Promise<FanOut> {
  const uws = await peerFanOut('uws', options);
  const ws = await peerFanOut('ws', options);
  return { uws, ws, ours: await oursFanOut(options) };
}

// ---------------------------------------------------------------------------------------------
// 4. RSS per idle socket.

export interface SocketMemoryFigure {
  sockets: number;
  rssBeforeBytes: number;
  rssAfterBytes: number;
  bytesPerSocket: number;
}

/** Warms the upgrade path with 50 sockets, then reads RSS before and after `count` idle sockets. */
async function idleMemory(
  pid: number,
  url: string,
  headers: SocketHeaders,
  count: number,
): Promise<SocketMemoryFigure> {
  const warm = await openClients(url, headers, 50, null);
  await warm.close();
  await sleep(1000);
  const before = await settledRss(pid);
  const socks = await openClients(url, headers, count, null);
  try {
    await sleep(2000);
    const after = await settledRss(pid);
    return { sockets: count, rssBeforeBytes: before, rssAfterBytes: after, bytesPerSocket: (after - before) / count };
  } finally {
    await socks.close();
  }
}

export async function uwsSocketMemory(count = 1000): Promise<SocketMemoryFigure> {
  const peer = await startPeer('uws');
  try {
    return await idleMemory(peer.pid, `${peer.url.replace(/^http/, 'ws')}/ws`, {}, count);
  } finally {
    await peer.stop();
  }
}

/**
 * Ours; `nodeFlags` such as `--max-semi-space-size=1` keep V8's young generation from growing
 * with the garbage of 1,000 authenticated upgrades, which RSS otherwise counts as if each socket held it.
 */
export async function oursSocketMemory(count = 1000, nodeFlags: string[] = []): Promise<SocketMemoryFigure> {
  return withOurs(async (node) => {
    const owner = await ownerAndAgent(node.url);
    const sockets = await socketCredentials(node.url, owner, owner.projectId, 'peers-idle', Math.max(count, 50));
    return idleMemory(node.pid, `${node.url.replace(/^http/, 'ws')}/api/ws`, sockets, count);
  }, nodeFlags);
}

/** Measurement 4: bare uWS, ours as started, and ours with a 1 MB young generation (what a socket really holds). */
export async function socketMemory(
  count = 1000,
): Promise<{ uws: SocketMemoryFigure; ours: SocketMemoryFigure; oursRetained: SocketMemoryFigure }> {
  const uws = await uwsSocketMemory(count);
  return {
    uws,
    ours: await oursSocketMemory(count),
    oursRetained: await oursSocketMemory(count, ['--max-semi-space-size=1']),
  };
}

// ---------------------------------------------------------------------------------------------
// main: everything, one at a time, and the table.

export interface PeersReport {
  quick: boolean;
  smallJson: SmallJson;
  queue: QueueFigure;
  fanOut: FanOut;
  memory: { uws: SocketMemoryFigure; ours: SocketMemoryFigure; oursRetained: SocketMemoryFigure };
}

export async function main(argv: string[] = process.argv.slice(2)): Promise<PeersReport> {
  const quick = argv.includes('--quick');
  const http: HttpOptions = { seconds: quick ? 2 : 5, connections: 32 };
  const fan: FanOutOptions = { clients: 1000, senders: 10, messagesPerSender: quick ? 20 : 100, textBytes: 200 };
  const began = performance.now();
  const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
  const ms = (n: number) => (Number.isFinite(n) ? `${n < 1 ? n.toFixed(3) : n.toFixed(2)} ms` : 'n/a');
  const log = (s: string) => console.log(s);

  log(
    `bench/peers.ts${quick ? ' --quick' : ''}: node ${process.version}, wrk -t1 -c${http.connections} -d${http.seconds}s, one server at a time; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')} at start`,
  );
  const small = await smallJson(http);
  log(`\n1. Small JSON                              req/s        p50        p99   non-2xx`);
  const row = (name: string, f: HttpFigure) =>
    log(
      `   ${name.padEnd(38)} ${int(f.requestsPerSecond).padStart(7)} ${ms(f.p50Ms).padStart(10)} ${ms(f.p99Ms).padStart(10)}   ${f.non2xx + f.socketErrors}`,
    );
  row('bare uWebSockets.js GET /x', small.uws);
  row('Fastify 5 GET /x', small.fastify);
  row('node:http GET /x', small.nodeHttp);
  row('ours GET /healthz', small.healthz);
  row(`ours GET /api/status (${small.statusItems} items, ${small.statusTokens} Bearer)`, small.status);

  const queue = await bullmqThroughput({ jobs: quick ? 1000 : 5000, concurrency: 32 });
  log(
    `\n2. BullMQ ${queue.jobs.toLocaleString('en-US')} jobs, Worker concurrency ${queue.concurrency}, redis appendfsync always: ${int(queue.jobsPerSecond)} jobs/s processed (timed: from worker.run() to the last completion, ${queue.processSeconds.toFixed(2)} s; jobs added before), ${int(queue.addedPerSecond)} jobs/s added (timed: the one addBulk, ${queue.addSeconds.toFixed(2)} s)`,
  );

  const fans = await fanOut(fan);
  log(
    `\n3. Fan-out, ${fan.clients} sockets, ${fans.ours.messages} messages of ~${fan.textBytes} B text from ${fan.senders} senders`,
  );
  log(
    `                                          deliveries/s   µs CPU/delivery   received/expected   client CPU   closed`,
  );
  const frow = (name: string, f: FanOutFigure) =>
    log(
      `   ${name.padEnd(38)} ${int(f.deliveriesPerSecond).padStart(10)} ${f.serverCpuMicrosPerDelivery.toFixed(2).padStart(17)} ${`${f.deliveries}/${f.expected}`.padStart(19)} ${`${(f.clientCpuShare * 100).toFixed(0)}%`.padStart(12)} ${String(f.closedEarly).padStart(8)}`,
    );
  frow('bare uWS app.publish', fans.uws);
  frow('ws server, loop over clients', fans.ws);
  frow('ours /api/ws + POST /api/shouts', fans.ours);

  const memory = await socketMemory(1000);
  log(`\n4. Idle sockets (1,000)                    RSS before   RSS after   bytes/socket`);
  const mrow = (name: string, m: SocketMemoryFigure) =>
    log(
      `   ${name.padEnd(38)} ${`${(m.rssBeforeBytes / 2 ** 20).toFixed(1)} MB`.padStart(10)} ${`${(m.rssAfterBytes / 2 ** 20).toFixed(1)} MB`.padStart(11)} ${int(m.bytesPerSocket).padStart(14)}`,
    );
  mrow('bare uWebSockets.js', memory.uws);
  mrow('ours', memory.ours);
  mrow('ours, node --max-semi-space-size=1', memory.oursRetained);

  log(
    `\nOurs against the peers                    ours           peer                               peer figure   ours/peer`,
  );
  const ratio = (name: string, ours: number, peer: string, theirs: number, fmt: (n: number) => string = int) =>
    log(
      `   ${name.padEnd(38)} ${fmt(ours).padStart(10)}   ${peer.padEnd(32)} ${fmt(theirs).padStart(12)}   ${(ours / theirs).toFixed(3).padStart(9)}`,
    );
  ratio('GET /healthz req/s', small.healthz.requestsPerSecond, 'bare uWS GET /x', small.uws.requestsPerSecond);
  ratio('GET /healthz p99', small.healthz.p99Ms, 'bare uWS GET /x', small.uws.p99Ms, ms);
  ratio('GET /api/status req/s', small.status.requestsPerSecond, 'Fastify 5 GET /x', small.fastify.requestsPerSecond);
  ratio('GET /api/status p99', small.status.p99Ms, 'Fastify 5 GET /x', small.fastify.p99Ms, ms);
  ratio('fan-out deliveries/s', fans.ours.deliveriesPerSecond, 'bare uWS app.publish', fans.uws.deliveriesPerSecond);
  ratio(
    'fan-out server µs CPU/delivery',
    fans.ours.serverCpuMicrosPerDelivery,
    'bare uWS app.publish',
    fans.uws.serverCpuMicrosPerDelivery,
    (n) => n.toFixed(2),
  );
  ratio('fan-out deliveries/s', fans.ours.deliveriesPerSecond, 'ws server loop', fans.ws.deliveriesPerSecond);
  ratio('idle socket bytes', memory.ours.bytesPerSocket, 'bare uWebSockets.js', memory.uws.bytesPerSocket);
  ratio(
    'idle socket bytes, 1 MB young gen',
    memory.oursRetained.bytesPerSocket,
    'bare uWebSockets.js',
    memory.uws.bytesPerSocket,
  );
  log(
    `   ${'claim→submit per s'.padEnd(38)} ${'(bench/board*)'.padStart(10)}   ${'BullMQ jobs/s processed (÷ this)'.padEnd(32)} ${int(queue.jobsPerSecond).padStart(12)}`,
  );
  log(`\ndone in ${((performance.now() - began) / 1000).toFixed(0)} s`);
  return { quick, smallJson: small, queue, fanOut: fans, memory };
}

const invoked = (() => {
  try {
    return process.argv[1] ? realpathSync(process.argv[1]) : '';
  } catch {
    return '';
  }
})();
if (invoked === SELF) {
  const at = process.argv.indexOf('--serve');
  if (at >= 0) {
    await serve(process.argv[at + 1] as PeerKind, Number(process.argv[at + 2]));
  } else {
    await main().then(
      () => process.exit(0),
      (e: unknown) => {
        console.error(e);
        process.exit(1);
      },
    );
  }
}
