// A commit's writes too large to ride in its board's header, staged in parts beside it before the
// header's update names them (store/mongo/mongo-boards.ts): written in one insert, read back whole
// or not at all, and deleted once no reader can still need them.
import type { Collection as Driver, Document } from 'mongodb';
import type { Staged, Written } from './board-intent.js';
import { firstBatchOnly } from './mongo-collection.js';

/** Entries a part holds (removed work ids, being small, ten times as many). */
const PART_ENTRIES = 500;

export class StagedParts {
  constructor(
    private readonly staging: Driver<Document>,
    /** The collection's own way of running a driver call (its errors mapped, the call counted until answered). */
    private readonly run: <R>(op: () => Promise<R>) => Promise<R>,
    private readonly clock: () => number,
  ) {}

  /** Stages a commit's writes, in one insert; how many parts it took. */
  async stage(id: string, v: number, stage: string, written: Written): Promise<number> {
    const parts: Omit<Written, never>[] = [];
    const chunk = <T>(list: T[], size: number, make: (slice: T[]) => Written) => {
      for (let i = 0; i < list.length; i += size) parts.push(make(list.slice(i, i + size)));
    };
    chunk(written.put, PART_ENTRIES, (put) => ({ put, removed: [] }));
    chunk(written.removed, PART_ENTRIES * 10, (removed) => ({ put: [], removed }));
    chunk(written.events ?? [], PART_ENTRIES, (events) => ({ put: [], removed: [], events }));
    if (!parts.length) parts.push({ put: [], removed: [] });
    const docs = parts.map((part, n) => ({
      _id: `${stage}:${n}`,
      boardId: id,
      v,
      stage,
      n,
      at: this.clock(),
      ...part,
    }));
    // One round trip for a commit's parts (the driver splits a batch past the wire's limits).
    await this.run(() => this.staging.insertMany(docs as Document[]));
    return docs.length;
  }

  /** A staged intent's writes, or null when its parts are gone (a later commit replaced it). */
  async read(boardId: string, intent: Staged): Promise<Written | null> {
    const parts = (await this.run(() =>
      firstBatchOnly(this.staging, { stage: intent.stage }),
    )) as unknown as (Written & { boardId: string; n: number })[];
    if (parts.length !== intent.parts || parts.some((p) => p.boardId !== boardId)) return null;
    parts.sort((a, b) => a.n - b.n);
    const events = parts.flatMap((p) => p.events ?? []);
    return {
      put: parts.flatMap((p) => p.put),
      removed: parts.flatMap((p) => p.removed),
      ...(intent.events ? { events } : {}),
    };
  }

  /** The parts of a board's intents below version `v`. */
  async dropBelow(boardId: string, v: number): Promise<void> {
    await this.run(() => this.staging.deleteMany({ boardId, v: { $lt: v } }));
  }

  /** One stage's parts (its commit did not land). */
  async dropStage(stage: string): Promise<void> {
    await this.run(() => this.staging.deleteMany({ stage }));
  }

  /** Every part of a board (the board is deleted). */
  async dropBoard(boardId: string): Promise<void> {
    await this.run(() => this.staging.deleteMany({ boardId }));
  }
}
