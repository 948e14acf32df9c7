// Rewind (contract Part 4 "Rewind", Pro only): the board's restore points, the preview of applying
// one, and the apply. Rules live in src/board/rewind.ts.
import { originOf } from '../audit-row.js';
import { z } from 'zod';
import { defineRoute, type Route } from '../http/route.js';
import { applyInput, Rewind, REWIND_CONFIRMATION, requirePro } from '../board/rewind.js';
import type { RouteDeps } from './deps.js';

const PreviewQuery = z.object({
  restorePointId: z
    .string()
    .optional()
    .describe('rp_<boardId>_<seq>, optionally ~W-<n> for that item and its subtree (1 to 181 characters).'),
});
const RewindPreviewResponse = z.object({
  projectId: z.string(),
  currentFingerprint: z.string(),
  points: z.array(
    z.object({
      restorePointId: z.string(),
      capturedAt: z.string(),
      reason: z.string(),
      itemCount: z.number().int(),
      fingerprint: z.string(),
    }),
  ),
  preview: z
    .object({
      restorePointId: z.string(),
      fingerprint: z.string(),
      added: z.array(z.string()),
      removed: z.array(z.string()),
      changed: z.array(z.object({ workId: z.string(), fields: z.array(z.string()) })),
    })
    .optional(),
});

/**
 * Each field is checked in DOMAIN.md's order by applyInput, so a missing or wrong one gets its own
 * code (REWIND_CONFIRMATION_REQUIRED, REWIND_VERSION_REQUIRED, INVALID_REWIND_POINT) rather than
 * INVALID_INPUT; the documented shapes are what it accepts.
 */
const ApplyBody = z
  .strictObject({
    restorePointId: z.unknown().optional().meta({
      type: 'string',
      minLength: 1,
      maxLength: 181,
      description: 'A restorePointId from the preview, optionally ~W-<n> to restore that item and its subtree only.',
    }),
    confirm: z
      .unknown()
      .optional()
      .meta({ type: 'string', enum: [REWIND_CONFIRMATION] }),
    expectedFingerprint: z.unknown().optional().meta({
      type: 'string',
      pattern: '^sha256:[a-f0-9]{64}$',
      description: 'The currentFingerprint the preview gave.',
    }),
  })
  .meta({ required: ['restorePointId', 'confirm', 'expectedFingerprint'] })
  .transform((body) => applyInput(body));
const RevokedLease = z.object({ workId: z.string(), holder: z.string(), purpose: z.enum(['work', 'verify']) });
const RewindApplyResponse = z.object({
  projectId: z.string(),
  restorePointId: z.string(),
  undoPointId: z
    .string()
    .describe('An ordinary restore point holding the graph this rewind replaced: applying it undoes the rewind.'),
  fingerprint: z.string().describe('The board’s fingerprint after the rewind.'),
  revokedLeases: z
    .array(RevokedLease)
    .describe('The leases the rewind ended (their holders hear lease.revoked with reason rewound).'),
});

/** What the rewind routes use of the server's dependencies. */
export type RewindDeps = Pick<RouteDeps, 'store' | 'boards' | 'logger'>;

export function rewindRoutes(deps: RewindDeps): Route[] {
  const rewind = new Rewind(deps.store, deps.boards, deps.logger);
  return [
    defineRoute<undefined, z.infer<typeof PreviewQuery>>({
      method: 'get',
      path: '/api/account/rewind',
      group: 'rewind',
      summary:
        'The board’s restore points, newest first; with restorePointId, what applying it would change (writes nothing). Owner or admin, Pro.',
      description:
        'Points are captured before a batch, an override, a reopen, an operator’s state move and a rewind, kept per the plan’s history retention and at most the newest 500. ' +
        'A Free board keeps its newest 20 points of the last 24 hours all the same, so a board made Pro after a mishap can be restored: on a Free board this answers 409 BILLING_PRO_REQUIRED with those points in `error.details.points` (what Pro would restore). ' +
        'A paused board (PATCH /api/projects/{projectId} `paused`) stands still for preview and apply: pause, preview, apply, resume. ' +
        'A member or viewer is refused 403 PROJECT_SCOPE_DENIED. A restorePointId that is malformed, or whose `~W-<n>` the point does not hold, is 400 INVALID_REWIND_POINT; a point whose stored content no longer hashes to its fingerprint cannot be previewed (503 SNAPSHOT_UNAVAILABLE; the apply refuses it 422 REWIND_SLICE_INTEGRITY).',
      auth: 'session',
      bodyKind: 'none',
      project: 'required',
      query: PreviewQuery,
      rate: 'none',
      errors: ['INVALID_REWIND_POINT', 'REWIND_POINT_NOT_FOUND', 'BILLING_PRO_REQUIRED', 'SNAPSHOT_UNAVAILABLE'],
      responses: { 200: { description: 'Points and, when asked, the preview.', schema: RewindPreviewResponse } },
      async handler({ ctx, query }) {
        const call = rewind.enter(ctx, 'admin');
        await rewind.requirePro(call, ctx.project!.plan);
        return { status: 200, body: await rewind.preview(call, query.restorePointId) };
      },
    }),
    defineRoute<z.output<typeof ApplyBody>, undefined>({
      method: 'post',
      path: '/api/account/rewind',
      sends: ['rewind'],
      group: 'rewind',
      refusedWhileImpersonating: true,
      summary: 'Swap the board’s work graph (or one subtree of it) for a restore point’s, undoably. Owner, Pro.',
      description:
        'Anyone but the owner is refused 403 PROJECT_SCOPE_DENIED. The body is checked in this order: confirm, expectedFingerprint, restorePointId’s form, the point exists, its content still hashes to its fingerprint, the board’s fingerprint is still expectedFingerprint, a slice fits the current graph. Then an undo point is kept and the swap is one version-checked commit: leases on replaced items end (lease.revoked, reason rewound), claimed and verifying items without their lease return to ready and awaiting_verify, board.rewound goes to the board’s sockets, an audit row is appended. Work ids and fencing tokens never go backwards; no other board changes. A paused board takes a rewind (and nothing else that changes its graph), so pausing first lets preview and apply land while a fleet works.',
      auth: 'session',
      bodyKind: 'json',
      body: ApplyBody,
      project: 'required',
      rate: 'write',
      rateHeaders: true,
      errors: [
        'INVALID_REWIND_POINT',
        'INVALID_REWIND_SLICE',
        'REWIND_CONFIRMATION_REQUIRED',
        'REWIND_VERSION_REQUIRED',
        'REWIND_POINT_NOT_FOUND',
        'BILLING_PRO_REQUIRED',
        'REWIND_VERSION_MISMATCH',
        'REWIND_SLICE_INTEGRITY',
        'REWIND_SLICE_SCOPE',
        'BOARD_BUSY',
        'SNAPSHOT_UNAVAILABLE',
      ],
      responses: { 200: { description: 'Rewound; the undo point and the leases ended.', schema: RewindApplyResponse } },
      async handler({ ctx, body }) {
        const call = rewind.enter(ctx, 'owner');
        requirePro(ctx.project!.plan);
        return { status: 200, body: await rewind.apply(call, body, ctx.project!.plan, ctx.now, originOf(ctx)) };
      },
    }),
  ];
}
