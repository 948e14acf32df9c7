// Splits a V8 .cpuprofile (node --cpu-prof) of our node into the parts of a request, over a window.
//   npx tsx bench/threads-prototype/analyse.ts FILE.cpuprofile [fromMicros toMicros] [--top=N]
// The window is CLOCK_MONOTONIC µs (profile.ts prints the claim → submit window in that clock).
// A sample is charged to the first frame, from the leaf up, that names a part: a library (uWS,
// zod, pino, lmdb/msgpackr, ...) or a directory of ours; V8's own (GC, program) and idle apart.
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const top = Number(process.argv.find((a) => a.startsWith('--top='))?.slice(6) ?? 25);
const p = JSON.parse(readFileSync(args[0]!, 'utf8')) as Profile;
const from = args[1] ? Number(args[1]) : -Infinity;
const to = args[2] ? Number(args[2]) : Infinity;

const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

/** The part a frame names, or null when it names none (a native or unnamed frame: look further up). */
function part(n: Node): string | null {
  const { url, functionName: f } = n.callFrame;
  if (!url) {
    if (f === '(garbage collector)') return 'V8: garbage collector';
    if (f === '(idle)') return 'idle';
    if (f === '(program)') return 'V8: program (native, unattributed)';
    if (f === '(root)') return 'V8: root';
    return null;
  }
  if (url.includes('uWebSockets.js')) return 'uWS (JS side)';
  if (url.includes('/zod/')) return 'zod validation';
  if (/\/(pino|sonic-boom|pino-std-serializers|fast-redact|quick-format-unescaped|thread-stream)\//.test(url))
    return 'logging (pino)';
  if (url.includes('/msgpackr/')) return 'store: msgpackr encode/decode';
  if (url.includes('/lmdb/')) return 'store: lmdb-js';
  if (url.includes('/xstate/')) return 'machine: xstate';
  if (url.includes('/node_modules/')) return `lib: ${/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1] ?? url}`;
  const m = /\/((?:src|machines|actors|store|bench)\/.*)$/.exec(url);
  const path = m?.[1] ?? url;
  if (path.startsWith('node:') || url.startsWith('node:')) return null; // node internals: charge the caller
  if (path.startsWith('machines/')) return 'machine: machines/ (decide, table, step)';
  if (path.startsWith('actors/')) return 'board actor: actors/';
  if (path.startsWith('store/')) return 'store: store/embedded (ours)';
  if (path.startsWith('bench/threads-prototype/')) return 'prototype: bench/threads-prototype (front, protocol)';
  if (path.startsWith('src/http/uws/')) return 'http: src/http/uws (transport)';
  if (path.startsWith('src/http/')) return 'http: src/http (pipeline)';
  if (path.startsWith('src/auth/')) return 'auth: src/auth';
  if (path.startsWith('src/ratelimit/')) return 'rate limits: src/ratelimit';
  if (path.startsWith('src/routes/')) return 'routes: src/routes (handlers)';
  if (path.startsWith('src/board/')) return 'board: src/board (access, commands)';
  if (path.startsWith('src/cluster/')) return 'board: src/cluster (router)';
  if (path.startsWith('src/ws/') || path.startsWith('src/bus/')) return 'publish: src/ws, src/bus';
  if (path.startsWith('src/admin/') || path.startsWith('src/metrics/')) return 'watch/metrics: src/admin, src/metrics';
  if (path.startsWith('src/errors/')) return 'errors: src/errors';
  if (path.startsWith('src/server/')) return 'server: src/server';
  return `ours: ${path.split('/').slice(0, 2).join('/')}`;
}
/** What native frame a sample's leaf is, when it is one (JSON, crypto, ...), for the second table. */
function leafNative(n: Node): string | null {
  return n.callFrame.url ? null : n.callFrame.functionName || '(anonymous native)';
}

const parts = new Map<string, number>();
const natives = new Map<string, number>();
const selfFn = new Map<string, number>();
const partOf = new Map<number, string>();
function partOfNode(id: number): string {
  const cached = partOf.get(id);
  if (cached) return cached;
  let cur: number | undefined = id;
  let found = 'unattributed (node internals only)';
  while (cur !== undefined) {
    const x = part(byId.get(cur)!);
    if (x) {
      found = x;
      break;
    }
    cur = parent.get(cur);
  }
  partOf.set(id, found);
  return found;
}

let t = p.startTime;
let total = 0;
for (let i = 0; i < p.samples.length; i++) {
  t += p.timeDeltas[i]!;
  if (t < from || t > to) continue;
  const dt = p.timeDeltas[i + 1] ?? 0;
  const id = p.samples[i]!;
  const n = byId.get(id)!;
  const k = partOfNode(id);
  parts.set(k, (parts.get(k) ?? 0) + dt);
  total += dt;
  const nat = leafNative(n);
  if (nat) natives.set(`${nat}  [in ${k}]`, (natives.get(nat) ?? 0) + dt);
  const fn = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.replace(/^.*?\/((?:src|machines|actors|store|bench|node_modules)\/)/, '$1')}:${n.callFrame.lineNumber + 1}`;
  selfFn.set(fn, (selfFn.get(fn) ?? 0) + dt);
}
const busy = total - (parts.get('idle') ?? 0);
const show = (m: Map<string, number>, n: number, title: string) => {
  console.log(`\n${title}`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, n))
    console.log(
      `  ${((v / total) * 100).toFixed(1).padStart(5)}% of wall  ${k === 'idle' ? '     ' : `${((v / busy) * 100).toFixed(1).padStart(5)}%`} of busy  ${k}`,
    );
};
console.log(
  `${args[0]}: ${(total / 1e6).toFixed(2)} s sampled in the window, busy ${((busy / total) * 100).toFixed(1)}% (idle ${(((parts.get('idle') ?? 0) / total) * 100).toFixed(1)}%)`,
);
show(parts, 40, 'by part (a sample charged to the innermost frame that names one)');
show(selfFn, top, `self time, top ${top} frames`);
