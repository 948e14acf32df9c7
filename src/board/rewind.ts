// Rewind's rules (DOMAIN.md "Restore points and rewind", Pro only): which point an id names (and
// which slice), and the preview of applying it, which writes nothing. Applying comes next.
import { diffGraphs, graphOf, sliceOf, type RestoreDiff, type RestoreGraph } from '../../machines/restore-point.js';
import { AppError } from '../errors/app-error.js';
import { StoreUnavailableError, type Store } from '../../store/ports/store.js';
import type { BoardCall } from './board-access.js';
import { currentFingerprint, graphOfPoint, listPoints, POINT_ID } from './restore-points.js';

const MAX_POINT_ID = 181;
const SLICE = /^~(W-\d{1,9})$/;

export interface RewindPreview {
  projectId: string;
  currentFingerprint: string;
  points: { restorePointId: string; capturedAt: string; reason: string; itemCount: number; fingerprint: string }[];
  preview?: { restorePointId: string; fingerprint: string } & RestoreDiff;
}

/** `rp_<board>_<seq>` with an optional `~W-<n>` slice: the point's id and the slice's root. */
export function parsePointId(raw: string): { pointId: string; slice: string | null } {
  if (raw.length < 1 || raw.length > MAX_POINT_ID) throw new AppError('INVALID_REWIND_POINT', `restorePointId must be 1 to ${MAX_POINT_ID} characters.`);
  const at = raw.indexOf('~');
  const pointId = at < 0 ? raw : raw.slice(0, at);
  if (!POINT_ID.test(pointId)) throw new AppError('INVALID_REWIND_POINT', 'restorePointId is rp_<boardId>_<seq>, as the preview lists it.');
  if (at < 0) return { pointId, slice: null };
  const slice = SLICE.exec(raw.slice(at))?.[1];
  if (!slice) throw new AppError('INVALID_REWIND_SLICE', 'A slice is written ~W-<n> after the restore point id.');
  return { pointId, slice };
}

/** Restore points cannot be read: 503 SNAPSHOT_UNAVAILABLE, nothing changed. */
async function readable<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (e) {
    if (e instanceof StoreUnavailableError) throw new AppError('SNAPSHOT_UNAVAILABLE', undefined, undefined, undefined, e);
    throw e;
  }
}

export class Rewind {
  constructor(private readonly store: Pick<Store, 'restorePoints'>) {}

  /** The point (whole or sliced) an id names on this board, checked against its fingerprint. */
  async pointGraph(boardId: string, raw: string): Promise<{ graph: RestoreGraph; fingerprint: string; altered: boolean; slice: string | null }> {
    const { pointId, slice } = parsePointId(raw);
    const point = await readable(() => this.store.restorePoints.get(pointId));
    if (!point || point.boardId !== boardId) throw new AppError('REWIND_POINT_NOT_FOUND', `No retained restore point ${pointId} on this board.`);
    const whole = graphOfPoint(point);
    if (whole === 'altered') return { graph: { items: [] }, fingerprint: point.fingerprint, altered: true, slice };
    const graph = slice ? sliceOf(whole, slice) : whole;
    if (!graph) throw new AppError('INVALID_REWIND_SLICE', `The restore point holds no ${slice}.`);
    return { graph, fingerprint: point.fingerprint, altered: false, slice };
  }

  /** GET /api/account/rewind: the points, newest first, and with an id what applying it would do. Writes nothing. */
  async preview(call: BoardCall, restorePointId: string | undefined): Promise<RewindPreview> {
    const committed = await call.actor.read();
    const points = await readable(() => listPoints(this.store, call.boardId));
    const answer: RewindPreview = {
      projectId: call.boardId,
      currentFingerprint: currentFingerprint(committed),
      points: points.map((p) => ({ restorePointId: p._id, capturedAt: new Date(p.capturedAt).toISOString(), reason: p.reason, itemCount: p.itemCount, fingerprint: p.fingerprint })),
    };
    if (restorePointId === undefined) return answer;
    const point = await this.pointGraph(call.boardId, restorePointId);
    if (point.altered) throw new AppError('REWIND_SLICE_INTEGRITY', 'The stored restore point no longer matches its fingerprint.');
    const current = graphOf(committed.board);
    // A slice replaces the current subtree of its root; the rest of the board is not compared.
    const against = point.slice ? (sliceOf(current, point.slice) ?? { items: [] }) : current;
    return { ...answer, preview: { restorePointId, fingerprint: point.fingerprint, ...diffGraphs(against, point.graph) } };
  }
}
