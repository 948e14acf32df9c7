// Rewind (contract Part 4 "Rewind", Pro only): the board's restore points and the preview of
// applying one. Rules live in src/board/rewind.ts.
import { z } from 'zod';
import { AppError } from '../errors/app-error.js';
import { defineRoute, type Route } from '../http/route.js';
import { Rewind } from '../board/rewind.js';
import type { RouteDeps } from './deps.js';

const PreviewQuery = z.object({ restorePointId: z.string().optional().describe('rp_<boardId>_<seq>, optionally ~W-<n> for that item and its subtree (1 to 181 characters).') });
const RewindPreviewResponse = z.object({
  projectId: z.string(),
  currentFingerprint: z.string(),
  points: z.array(z.object({ restorePointId: z.string(), capturedAt: z.string(), reason: z.string(), itemCount: z.number().int(), fingerprint: z.string() })),
  preview: z
    .object({ restorePointId: z.string(), fingerprint: z.string(), added: z.array(z.string()), removed: z.array(z.string()), changed: z.array(z.object({ workId: z.string(), fields: z.array(z.string()) })) })
    .optional(),
});

export function rewindRoutes(deps: RouteDeps): Route[] {
  const rewind = new Rewind(deps.store);
  return [
    defineRoute<undefined, z.infer<typeof PreviewQuery>>({
      method: 'get',
      path: '/api/account/rewind',
      group: 'rewind',
      summary: 'The board’s restore points, newest first; with restorePointId, what applying it would change (writes nothing). Owner or admin, Pro.',
      description: 'Points are captured on Pro boards before a batch, an override, a reopen, an operator’s state move and a rewind, kept per the plan’s history retention and at most the newest 500.',
      auth: 'session',
      bodyKind: 'none',
      project: 'required',
      query: PreviewQuery,
      rate: 'none',
      errors: ['INVALID_REWIND_POINT', 'INVALID_REWIND_SLICE', 'REWIND_POINT_NOT_FOUND', 'REWIND_SLICE_INTEGRITY', 'BILLING_PRO_REQUIRED', 'ROLE_REQUIRED', 'SNAPSHOT_UNAVAILABLE'],
      responses: { 200: { description: 'Points and, when asked, the preview.', schema: RewindPreviewResponse } },
      async handler({ ctx, query }) {
        if (ctx.project!.plan !== 'pro') throw new AppError('BILLING_PRO_REQUIRED', 'Rewind is a Pro feature; upgrade this board.');
        const call = deps.boards.enter(ctx, 'admin', 'history');
        return { status: 200, body: await rewind.preview(call, query.restorePointId) };
      },
    }),
  ];
}
