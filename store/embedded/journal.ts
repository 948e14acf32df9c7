// Append-only journal with group commit: every record queued while a flush is in flight goes
// out in the next single write + fdatasync, and its promise resolves only after that sync.
// Files: snapshot-<gen>.json (complete state, written via rename) and journal-<gen>.log
// (one JSON line per atomic batch of operations after that snapshot).
import { open, readdir, readFile, rename, rm, writeFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { StoreUnavailableError } from '../ports/collection.js';

/** [collection, id, document or null for a delete] or [collection, id, null, patch] */
export type JournalOp = readonly [string, string, unknown] | readonly [string, string, null, { set: Record<string, unknown>; version: number }];

export interface Snapshot {
  collections: Record<string, unknown[]>;
}

interface Pending {
  line: string;
  resolve: () => void;
  reject: (e: unknown) => void;
}

const COMPACT_MIN_BYTES = 8 * 1024 * 1024;

export class Journal {
  private queue: Pending[] = [];
  private flushing: Promise<void> | null = null;
  private lastAppend: Promise<void> = Promise.resolve();
  private failure: unknown = null;
  private bytes = 0;
  private snapshotBytes = 0;

  private constructor(
    private readonly dir: string,
    private gen: number,
    private fh: FileHandle,
    private readonly snapshot: () => Snapshot,
  ) {}

  /** Recovers state (snapshot, then every later journal in order) and starts a fresh generation. */
  static async open(dir: string, replay: (ops: readonly JournalOp[]) => void, snapshot: () => Snapshot, load: (s: Snapshot) => void): Promise<Journal> {
    const files = await readdir(dir);
    const gens = (prefix: string, suffix: string) =>
      files.filter((f) => f.startsWith(prefix) && f.endsWith(suffix)).map((f) => Number(f.slice(prefix.length, -suffix.length))).filter(Number.isInteger).sort((a, b) => a - b);
    const snapshots = gens('snapshot-', '.json');
    const base = snapshots.at(-1) ?? 0;
    if (snapshots.length) load(JSON.parse(await readFile(join(dir, `snapshot-${base}.json`), 'utf8')) as Snapshot);
    const journals = gens('journal-', '.log').filter((g) => g >= base);
    for (const g of journals) {
      const text = await readFile(join(dir, `journal-${g}.log`), 'utf8');
      for (const line of text.split('\n')) {
        if (!line) continue;
        let ops: JournalOp[];
        try {
          ops = JSON.parse(line) as JournalOp[];
        } catch {
          break; // a torn final line: its batch was never acknowledged
        }
        replay(ops);
      }
    }
    const gen = Math.max(base, journals.at(-1) ?? 0) + 1;
    const fh = await open(join(dir, `journal-${gen}.log`), 'a');
    const journal = new Journal(dir, gen, fh, snapshot);
    await journal.writeSnapshot(gen);
    await journal.removeBefore(gen);
    return journal;
  }

  /** Resolves once the batch is on disk. */
  append(ops: readonly JournalOp[]): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    const done = new Promise<void>((resolve, reject) => {
      this.queue.push({ line: `${JSON.stringify(ops)}\n`, resolve, reject });
      this.flushing ??= this.flushLoop();
    });
    this.lastAppend = done.catch(() => undefined);
    return done;
  }

  /** Resolves when everything appended so far is durable (or has failed). */
  settled(): Promise<void> {
    return this.lastAppend;
  }

  get healthy(): boolean {
    return this.failure === null;
  }

  async close(): Promise<void> {
    await this.settled();
    await this.flushing;
    await this.fh.close();
  }

  private async flushLoop(): Promise<void> {
    while (this.queue.length) {
      const batch = this.queue;
      this.queue = [];
      try {
        const data = batch.map((p) => p.line).join('');
        await this.fh.write(data);
        await this.fh.datasync();
        this.bytes += Buffer.byteLength(data);
        for (const p of batch) p.resolve();
      } catch (e) {
        this.failure = new StoreUnavailableError(e);
        for (const p of [...batch, ...this.queue]) p.reject(this.failure);
        this.queue = [];
        break;
      }
      if (this.bytes > Math.max(COMPACT_MIN_BYTES, 2 * this.snapshotBytes)) await this.compact().catch((e: unknown) => (this.failure = new StoreUnavailableError(e)));
    }
    this.flushing = null;
  }

  /**
   * Starts generation gen+1 and snapshots the state at the switch. Records applied to memory
   * but still queued land in the new journal; replaying them over the snapshot is idempotent.
   */
  private async compact(): Promise<void> {
    const next = this.gen + 1;
    const fh = await open(join(this.dir, `journal-${next}.log`), 'a');
    const old = this.fh;
    this.fh = fh;
    this.gen = next;
    this.bytes = 0;
    await old.close();
    await this.writeSnapshot(next);
    await this.removeBefore(next);
  }

  private async writeSnapshot(gen: number): Promise<void> {
    const text = JSON.stringify(this.snapshot());
    const tmp = join(this.dir, `snapshot-${gen}.json.tmp`);
    await writeFile(tmp, text, { flush: true });
    await rename(tmp, join(this.dir, `snapshot-${gen}.json`));
    await syncDir(this.dir);
    this.snapshotBytes = Buffer.byteLength(text);
  }

  private async removeBefore(gen: number): Promise<void> {
    for (const f of await readdir(this.dir)) {
      const m = /^(?:snapshot|journal)-(\d+)\.(?:json|log|json\.tmp)$/.exec(f);
      if (m && Number(m[1]) < gen) await rm(join(this.dir, f), { force: true });
    }
  }
}

async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
