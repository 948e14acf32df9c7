// Doctrine: what a fleet agrees on (DOMAIN.md "Doctrine and spec"). The routes parse and bind;
// src/board/doctrine.ts holds the rules, the board's actor decides every change.
import { z } from 'zod';
import { DOCTRINE_LEVELS, DOCTRINE_STATUSES } from '../../machines/doctrine-machine.js';
import { DoctrineDesk, SLUG } from '../board/doctrine.js';
import { defineRoute, type Route } from '../http/route.js';
import type { ErrorCode } from '../errors/registry.js';
import type { RouteDeps } from './deps.js';
import { Digest } from '../board/schemas.js';

const ProposeInput = z.strictObject({
  slug: z.string().regex(SLUG, 'must be 1 to 64 lowercase letters, digits and dashes, starting with a letter or digit'),
  title: z.string().trim().min(1).max(200),
  text: z.string().trim().min(1).max(4000),
  expectedDigest: Digest.optional().describe(
    'The answer a blind test must give. Admins only (403 ROLE_REQUIRED for a member). Never shown again: reads say only `expectedDigestSet`.',
  ),
});
const NoBody = z.strictObject({}).optional();
const RatifyInput = z
  .strictObject({
    expectedDigest: Digest.optional().describe(
      'Sets (or replaces) the answer blind tests are checked against. Never shown again.',
    ),
  })
  .optional();
const RejectInput = z.strictObject({ reason: z.string().trim().min(1).max(500).optional() }).optional();
const LevelInput = z.strictObject({ level: z.enum(DOCTRINE_LEVELS) });
const BlindTestInput = z.strictObject({
  answerDigest: Digest.describe(
    'The digest of the agent’s answer, worked out without being shown the entry’s expected one.',
  ),
});

export const DoctrineView = z.object({
  slug: z.string(),
  title: z.string(),
  text: z.string(),
  level: z.enum(DOCTRINE_LEVELS),
  status: z.enum(DOCTRINE_STATUSES),
  proposedBy: z.string(),
  agreements: z.number().int().describe('How many principals agreed (one agreement per principal).'),
  agreedBy: z.array(z.string()),
  expectedDigestSet: z
    .boolean()
    .describe('Whether blind tests can be taken: the expected digest itself is never shown.'),
  blindTests: z.object({
    pass: z.number().int(),
    fail: z.number().int(),
    recent: z
      .array(z.object({ by: z.string(), result: z.enum(['pass', 'fail']), at: z.string() }))
      .describe('The last 20 results, oldest first.'),
  }),
  rejectedReason: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  version: z.number().int(),
});
const Reply = z.object({ entry: DoctrineView });

const base = { group: 'doctrine', auth: 'bearer-or-session', project: 'required', rateHeaders: true } as const;
/** Every action on a named entry. */
const ON_ENTRY: ErrorCode[] = ['DOCTRINE_NOT_FOUND', 'INVALID_TRANSITION', 'ROLE_REQUIRED', 'BOARD_BUSY'];
const LIFECYCLE =
  'Statuses: proposed → ratified or rejected; rejected → ratified; ratified → rejected. An action the status does not take is 409 INVALID_TRANSITION with `details.state` and `details.allowed`. ' +
  'Every change is a board event (`doctrine.*`, workId null, the entry’s view in `data.entry`) in the same log as the items’, pushed to sockets.';

/** What the doctrine routes use of the server's dependencies. */
export type DoctrineDeps = Pick<RouteDeps, 'boards'>;

export function doctrineRoutes(deps: DoctrineDeps): Route[] {
  const desk = new DoctrineDesk(deps.boards);
  return [
    defineRoute({
      ...base,
      method: 'get',
      path: '/api/doctrine',
      summary: 'The board’s doctrine entries (viewer): level, status, agreements, blind-test results.',
      bodyKind: 'none',
      rate: 'read',
      errors: ['ROLE_REQUIRED'],
      responses: {
        200: { description: 'Every entry, by slug.', schema: z.object({ entries: z.array(DoctrineView) }) },
      },
      handler: async ({ ctx }) => ({ status: 200, body: await desk.list(ctx) }),
    }),
    defineRoute<z.infer<typeof ProposeInput>, undefined>({
      ...base,
      method: 'post',
      path: '/api/doctrine',
      sends: ['propose-doctrine'],
      summary: 'Propose a doctrine entry (member); it starts proposed, at level advisory.',
      description: `Slugs are unique on the board and entries are never deleted, so a slug taken by an entry of any status is 409 DOCTRINE_EXISTS. Only an admin may set \`expectedDigest\`. ${LIFECYCLE}`,
      bodyKind: 'json',
      body: ProposeInput,
      rate: 'write',
      errors: ['DOCTRINE_EXISTS', 'ROLE_REQUIRED', 'BOARD_BUSY'],
      responses: { 201: { description: 'Proposed.', schema: DoctrineView } },
      handler: async ({ ctx, body }) => ({ status: 201, body: await desk.propose(ctx, body) }),
    }),
    defineRoute<z.infer<typeof NoBody>, undefined>({
      ...base,
      method: 'post',
      path: '/api/doctrine/{slug}/agree',
      sends: ['doctrine'],
      summary: 'Agree with a proposed or ratified entry (member); once per principal.',
      description: `A principal that agreed already gets the entry unchanged with \`already: true\`, and nothing is logged. ${LIFECYCLE}`,
      bodyKind: 'optional-json',
      body: NoBody,
      rate: 'write',
      errors: ON_ENTRY,
      responses: {
        200: {
          description: 'The entry with this agreement.',
          schema: Reply.extend({ already: z.literal(true).optional() }),
        },
      },
      handler: async ({ ctx }) => ({ status: 200, body: await desk.agree(ctx, ctx.params.slug) }),
    }),
    defineRoute<z.infer<typeof RatifyInput>, undefined>({
      ...base,
      method: 'post',
      path: '/api/doctrine/{slug}/ratify',
      sends: ['doctrine'],
      summary:
        'Ratify a proposed or rejected entry (admin), optionally setting the expected answer digest for blind tests.',
      description: LIFECYCLE,
      bodyKind: 'optional-json',
      body: RatifyInput,
      rate: 'write',
      errors: ON_ENTRY,
      responses: { 200: { description: 'The entry, ratified.', schema: Reply } },
      handler: async ({ ctx, body }) => ({
        status: 200,
        body: await desk.ratify(ctx, ctx.params.slug, body?.expectedDigest),
      }),
    }),
    defineRoute<z.infer<typeof RejectInput>, undefined>({
      ...base,
      method: 'post',
      path: '/api/doctrine/{slug}/reject',
      sends: ['doctrine'],
      summary:
        'Reject a proposed or ratified entry (admin), with an optional reason. It stays on the board and may be ratified later.',
      description: LIFECYCLE,
      bodyKind: 'optional-json',
      body: RejectInput,
      rate: 'write',
      errors: ON_ENTRY,
      responses: { 200: { description: 'The entry, rejected.', schema: Reply } },
      handler: async ({ ctx, body }) => ({
        status: 200,
        body: await desk.reject(ctx, ctx.params.slug, body?.reason),
      }),
    }),
    defineRoute<z.infer<typeof LevelInput>, undefined>({
      ...base,
      method: 'post',
      path: '/api/doctrine/{slug}/level',
      sends: ['doctrine'],
      summary: 'Set the level of a proposed or ratified entry (admin): advisory, expected or required.',
      description: `Setting the level it has changes nothing and logs nothing. ${LIFECYCLE}`,
      bodyKind: 'json',
      body: LevelInput,
      rate: 'write',
      errors: ON_ENTRY,
      responses: { 200: { description: 'The entry at its level.', schema: Reply } },
      handler: async ({ ctx, body }) => ({
        status: 200,
        body: await desk.level(ctx, ctx.params.slug, body.level),
      }),
    }),
    defineRoute<z.infer<typeof BlindTestInput>, undefined>({
      ...base,
      method: 'post',
      path: '/api/doctrine/{slug}/blind-test',
      sends: ['doctrine'],
      summary:
        'Take a blind test of a ratified entry (member): post the digest of your answer; pass when it equals the entry’s expected digest.',
      description:
        'Digests only (`sha256:<64 hex>`), never the material. The result is kept with the entry (counters and the last 20 results) and counted in GET /api/metrics; the log says pass or fail, never a digest. ' +
        `An entry with no expected digest is 409 DOCTRINE_BLIND_TEST_UNSET. ${LIFECYCLE}`,
      bodyKind: 'json',
      body: BlindTestInput,
      rate: 'write',
      errors: [...ON_ENTRY, 'DOCTRINE_BLIND_TEST_UNSET'],
      responses: {
        200: {
          description: 'The result and the entry with it.',
          schema: Reply.extend({ result: z.enum(['pass', 'fail']) }),
        },
      },
      handler: async ({ ctx, body }) => ({
        status: 200,
        body: await desk.blindTest(ctx, ctx.params.slug, body.answerDigest),
      }),
    }),
  ];
}
