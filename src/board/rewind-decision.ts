// The swap a rewind commits, built where the board's actor runs (the home node): the restore
// point and the undo point are read there, by id, so a forwarded rewind stays small.
import { rewind, type RestoreGraph, type RevokedLease } from '../../machines/restore-point.js';
import type { Decide } from '../../machines/board-decision.js';
import { AppError } from '../errors/app-error.js';
import { StoreUnavailableError, type RestorePointRecord } from '../../store/ports/store.js';
import { contentOf, fingerprintOf, graphOfPoint, type PointPorts } from './restore-points.js';

export interface RewindCommand {
  kind: 'rewind';
  boardId: string;
  actor: string;
  /** As the caller named it (with its slice). */
  restorePointId: string;
  pointId: string;
  slice: string | null;
  /** The point kept of the board as the caller saw it: the swap lands only on that board. */
  undoPointId: string;
}

export interface RewindReply {
  revokedLeases: RevokedLease[];
  fingerprint: string;
  /**
   * The seq of the committed board.rewound (null until the board's actor numbered it): each applied
   * rewind's own, where two applies that both land may share an undo point.
   */
  seq: number | null;
}

/** Restore points cannot be read or kept: 503 SNAPSHOT_UNAVAILABLE, nothing changed. */
export async function readable<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (e) {
    if (e instanceof StoreUnavailableError)
      throw new AppError('SNAPSHOT_UNAVAILABLE', undefined, undefined, undefined, e);
    throw e;
  }
}

/** The point an id names on this board (404 when another board's or gone). */
export async function pointOn(store: PointPorts, boardId: string, pointId: string): Promise<RestorePointRecord> {
  const point = await readable(() => store.restorePoints.get(pointId));
  if (!point || point.boardId !== boardId)
    throw new AppError('REWIND_POINT_NOT_FOUND', `No retained restore point ${pointId} on this board.`);
  return point;
}

/** The point's whole graph, refused with 422 REWIND_SLICE_INTEGRITY when its content no longer hashes to its fingerprint. */
export async function intactGraph(store: PointPorts, point: RestorePointRecord): Promise<RestoreGraph> {
  const graph = await readable(() => graphOfPoint(store, point));
  if (graph === 'altered')
    throw new AppError('REWIND_SLICE_INTEGRITY', 'The stored restore point no longer matches its fingerprint.', {
      restorePointId: point._id,
    });
  return graph;
}

export async function rewindDecision(store: PointPorts, command: RewindCommand): Promise<Decide<RewindReply>> {
  const whole = await intactGraph(store, await pointOn(store, command.boardId, command.pointId));
  const undo = await readable(() => store.restorePoints.get(command.undoPointId));
  const expected = undo && (await readable(() => contentOf(store, undo)));
  if (typeof expected !== 'string')
    throw new AppError(
      'SNAPSHOT_UNAVAILABLE',
      'The undo point of this rewind could not be read back; nothing was changed.',
    );
  const swap = rewind(whole, {
    actor: command.actor,
    restorePointId: command.restorePointId,
    expected,
    ...(command.slice ? { slice: command.slice } : {}),
  });
  return (board, now) => {
    const decision = swap(board, now);
    const reply: RewindReply = {
      revokedLeases: decision.reply.revokedLeases,
      fingerprint: fingerprintOf(decision.reply.after),
      seq: null,
    };
    // board.rewound is the decision's last event.
    return {
      board: decision.board,
      events: decision.events,
      reply,
      numbered: (seqs) => ({ ...reply, seq: seqs.at(-1) ?? null }),
    };
  };
}
