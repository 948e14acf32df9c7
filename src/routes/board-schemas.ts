// Inputs and views shared by the board surfaces. The forms of ids and digests are src/board/schemas.ts.
import { z } from 'zod';
import type { BoardItem } from '../../machines/board.js';
import { publicItem } from '../../machines/item-view.js';
import { DEPENDS_MAX } from '../board/commands.js';
import { Digest } from '../board/schemas.js';

export const ItemInput = z.strictObject({
  title: z.string().trim().min(1).max(200),
  description: z.string().max(4000).default(''),
  type: z.enum(['task', 'bug', 'chore', 'epic']).default('task'),
  priority: z.number().int().min(0).max(4).default(2),
  parentId: z.string().min(1).max(64).nullable().default(null),
  dependsOn: z.array(z.string().min(1).max(64)).max(DEPENDS_MAX).default([]),
  verify: z.enum(['none', 'required']).default('none'),
  maxAttempts: z.number().int().min(1).max(20).default(3),
  criteria: z.array(Digest).max(50).default([]),
  doctrine: z
    .array(z.string().regex(/^[a-z0-9-]{1,64}$/))
    .max(20)
    .default([]),
  spec: z.array(z.string().min(1).max(64)).max(20).default([]),
  labels: z.array(z.string().min(1).max(40)).max(20).default([]),
});

const Lease = z
  .object({
    holder: z.string(),
    purpose: z.enum(['work', 'verify']),
    fencingToken: z.number().int(),
    expiresAt: z.string(),
  })
  .nullable();

export const ItemView = z.object({
  workId: z.string(),
  title: z.string(),
  description: z.string(),
  type: z.string(),
  priority: z.number().int(),
  rank: z
    .number()
    .nullable()
    .describe(
      'Position given by a reorder (lowest first); null until then. Ready items go ranked first, then by priority, then by creation.',
    ),
  parentId: z.string().nullable(),
  dependsOn: z.array(z.string()),
  verify: z.enum(['none', 'required']),
  criteria: z.array(z.string()),
  doctrine: z.array(z.string()),
  spec: z.array(z.string()),
  labels: z.array(z.string()),
  state: z.string(),
  attempts: z.number().int(),
  maxAttempts: z.number().int(),
  lease: Lease,
  submission: z.object({ head: z.string(), by: z.string(), at: z.string() }).nullable(),
  verifications: z.array(
    z.object({
      by: z.string(),
      head: z.string(),
      verdict: z.enum(['pass', 'fail']),
      finding: z.string().nullable(),
      at: z.string(),
      evidence: z
        .array(z.string())
        .optional()
        .describe('The digests of the evidence the verifier sent with its verdict (absent when it sent none).'),
    }),
  ),
  finding: z.string().nullable(),
  overridden: z.object({ by: z.string(), reason: z.string(), at: z.string() }).nullable(),
  blockedReason: z.string().nullable(),
  progress: z.object({ note: z.string(), by: z.string(), at: z.string() }).nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  version: z.number().int(),
});

/** The item as callers see it: never its lease id (one shape with the events' patches, machines/item-view.ts). */
export function itemView(item: BoardItem): z.infer<typeof ItemView> {
  return publicItem(item);
}

export const LeaseGrant = z.object({
  workId: z.string(),
  leaseId: z.string(),
  purpose: z.enum(['work', 'verify']),
  fencingToken: z.number().int(),
  expiresAt: z.string(),
  renewBy: z.string(),
  hardExpiresAt: z.string(),
});
