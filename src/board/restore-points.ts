// Restore points (DOMAIN.md "Restore points and rewind"): a board's work graph as some commit left
// it, fingerprinted over its canonical JSON, kept per the plan's history retention and at most the
// newest 500 per board. Captured on Pro boards before the moves DOMAIN.md lists.
import { createHash } from 'node:crypto';
import { canonicalJson, graphOf, type RestoreGraph } from '../../machines/restore-point.js';
import type { Committed } from '../../actors/board-actor.js';
import { historySince, PLANS, type PlanName } from '../plans.js';
import { DuplicateKeyError, type RestorePointRecord, type Store } from '../../store/ports/store.js';

export const POINTS_KEPT = 500;
export const POINT_ID = /^rp_([\w-]{1,64})_(\d{1,12})$/;

export type CaptureReason = 'batch' | 'override' | 'reopen' | 'state' | 'rewind' | 'quiet';

export const fingerprintOf = (content: string): string => `sha256:${createHash('sha256').update(content).digest('hex')}`;

export const pointIdOf = (boardId: string, seq: number): string => `rp_${boardId}_${seq}`;

/** The current graph's fingerprint. */
export const currentFingerprint = (committed: Committed): string => fingerprintOf(canonicalJson(graphOf(committed.board)));

/** `graph`, the board's graph at `seq`, as a point: serialised and fingerprinted once. */
export function pointOf(boardId: string, seq: number, graph: RestoreGraph, reason: CaptureReason, now: number): RestorePointRecord {
  const content = canonicalJson(graph);
  return { _id: pointIdOf(boardId, seq), version: 1, boardId, seq, capturedAt: now, reason, itemCount: graph.items.length, fingerprint: fingerprintOf(content), content };
}

/** Stores `point` (a second one at the same seq is the same graph), then drops what retention and the 500 cap no longer keep. */
export async function keepPoint(store: Pick<Store, 'restorePoints'>, point: RestorePointRecord, plan: PlanName, now: number): Promise<RestorePointRecord> {
  try {
    await store.restorePoints.insert(point);
  } catch (e) {
    if (!(e instanceof DuplicateKeyError)) throw e;
  }
  await trimPoints(store, point.boardId, plan, now);
  return point;
}

/** Stores the graph `committed` holds as a point, once per board seq. */
export async function capturePoint(store: Pick<Store, 'restorePoints'>, boardId: string, committed: Committed, reason: CaptureReason, plan: PlanName, now: number): Promise<RestorePointRecord> {
  const seq = committed.record.lastSeq;
  // The graph at this seq is already kept (a refused move changed nothing): no second copy of it.
  const kept = await store.restorePoints.get(pointIdOf(boardId, seq));
  if (kept) return kept;
  return keepPoint(store, pointOf(boardId, seq, graphOf(committed.board), reason, now), plan, now);
}

async function trimPoints(store: Pick<Store, 'restorePoints'>, boardId: string, plan: PlanName, now: number): Promise<void> {
  await store.restorePoints.deleteMany({ boardId, capturedAt: { $lt: historySince(plan, now) } });
  const beyond = await store.restorePoints.select({ boardId }, ['seq'], { sort: [['seq', -1]], skip: POINTS_KEPT });
  for (const old of beyond) await store.restorePoints.delete(old._id);
}

/**
 * Before a move DOMAIN.md lists (batch, override, reopen, an operator's state move), a board's
 * current graph becomes a point when its plan has rewind (Pro); Free boards keep none.
 */
export async function captureBefore(store: Pick<Store, 'restorePoints'>, call: { boardId: string; actor: { read(): Promise<Committed> } }, plan: PlanName, reason: CaptureReason, now: number): Promise<void> {
  if (!PLANS[plan].rewind) return;
  await capturePoint(store, call.boardId, await call.actor.read(), reason, plan, now);
}

/**
 * A commit ended a quiet spell (QUIET_MS without one): the board as the spell left it becomes a
 * point, when the board is Pro. `before` is an immutable committed board, so when this runs does
 * not matter.
 */
export async function captureQuiet(store: Pick<Store, 'restorePoints' | 'projects'>, boardId: string, before: Committed, now: number): Promise<void> {
  const project = await store.projects.get(boardId);
  if (!project || !PLANS[project.plan].rewind) return;
  await capturePoint(store, boardId, before, 'quiet', project.plan, now);
}

/** The board's points, newest first, without their content. */
export async function listPoints(store: Pick<Store, 'restorePoints'>, boardId: string) {
  return store.restorePoints.select({ boardId }, ['seq', 'capturedAt', 'reason', 'itemCount', 'fingerprint', 'boardId'], { sort: [['seq', -1]], limit: POINTS_KEPT });
}

/** A point's graph, or 'altered' when its stored content no longer hashes to its fingerprint. */
export function graphOfPoint(point: RestorePointRecord): RestoreGraph | 'altered' {
  if (fingerprintOf(point.content) !== point.fingerprint) return 'altered';
  return JSON.parse(point.content) as RestoreGraph;
}
