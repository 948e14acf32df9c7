// npx tsx bench/store.ts [--quick]: the embedded store on its own, in this process: durable
// commits/s under 32 concurrent writers, a one-item patch (and a full read) of boards of growing
// size, and an event log at scale (load, activity and `since` pages, memory, re-open time).
// STORE_MODULE names the module whose openEmbeddedStore is measured (default the current one),
// so the same file can run against another implementation, e.g. an older commit's worktree.
// Progress goes to stderr; the table goes to stdout as each figure is measured.
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  newBoardRecord,
  type AccountRecord,
  type BoardRecord,
  type EventRecord,
  type Store,
} from '../store/ports/store.js';

const quick = process.argv.includes('--quick');
const WRITERS = 32;
const COMMIT_SECONDS = quick ? 2 : 5;
const BOARD_SIZES = quick ? [100, 1_000, 10_000] : [100, 1_000, 10_000, 50_000];
const PATCHES = quick ? 100 : 300;
const FULL_READS = quick ? 20 : 50;
const EVENT_BOARDS = 100;
const EVENTS_PER_BOARD = quick ? 1_000 : 10_000;
const LOAD_BATCH = 1_000;
const ACTIVITY_PAGES = quick ? 50 : 200;
const REPLAY_BOARDS = quick ? 5 : 10;
const REPLAY_SPAN = Math.min(5_000, EVENTS_PER_BOARD);
const REPLAY_PAGE = 500;

const moduleName = process.env.STORE_MODULE ?? '../store/embedded/index.js';
const specifier = isAbsolute(moduleName) ? pathToFileURL(moduleName).href : moduleName;
const { openEmbeddedStore } = (await import(specifier)) as { openEmbeddedStore: (dataDir: string) => Promise<Store> };

const root = await mkdtemp(join(tmpdir(), 'bench-store-'));
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    rmSync(root, { recursive: true, force: true });
    process.exit(130);
  });
}

// ---------------------------------------------------------------------------------------------
// Output

const mb = (bytes: number): string => (bytes / 1024 / 1024).toFixed(0);

// Memory is read after a full collection, so garbage from earlier cases does not count.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const memory = (): string => {
  gc();
  const { rss, heapUsed, external } = process.memoryUsage();
  return `${mb(rss)} / ${mb(heapUsed)} / ${mb(external)}`;
};
const progress = (text: string): void => void process.stderr.write(`  .. ${text}\n`);

function row(section: string, metric: string, value: string, unit: string): void {
  console.log(`${section.padEnd(8)} ${metric.padEnd(46)} ${value.padStart(12)}  ${unit}`);
}

function percentiles(samples: number[]): { p50: string; p99: string; n: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!.toFixed(2);
  return { p50: at(0.5), p99: at(0.99), n: sorted.length };
}

function latencyRow(section: string, metric: string, samples: number[]): void {
  const { p50, p99, n } = percentiles(samples);
  row(section, metric, `${p50} / ${p99}`, `ms p50 / p99 (n=${n})`);
}

/** Bytes allocated on disk by the files directly under `dir`. */
async function diskBytes(dir: string): Promise<number> {
  let total = 0;
  for (const f of await readdir(dir)) total += (await stat(join(dir, f))).blocks * 512;
  return total;
}

async function timed<R>(f: () => Promise<R>): Promise<[R, number]> {
  const t = performance.now();
  const r = await f();
  return [r, performance.now() - t];
}

// ---------------------------------------------------------------------------------------------
// Realistic records

const projectId = (i: number): string => `p_${i.toString(36).padStart(4, '0')}k2f9q8x7m3v6c1z5`;
const TYPES = ['item.created', 'item.claimed', 'item.heartbeat', 'item.completed', 'item.released', 'item.commented'];

function event(boardId: string, seq: number, at: number): EventRecord {
  const workId = `W-${(seq % 400) + 1}`;
  return {
    _id: `${boardId}:${seq}`,
    version: 1,
    boardId,
    seq,
    type: TYPES[seq % TYPES.length]!,
    actor: `agent:a_${(seq % 17).toString(36)}q7x2m9k4`,
    workId,
    at,
    data: { workId, fencingToken: seq, note: 'lease renewed by worker', attempt: (seq % 3) + 1 },
  };
}

function item(n: number, rev = 0): Record<string, unknown> {
  return {
    workId: `W-${n}`,
    title: `Refactor the ${n % 2 ? 'billing' : 'search'} module: split handler ${n} into smaller units (rev ${rev})`,
    description: 'Keep behaviour identical; add tests for the edge cases found in review.',
    priority: n % 5,
    labels: ['backend', n % 3 ? 'refactor' : 'bug', 'sprint-42'],
    deps: n > 2 ? [`W-${n - 1}`, `W-${n - 2}`] : [],
    createdBy: 'agent:a_3q7x2m9k4',
    createdAt: 1_760_000_000_000 + n * 1000,
    updatedAt: 1_760_000_000_000 + n * 1000 + rev,
    life: {
      state: rev % 2 ? 'claimed' : 'open',
      attempts: rev,
      lease: null,
      owner: null,
      fencingToken: rev,
      result: null,
      history: [],
    },
  };
}

function board(id: string, size: number): BoardRecord {
  return { ...newBoardRecord(id), nextWorkSeq: size + 1 };
}

const itemsOf = (size: number) => Array.from({ length: size }, (_, i) => ({ workId: `W-${i + 1}`, ...item(i + 1) }));

function account(i: number): AccountRecord {
  return {
    _id: `acc_${i}`,
    version: 1,
    email: `writer-${i}@example.com`,
    passwordHash: '$2b$10$abcdefghijklmnopqrstuuJ0123456789abcdefghijklmnopqrstu',
    displayName: null,
    defaultProjectId: null,
    emailVerified: true,
    referralCode: `REF${i}`,
    referredBy: null,
    referralMonths: 0,
    createdAt: 1_760_000_000_000,
  };
}

// ---------------------------------------------------------------------------------------------
// 1. Durable commits under concurrent writers

/** Runs `writers` loops of `step` for COMMIT_SECONDS; returns commits/s. */
async function commitLoad(writers: number, step: (writer: number, i: number) => Promise<void>): Promise<number> {
  let commits = 0;
  const start = performance.now();
  const end = start + COMMIT_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let i = 0; performance.now() < end; i++) {
        await step(w, i);
        commits++;
      }
    }),
  );
  return commits / ((performance.now() - start) / 1000);
}

async function commits(): Promise<void> {
  const store = await openEmbeddedStore(join(root, 'commits'));
  try {
    let seq = 0;
    const inserts = await commitLoad(WRITERS, async () => {
      const s = seq++;
      await store.events.insert(event('p_commits', s, Date.now()));
    });
    row('commits', `events.insert, ${WRITERS} writers, ${COMMIT_SECONDS} s`, inserts.toFixed(0), 'commits/s');

    const versions: number[] = [];
    for (let w = 0; w < WRITERS; w++) {
      await store.accounts.insert(account(w));
      versions.push(1);
    }
    const updates = await commitLoad(WRITERS, async (w, i) => {
      const next = await store.accounts.update(`acc_${w}`, versions[w]!, {
        displayName: `writer ${w} round ${i}`,
        referralMonths: i,
      });
      if (!next) throw new Error(`accounts.update lost its version on acc_${w}`);
      versions[w] = next.version;
    });
    row('commits', `accounts.update (CAS, own doc), ${WRITERS} writers`, updates.toFixed(0), 'commits/s');
  } finally {
    await store.close();
  }
}

// ---------------------------------------------------------------------------------------------
// 2. One-item patch on boards of growing size

async function boards(): Promise<void> {
  const store = await openEmbeddedStore(join(root, 'boards'));
  try {
    for (const size of BOARD_SIZES) {
      const id = projectId(size);
      const [, insertMs] = await timed(async () => {
        await store.boards.insert(board(id, size));
        await store.boards.commit(id, 1, { lastSeq: 1 }, { put: itemsOf(size), removed: [] });
      });
      row('board', `insert board of ${size} items`, insertMs.toFixed(1), 'ms');
      let version = 2;
      const patchMs: number[] = [];
      for (let i = 0; i < PATCHES; i++) {
        const [landed, ms] = await timed(() =>
          store.boards.commit(
            id,
            version,
            { lastSeq: i + 2 },
            { put: [{ workId: 'W-7', ...item(7, i + 1) }], removed: [] },
          ),
        );
        if (!landed) throw new Error(`boards.commit lost its version on ${id}`);
        version++;
        patchMs.push(ms);
      }
      latencyRow('board', `commit one item, ${size} items`, patchMs);
      const getMs: number[] = [];
      for (let i = 0; i < FULL_READS; i++) {
        const [doc, ms] = await timed(() => store.boards.load(id));
        if (!doc || doc.items.length !== size) throw new Error(`boards.load read a wrong board ${id}`);
        getMs.push(ms);
      }
      latencyRow('board', `load (full read), ${size} items`, getMs);
      const sinceMs: number[] = [];
      for (let i = 0; i < FULL_READS; i++) {
        const [changes, ms] = await timed(() => store.boards.changesSince(id, version - 2));
        if (changes?.items.length !== 1) throw new Error(`boards.changesSince read a wrong change on ${id}`);
        sinceMs.push(ms);
      }
      latencyRow('board', `changes since two commits ago, ${size} items`, sinceMs);
    }
  } finally {
    await store.close();
  }
}

// ---------------------------------------------------------------------------------------------
// 3. The event log at scale

const AT0 = 1_760_000_000_000;
const eventAt = (b: number, seq: number): number => AT0 + seq * 1000 + b;

async function activityPages(store: Store, label: string): Promise<void> {
  const latest: number[] = [];
  const older: number[] = [];
  for (let i = 0; i < ACTIVITY_PAGES; i++) {
    const boardId = projectId((i * 37) % EVENT_BOARDS);
    const [page, ms] = await timed(() => store.events.find({ boardId }, { sort: [['seq', -1]], limit: 50 }));
    if (page.length !== 50 || page[0]!.seq !== EVENTS_PER_BOARD) throw new Error('activity page is wrong');
    latest.push(ms);
    const x = 1 + ((i * 7919) % (EVENTS_PER_BOARD - 100)) + 100;
    const [before, ms2] = await timed(() =>
      store.events.find({ boardId, seq: { $lt: x } }, { sort: [['seq', -1]], limit: 50 }),
    );
    if (before.length !== 50 || before[0]!.seq !== x - 1) throw new Error('activity page before seq is wrong');
    older.push(ms2);
  }
  latencyRow('events', `${label}activity page (latest 50)`, latest);
  latencyRow('events', `${label}activity page (50 before seq X)`, older);
}

async function sinceReplay(store: Store): Promise<void> {
  const pages: number[] = [];
  for (let b = 0; b < REPLAY_BOARDS; b++) {
    const boardId = projectId((b * 13) % EVENT_BOARDS);
    let since = EVENTS_PER_BOARD - REPLAY_SPAN;
    while (since < EVENTS_PER_BOARD) {
      const [page, ms] = await timed(() =>
        store.events.find({ boardId, seq: { $gt: since } }, { sort: [['seq', 1]], limit: REPLAY_PAGE }),
      );
      if (page.length !== Math.min(REPLAY_PAGE, EVENTS_PER_BOARD - since) || page[0]!.seq !== since + 1)
        throw new Error('since page is wrong');
      since = page.at(-1)!.seq;
      pages.push(ms);
    }
  }
  latencyRow('events', `since replay page (${REPLAY_PAGE}, last ${REPLAY_SPAN})`, pages);
}

async function eventLog(): Promise<void> {
  const dir = join(root, 'events');
  const total = EVENT_BOARDS * EVENTS_PER_BOARD;
  let store = await openEmbeddedStore(dir);
  try {
    const before = memory();
    // Boards take turns, a batch of consecutive events of one board at a time, as outbox copies
    // would; within a board `seq` and `at` increase.
    const t0 = performance.now();
    const batchesPerBoard = EVENTS_PER_BOARD / LOAD_BATCH;
    let loaded = 0;
    for (let round = 0; round < batchesPerBoard; round++) {
      for (let b = 0; b < EVENT_BOARDS; b++) {
        const boardId = projectId(b);
        const batch: EventRecord[] = [];
        for (let k = 1; k <= LOAD_BATCH; k++) {
          const seq = round * LOAD_BATCH + k;
          batch.push(event(boardId, seq, eventAt(b, seq)));
        }
        await store.events.insertMissing(batch);
        loaded += batch.length;
        if (loaded % (total / 10) === 0)
          progress(
            `${loaded} events loaded, ${((performance.now() - t0) / 1000).toFixed(1)} s, rss ${mb(process.memoryUsage().rss)} MB`,
          );
      }
    }
    const loadS = (performance.now() - t0) / 1000;
    row(
      'events',
      `load ${total} events (${EVENT_BOARDS} boards, batches of ${LOAD_BATCH})`,
      loadS.toFixed(1),
      `s (${(total / loadS).toFixed(0)} events/s)`,
    );
    row('events', 'data dir on disk after load', mb(await diskBytes(dir)), 'MB');
    row('events', 'memory before load', before, 'MB rss / heap / external');
    row('events', 'memory after load', memory(), 'MB rss / heap / external');
    row('events', 'peak rss of the process so far', mb(process.resourceUsage().maxRSS * 1024), 'MB');

    await activityPages(store, '');
    await sinceReplay(store);

    const [, closeMs] = await timed(() => store.close());
    row('events', 'close', closeMs.toFixed(0), 'ms');
    const [reopened, openMs] = await timed(() => openEmbeddedStore(dir));
    store = reopened;
    row('events', `re-open on ${total} events`, openMs.toFixed(0), 'ms');
    const [, firstMs] = await timed(() =>
      store.events.find({ boardId: projectId(42) }, { sort: [['seq', -1]], limit: 50 }),
    );
    row('events', 'first activity page after re-open', firstMs.toFixed(2), 'ms');
    row('events', 'memory after re-open and first read', memory(), 'MB rss / heap / external');
    row('events', 'peak rss of the process', mb(process.resourceUsage().maxRSS * 1024), 'MB');
  } finally {
    await store.close();
  }
}

// ---------------------------------------------------------------------------------------------

console.log(`store bench${quick ? ' (--quick)' : ''}: ${moduleName}, node ${process.version}, data under ${root}`);
try {
  // The event log goes first so its memory figures start from a fresh process, not from what
  // the allocator kept of the 50,000-item boards.
  await eventLog();
  await commits();
  await boards();
} finally {
  await rm(root, { recursive: true, force: true });
}
