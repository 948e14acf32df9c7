// Agent onboarding (DOMAIN.md "Agent onboarding"): enrollment codes, claim nonces, provisioning and anonymous boards.
// Rules live in src/accounts/: enrollment.ts, claim-nonce.ts, anonymous.ts, provision.ts (and claim-board.ts, onboarding.ts beneath them).
import { z } from 'zod';
import { originOf } from '../audit-row.js';
import { AnonymousBoards } from '../accounts/anonymous.js';
import { ClaimNonces } from '../accounts/claim-nonce.js';
import { Enrollments } from '../accounts/enrollment.js';
import { summaryOf } from '../accounts/onboarding.js';
import { MAX_AGENTS_PER_PROVISION, provisionBoard } from '../accounts/provision.js';
import { PROJECT_ID } from '../auth/project-selection.js';
import { AppError } from '../errors/app-error.js';
import { defineRoute, type Route } from '../http/route.js';
import type { RouteDeps } from './deps.js';
import { AgentName, ProjectName, ProjectSummary } from './schemas.js';
import { committedAudit } from '../board/committed-audit.js';
import { PublicToken } from './tokens.js';

/** An enrolled agent acts as a member at most (DOMAIN.md: a workspace token acts as member unless issued lower): whoever holds the code is nobody in particular. */
const Role = z.enum(['member', 'viewer']);
const Secret = z.string().min(1).max(200);

const EnrollBody = z.strictObject({
  role: Role.optional().describe(
    'The role of the agents enrolled with the code: member (the default) or viewer. Admin tokens are issued one by one, by a signed-in person (POST /api/accounts/tokens).',
  ),
  uses: z.number().int().min(1).max(100).describe('How many agents may enroll with the code.'),
  ttlSeconds: z.number().int().min(60).max(86_400).describe('How long the code stays good.'),
});
const CodeId = z
  .string()
  .describe('The code’s id (the sha256 it is stored under): it lists and revokes the code, and enrolls nobody.');
const EnrollCode = z.object({
  id: CodeId,
  code: z.string().describe('Shown once: only its sha256 is kept.'),
  projectId: z.string(),
  role: Role,
  uses: z.number().int(),
  expiresAt: z.string(),
});
const LiveCode = z.object({
  id: CodeId,
  role: Role,
  usesLeft: z.number().int(),
  createdAt: z.string(),
  expiresAt: z.string(),
});
const RedeemBody = z.strictObject({ code: Secret, name: AgentName.describe('The new agent’s token name.') });
const Issued = z.object({
  token: PublicToken,
  secret: z.string().describe('The token’s secret: in this response only.'),
});
const ClaimNonce = z.object({
  projectId: z.string(),
  nonce: z.string().describe('Single use, 15 minutes; only its sha256 is kept.'),
  link: z.string().describe('The page where a signed-in person takes the board over: hand it to one.'),
  expiresAt: z.string(),
});
const ClaimBody = z.strictObject({
  nonce: Secret,
  preview: z
    .boolean()
    .optional()
    .describe('Check everything (nonce, board, your board limit) and show the board, spending and changing nothing.'),
});
const BoardGlance = z.object({
  projectId: z.string(),
  name: z.string(),
  itemCount: z.number().int(),
  agentCount: z.number().int(),
  lastActivityAt: z.string(),
});
export const ClaimResponse = z.object({
  claimed: z.boolean().describe('false for a preview.'),
  board: BoardGlance.describe('The board as it was before the claim.'),
  project: ProjectSummary.nullable().describe('The board as you now list it; null for a preview.'),
});
const AnonBody = z
  .strictObject({
    projectName: ProjectName.optional(),
    agentName: AgentName.optional().describe('The agent’s token name (default "agent").'),
  })
  .optional();
const AnonBoard = z.object({
  accountId: z.string(),
  projectId: z.string(),
  token: PublicToken,
  secret: z.string().describe('The agent’s workspace token: in this response only.'),
  claimSecret: z
    .string()
    .describe(
      'Give it to the person who should own the board (POST /api/accounts/claim-anonymous): in this response only.',
    ),
  expiresAt: z.string().describe('When the account and its board are deleted unless claimed.'),
});
const ClaimAnonymousBody = z.strictObject({ claimSecret: Secret });
const ProvisionBody = z.strictObject({
  projectName: ProjectName,
  agents: z.array(AgentName).max(MAX_AGENTS_PER_PROVISION).describe('One workspace token (member) per name.'),
});
const Provisioned = z.object({ project: ProjectSummary, agents: z.array(Issued) });

const checkedId = (projectId: string): string => {
  if (!PROJECT_ID.test(projectId))
    throw new AppError('INVALID_PROJECT_ID', 'projectId must be 1 to 64 letters, digits, "-" or "_".');
  return projectId;
};

/** What the onboarding routes use of the server's dependencies. */
export type OnboardingDeps = Pick<RouteDeps, 'config' | 'store' | 'selector' | 'logger'>;

export function onboardingRoutes(deps: OnboardingDeps): Route[] {
  const { store, selector } = deps;
  const audit = committedAudit(store, deps.logger);
  const enrollments = new Enrollments(store, selector, audit);
  const nonces = new ClaimNonces(store, selector, deps.config.publicUrl);
  const anonymous = new AnonymousBoards(store, selector, audit);
  const group = 'onboarding';

  /** Who may mint a board's codes may list and revoke them (Enrollments checks the role). */
  const enrolling = {
    group,
    auth: 'bearer-or-session',
    accountScope: true,
    rateHeaders: true,
  } as const;

  const family = (base: '/api/projects' | '/api/boards'): Route[] => [
    defineRoute<z.infer<typeof EnrollBody>, undefined>({
      ...enrolling,
      method: 'post',
      path: `${base}/{projectId}/agents/enroll`,
      refusedWhileImpersonating: true,
      summary: 'Mint an enrollment code: agents holding it get workspace tokens on this board (admin or owner).',
      description:
        'Sessions and account-scoped tokens. The code is in this response only (its sha256 is stored, and is its `id`); it is good for `uses` agents until `ttlSeconds` pass (a token’s code no longer than the token), or until revoked. ' +
        'Each agent redeems it with POST /api/projects/enroll and gets a token issued as you would issue it, so a code dies with your role on the board (or with your token). ' +
        'Audited (enrollment.mint), by the code’s id, never the code.',
      bodyKind: 'json',
      body: EnrollBody,
      rate: 'write',
      errors: ['INVALID_PROJECT_ID', 'PROJECT_SCOPE_DENIED', 'ROLE_REQUIRED'],
      responses: { 201: { description: 'Minted.', schema: EnrollCode } },
      async handler({ ctx, body }) {
        return {
          status: 201,
          body: await enrollments.mint(ctx.identity!, checkedId(ctx.params.projectId!), body, ctx.now, originOf(ctx)),
        };
      },
    }),
    defineRoute({
      ...enrolling,
      method: 'get',
      path: `${base}/{projectId}/agents/enroll`,
      summary: 'The board’s live enrollment codes, by id, newest first (admin or owner).',
      description:
        'Those that still admit agents: not spent, expired or revoked. Each by its `id`, never the code itself, with its role and the uses it has left.',
      bodyKind: 'none',
      rate: 'read',
      errors: ['INVALID_PROJECT_ID', 'PROJECT_SCOPE_DENIED', 'ROLE_REQUIRED'],
      responses: { 200: { description: 'Live codes.', schema: z.object({ codes: z.array(LiveCode) }) } },
      async handler({ ctx }) {
        return {
          status: 200,
          body: { codes: await enrollments.list(ctx.identity!, checkedId(ctx.params.projectId!), ctx.now) },
        };
      },
    }),
    defineRoute({
      ...enrolling,
      method: 'delete',
      path: `${base}/{projectId}/agents/enroll/{codeId}`,
      refusedWhileImpersonating: true,
      summary: 'Revoke one enrollment code of the board before its uses or time run out (admin or owner).',
      description:
        'Whoever may mint the board’s codes may revoke any of them, by the `id` minting answered (or GET …/agents/enroll lists). From the answer on, the code enrolls nobody (400 INVALID_LINK_TOKEN), not even an agent whose redemption was under way: it gets no token. ' +
        'Agents enrolled before keep their tokens (revoke those with DELETE /api/accounts/tokens/{tokenId}). An unknown, spent, expired or already revoked code is 404 ENROLLMENT_CODE_NOT_FOUND. Audited (enrollment.revoke), by the code’s id.',
      bodyKind: 'none',
      rate: 'write',
      errors: ['INVALID_PROJECT_ID', 'PROJECT_SCOPE_DENIED', 'ROLE_REQUIRED', 'ENROLLMENT_CODE_NOT_FOUND'],
      responses: { 204: { description: 'Revoked.' } },
      async handler({ ctx }) {
        const projectId = checkedId(ctx.params.projectId!);
        await enrollments.revoke(ctx.identity!, projectId, ctx.params.codeId!, ctx.now, originOf(ctx));
        return { status: 204 };
      },
    }),
    defineRoute<z.infer<typeof RedeemBody>, undefined>({
      method: 'post',
      path: `${base}/enroll`,
      group,
      summary: 'Redeem an enrollment code: one use spent, a workspace token for a new agent on the code’s board.',
      description:
        'No credential: the code is the credential. Rate limited per socket address. Of two redemptions of the last use exactly one gets a token. ' +
        'An unknown, spent or expired code, or one whose maker can no longer admit agents, is 400 INVALID_LINK_TOKEN.',
      auth: 'none',
      bodyKind: 'json',
      body: RedeemBody,
      rate: 'address',
      errors: ['INVALID_LINK_TOKEN', 'AUTH_UNAVAILABLE', 'BOARD_BUSY'],
      responses: { 201: { description: 'Enrolled; the secret is in this response only.', schema: Issued } },
      async handler({ ctx, body }) {
        return { status: 201, body: await enrollments.redeem(body.code, body.name, ctx.now, originOf(ctx)) };
      },
    }),
    defineRoute({
      method: 'post',
      path: `${base}/{projectId}/claim-nonce`,
      group,
      refusedWhileImpersonating: true,
      summary: 'A single-use link (15 minutes) for a person to take this anonymous board over.',
      description:
        'Called by the board’s own agent token (or another credential of its owner). Only boards of an anonymous account (POST /api/accounts/anon-provision) can be handed over this way: others are 409 BOARD_NOT_ANONYMOUS. ' +
        'Hand `link` to the person; they open it signed in and claim the board (POST /api/projects/{projectId}/claim). A board holds at most 5 live links: a sixth replaces the oldest.',
      auth: 'bearer-or-session',
      bodyKind: 'optional-json',
      body: z.strictObject({}).optional(),
      rate: 'write',
      rateHeaders: true,
      errors: ['INVALID_PROJECT_ID', 'PROJECT_SCOPE_DENIED', 'ROLE_REQUIRED', 'BOARD_NOT_ANONYMOUS'],
      responses: { 201: { description: 'The nonce and its link.', schema: ClaimNonce } },
      async handler({ ctx }) {
        return { status: 201, body: await nonces.mint(ctx.identity!, checkedId(ctx.params.projectId!), ctx.now) };
      },
    }),
    defineRoute<z.infer<typeof ClaimBody>, undefined>({
      method: 'post',
      path: `${base}/{projectId}/claim`,
      group,
      refusedWhileImpersonating: true,
      summary: 'Take an anonymous board over with the nonce its agent handed you (signed-in person).',
      description:
        'Spends the nonce and makes you the board’s owner, within your board limit (403 FREE_PROJECT_LIMIT) and the 500 tokens an account holds, its agents’ tokens included (400 INVALID_INPUT; nothing moved). The board’s items, log and agent tokens stay as they are; the tokens now belong to your account. ' +
        'With `preview: true` nothing is spent or changed. A used, expired or unknown nonce is 400 INVALID_LINK_TOKEN; of two claims of the board (by nonce or claim secret) exactly one succeeds. ' +
        'A claim accepted and then cut short by a failure (503) is yours: call again to finish it; nobody else can take the board meanwhile, and otherwise the service finishes it for you later.',
      auth: 'session',
      bodyKind: 'json',
      body: ClaimBody,
      rate: 'write',
      rateHeaders: true,
      errors: ['INVALID_PROJECT_ID', 'INVALID_LINK_TOKEN', 'FREE_PROJECT_LIMIT', 'ACCOUNT_BUSY'],
      responses: { 200: { description: 'Claimed (or previewed).', schema: ClaimResponse } },
      async handler({ ctx, body }) {
        const accountId = ctx.identity!.accountId;
        const projectId = checkedId(ctx.params.projectId!);
        const preview = body.preview === true;
        const board = await nonces.claim(accountId, projectId, body.nonce, ctx.now, preview, originOf(ctx));
        return {
          status: 200,
          body: { claimed: !preview, board, project: preview ? null : await summaryOf(store, accountId, projectId) },
        };
      },
    }),
  ];

  return [
    ...family('/api/projects'),
    ...family('/api/boards'),
    defineRoute<z.infer<typeof AnonBody>, undefined>({
      method: 'post',
      path: '/api/accounts/anon-provision',
      group,
      summary: 'An anonymous account with one Free board, a workspace token for its agent, and a claim secret.',
      description:
        'No credential; rate limited per socket address. The agent works on the board at once. A person takes it over with the claim secret (POST /api/accounts/claim-anonymous) or a claim link (POST /api/projects/{projectId}/claim-nonce); ' +
        'an account still unclaimed at `expiresAt` (7 days on) is deleted with its board. Nobody can sign in as it.',
      auth: 'none',
      bodyKind: 'optional-json',
      body: AnonBody,
      rate: 'address',
      errors: ['INVALID_PROJECT_NAME', 'AUTH_UNAVAILABLE'],
      responses: { 201: { description: 'Provisioned; the secrets are in this response only.', schema: AnonBoard } },
      async handler({ ctx, body }) {
        return { status: 201, body: await anonymous.provision(body ?? {}, ctx.now, originOf(ctx)) };
      },
    }),
    defineRoute<z.infer<typeof ClaimAnonymousBody>, undefined>({
      method: 'post',
      path: '/api/accounts/claim-anonymous',
      group,
      refusedWhileImpersonating: true,
      summary: 'Take every board of an anonymous account over with its claim secret (signed-in person).',
      description:
        'Within your board limit (403 FREE_PROJECT_LIMIT, nothing moved) and the 500 tokens an account holds, the boards’ agents’ tokens included (400 INVALID_INPUT, nothing moved). The boards keep their items, log and agent tokens, which now belong to your account; the anonymous account ceases to exist. ' +
        'An unknown, used or expired secret is 400 INVALID_LINK_TOKEN. A claim accepted and then cut short by a failure (503) is yours: call again with the same secret to finish it; nobody else can take the boards meanwhile, and otherwise the service finishes it for you later.',
      auth: 'session',
      bodyKind: 'json',
      body: ClaimAnonymousBody,
      rate: 'write',
      rateHeaders: true,
      errors: ['INVALID_LINK_TOKEN', 'FREE_PROJECT_LIMIT', 'ACCOUNT_BUSY'],
      responses: {
        200: {
          description: 'The boards taken over, as you now list them.',
          schema: z.object({ projects: z.array(ProjectSummary) }),
        },
      },
      async handler({ ctx, body }) {
        const accountId = ctx.identity!.accountId;
        const boards = await anonymous.claim(accountId, body.claimSecret, ctx.now, originOf(ctx));
        return {
          status: 200,
          body: { projects: await Promise.all(boards.map((id) => summaryOf(store, accountId, id))) },
        };
      },
    }),
    defineRoute<z.infer<typeof ProvisionBody>, undefined>({
      method: 'post',
      path: '/api/accounts/provision',
      refusedWhileImpersonating: true,
      group,
      summary: 'Create a board and a workspace token for each named agent, in one call (for automation).',
      description:
        'Account-scoped tokens (and sessions); workspace and resource tokens are 403 PROJECT_SCOPE_DENIED. The board counts against the account’s board limit. ' +
        `At most ${MAX_AGENTS_PER_PROVISION} agents; the tokens are members of the board and, issued by a token, expire with it.`,
      auth: 'bearer-or-session',
      accountScope: true,
      bodyKind: 'json',
      body: ProvisionBody,
      rate: 'write',
      rateHeaders: true,
      errors: ['INVALID_PROJECT_NAME', 'FREE_PROJECT_LIMIT', 'ACCOUNT_BUSY'],
      responses: {
        201: {
          description: 'The board and its agents’ tokens; the secrets are in this response only.',
          schema: Provisioned,
        },
      },
      async handler({ ctx, body }) {
        const made = await provisionBoard({ store, selector, audit }, ctx.identity!, body, ctx.now, originOf(ctx));
        return {
          status: 201,
          body: { project: await summaryOf(store, ctx.identity!.accountId, made.projectId), agents: made.agents },
        };
      },
    }),
  ];
}
