// The signed-in account: profile (with the selected project's plan), email change, deletion.
import { z } from 'zod';
import { AccountService, clearSessionCookie } from '../accounts/service.js';
import { Recovery } from '../accounts/recovery.js';
import { PROJECT_ID } from '../auth/project-selection.js';
import { AppError } from '../errors/app-error.js';
import { defineRoute, type RequestContext, type Route } from '../http/route.js';
import { PLANS } from '../plans.js';
import type { RouteDeps } from './deps.js';
import { modify } from '../../store/ports/store.js';
import { AccountDeletion, DELETION_RETENTION_MS } from '../admin/deletion.js';
import { auditRow, originOf } from '../audit-row.js';
import { AuthSessionResponse, authSessionReply, nonEmptyString } from './schemas.js';

export const DISPLAY_NAME_MAX = 80;

const ProfilePatch = z.strictObject({
  displayName: z.string().nullable().optional(),
  defaultProjectId: nonEmptyString('INVALID_PROJECT_ID', 'defaultProjectId must be a project id.')
    .nullable()
    .optional(),
});
const EmailBody = z.strictObject({ currentPassword: z.string(), newEmail: z.string() });
const DeleteBody = z.strictObject({ confirmEmail: z.string(), currentPassword: z.string() });

const AccountProfileResponse = z.object({
  email: z.string(),
  displayName: z.string().nullable(),
  defaultProjectId: z.string().nullable(),
  projectId: z.string(),
  plan: z.object({
    name: z.enum(['free', 'pro']),
    boardLimit: z.number().int(),
    verificationIncluded: z.boolean(),
    historyRetentionDays: z.number().int(),
    rewind: z.boolean(),
  }),
});

/** What the account routes use of the server's dependencies. */
export type AccountDeps = Pick<
  RouteDeps,
  'config' | 'store' | 'passwords' | 'mailer' | 'selector' | 'logger' | 'csrfToken' | 'revoke' | 'billing' | 'limiter'
>;

export function accountRoutes(deps: AccountDeps): Route[] {
  const accounts = new AccountService(deps.store, deps.passwords, deps.csrfToken, deps.limiter);
  const recovery = new Recovery(deps.store, deps.mailer, deps.passwords, deps.config.publicUrl, deps.limiter);
  const deletion = new AccountDeletion(deps.store, (accountId, now) =>
    deps.billing.cancelLiveSubscriptions(accountId, now),
  );
  const group = 'accounts';

  async function profile(ctx: RequestContext) {
    const account = await deps.store.accounts.get(ctx.identity!.accountId);
    if (!account) throw new AppError('UNAUTHENTICATED');
    const plan = PLANS[ctx.project!.plan];
    return {
      status: 200,
      body: {
        email: account.email,
        displayName: account.displayName,
        defaultProjectId: account.defaultProjectId,
        projectId: ctx.project!.id,
        plan: {
          name: plan.name,
          boardLimit: plan.boardsPerAccount,
          verificationIncluded: plan.verificationIncluded,
          historyRetentionDays: plan.historyRetentionDays,
          rewind: plan.rewind,
        },
      },
    };
  }

  return [
    defineRoute({
      method: 'get',
      path: '/api/account/profile',
      group,
      summary: 'Email, display name, and the selected project’s plan metadata.',
      auth: 'session',
      bodyKind: 'none',
      project: 'required',
      rate: 'none',
      errors: [],
      responses: { 200: { description: 'The profile.', schema: AccountProfileResponse } },
      handler: ({ ctx }) => profile(ctx),
    }),
    defineRoute<z.infer<typeof ProfilePatch>, undefined>({
      method: 'patch',
      path: '/api/account/profile',
      group,
      summary: 'Set or clear the display name and the starred default project; each field is independent.',
      description: `displayName: at most ${DISPLAY_NAME_MAX} characters, null (or blank) clears it. defaultProjectId: a project this session can reach, or null to unstar.`,
      auth: 'session',
      bodyKind: 'json',
      body: ProfilePatch,
      project: 'required',
      rate: 'none',
      errors: ['INVALID_DISPLAY_NAME'],
      responses: {
        200: {
          description: 'The updated profile, with the same plan metadata as the GET.',
          schema: AccountProfileResponse,
        },
      },
      async handler({ ctx, body }) {
        const changes: { displayName?: string | null; defaultProjectId?: string | null } = {};
        if (body.displayName !== undefined) {
          const name = body.displayName?.trim() || null;
          if (name !== null && [...name].length > DISPLAY_NAME_MAX)
            throw new AppError('INVALID_DISPLAY_NAME', `displayName is at most ${DISPLAY_NAME_MAX} characters.`);
          changes.displayName = name;
        }
        if (body.defaultProjectId !== undefined && body.defaultProjectId !== null) {
          if (!PROJECT_ID.test(body.defaultProjectId))
            throw new AppError('INVALID_PROJECT_ID', 'defaultProjectId must be a project id.');
          if (!(await deps.selector.reachable(ctx.identity!, body.defaultProjectId)))
            throw new AppError('PROJECT_SCOPE_DENIED', 'defaultProjectId must be a project you can reach.');
        }
        if (body.defaultProjectId !== undefined) changes.defaultProjectId = body.defaultProjectId;
        if (Object.keys(changes).length && !(await modify(deps.store.accounts, ctx.identity!.accountId, () => changes)))
          throw new AppError('UNAUTHENTICATED');
        return profile(ctx);
      },
    }),
    defineRoute<z.infer<typeof EmailBody>, undefined>({
      method: 'post',
      path: '/api/account/email',
      refusedWhileImpersonating: true,
      group,
      summary: 'Change the email after re-authenticating; prior sessions are revoked and a fresh cookie issued.',
      description:
        'The new address is canonicalised (trimmed, lower-cased) and must be verified again; a verification link is mailed to it. Rate limited per socket address.',
      auth: 'session',
      bodyKind: 'json',
      body: EmailBody,
      rate: 'address',
      errors: ['INVALID_EMAIL', 'INVALID_CURRENT_PASSWORD', 'EMAIL_TAKEN'],
      responses: { 200: { description: 'Changed; a fresh session cookie is set.', schema: AuthSessionResponse } },
      async handler({ ctx, body }) {
        const session = await accounts.changeEmail(ctx.identity!.accountId, body, ctx.now);
        deps.revoke({ kind: 'revoked', accountSessions: session.account._id });
        if (!session.account.emailVerified)
          await recovery
            .sendVerification(session.account, ctx.now)
            .catch((e: unknown) => deps.logger.warn({ err: e }, 'verification mail failed'));
        return authSessionReply(200, session);
      },
    }),
    defineRoute<z.infer<typeof DeleteBody>, undefined>({
      method: 'delete',
      path: '/api/account',
      refusedWhileImpersonating: true,
      group,
      summary: 'Delete the account and every board it owns; needs the exact email and the current password.',
      description: `At once: live subscriptions are cancelled (when that fails, nothing changes), sign-in is refused (ACCOUNT_DELETED), every session and token is revoked, and the boards the account owns are closed to their members (BOARD_CLOSED). Everything is kept ${DELETION_RETENTION_MS / 86_400_000} days, in which an operator can restore the account, and then purged.`,
      auth: 'session',
      bodyKind: 'json',
      body: DeleteBody,
      rate: 'address',
      errors: [
        'ACCOUNT_DELETE_CONFIRM_MISMATCH',
        'INVALID_CURRENT_PASSWORD',
        'PROVIDER_UNAVAILABLE',
        'PROVIDER_REQUEST_FAILED',
        'PROVIDER_RESPONSE_INVALID',
      ],
      responses: { 204: { description: 'Deleted (kept 30 days, then purged); the cookie is cleared.' } },
      async handler({ ctx, body }) {
        const accountId = ctx.identity!.accountId;
        const deleted = await accounts.deleteAccount(accountId, body, () =>
          deletion.delete(accountId, 'owner', ctx.now),
        );
        const row = auditRow({
          at: ctx.now,
          actor: ctx.identity!.principal,
          action: 'account.delete',
          projectId: null,
          origin: originOf(ctx),
          data: { purgeAfter: deleted.account.purgeAfter, boards: deleted.boards },
        });
        await deps.store.audit.insert({ ...row, target: `account:${accountId}` });
        for (const notice of deleted.notices) deps.revoke(notice);
        return { status: 204, cookies: [clearSessionCookie] };
      },
    }),
  ];
}
