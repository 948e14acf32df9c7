// npx tsx bench/commit-callback.ts [--rounds=N] [--cycles=N]: the embedded store's board commit on
// its own, in this process: CPU µs inside the commit's transaction callback (what runs on the main
// thread while LMDB's writer waits: encoding, compressing and putting the header, the entry and the
// events) and the bytes each kind of value takes as stored, for claim → submit commits shaped as
// the board actor writes them (the records below copy a tenants bench board's).
// STORE_MODULE names the openEmbeddedStore to measure (default the current one; its writer.js
// beside it is timed), so an older commit's tree can be measured by the same file: A/B. Several,
// comma-separated, are measured in one process, each round taking each in turn (the order rotated
// every round): the machine's drift then falls on all of them alike.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  newBoardRecord,
  type BoardRecord,
  type EventRecord,
  type Store,
  type StoredItem,
} from '../store/ports/store.js';
import { storeStats } from '../store/embedded/stats.js';

const arg = (name: string, fallback: number): number =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const ROUNDS = arg('rounds', 3);
const CYCLES = arg('cycles', 200);
const BOARDS = 32;
const ITEMS = 6;

type Open = (dir: string) => Promise<Store>;
const moduleNames = (process.env.STORE_MODULE ?? '../store/embedded/index.js').split(',');

// Times every write's callback (CPU, less what reading it costs): the commit phase's are the commits'.
let timing = false;
let callbackCpu = 0;
let callbacks = 0;

/** The openEmbeddedStore `moduleName` exports, its Writer's callbacks timed. */
async function load(moduleName: string): Promise<Open> {
  const specifier = isAbsolute(moduleName) ? pathToFileURL(moduleName).href : new URL(moduleName, import.meta.url).href;
  const { openEmbeddedStore } = (await import(specifier)) as { openEmbeddedStore: Open };
  const writerModule = new URL('writer.js', new URL('.', specifier)).href.replace(/\.js$/, '.ts');
  const { Writer } = (await import(writerModule)) as {
    Writer: { prototype: { write: (change: () => unknown) => Promise<unknown> } };
  };
  const write = Writer.prototype.write;
  Writer.prototype.write = function (this: unknown, change: () => unknown) {
    return write.call(this, () => {
      if (!timing) return change();
      // Process CPU (getrusage): LMDB's writer thread waits meanwhile, so it is this thread's.
      const before = process.cpuUsage();
      try {
        return change();
      } finally {
        const used = process.cpuUsage(before);
        callbackCpu += used.user + used.system;
        callbacks++;
      }
    });
  };
  return openEmbeddedStore;
}

/**
 * CPU the main thread alone has used, in µs (Linux: /proc/self/task/<pid>/stat, clock ticks), null
 * elsewhere: a store that queues its writes on LMDB's thread spends no callback, and process CPU
 * counts that thread too.
 */
function mainThreadMicros(): number | null {
  try {
    const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
  } catch {
    return null;
  }
}

/** What measuring a callback costs by itself (two reads of the process's CPU), taken off each. */
function measuringMicros(): number {
  const n = 20_000;
  const t = performance.now();
  for (let i = 0; i < n; i++) process.cpuUsage(process.cpuUsage());
  return ((performance.now() - t) * 1000) / n;
}

// ---------------------------------------------------------------------------------------------
// Records as the board actor writes them

const iso = (ms: number) => new Date(ms).toISOString();
const COUNTS = {
  pending: 0,
  ready: 5,
  claimed: 1,
  awaiting_verify: 0,
  verifying: 0,
  done: 0,
  blocked: 0,
  cancelled: 0,
};

function item(n: number, at: number, state: string, agent: string | null, lease: unknown, submission: unknown) {
  return {
    title: `item ${n}`,
    description: '',
    type: 'task',
    priority: n % 5,
    parentId: null,
    dependsOn: [],
    verify: 'none',
    maxAttempts: 3,
    criteria: [],
    doctrine: [],
    spec: [],
    labels: [],
    workId: `W-${n}`,
    rank: null,
    state,
    life: {
      verify: 'none',
      attempts: 0,
      maxAttempts: 3,
      lease,
      submission,
      verifications: [],
      workHolders: agent ? [agent] : [],
      finding: null,
      overridden: null,
      blockedReason: null,
    },
    progress: null,
    endedLeases: [],
    createdAt: at - 100,
    updatedAt: at,
    version: state === 'ready' ? 1 : state === 'claimed' ? 2 : 3,
    readyAt: at - 100,
  };
}

function event(boardId: string, seq: number, type: string, actor: string, workId: string, at: number, data: object) {
  return { _id: `${boardId}:${seq}`, boardId, seq, type, actor, workId, at, data, version: 1 } as EventRecord;
}

/** A claim (odd) or a submit (even) of item `n`: the entry, its two events and the header's set. */
function commitOf(boardId: string, agent: string, n: number, seq: number, claim: boolean, at: number) {
  const workId = `W-${n}`;
  const lease = { leaseId: randomUUID(), holder: agent, purpose: 'work', fencingToken: n, grantedAt: at };
  const submission = { head: 'abcdef1', by: agent, at };
  const entry = claim ? item(n, at, 'claimed', agent, lease, null) : item(n, at, 'done', agent, null, submission);
  const publicLease = { holder: agent, purpose: 'work', fencingToken: n, expiresAt: iso(at + 900_000) };
  const patch = claim
    ? { workId, version: 2, state: 'claimed', lease: publicLease, updatedAt: iso(at) }
    : {
        workId,
        version: 3,
        state: 'done',
        lease: null,
        submission: { ...submission, at: iso(at) },
        updatedAt: iso(at),
      };
  const events = claim
    ? [
        event(boardId, seq + 1, 'lease.granted', agent, workId, at, { lease: publicLease, item: patch }),
        event(boardId, seq + 2, 'item.state', agent, workId, at, { from: 'ready', to: 'claimed', item: patch }),
      ]
    : [
        event(boardId, seq + 1, 'item.submitted', agent, workId, at, { head: 'abcdef1', by: agent, item: patch }),
        event(boardId, seq + 2, 'item.state', agent, workId, at, { from: 'claimed', to: 'done', item: patch }),
      ];
  const day = iso(at).slice(0, 10);
  const set: Partial<BoardRecord> = {
    commitId: randomUUID(),
    nextWorkSeq: ITEMS + 1,
    nextFencingToken: n + 1,
    lastSeq: seq + 2,
    nextDeadline: claim ? at + 900_000 : null,
    outbox: [events[1]!],
    counts: COUNTS,
    entries: ITEMS,
    stats: {
      days: {
        [day]: {
          done: n,
          grants: n,
          expiries: 0,
          verdicts: 0,
          passes: 0,
          readyToDone: { 0: n },
          counts: COUNTS,
          agentsPeak: 1,
        },
      },
      active: { [agent]: at },
    },
  };
  return { set, entry: entry as StoredItem, events };
}

// ---------------------------------------------------------------------------------------------

interface Figures {
  callbackMicros: number;
  mainMicros: number;
  cpuMicros: number;
  commitsPerSecond: number;
  bytes: Record<string, number>;
}

async function round(openEmbeddedStore: Open): Promise<Figures> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-commit-callback-'));
  try {
    const store = await openEmbeddedStore(dir);
    const boards = Array.from({ length: BOARDS }, () => ({ id: randomUUID(), agent: `agent:${randomUUID()}` }));
    const t0 = Date.now();
    for (const { id, agent } of boards) {
      await store.boards.insert(newBoardRecord(id));
      const items = Array.from({ length: ITEMS }, (_, i) => item(i + 1, t0, 'ready', null, null, null) as StoredItem);
      const created = items.map((it, i) =>
        event(id, i + 1, 'item.created', agent, it.workId, t0, {
          title: `item ${i}`,
          state: 'ready',
          dependsOn: [],
          item: it,
        }),
      );
      await store.boards.commit(
        id,
        1,
        { lastSeq: ITEMS, nextWorkSeq: ITEMS + 1 },
        { put: items, removed: [] },
        created,
      );
    }
    timing = true;
    callbackCpu = 0;
    callbacks = 0;
    const cpu = process.cpuUsage();
    const main = mainThreadMicros();
    const start = performance.now();
    await Promise.all(
      boards.map(async ({ id, agent }) => {
        let version = 2;
        let seq = ITEMS;
        for (let c = 0; c < CYCLES; c++) {
          const claim = c % 2 === 0;
          const { set, entry, events } = commitOf(id, agent, (Math.floor(c / 2) % ITEMS) + 1, seq, claim, t0 + c);
          if (!(await store.boards.commit(id, version, set, { put: [entry], removed: [] }, events)))
            throw new Error(`commit refused on ${id}`);
          version++;
          seq += 2;
        }
      }),
    );
    const seconds = (performance.now() - start) / 1000;
    const used = process.cpuUsage(cpu);
    const mainUsed = main === null ? NaN : mainThreadMicros()! - main;
    timing = false;
    const commits = BOARDS * CYCLES;
    const measuring = measuringMicros();
    // A store that queues its commits on LMDB's write thread runs no callback for them.
    if (callbacks !== commits && callbacks !== 0)
      throw new Error(`timed ${callbacks} callbacks: the Writer patched is not the store's`);
    await store.close();
    const bytes: Record<string, number> = {};
    for (const db of storeStats(dir).dbs)
      if (['boards', 'boards.entries', 'events'].includes(db.name)) bytes[db.name] = db.valueBytes / db.entries;
    return {
      callbackMicros: callbacks ? callbackCpu / commits - measuring : 0,
      // Less what timing the callbacks cost this thread.
      mainMicros: (mainUsed - callbacks * measuring) / commits,
      cpuMicros: (used.user + used.system) / commits,
      commitsPerSecond: commits / seconds,
      bytes,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const spread = (xs: number[], digits = 1): string => {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[0]!.toFixed(digits)} / ${s[Math.floor(s.length / 2)]!.toFixed(digits)} / ${s.at(-1)!.toFixed(digits)}`;
};

const stores = await Promise.all(
  moduleNames.map(async (name) => ({ name, open: await load(name), all: [] as Figures[] })),
);
console.log(`${BOARDS} boards × ${CYCLES} commits (claim, submit), ${ROUNDS} rounds`);
for (let r = 0; r < ROUNDS; r++) {
  for (let k = 0; k < stores.length; k++) {
    const store = stores[(r + k) % stores.length]!;
    const f = await round(store.open);
    store.all.push(f);
    process.stderr.write(
      `  .. round ${r + 1}${stores.length > 1 ? ` (${store.name})` : ''}: ${f.callbackMicros.toFixed(1)} µs callback, ${f.mainMicros.toFixed(0)} µs main thread, ${f.cpuMicros.toFixed(0)} µs CPU, ${f.commitsPerSecond.toFixed(0)} commits/s\n`,
    );
  }
}
for (const { name, all } of stores) {
  console.log(`store: ${name}`);
  console.log(`commit callback, µs per commit (min / median / max)   ${spread(all.map((f) => f.callbackMicros))}`);
  console.log(`main thread CPU, µs per commit                      ${spread(all.map((f) => f.mainMicros))}`);
  console.log(`process CPU, µs per commit                          ${spread(all.map((f) => f.cpuMicros))}`);
  console.log(
    `commits/s                                           ${spread(
      all.map((f) => f.commitsPerSecond),
      0,
    )}`,
  );
  for (const name of Object.keys(all[0]!.bytes))
    console.log(`${`bytes per value as stored, ${name}`.padEnd(52)}${spread(all.map((f) => f.bytes[name]!))}`);
}
