// Operator routes: people (DOMAIN.md "Operators"). Rules live in src/admin/people.ts; these only bind them.
// Every action (and every read of one account's data) writes an operator audit row whose target
// is `account:<id>` or `token:<id>`; destructive ones need a reason.
import { z } from 'zod';
import { DELETION_RETENTION_MS } from '../admin/deletion.js';
import { PeopleDesk } from '../admin/people.js';
import { defineRoute, type Route } from '../http/route.js';
import { PublicToken } from './tokens.js';
import type { RouteDeps } from './deps.js';
import { adminBase, AuditRow, NamedAccounts, PageQuery, Reason } from './admin-shared.js';

const UsersQuery = PageQuery.extend({
  q: z.string().trim().min(1).max(254).optional().describe('An email prefix (case-insensitive) or an account id.'),
  status: z
    .enum(['active', 'deleted'])
    .optional()
    .describe('Only accounts in this state; `deleted` alone lists deleted accounts, most recently deleted first.'),
});
const TokensQuery = PageQuery.extend({ userId: z.string().min(1).max(64) });
const ReasonBody = z.strictObject({ reason: Reason });
const PurgeBody = z.strictObject({
  reason: Reason,
  confirm: z.string().max(254).describe('The account’s exact email.'),
});

const UserRow = z.object({
  id: z.string(),
  email: z.string(),
  displayName: z.string().nullable(),
  emailVerified: z.boolean(),
  status: z.enum(['active', 'deleted']),
  plan: z.enum(['free', 'pro']),
  boards: z.object({ owned: z.number().int(), member: z.number().int() }),
  createdAt: z.string(),
  lastSignInAt: z.string().nullable(),
  deletedAt: z.string().nullable(),
  deletedBy: z.enum(['owner', 'operator']).nullable(),
  purgeAfter: z.string().nullable(),
});
const AdminToken = PublicToken.extend({ revoked: z.boolean() });
const UserDetail = z.object({
  user: UserRow,
  boards: z.array(
    z.object({
      projectId: z.string(),
      name: z.string(),
      ownerId: z.string(),
      ownerEmail: z.string().nullable().describe('The owning account’s address (null when that account is gone).'),
      role: z.string(),
      plan: z.enum(['free', 'pro']),
      owned: z.boolean(),
      closed: z.boolean(),
    }),
  ),
  tokens: z.array(AdminToken),
  billing: z.array(
    z.object({
      projectId: z.string(),
      status: z.string().nullable(),
      interval: z.enum(['month', 'year']).nullable(),
      currentPeriodEnd: z.string().nullable(),
      cancelAtPeriodEnd: z.boolean(),
      pastDueSince: z.string().nullable(),
    }),
  ),
  audit: z.object({ about: z.array(AuditRow), by: z.array(AuditRow), accounts: NamedAccounts }),
});
const Revoked = z.object({
  sessions: z.number().int(),
  tokens: z.number().int(),
  enrollments: z.number().int().describe('Enrollment codes the account or its tokens made, revoked.'),
  deviceGrants: z.number().int().describe('Device approvals it gave that no agent had collected, denied.'),
  invitations: z.number().int().describe('Invitations it sent that nobody had accepted, revoked.'),
  transfers: z.number().int().describe('Board ownership it offered that nobody had taken, cancelled.'),
});
const Closed = z.object({ user: UserRow, boards: z.array(z.string()) });

const DAYS = DELETION_RETENTION_MS / 86_400_000;

/** What the admin-people routes use of the server's dependencies. */
export type AdminPeopleDeps = Pick<RouteDeps, 'store' | 'revoke' | 'billing'>;

export function adminPeopleRoutes(deps: AdminPeopleDeps): Route[] {
  const people = new PeopleDesk(
    deps.store,
    (accountId, now) => deps.billing.cancelLiveSubscriptions(accountId, now),
    deps.revoke,
  );
  const user = '/api/admin/users/{userId}';

  return [
    defineRoute<undefined, z.infer<typeof UsersQuery>>({
      ...adminBase,
      method: 'get',
      path: '/api/admin/users',
      summary:
        'Find accounts by email prefix or id (or list the deleted ones): plan, boards, created, last sign-in, status.',
      description:
        'With `q`: an account id finds that account; anything else is an email prefix, answered in email order. With `status=deleted` alone: deleted accounts, most recently deleted first. One of the two is needed. Pages with `cursor`/`limit`.',
      bodyKind: 'none',
      query: UsersQuery,
      errors: ['INVALID_CURSOR'],
      responses: {
        200: {
          description: 'A page of accounts.',
          schema: z.object({ users: z.array(UserRow), nextCursor: z.string().nullable() }),
        },
      },
      async handler({ query }) {
        const page = await people.search(query);
        return { status: 200, body: { users: page.items, nextCursor: page.nextCursor } };
      },
    }),
    defineRoute({
      ...adminBase,
      method: 'get',
      path: user,
      summary:
        'One account: its boards and roles, tokens (never secrets or hashes), billing records, and recent audit rows about it and by it.',
      description: 'Reading an account’s data is audited (`admin.user.view`).',
      bodyKind: 'none',
      errors: [],
      responses: { 200: { description: 'The account.', schema: UserDetail } },
      async handler({ ctx }) {
        return { status: 200, body: await people.view(ctx, ctx.params.userId!) };
      },
    }),
    defineRoute<z.infer<typeof ReasonBody>, undefined>({
      ...adminBase,
      method: 'post',
      path: `${user}/revoke`,
      summary:
        'Revoke every session and token of the account, and what would act on its word later: enrollment codes, device approvals, invitations and transfers it offered; its sockets close on every node.',
      bodyKind: 'json',
      body: ReasonBody,
      errors: [],
      responses: { 200: { description: 'How many of each were revoked.', schema: Revoked } },
      async handler({ ctx, body }) {
        return { status: 200, body: await people.revoke(ctx, ctx.params.userId!, body.reason) };
      },
    }),
    defineRoute<undefined, z.infer<typeof TokensQuery>>({
      ...adminBase,
      method: 'get',
      path: '/api/admin/tokens',
      summary: 'An account’s service tokens, revoked ones too, newest first (never secrets or hashes).',
      description: 'Reading an account’s tokens is audited (`admin.tokens.view`).',
      bodyKind: 'none',
      query: TokensQuery,
      errors: ['INVALID_CURSOR'],
      responses: {
        200: {
          description: 'A page of tokens.',
          schema: z.object({ tokens: z.array(AdminToken), nextCursor: z.string().nullable() }),
        },
      },
      async handler({ ctx, query }) {
        const page = await people.tokens(ctx, query.userId, query);
        return { status: 200, body: { tokens: page.items, nextCursor: page.nextCursor } };
      },
    }),
    defineRoute<z.infer<typeof ReasonBody>, undefined>({
      ...adminBase,
      method: 'delete',
      path: '/api/admin/tokens/{tokenId}',
      summary: 'Revoke one service token; its sockets close on every node.',
      description: 'A token revoked already answers as revoked (`already: true`), and the action is audited again.',
      bodyKind: 'json',
      body: ReasonBody,
      errors: ['TOKEN_NOT_FOUND'],
      responses: {
        200: { description: 'The token, now revoked.', schema: z.object({ token: AdminToken, already: z.boolean() }) },
      },
      async handler({ ctx, body }) {
        return { status: 200, body: await people.revokeToken(ctx, ctx.params.tokenId!, body.reason) };
      },
    }),
    defineRoute<z.infer<typeof ReasonBody>, undefined>({
      ...adminBase,
      method: 'post',
      path: `${user}/delete`,
      summary: `Delete the account as its own deletion does: sign-in refused, sessions and tokens revoked, subscriptions cancelled, its boards closed; the data is kept ${DAYS} days.`,
      description: `Live subscriptions are cancelled first: when the provider cannot, nothing changes (502). After ${DAYS} days the purge sweep removes the data; POST .../restore undoes the deletion until then. Deleting a deleted account changes nothing more and answers it.`,
      bodyKind: 'json',
      body: ReasonBody,
      errors: ['PROVIDER_UNAVAILABLE', 'PROVIDER_REQUEST_FAILED', 'PROVIDER_RESPONSE_INVALID'],
      responses: { 200: { description: 'The deleted account and its closed boards.', schema: Closed } },
      async handler({ ctx, body }) {
        return { status: 200, body: await people.delete(ctx, ctx.params.userId!, body.reason) };
      },
    }),
    defineRoute<z.infer<typeof ReasonBody>, undefined>({
      ...adminBase,
      method: 'post',
      path: `${user}/restore`,
      summary: `Undo a deletion within its ${DAYS} days: sign-in allowed again, boards open. Revoked sessions and tokens stay revoked; cancelled subscriptions stay cancelled.`,
      bodyKind: 'json',
      body: ReasonBody,
      errors: ['ACCOUNT_NOT_RESTORABLE'],
      responses: { 200: { description: 'The restored account and its reopened boards.', schema: Closed } },
      async handler({ ctx, body }) {
        return { status: 200, body: await people.restore(ctx, ctx.params.userId!, body.reason) };
      },
    }),
    defineRoute<z.infer<typeof PurgeBody>, undefined>({
      ...adminBase,
      method: 'post',
      path: `${user}/purge`,
      summary:
        'Remove the account’s data now: its boards, memberships, tokens, sessions and the account itself. `confirm` is the account’s exact email.',
      description:
        'An account not deleted yet has its live subscriptions cancelled first (502 when the provider cannot; nothing changes). Audit rows stay.',
      bodyKind: 'json',
      body: PurgeBody,
      errors: [
        'ACCOUNT_DELETE_CONFIRM_MISMATCH',
        'PROVIDER_UNAVAILABLE',
        'PROVIDER_REQUEST_FAILED',
        'PROVIDER_RESPONSE_INVALID',
      ],
      responses: {
        200: {
          description: 'Purged: the boards deleted with it.',
          schema: z.object({ purged: z.literal(true), boards: z.array(z.string()) }),
        },
      },
      async handler({ ctx, body }) {
        return {
          status: 200,
          body: { purged: true, boards: await people.purge(ctx, ctx.params.userId!, body.confirm, body.reason) },
        };
      },
    }),
  ];
}
