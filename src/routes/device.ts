// The device flow (RFC 8628, DOMAIN.md "Agent onboarding"): start, look up, approve, poll. Rules live in src/accounts/device-flow.ts.
import { originOf } from '../audit-row.js';
import { z } from 'zod';
import {
  DEVICE_INTERVAL_S,
  DEVICE_MISSES_PER_HOUR,
  DEVICE_TTL_MS,
  DeviceFlow,
  MAX_INTERVAL_S,
  SLOW_DOWN_STEP_S,
} from '../accounts/device-flow.js';
import { USER_CODE_SHAPE } from '../accounts/device-codes.js';
import { ServiceTokens } from '../accounts/service-tokens.js';
import { committedAudit } from '../board/committed-audit.js';
import { PROJECT_ID } from '../auth/project-selection.js';
import type { SessionIdentity } from '../auth/identity.js';
import { defineRoute, type Route } from '../http/route.js';
import { PublicToken } from './tokens.js';
import type { RouteDeps } from './deps.js';
import { AgentName } from './schemas.js';

const ProjectId = z.string().regex(PROJECT_ID, 'must be 1 to 64 letters, digits, "-" or "_"');
const UserCode = z
  .string()
  .min(8)
  .max(9)
  .regex(USER_CODE_SHAPE, 'must be the 8-letter code the agent shows, XXXX-XXXX')
  .describe('The code the agent shows, `XXXX-XXXX`; any case, the dash optional.');

const StartBody = z.strictObject({
  clientName: AgentName.describe('The new agent’s name, shown to the person approving and given to its token.'),
  projectId: ProjectId.optional().describe(
    'The board the agent asks for: preselected on the approval page; the person approving picks the board in the end.',
  ),
});
const StartResponse = z.object({
  deviceCode: z.string().describe('The agent’s secret for polling; never show it.'),
  userCode: z.string().describe('`XXXX-XXXX`: show it to the person who approves.'),
  verificationUri: z.string(),
  verificationUriComplete: z.string().describe('verificationUri with the user code filled in.'),
  interval: z.number().int().describe('Seconds to wait between polls.'),
  expiresIn: z.number().int().describe('Seconds until the codes expire.'),
});
const LookupQuery = z.object({ userCode: UserCode });
const LookupResponse = z.object({
  userCode: z.string(),
  clientName: z.string(),
  requestedProjectId: z.string().nullable(),
  expiresAt: z.string(),
  tokenLifetimeDays: z
    .number()
    .int()
    .nullable()
    .describe(
      'How many days the agent’s token will work once issued (DEVICE_TOKEN_DAYS; null: until revoked). Extend it with PATCH /api/accounts/tokens/{tokenId} as the approver.',
    ),
});
const ApproveBody = z.strictObject({
  userCode: UserCode,
  projectId: ProjectId.describe('The board the agent’s token will work on.'),
  approve: z.boolean().describe('false denies the request.'),
});
const ApproveResponse = z.object({
  status: z.enum(['approved', 'denied']),
  clientName: z.string(),
  projectId: z.string(),
});
const PollBody = z.strictObject({ deviceCode: z.string().min(1).max(128) });
const PollResponse = z.object({
  token: PublicToken,
  secret: z.string().describe('The agent’s Bearer token: in this response only, and only once.'),
});

/** What the device routes use of the server's dependencies. */
export type DeviceDeps = Pick<RouteDeps, 'config' | 'store' | 'selector' | 'logger' | 'limiter' | 'userCodeDigest'>;

export function deviceRoutes(deps: DeviceDeps): Route[] {
  const flow = new DeviceFlow(
    deps.store,
    deps.selector,
    new ServiceTokens(deps.store, deps.selector, committedAudit(deps.store, deps.logger)),
    deps.config.publicUrl,
    deps.userCodeDigest,
    deps.limiter,
    deps.config.deviceTokenDays,
  );
  const group = 'onboarding';

  return [
    defineRoute<z.infer<typeof StartBody>, undefined>({
      method: 'post',
      path: '/api/auth/device/start',
      group,
      summary:
        'Start a device flow (RFC 8628): a device code for the agent to poll with, a user code for a person to approve.',
      description:
        `No credential; rate limited per socket address. The codes live ${DEVICE_TTL_MS / 60_000} minutes; neither is stored (the device code as its sha256, the user code as an HMAC under a server key). ` +
        'Show `userCode` and `verificationUriComplete` to a person: signed in at that page, they pick a board they administer and approve. Meanwhile poll POST /api/auth/device/poll every `interval` seconds.',
      auth: 'none',
      bodyKind: 'json',
      body: StartBody,
      rate: 'address',
      errors: ['AUTH_UNAVAILABLE'],
      responses: { 200: { description: 'Started.', schema: StartResponse } },
      async handler({ ctx, body }) {
        return { status: 200, body: await flow.start(body, ctx.now) };
      },
    }),
    defineRoute<undefined, z.infer<typeof LookupQuery>>({
      method: 'get',
      path: '/api/auth/device/lookup',
      group,
      summary:
        'What a pending user code asks for (the agent’s name and the board it asked for), so the person approving knows which agent it is.',
      description: `Rate limited per socket address, on the budget sign-up and sign-in draw on (not the board budgets), and per account: ${DEVICE_MISSES_PER_HOUR} codes not found in an hour (here or approving) and its lookups and approvals answer 429 RATE_LIMITED until the hour turns, so user codes cannot be guessed.`,
      auth: 'session',
      bodyKind: 'none',
      query: LookupQuery,
      rate: 'address',
      errors: ['DEVICE_CODE_NOT_FOUND'],
      responses: { 200: { description: 'The pending request.', schema: LookupResponse } },
      async handler({ ctx, query }) {
        return { status: 200, body: await flow.lookup(ctx.identity as SessionIdentity, query.userCode, ctx.now) };
      },
    }),
    defineRoute<z.infer<typeof ApproveBody>, undefined>({
      method: 'post',
      path: '/api/auth/device/approve',
      refusedWhileImpersonating: true,
      group,
      summary:
        'Approve or deny a device flow’s user code for one of your boards (admin or owner: approving issues the agent a token there).',
      description:
        'The board is checked first (unreachable: PROJECT_SCOPE_DENIED; below admin: ROLE_REQUIRED), then the code (unknown, expired or already decided: DEVICE_CODE_NOT_FOUND). ' +
        'On approval the agent’s next poll receives a workspace token, role member, issued on your behalf (your role is checked again then). Each decision is kept as an audit row of the board. ' +
        `Rate limited per socket address, on the budget sign-up and sign-in draw on (not the board budgets), and per account: ${DEVICE_MISSES_PER_HOUR} codes not found in an hour (here or looking up) and its lookups and approvals answer 429 RATE_LIMITED until the hour turns.`,
      auth: 'session',
      bodyKind: 'json',
      body: ApproveBody,
      rate: 'address',
      errors: ['DEVICE_CODE_NOT_FOUND', 'PROJECT_SCOPE_DENIED', 'ROLE_REQUIRED'],
      responses: { 200: { description: 'Decided.', schema: ApproveResponse } },
      async handler({ ctx, body }) {
        return { status: 200, body: await flow.approve(ctx.identity as SessionIdentity, body, ctx.now, originOf(ctx)) };
      },
    }),
    defineRoute<z.infer<typeof PollBody>, undefined>({
      method: 'post',
      path: '/api/auth/device/poll',
      group,
      summary:
        'Poll a device flow: pending, slow down, denied, expired, or (exactly once) the new agent’s workspace token.',
      description:
        `No credential; rate limited per socket address on a budget of its own (four times the address budget), so several agents behind one address can poll at the interval. Errors are RFC 8628’s: AUTHORIZATION_PENDING (poll again after \`details.interval\` seconds); SLOW_DOWN (polled within the interval: it grows by ${SLOW_DOWN_STEP_S} s for this code, to at most ${MAX_INTERVAL_S} s, and \`details.interval\` says the new one); ` +
        'ACCESS_DENIED (the person denied it, or can no longer issue tokens on the board); EXPIRED_TOKEN (past its 10 minutes); INVALID_DEVICE_CODE (unknown, or its token was already delivered). ' +
        `Start polling at ${DEVICE_INTERVAL_S} s. The token (a new agent named clientName, role member, on the approved board, working for DEVICE_TOKEN_DAYS days, 90 by default, until the approver extends or revokes it) is in the one successful answer only: a second poll, even a concurrent one, gets INVALID_DEVICE_CODE.`,
      auth: 'none',
      bodyKind: 'json',
      body: PollBody,
      rate: 'poll',
      errors: [
        'AUTHORIZATION_PENDING',
        'SLOW_DOWN',
        'ACCESS_DENIED',
        'EXPIRED_TOKEN',
        'INVALID_DEVICE_CODE',
        'AUTH_UNAVAILABLE',
      ],
      responses: { 200: { description: 'Approved: the token, once.', schema: PollResponse } },
      async handler({ ctx, body }) {
        return { status: 200, body: await flow.poll(body.deviceCode, ctx.now, originOf(ctx)) };
      },
    }),
  ];
}
