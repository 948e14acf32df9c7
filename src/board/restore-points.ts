// Restore points (DOMAIN.md "Restore points and rewind"): a board's work graph as some commit left
// it, fingerprinted over its canonical JSON, kept per the plan's history retention and at most the
// newest 500 per board; a Free board keeps its newest 20 of the last 24 hours, so a board made Pro
// after a mishap can be restored. Captured before the moves DOMAIN.md lists. The JSON is kept in
// parts of PART_CHARS beside the point's record (written before it, deleted with it), so a point of
// a 50,000-item board fits MongoDB's 16 MB documents. A point of an empty board (every new board's
// first batch keeps one) has no parts: its JSON is the empty graph's.
import { createHash } from 'node:crypto';
import { canonicalJson, graphOf, type RestoreGraph } from '../../machines/restore-point.js';
import type { Committed } from '../../actors/board-actor.js';
import { FREE_POINTS, historySince, PLANS, type PlanName } from '../plans.js';
import {
  DuplicateKeyError,
  type Filter,
  type RestorePointPartRecord,
  type RestorePointRecord,
  type Store,
} from '../../store/ports/store.js';
import type { Maybe } from '../../store/ports/maybe.js';

export const POINTS_KEPT = 500;

/** How many points a board on `plan` keeps at most. */
export const pointsKept = (plan: PlanName): number => (PLANS[plan].rewind ? POINTS_KEPT : FREE_POINTS.kept);

/** The oldest capture time a board on `plan` still keeps a point from. */
export const pointsSince = (plan: PlanName, now: number): number =>
  PLANS[plan].rewind ? historySince(plan, now) : Math.max(historySince(plan, now), now - FREE_POINTS.withinMs);

/** Characters of a point's JSON per stored part. */
export const PART_CHARS = 1_000_000;

export type PointPorts = Pick<Store, 'restorePoints' | 'restorePointParts'>;

/** A point with its canonical JSON, as captured (the record holds its fingerprint; the parts hold the JSON). */
export interface Point {
  record: RestorePointRecord;
  content: string;
}
export const POINT_ID = /^rp_([\w-]{1,64})_(\d{1,12})$/;

export type CaptureReason = 'batch' | 'override' | 'reopen' | 'state' | 'rewind' | 'quiet';

export const fingerprintOf = (content: string): string =>
  `sha256:${createHash('sha256').update(content).digest('hex')}`;

export const pointIdOf = (boardId: string, seq: number): string => `rp_${boardId}_${seq}`;

/** The canonical JSON of a graph with no items: what a point stored with no parts holds. */
const EMPTY_CONTENT = canonicalJson({ items: [] });

/** The current graph's fingerprint. */
export const currentFingerprint = (committed: Committed): string =>
  fingerprintOf(canonicalJson(graphOf(committed.board)));

/** `graph`, the board's graph at `seq`, as a point: serialised and fingerprinted once. */
export function pointOf(boardId: string, seq: number, graph: RestoreGraph, reason: CaptureReason, now: number): Point {
  const content = canonicalJson(graph);
  const parts = content === EMPTY_CONTENT ? 0 : Math.max(1, Math.ceil(content.length / PART_CHARS));
  return {
    record: {
      _id: pointIdOf(boardId, seq),
      version: 1,
      boardId,
      seq,
      capturedAt: now,
      reason,
      itemCount: graph.items.length,
      fingerprint: fingerprintOf(content),
      parts,
    },
    content,
  };
}

/**
 * Stores `point` (a second one at the same seq is the same graph): its parts first, so a point
 * that can be listed can be read; then, unless `trim` is false, drops what retention and the 500
 * cap no longer keep (a rewind's undo point trims after its swap: the point it applies may be the
 * oldest kept).
 */
export async function keepPoint(
  store: PointPorts,
  point: Point,
  plan: PlanName,
  now: number,
  trim = true,
): Promise<RestorePointRecord> {
  const { record, content } = point;
  const parts: RestorePointPartRecord[] = [];
  for (let n = 0; n < record.parts; n++) {
    parts.push({
      _id: `${record._id}:${n}`,
      version: 1,
      pointId: record._id,
      boardId: record.boardId,
      n,
      text: content.slice(n * PART_CHARS, (n + 1) * PART_CHARS),
      capturedAt: record.capturedAt,
    });
  }
  if (parts.length) await store.restorePointParts.insertMissing(parts);
  try {
    await store.restorePoints.insert(record);
  } catch (e) {
    if (!(e instanceof DuplicateKeyError)) throw e;
  }
  if (trim) await trimPoints(store, record.boardId, plan, now);
  return record;
}

/**
 * Keeps a rewind's undo point, untrimmed until the swap (keepPoint). A point kept earlier at the
 * same seq (before a move refused since, or a rewind that did not land) holds the same graph but
 * not this rewind's reason and time: it would read as no undo and age out early. It is replaced,
 * the record first so nothing lists a point whose parts are going.
 */
export async function keepUndoPoint(store: PointPorts, point: Point, plan: PlanName, now: number): Promise<void> {
  const kept = await store.restorePoints.get(point.record._id);
  if (kept && (kept.reason !== point.record.reason || kept.capturedAt < point.record.capturedAt)) {
    await store.restorePoints.delete(kept._id);
    await store.restorePointParts.deleteMany({ pointId: kept._id });
  }
  await keepPoint(store, point, plan, now, false);
}

/** The point's canonical JSON, or null when a part is missing. */
export async function contentOf(store: PointPorts, point: RestorePointRecord): Promise<string | null> {
  if (point.parts === 0) return EMPTY_CONTENT;
  const parts = await store.restorePointParts.find({ pointId: point._id }, { sort: [['n', 1]] });
  if (parts.length !== point.parts || parts.some((p, n) => p.n !== n)) return null;
  return parts.map((p) => p.text).join('');
}

/** Deletes the points `filter` names on one board, with their parts. */
export async function dropPoints(
  store: PointPorts,
  filter: Filter<RestorePointRecord> & { boardId: string },
): Promise<number> {
  const dropped = await store.restorePoints.deleteMany(filter);
  const { boardId, capturedAt } = filter;
  await store.restorePointParts.deleteMany(capturedAt === undefined ? { boardId } : { boardId, capturedAt });
  return dropped;
}

/** Stores the graph `committed` holds as a point, once per board seq. */
export async function capturePoint(
  store: PointPorts,
  boardId: string,
  committed: Committed,
  reason: CaptureReason,
  plan: PlanName,
  now: number,
): Promise<RestorePointRecord> {
  const seq = committed.record.lastSeq;
  // The graph at this seq is already kept (a refused move changed nothing): no second copy of it.
  const kept = await store.restorePoints.get(pointIdOf(boardId, seq));
  if (kept) return kept;
  return keepPoint(store, pointOf(boardId, seq, graphOf(committed.board), reason, now), plan, now);
}

/** Drops the board's points older than its plan keeps them, and those beyond its newest 500 (Free: 20); says how many. */
export async function trimPoints(store: PointPorts, boardId: string, plan: PlanName, now: number): Promise<number> {
  let dropped = await dropPoints(store, { boardId, capturedAt: { $lt: pointsSince(plan, now) } });
  const beyond = await store.restorePoints.select({ boardId }, ['seq'], {
    sort: [['seq', -1]],
    skip: pointsKept(plan),
  });
  for (const old of beyond) {
    if (await store.restorePoints.delete(old._id)) dropped++;
    await store.restorePointParts.deleteMany({ pointId: old._id });
  }
  return dropped;
}

/**
 * Before a move DOMAIN.md lists (batch, override, reopen, an operator's state move), a board's
 * current graph becomes a point, kept as its plan keeps them (Free: the newest 20 of the last
 * day). A paused board refuses those moves, so it keeps none for them.
 */
export async function captureBefore(
  store: PointPorts,
  call: { boardId: string; actor: { read(): Maybe<Committed> } },
  plan: PlanName,
  reason: CaptureReason,
  now: number,
): Promise<void> {
  const committed = await call.actor.read();
  if (committed.board.paused) return;
  if (!PLANS[plan].rewind) {
    const [newest] = await store.restorePoints.select({ boardId: call.boardId }, ['capturedAt'], {
      sort: [['seq', -1]],
      limit: 1,
    });
    if (newest && now - newest.capturedAt < FREE_POINTS.everyMs) return;
  }
  await capturePoint(store, call.boardId, committed, reason, plan, now);
}

/**
 * A commit ended a quiet spell (QUIET_MS without one): the board as the spell left it becomes a
 * point, kept as its plan keeps them. `before` is an immutable committed board, so when this runs
 * does not matter.
 */
export async function captureQuiet(
  store: PointPorts & Pick<Store, 'projects'>,
  boardId: string,
  before: Committed,
  now: number,
): Promise<void> {
  const project = await store.projects.get(boardId);
  if (!project) return;
  await capturePoint(store, boardId, before, 'quiet', project.plan, now);
}

/** The board's points, newest first, without their content. */
export async function listPoints(store: PointPorts, boardId: string) {
  return store.restorePoints.select(
    { boardId },
    ['seq', 'capturedAt', 'reason', 'itemCount', 'fingerprint', 'boardId'],
    { sort: [['seq', -1]], limit: POINTS_KEPT },
  );
}

/** A point's graph, or 'altered' when its stored content is incomplete or no longer hashes to its fingerprint. */
export async function graphOfPoint(store: PointPorts, point: RestorePointRecord): Promise<RestoreGraph | 'altered'> {
  const content = await contentOf(store, point);
  if (content === null || fingerprintOf(content) !== point.fingerprint) return 'altered';
  return JSON.parse(content) as RestoreGraph;
}
