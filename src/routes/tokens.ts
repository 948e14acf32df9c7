// Service tokens of the account: issue (secret shown once), list, rename or re-expire, revoke, reissue.
import { z } from 'zod';
import { ServiceTokens } from '../accounts/service-tokens.js';
import { originOf } from '../audit-row.js';
import { committedAudit } from '../board/committed-audit.js';
import { defineRoute, type Route } from '../http/route.js';
import type { RouteDeps } from './deps.js';

const RESOURCE = /^(W-\d{1,9}|items|claims|shouts|status|doctrine|spec|feedback|history)$/;

const IssueBody = z.strictObject({
  name: z.string().min(1).max(80),
  scope: z.enum(['account', 'workspace', 'resource']),
  projectId: z.string().min(1).max(64).optional(),
  role: z.enum(['admin', 'member', 'viewer']).optional(),
  resources: z
    .array(z.string().regex(RESOURCE, 'must be a work id (W-<n>) or an operation group'))
    .min(1)
    .max(100)
    .optional(),
  expiresAt: z.iso.datetime({ offset: true }).nullable().optional(),
});
const PatchBody = z.strictObject({
  name: z.string().min(1).max(80).optional(),
  expiresAt: z.iso.datetime({ offset: true }).nullable().optional(),
});

export const PublicToken = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  scope: z.enum(['account', 'workspace', 'resource']),
  projectId: z.string().nullable(),
  role: z.string().nullable(),
  resources: z.array(z.string()).nullable(),
  agentId: z.string(),
  expiresAt: z.string().nullable(),
  lastUsedAt: z.string().nullable(),
  createdAt: z.string(),
});
const WithSecret = z.object({ token: PublicToken, secret: z.string() });

/** What the tokens routes use of the server's dependencies. */
export type TokenDeps = Pick<RouteDeps, 'store' | 'selector' | 'logger' | 'revoke'>;

export function tokenRoutes(deps: TokenDeps): Route[] {
  const tokens = new ServiceTokens(deps.store, deps.selector, committedAudit(deps.store, deps.logger));
  const base = { group: 'tokens', auth: 'bearer-or-session', accountScope: true, rateHeaders: true } as const;
  const one = '/api/accounts/tokens/{tokenId}';

  return [
    defineRoute<z.infer<typeof IssueBody>, undefined>({
      ...base,
      method: 'post',
      path: '/api/accounts/tokens',
      refusedWhileImpersonating: true,
      summary: 'Issue a service token; the secret is in this response only.',
      description:
        'Scopes: `account` (acts for the account; may create projects and issue tokens), `workspace` (one board, as `role`, member by default), `resource` (one board, limited to the work ids or operation groups in `resources`). ' +
        'Board tokens need the admin or owner role on the board and never exceed the issuer’s role. Each token carries a stable agent principal (`agent:<agentId>`) that survives reissue. ' +
        'A token issuing a token cannot make one that outlives it: without `expiresAt` the new token expires with its issuer, and a later (or null) expiry is 403 TOKEN_SCOPE_EXCEEDED. A token lists, changes, reissues and revokes only the tokens it issued (and may revoke itself).',
      bodyKind: 'json',
      body: IssueBody,
      rate: 'write',
      errors: ['PROJECT_SCOPE_DENIED', 'ROLE_REQUIRED', 'TOKEN_SCOPE_EXCEEDED'],
      responses: { 201: { description: 'Issued.', schema: WithSecret } },
      async handler({ ctx, body }) {
        return { status: 201, body: await tokens.issue(ctx.identity!, body, ctx.now, originOf(ctx)) };
      },
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/api/accounts/tokens',
      summary: 'The account’s live tokens: secret-free prefix, scope, board and last use.',
      bodyKind: 'none',
      rate: 'read',
      errors: [],
      responses: { 200: { description: 'Tokens, oldest first.', schema: z.object({ tokens: z.array(PublicToken) }) } },
      async handler({ ctx }) {
        return { status: 200, body: { tokens: await tokens.list(ctx.identity!) } };
      },
    }),
    defineRoute<z.infer<typeof PatchBody>, undefined>({
      ...base,
      method: 'patch',
      path: one,
      refusedWhileImpersonating: true,
      summary: 'Rename a token or change its expiry (null: never expires).',
      bodyKind: 'json',
      body: PatchBody,
      rate: 'write',
      errors: ['TOKEN_NOT_FOUND', 'TOKEN_SCOPE_EXCEEDED'],
      responses: { 200: { description: 'Updated.', schema: z.object({ token: PublicToken }) } },
      async handler({ ctx, body }) {
        return { status: 200, body: { token: await tokens.update(ctx.identity!, ctx.params.tokenId!, body, ctx.now) } };
      },
    }),
    defineRoute({
      ...base,
      method: 'delete',
      path: one,
      refusedWhileImpersonating: true,
      summary: 'Revoke a token at once (audited: token.revoke).',
      bodyKind: 'none',
      rate: 'write',
      errors: ['TOKEN_NOT_FOUND', 'TOKEN_SCOPE_EXCEEDED'],
      responses: { 204: { description: 'Revoked.' } },
      async handler({ ctx }) {
        await tokens.revoke(ctx.identity!, ctx.params.tokenId!, ctx.now, originOf(ctx));
        deps.revoke({ kind: 'revoked', tokenId: ctx.params.tokenId! });
        return { status: 204 };
      },
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: `${one}/reissue`,
      refusedWhileImpersonating: true,
      summary: 'A new secret for the same token and agent principal; the old secret stops working at once.',
      bodyKind: 'optional-json',
      body: z.strictObject({}).optional(),
      rate: 'write',
      errors: ['TOKEN_NOT_FOUND', 'TOKEN_SCOPE_EXCEEDED'],
      responses: { 200: { description: 'Reissued; the new secret is in this response only.', schema: WithSecret } },
      async handler({ ctx }) {
        const reissued = await tokens.reissue(ctx.identity!, ctx.params.tokenId!, ctx.now, originOf(ctx));
        deps.revoke({ kind: 'revoked', tokenId: ctx.params.tokenId! });
        return { status: 200, body: reissued };
      },
    }),
  ];
}
