// Rewind's rules (DOMAIN.md "Restore points and rewind", Pro only): which point an id names (and
// which slice), the preview of applying it, which writes nothing, and the apply: its checks in
// DOMAIN.md's order, the undo point, then one version-checked swap through the board actor.
import type { Logger } from 'pino';
import {
  checkSlice,
  diffGraphs,
  diffSlice,
  graphOf,
  sliceOf,
  type RestoreDiff,
  type RestoreGraph,
  type RevokedLease,
} from '../../machines/restore-point.js';
import { AppError, isAppError } from '../errors/app-error.js';
import { auditRow, type RequestOrigin } from '../audit-row.js';
import { atLeast } from '../auth/project-selection.js';
import { PLANS, type PlanName } from '../plans.js';
import type { RequestContext } from '../request-context.js';
import type { RestorePointRecord, Store } from '../../store/ports/store.js';
import { auditCommitted } from './committed-audit.js';
import type { BoardAccess, BoardCall } from './board-access.js';
import { currentFingerprint, keepUndoPoint, listPoints, POINT_ID, pointOf, trimPoints } from './restore-points.js';
import { intactGraph, pointOn, readable } from './rewind-decision.js';

const MAX_POINT_ID = 181;
const SLICE = /^~(W-\d{1,9})$/;
const FINGERPRINT = /^sha256:[a-f0-9]{64}$/;
/** What `confirm` must say, exactly. */
export const REWIND_CONFIRMATION = 'REWIND_SERVICE_BOARD';

export interface RewindPreview {
  projectId: string;
  currentFingerprint: string;
  points: { restorePointId: string; capturedAt: string; reason: string; itemCount: number; fingerprint: string }[];
  preview?: { restorePointId: string; fingerprint: string } & RestoreDiff;
}

export interface RewindApplied {
  projectId: string;
  restorePointId: string;
  undoPointId: string;
  fingerprint: string;
  revokedLeases: RevokedLease[];
}

export interface ApplyInput {
  restorePointId: string;
  expectedFingerprint: string;
}

/** `rp_<board>_<seq>` with an optional `~W-<n>` slice: the point's id and the slice's root. */
export function parsePointId(raw: string): { pointId: string; slice: string | null } {
  if (raw.length < 1 || raw.length > MAX_POINT_ID)
    throw new AppError('INVALID_REWIND_POINT', `restorePointId must be 1 to ${MAX_POINT_ID} characters.`);
  const at = raw.indexOf('~');
  const pointId = at < 0 ? raw : raw.slice(0, at);
  if (!POINT_ID.test(pointId))
    throw new AppError('INVALID_REWIND_POINT', 'restorePointId is rp_<boardId>_<seq>, as the preview lists it.');
  if (at < 0) return { pointId, slice: null };
  const slice = SLICE.exec(raw.slice(at))?.[1];
  if (!slice) throw new AppError('INVALID_REWIND_SLICE', 'A slice is written ~W-<n> after the restore point id.');
  return { pointId, slice };
}

/**
 * The apply body's checks in DOMAIN.md's order, before anything is read: `confirm`, then
 * `expectedFingerprint`, then the form of `restorePointId`.
 */
export function applyInput(body: Record<string, unknown>): ApplyInput {
  if (body.confirm !== REWIND_CONFIRMATION)
    throw new AppError('REWIND_CONFIRMATION_REQUIRED', `confirm must be exactly ${REWIND_CONFIRMATION}.`);
  const { expectedFingerprint, restorePointId } = body;
  if (typeof expectedFingerprint !== 'string' || !FINGERPRINT.test(expectedFingerprint)) {
    throw new AppError(
      'REWIND_VERSION_REQUIRED',
      'expectedFingerprint must be the currentFingerprint the preview gave (sha256:<64 hex>).',
    );
  }
  if (typeof restorePointId !== 'string')
    throw new AppError('INVALID_REWIND_POINT', 'restorePointId must be a string of 1 to 181 characters.');
  parsePointId(restorePointId);
  return { restorePointId, expectedFingerprint };
}

/** Rewind is Pro only: 409 BILLING_PRO_REQUIRED on a Free board. */
export function requirePro(plan: PlanName): void {
  if (!PLANS[plan].rewind) throw new AppError('BILLING_PRO_REQUIRED', 'Rewind is a Pro feature; upgrade this board.');
}

/**
 * The preview's refusals in the codes the contract lists for it (Part 4, GET /api/account/rewind):
 * a slice the point cannot give is a restorePointId that names no point to preview (400
 * INVALID_REWIND_POINT), and a point whose content no longer hashes to its fingerprint cannot be
 * read (503 SNAPSHOT_UNAVAILABLE). The apply answers them as INVALID_REWIND_SLICE and 422.
 */
function asPreviewRefusal(e: unknown): never {
  if (isAppError(e) && e.code === 'INVALID_REWIND_SLICE')
    throw new AppError('INVALID_REWIND_POINT', e.message, e.details, undefined, e);
  if (isAppError(e) && e.code === 'REWIND_SLICE_INTEGRITY')
    throw new AppError(
      'SNAPSHOT_UNAVAILABLE',
      'The stored restore point no longer matches its fingerprint, so it cannot be previewed; choose another.',
      e.details,
      undefined,
      e,
    );
  throw e;
}

type PointView = RewindPreview['points'][number];

const pointView = (
  p: Pick<RestorePointRecord, '_id' | 'capturedAt' | 'reason' | 'itemCount' | 'fingerprint'>,
): PointView => ({
  restorePointId: p._id,
  capturedAt: new Date(p.capturedAt).toISOString(),
  reason: p.reason,
  itemCount: p.itemCount,
  fingerprint: p.fingerprint,
});

export class Rewind {
  constructor(
    private readonly store: Pick<Store, 'restorePoints' | 'restorePointParts' | 'audit'>,
    private readonly boards: BoardAccess,
    private readonly logger: Pick<Logger, 'error'>,
  ) {}

  /**
   * The selected board for a rewind operation: the owner's (the preview: admins' too). A role below
   * is refused 403 PROJECT_SCOPE_DENIED, the code the contract lists for both operations (it has no
   * ROLE_REQUIRED), as billing refuses a board the caller does not own.
   */
  enter(ctx: RequestContext, need: 'owner' | 'admin'): BoardCall {
    const role = ctx.project!.role;
    if (!atLeast(role, need))
      throw new AppError(
        'PROJECT_SCOPE_DENIED',
        need === 'owner'
          ? `Only the board’s owner applies a rewind; you are ${role}.`
          : `Only the board’s owner and admins see its restore points; you are ${role}.`,
        { role, needed: need },
      );
    return this.boards.enter(ctx, need, 'history');
  }

  /** The slice of `graph` rooted at `slice` (400 INVALID_REWIND_SLICE when the point does not hold it). */
  private sliced(graph: RestoreGraph, slice: string): RestoreGraph {
    const part = sliceOf(graph, slice);
    if (!part) throw new AppError('INVALID_REWIND_SLICE', `The restore point holds no ${slice}.`, { slice });
    return part;
  }

  /**
   * GET /api/account/rewind on a Free board: 409 BILLING_PRO_REQUIRED all the same, with the points
   * the board keeps meanwhile (its newest 20 of the last day) in `details.points`: what Pro would
   * restore. Points that cannot be read are left out rather than hiding the refusal.
   */
  async requirePro(call: BoardCall, plan: PlanName): Promise<void> {
    if (PLANS[plan].rewind) return;
    const points = await listPoints(this.store, call.boardId).catch(() => []);
    throw new AppError(
      'BILLING_PRO_REQUIRED',
      'Rewind is a Pro feature; upgrade this board. Meanwhile it keeps its newest restore points of the last 24 hours (details.points): Pro can restore any of them.',
      { points: points.map(pointView) },
    );
  }

  /** GET /api/account/rewind: the points, newest first, and with an id what applying it would do. Writes nothing. */
  async preview(call: BoardCall, restorePointId: string | undefined): Promise<RewindPreview> {
    const committed = await call.actor.read();
    const points = await readable(() => listPoints(this.store, call.boardId));
    const answer: RewindPreview = {
      projectId: call.boardId,
      currentFingerprint: currentFingerprint(committed),
      points: points.map(pointView),
    };
    if (restorePointId === undefined) return answer;
    try {
      const { pointId, slice } = parsePointId(restorePointId);
      const point = await pointOn(this.store, call.boardId, pointId);
      const whole = await intactGraph(this.store, point);
      const current = graphOf(committed.board);
      const diff = slice ? diffSlice(current, this.sliced(whole, slice), slice) : diffGraphs(current, whole);
      return { ...answer, preview: { restorePointId, fingerprint: point.fingerprint, ...diff } };
    } catch (e) {
      return asPreviewRefusal(e);
    }
  }

  /**
   * POST /api/account/rewind, after applyInput: the point exists (404), is intact (422), the board
   * is still the one the caller saw (409 REWIND_VERSION_MISMATCH), a slice fits (422
   * REWIND_SLICE_SCOPE); nothing is written until then. The undo point is kept next, then the swap
   * is one version-checked commit that refuses a board whose graph moved meanwhile, so the undo
   * point is exactly the graph it replaced. The audit row follows the commit, retried until written;
   * the points beyond what the plan keeps are dropped last.
   */
  async apply(
    call: BoardCall,
    input: ApplyInput,
    plan: PlanName,
    now: number,
    origin: RequestOrigin,
  ): Promise<RewindApplied> {
    const { pointId, slice } = parsePointId(input.restorePointId);
    const point = await pointOn(this.store, call.boardId, pointId);
    const whole = await intactGraph(this.store, point);
    const part = slice ? this.sliced(whole, slice) : null;
    const committed = await call.actor.read();
    const current = graphOf(committed.board);
    // The undo point is the current graph, serialised once: its fingerprint is the one to match.
    const undo = pointOf(call.boardId, committed.record.lastSeq, current, 'rewind', now);
    if (undo.record.fingerprint !== input.expectedFingerprint) {
      throw new AppError(
        'REWIND_VERSION_MISMATCH',
        'The board changed since its fingerprint was read; preview again and retry.',
        { currentFingerprint: undo.record.fingerprint },
      );
    }
    const problem = part && checkSlice(current, part);
    if (problem) throw new AppError('REWIND_SLICE_SCOPE', problem, { restorePointId: input.restorePointId });
    // Kept untrimmed until the swap: trimming now could drop the point being applied (the oldest kept).
    await readable(() => keepUndoPoint(this.store, undo, plan, now));
    const swapped = await this.boards.ask(call, {
      kind: 'rewind',
      boardId: call.boardId,
      actor: call.principal,
      restorePointId: input.restorePointId,
      pointId,
      slice,
      undoPointId: undo.record._id,
    });
    const applied: RewindApplied = {
      projectId: call.boardId,
      restorePointId: input.restorePointId,
      undoPointId: undo.record._id,
      fingerprint: swapped.fingerprint,
      revokedLeases: swapped.revokedLeases,
    };
    const undone = point.reason === 'rewind';
    await this.audit(call, applied, swapped.seq, input.expectedFingerprint, undone, now, origin);
    // The rewind stands: a trim that fails now is left to the next point kept and the retention sweep.
    await trimPoints(this.store, call.boardId, plan, now).catch((err: unknown) =>
      this.logger.error({ err, boardId: call.boardId }, 'rewind: applied, but its restore points were not trimmed'),
    );
    return applied;
  }

  /**
   * The audit row of an applied rewind, retried until written: the swap is committed. Its id is the
   * seq of the rewind's board.rewound, not its undo point: two identical applies racing may both
   * land (the second finds the graph it expects, leases aside) and then share an undo point, yet
   * each is a rewind applied. `undo`: the point applied was an earlier rewind's undo point.
   */
  private async audit(
    call: BoardCall,
    applied: RewindApplied,
    seq: number | null,
    from: string,
    undo: boolean,
    now: number,
    origin: RequestOrigin,
  ): Promise<void> {
    const data = {
      restorePointId: applied.restorePointId,
      undoPointId: applied.undoPointId,
      from,
      to: applied.fingerprint,
      revokedLeases: applied.revokedLeases.length,
      undo,
    };
    const row = auditRow({
      id: `${call.boardId}:rewind:${seq ?? applied.undoPointId}`,
      at: now,
      actor: call.principal,
      action: 'board.rewind',
      projectId: call.boardId,
      origin,
      data,
    });
    await auditCommitted(this.store, row, this.logger, 'rewind');
  }
}
