// Coordination: claim (named or pull-next, for work or verification), lease renew/release,
// submit, supersede, verify. These draw on the request budget only (rate class lifecycle).
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { AppError } from '../errors/app-error.js';
import { defineRoute, type Route } from '../http/route.js';
import type { RouteDeps } from './deps.js';
import { CommitId, Digest, WorkId } from '../board/schemas.js';
import { LeaseGrant } from './board-schemas.js';
import { ForbiddenHead } from './schemas.js';

export const TTL_DEFAULT_S = 900;
export const TTL_MAX_S = 86_400;

const claimInput = (minTtl: number) =>
  z.strictObject({
    workId: WorkId.optional(),
    purpose: z.enum(['work', 'verify']).default('work'),
    ttlSeconds: z.number().int().min(minTtl).max(TTL_MAX_S).default(TTL_DEFAULT_S),
    head: ForbiddenHead,
  });
const leaseInput = (minTtl: number) =>
  z.strictObject({
    leaseId: z.string().min(1).max(100),
    action: z.enum(['renew', 'release']),
    ttlSeconds: z.number().int().min(minTtl).max(TTL_MAX_S).optional(),
  });
type ClaimInput = z.infer<ReturnType<typeof claimInput>>;
type LeaseInput = z.infer<ReturnType<typeof leaseInput>>;
const SubmitInput = z.strictObject({ leaseId: z.string().min(1).max(100), head: CommitId });
const SupersedeInput = z.strictObject({ workId: WorkId, head: CommitId });
const VerifyInput = z.strictObject({
  workId: WorkId,
  head: CommitId,
  verdict: z.enum(['pass', 'fail']),
  finding: Digest.optional(),
  evidence: z
    .array(Digest)
    .max(20)
    .optional()
    .describe(
      'Digests of the evidence you kept for this verdict (never the material): kept on the item’s verification and on its item.verified event.',
    ),
});

const StateReply = z.object({ workId: z.string(), state: z.string() });
const base = {
  group: 'coordination',
  auth: 'bearer-or-session',
  project: 'required',
  rateHeaders: true,
  rate: 'lifecycle',
  bodyKind: 'json',
} as const;

/** What the coordination routes use of the server's dependencies. */
export type CoordinationDeps = Pick<RouteDeps, 'config' | 'boards'>;

export function coordinationRoutes(deps: CoordinationDeps): Route[] {
  const { boards } = deps;
  const minTtl = deps.config.leaseMinTtlSeconds;
  const ClaimInput = claimInput(minTtl);
  const LeaseInput = leaseInput(minTtl);
  return [
    defineRoute<ClaimInput, undefined>({
      ...base,
      method: 'post',
      path: '/api/claim',
      sends: ['claim'],
      summary: 'Claim an item under an exclusive lease: the named one, or the head of the priority chain (pull-next).',
      description:
        '`purpose` work (ready items) or verify (items awaiting verification, by a principal independent of the submitter and of every work-lease holder since it last became ready). ' +
        `ttlSeconds ${minTtl}..${TTL_MAX_S}, default ${TTL_DEFAULT_S}. The grant carries leaseId (keep it private), a fencing token strictly increasing per item, expiresAt, and renewBy (half the lease). ` +
        'A claim repeated by the current holder (named, or pull-next while it holds a lease for that purpose) returns its lease unchanged; a refused claim names the holder and its expiry.',
      body: ClaimInput,
      errors: [
        'COMMIT_ID_FORBIDDEN',
        'ITEM_NOT_FOUND',
        'ITEM_NOT_READY',
        'NOTHING_READY',
        'VERIFY_NOT_INDEPENDENT',
        'ROLE_REQUIRED',
        'BOARD_BUSY',
      ],
      responses: { 200: { description: 'The lease.', schema: LeaseGrant } },
      async handler({ ctx, body }) {
        if (body.head !== undefined) throw new AppError('COMMIT_ID_FORBIDDEN', 'A claim takes no commit id.');
        const call =
          body.workId === undefined
            ? boards.enterWithin(ctx, 'member', 'claims')
            : boards.enter(ctx, 'member', 'claims', body.workId);
        const grant = await boards.ask(call, {
          kind: 'claim',
          input: {
            principal: call.principal,
            workId: body.workId ?? null,
            purpose: body.purpose,
            ttlMs: body.ttlSeconds * 1000,
            leaseId: `lease_${randomUUID()}`,
            within: call.within,
          },
        });
        return { status: 200, body: grant };
      },
    }),
    defineRoute<LeaseInput, undefined>({
      ...base,
      method: 'post',
      path: '/api/lease',
      sends: ['lease'],
      summary: 'Renew or release a held lease.',
      description:
        'Renewals never pass 24 h from the grant. A released work lease puts the item back to ready, or to pending while one of its dependencies is not done (reopened, or added by an edit while it was held); an expired one likewise. A stale or foreign lease id is LEASE_NOT_HELD, an expired one LEASE_EXPIRED; neither changes anything. A release repeated after its answer was lost (a 5xx) is answered as the first was; a lease its holder released or submitted under renews nothing (LEASE_NOT_HELD, not revoked).',
      body: LeaseInput,
      errors: ['LEASE_NOT_HELD', 'LEASE_EXPIRED', 'ROLE_REQUIRED', 'BOARD_BUSY'],
      responses: {
        200: {
          description:
            'The renewed lease, or null after a release; `revoked: true` with the reason when the item was blocked, cancelled, superseded, overridden or rewound under the holder, or (a verify lease) another verifier’s verdict ended it (`verified`).',
          schema: z.object({
            workId: z.string(),
            action: z.enum(['renew', 'release']),
            lease: LeaseGrant.nullable(),
            revoked: z.literal(true).optional(),
            reason: z.string().optional(),
          }),
        },
      },
      async handler({ ctx, body }) {
        const call = boards.enterWithin(ctx, 'member', 'claims');
        return {
          status: 200,
          body: await boards.ask(call, {
            kind: 'lease',
            input: {
              principal: call.principal,
              leaseId: body.leaseId,
              action: body.action,
              ttlMs: body.ttlSeconds === undefined ? null : body.ttlSeconds * 1000,
              within: call.within,
            },
          }),
        };
      },
    }),
    defineRoute<z.infer<typeof SubmitInput>, undefined>({
      ...base,
      method: 'post',
      path: '/api/submit',
      sends: ['submit'],
      summary: 'Submit the exact head commit produced under the lease; the lease ends.',
      description:
        'Items with verify none are done; verify required go to awaiting_verify for an independent verifier. A submit repeated after its answer was lost (a 5xx: the submission may have landed), by the same principal with the same lease and head, is answered with the item’s state as it now stands and changes nothing; another head under that lease is LEASE_NOT_HELD (supersede it instead).',
      body: SubmitInput,
      errors: ['LEASE_NOT_HELD', 'LEASE_EXPIRED', 'INVALID_TRANSITION', 'ROLE_REQUIRED', 'BOARD_BUSY'],
      responses: { 200: { description: 'The item’s new state.', schema: StateReply } },
      async handler({ ctx, body }) {
        const call = boards.enterWithin(ctx, 'member', 'claims');
        return {
          status: 200,
          body: await boards.ask(call, {
            kind: 'submit',
            input: { principal: call.principal, leaseId: body.leaseId, head: body.head, within: call.within },
          }),
        };
      },
    }),
    defineRoute<z.infer<typeof SupersedeInput>, undefined>({
      ...base,
      method: 'post',
      path: '/api/supersede',
      sends: ['event'],
      summary: 'Replace the submitted head with a newer one (the submitter only); any verify lease is voided.',
      description:
        'A head the item already carries is HEAD_MISMATCH, except a supersede repeated after its answer was lost (a 5xx: it may have landed): the submitter naming the head its supersede gave is answered with the item’s state as it now stands, and nothing changes.',
      body: SupersedeInput,
      errors: ['ITEM_NOT_FOUND', 'NOT_SUBMITTER', 'HEAD_MISMATCH', 'INVALID_TRANSITION', 'ROLE_REQUIRED', 'BOARD_BUSY'],
      responses: { 200: { description: 'Awaiting verification of the new head.', schema: StateReply } },
      async handler({ ctx, body }) {
        const call = boards.enter(ctx, 'member', 'claims', body.workId);
        return {
          status: 200,
          body: await boards.ask(call, {
            kind: 'event',
            workId: body.workId,
            actor: call.principal,
            event: { type: 'SUPERSEDE', principal: call.principal, head: body.head },
          }),
        };
      },
    }),
    defineRoute<z.infer<typeof VerifyInput>, undefined>({
      ...base,
      method: 'post',
      path: '/api/verify',
      sends: ['event'],
      summary:
        'Record an independent verdict on the exact current head: pass completes the item, fail (with a finding digest) sends it back to ready, or to pending while one of its dependencies is not done.',
      description:
        'A verdict repeated after its answer was lost (a 5xx: it may have landed), by the same verifier with the same verdict, finding and evidence on the same head, is answered with the item’s state as it now stands and records nothing; a different verdict is refused as before.',
      body: VerifyInput,
      errors: [
        'ITEM_NOT_FOUND',
        'VERIFY_NOT_INDEPENDENT',
        'HEAD_MISMATCH',
        'EVIDENCE_EXISTS',
        'FINDING_REQUIRED',
        'INVALID_TRANSITION',
        'ROLE_REQUIRED',
        'BOARD_BUSY',
      ],
      responses: { 200: { description: 'The item’s new state.', schema: StateReply } },
      async handler({ ctx, body }) {
        const call = boards.enter(ctx, 'member', 'claims', body.workId);
        return {
          status: 200,
          body: await boards.ask(call, {
            kind: 'event',
            workId: body.workId,
            actor: call.principal,
            event: {
              type: 'VERIFY',
              principal: call.principal,
              head: body.head,
              verdict: body.verdict,
              finding: body.finding ?? null,
              ...(body.evidence?.length ? { evidence: body.evidence } : {}),
            },
          }),
        };
      },
    }),
  ];
}
