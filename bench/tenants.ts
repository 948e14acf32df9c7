// Many tenants on one node (issue 46): N anonymous boards provisioned through the API
// (POST /api/accounts/anon-provision), each with 6 items and one claim → submit, all kept active
// at once. Reads the node's RSS (VmRSS) before and after, once it stops growing, and prints it
// per active board; and the claim p50 on a fresh board before and after, beside them.
// One node (bench/node.ts: embedded store, shipped defaults, LOG_LEVEL info, its log to a file);
// the address and board budgets scaled out of the load's way by the env the benches pass.
//   TENANTS=10000 (default) boards; TENANTS_CONCURRENCY=16 provisions at a time; TENANTS_STATUS=1
//   has each board's agent read GET /api/status once as well (a node keeps each board's body).
//   TENANTS_SNAPSHOT=<dir>: heap snapshots of the node into <dir>, before and after the boards (for
//   a diff per constructor; the node starts with --heapsnapshot-signal).
//   TENANTS_SMAPS=1 prints the node's most resident file mappings before and after.
//   TENANTS_DATA_DIR=<dir>: the node's store there (kept after the run), and what the boards added to
//   each LMDB database printed per board (store/embedded/stats.ts).
// `npx tsx bench/tenants.ts`
import { Agent } from 'node:http';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { formatStats, statsGrowth, storeStats } from '../store/embedded/stats.js';
import { client } from './board.js';
import { startNode, type BenchNode } from './node.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A field of /proc/<pid>/status in KB: VmRSS, and its parts RssAnon (heap, malloc) and RssFile (mapped files: the embedded store's map). */
const statusKb = (pid: number, field = 'VmRSS'): number =>
  Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
const rssKb = (pid: number): number => statusKb(pid);

/**
 * RSS once it settles: readings a second apart, from 10 s on, until five in a row lie within
 * 512 KB of each other (at most 60 s). The wait lets the node's idle-time collection run; no GC
 * is forced, RSS is taken as it is.
 */
async function settledRssKb(pid: number): Promise<number> {
  const readings: number[] = [];
  for (let i = 0; i < 60; i++) {
    await sleep(1000);
    readings.push(rssKb(pid));
    const last = readings.slice(-5);
    if (i >= 10 && Math.max(...last) - Math.min(...last) < 512) break;
  }
  return readings.at(-1)!;
}

/** The node's file mappings with the most resident KB (from /proc/<pid>/smaps): path, size and Rss, largest first. */
function fileMappings(pid: number, top = 8): string {
  const rows: { path: string; sizeKb: number; rssKb: number }[] = [];
  let current: (typeof rows)[number] | null = null;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head) {
      current = head[1]?.startsWith('/') ? { path: head[1], sizeKb: 0, rssKb: 0 } : null;
      if (current) rows.push(current);
      continue;
    }
    const field = /^(Size|Rss):\s+(\d+) kB/.exec(line);
    if (field && current) current[field[1] === 'Size' ? 'sizeKb' : 'rssKb'] = Number(field[2]);
  }
  return rows
    .sort((a, b) => b.rssKb - a.rssKb)
    .slice(0, top)
    .map((r) => `  ${r.rssKb} KB resident of ${r.sizeKb} KB mapped: ${r.path}`)
    .join('\n');
}

/** Signals the node for a heap snapshot (into `dir`) and waits until it is written. */
async function heapSnapshot(pid: number, dir: string): Promise<string> {
  const snapshots = () => new Set(readdirSync(dir).filter((f) => f.endsWith('.heapsnapshot')));
  const before = snapshots();
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 1200; i++) {
    await sleep(500);
    const made = [...snapshots()].find((f) => !before.has(f));
    if (!made) continue;
    const size = statSync(join(dir, made)).size;
    await sleep(1000);
    if (size > 0 && statSync(join(dir, made)).size === size) return join(dir, made);
  }
  throw new Error('no heap snapshot');
}

const percentile = (ms: number[], p: number): number => {
  const sorted = [...ms].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
};

/** To a tenth: a cut of a few hundred bytes a board shows (a whole KB hides it). */
const tenth = (n: number): number => Math.round(n * 10) / 10;

type Answer = { status: number; body: Record<string, unknown> };
type Call = (method: string, path: string, body?: unknown) => Promise<Answer>;

/** A keep-alive JSON client, one socket. */
function expect(res: Answer, status: number, what: string): Answer {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res;
}

/** How long each anon-provision took, in ms (the tenants' own, not the probes'). */
const provisionMs: number[] = [];

/** A new anonymous board; its agent's client (on `agent`, the socket pool of the provisioning worker). */
async function anonymousBoard(url: string, agent: Agent, timed = false): Promise<Call> {
  const anon = client(url, {}, agent);
  const t = performance.now();
  const made = expect(await anon('POST', '/api/accounts/anon-provision', {}), 201, 'anon-provision');
  if (timed) provisionMs.push(performance.now() - t);
  return client(url, { authorization: `Bearer ${String(made.body.secret)}` }, agent);
}

/** One tenant: a board of `items` items, one claim → submit on it (and a status read, with TENANTS_STATUS). */
async function tenant(url: string, agent: Agent, items = 6, timed = false): Promise<void> {
  const call = await anonymousBoard(url, agent, timed);
  expect(
    await call('POST', '/api/items/batch', {
      items: Array.from({ length: items }, (_, i) => ({ title: `item ${i}`, priority: i % 5 })),
    }),
    201,
    'batch',
  );
  const lease = expect(await call('POST', '/api/claim', {}), 200, 'claim');
  expect(await call('POST', '/api/submit', { leaseId: lease.body.leaseId, head: 'abcdef1' }), 200, 'submit');
  if (process.env.TENANTS_STATUS) expect(await call('GET', '/api/status'), 200, 'status');
}

/** Claim latency on a fresh board of `cycles` items: claim → submit, `cycles` times; the claims' p50 in ms. */
async function claimP50(url: string, cycles = 200): Promise<number> {
  const call = await anonymousBoard(url, new Agent({ keepAlive: true, maxSockets: 1 }));
  expect(
    await call('POST', '/api/items/batch', {
      items: Array.from({ length: cycles }, (_, i) => ({ title: `probe ${i}`, priority: i % 5 })),
    }),
    201,
    'batch',
  );
  const times: number[] = [];
  for (let i = 0; i < cycles; i++) {
    const t = performance.now();
    const lease = expect(await call('POST', '/api/claim', {}), 200, 'claim');
    times.push(performance.now() - t);
    expect(await call('POST', '/api/submit', { leaseId: lease.body.leaseId, head: 'abcdef1' }), 200, 'submit');
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

export interface TenantsReport {
  boards: number;
  /** Tenants set up a second: each an anon-provision, a batch of items, a claim and a submit (not provisions alone). */
  provisionedPerSecond: number;
  /** The anon-provision calls' own latency: p50 and p99 in ms, under TENANTS_CONCURRENCY tenants at a time. */
  provisionP50Ms: number;
  provisionP99Ms: number;
  rssBeforeMb: number;
  rssAfterMb: number;
  kbPerBoard: number;
  /** Of kbPerBoard: anonymous memory (the JS heap, malloc) and mapped files (the embedded store's LMDB map). */
  anonKbPerBoard: number;
  fileKbPerBoard: number;
  claimP50BeforeMs: number;
  claimP50AfterMs: number;
}

export async function tenants(
  boards = Number(process.env.TENANTS ?? 10_000),
  concurrency = Number(process.env.TENANTS_CONCURRENCY ?? 16),
): Promise<TenantsReport> {
  const snapshotDir = process.env.TENANTS_SNAPSHOT;
  const flags = snapshotDir ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshotDir}`] : [];
  const dataDir = process.env.TENANTS_DATA_DIR;
  const node: BenchNode = await startNode(
    { BOARD_RATE_SCALE: '10000', ...(dataDir ? { DATA_DIR: dataDir } : {}) },
    flags,
    'file',
  );
  try {
    // Warm the node (modules, JIT) with a few boards before the first reading.
    for (let i = 0; i < 20; i++) await tenant(node.url, new Agent({ keepAlive: true, maxSockets: 1 }));
    const claimP50BeforeMs = await claimP50(node.url);
    const rssBefore = await settledRssKb(node.pid);
    const [anonBefore, fileBefore] = [statusKb(node.pid, 'RssAnon'), statusKb(node.pid, 'RssFile')];
    const storeBefore = dataDir ? storeStats(dataDir) : null;
    if (process.env.TENANTS_SMAPS) console.log(`file mappings before:\n${fileMappings(node.pid)}`);
    if (snapshotDir) console.log(`heap before: ${await heapSnapshot(node.pid, snapshotDir)}`);
    let next = 0;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        while (next < boards) {
          next++;
          await tenant(node.url, agent, 6, true);
        }
        agent.destroy();
      }),
    );
    const provisionedPerSecond = boards / ((performance.now() - start) / 1000);
    const rssAfter = await settledRssKb(node.pid);
    const [anonAfter, fileAfter] = [statusKb(node.pid, 'RssAnon'), statusKb(node.pid, 'RssFile')];
    if (process.env.TENANTS_SMAPS) console.log(`file mappings after:\n${fileMappings(node.pid)}`);
    if (storeBefore) console.log(formatStats(statsGrowth(storeBefore, storeStats(dataDir!)), boards));
    const claimP50AfterMs = await claimP50(node.url);
    if (snapshotDir) {
      console.log(`heap after: ${await heapSnapshot(node.pid, snapshotDir)}`);
      console.log(
        `RSS after the snapshot's full GC: ${Math.round((rssKb(node.pid) - rssBefore) / boards)} KB per board`,
      );
    }
    const report: TenantsReport = {
      boards,
      provisionedPerSecond: Math.round(provisionedPerSecond),
      provisionP50Ms: Number(percentile(provisionMs, 0.5).toFixed(1)),
      provisionP99Ms: Number(percentile(provisionMs, 0.99).toFixed(1)),
      rssBeforeMb: Math.round(rssBefore / 1024),
      rssAfterMb: Math.round(rssAfter / 1024),
      kbPerBoard: tenth((rssAfter - rssBefore) / boards),
      anonKbPerBoard: tenth((anonAfter - anonBefore) / boards),
      fileKbPerBoard: tenth((fileAfter - fileBefore) / boards),
      claimP50BeforeMs: Number(claimP50BeforeMs.toFixed(2)),
      claimP50AfterMs: Number(claimP50AfterMs.toFixed(2)),
    };
    return report;
  } finally {
    await node.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await tenants();
  console.log(
    `${r.boards} anonymous boards (6 items, one claim → submit each${process.env.TENANTS_STATUS ? ', a status read' : ''}) set up at ${r.provisionedPerSecond}/s ` +
      `(anon-provision p50 ${r.provisionP50Ms} ms, p99 ${r.provisionP99Ms} ms): ` +
      `RSS ${r.rssBeforeMb} → ${r.rssAfterMb} MB, ${r.kbPerBoard} KB per active board ` +
      `(${r.anonKbPerBoard} KB anonymous, ${r.fileKbPerBoard} KB the store's mapped file); ` +
      `claim p50 on a fresh board ${r.claimP50BeforeMs} ms before, ${r.claimP50AfterMs} ms after`,
  );
}
