// Account and session operations: signup, login, logout, me, whoami.
import { z } from 'zod';
import {
  AccountService,
  clearSessionCookie,
  PASSWORD_MAX,
  PASSWORD_MIN,
  publicAccount,
  SIGN_INS_PER_QUARTER_HOUR,
} from '../accounts/service.js';
import { AppError } from '../errors/app-error.js';
import { defineRoute, type Route } from '../http/route.js';
import type { RouteDeps } from './deps.js';
import type { SessionIdentity } from '../auth/identity.js';
import { AuthSessionResponse, authSessionReply, PublicAccount } from './schemas.js';
import { Recovery } from '../accounts/recovery.js';

const REFERRAL_CODE = /^[0-9bcdfghjkmnpqrstvwxyz]{12}$/;

/** Documented as 12..128 characters (code points); checked by checkPassword, whose refusal is INVALID_PASSWORD. */
const NewPassword = z.string().meta({
  minLength: PASSWORD_MIN,
  maxLength: PASSWORD_MAX,
  description: `${PASSWORD_MIN} to ${PASSWORD_MAX} characters; every character counts.`,
});
const SignupBody = z.strictObject({
  email: z.string(),
  password: NewPassword,
  referralCode: z.string().regex(REFERRAL_CODE, 'must be 12 characters of 0-9 and consonants b-z').optional(),
});
const LoginBody = z.strictObject({ email: z.string(), password: z.string() });
const ChangePasswordBody = z.strictObject({ currentPassword: z.string(), newPassword: NewPassword });
const LogoutBody = z.strictObject({}).optional();

const ForgotBody = z.strictObject({ email: z.string() });
const ResetBody = z.strictObject({ token: z.string().min(1), newPassword: NewPassword });
const VerifyBody = z.strictObject({ token: z.string().min(1) });
const Accepted = z.object({ status: z.literal('accepted') });
const AuthMeResponse = z.object({
  user: PublicAccount,
  csrfToken: z.string().describe('Send it back in X-CSRF-Token on every write made with this session.'),
  referral: z.object({ code: z.string(), months: z.number().int(), referred: z.boolean() }).nullable(),
});
const WhoamiResponse = z.object({
  principal: z.string(),
  account: z.object({ id: z.string(), email: z.string().nullable() }),
  workspace: z.object({ projectId: z.string() }).nullable(),
  token: z
    .object({
      id: z.string(),
      scope: z.enum(['account', 'workspace', 'resource']),
      prefix: z.string(),
      role: z.string().nullable(),
    })
    .nullable(),
});

/** What the auth routes use of the server's dependencies. */
export type AuthDeps = Pick<
  RouteDeps,
  'config' | 'store' | 'passwords' | 'mailer' | 'logger' | 'csrfToken' | 'revoke' | 'limiter'
>;

export function authRoutes(deps: AuthDeps): Route[] {
  const accounts = new AccountService(deps.store, deps.passwords, deps.csrfToken, deps.limiter);
  const recovery = new Recovery(deps.store, deps.mailer, deps.passwords, deps.config.publicUrl, deps.limiter);
  const group = 'accounts';

  return [
    defineRoute<z.infer<typeof SignupBody>, undefined>({
      method: 'post',
      path: '/api/auth/signup',
      budgetsEmail: true,
      group,
      summary: 'Create an account, its default project, and a session.',
      description:
        'A referral code is resolved before the account exists; an unknown one creates nothing. Rate limited per socket address.',
      auth: 'none',
      bodyKind: 'json',
      body: SignupBody,
      rate: 'address',
      errors: [
        'INVALID_EMAIL',
        'INVALID_PASSWORD',
        'REFERRAL_CODE_INVALID',
        'EMAIL_TAKEN',
        'AUTH_UNAVAILABLE',
        'REFERRAL_UNAVAILABLE',
      ],
      responses: { 201: { description: 'Signed up; the session cookie is set.', schema: AuthSessionResponse } },
      async handler({ ctx, body }) {
        const session = await accounts.signup(body, ctx.now);
        await recovery
          .sendVerification(session.account, ctx.now)
          .catch((e: unknown) => deps.logger.warn({ err: e }, 'verification mail failed'));
        return authSessionReply(201, session);
      },
    }),
    defineRoute<z.infer<typeof LoginBody>, undefined>({
      method: 'post',
      path: '/api/auth/login',
      budgetsEmail: true,
      group,
      summary: 'Sign in; a fresh session cookie is set.',
      description: `The password comparison is timing-safe, also for unknown emails. Rate limited per socket address, and to ${SIGN_INS_PER_QUARTER_HOUR} wrong passwords per email address in 15 minutes from anywhere (then 429 RATE_LIMITED with Retry-After, the right password too; a password reset starts the budget anew).`,
      auth: 'none',
      bodyKind: 'json',
      body: LoginBody,
      rate: 'address',
      errors: ['INVALID_CREDENTIALS', 'ACCOUNT_DELETED', 'AUTH_UNAVAILABLE'],
      responses: { 200: { description: 'Signed in.', schema: AuthSessionResponse } },
      async handler({ ctx, body }) {
        return authSessionReply(200, await accounts.login(body, ctx.now));
      },
    }),
    defineRoute<z.infer<typeof LogoutBody>, undefined>({
      method: 'post',
      path: '/api/auth/logout',
      group,
      summary: 'Revoke the session (idempotent) and clear the cookie.',
      auth: 'session-optional',
      bodyKind: 'optional-json',
      body: LogoutBody,
      rate: 'none',
      errors: [],
      responses: { 204: { description: 'Signed out.' } },
      async handler({ ctx }) {
        if (ctx.identity?.kind === 'session') {
          await accounts.revokeSession(ctx.identity.sessionId);
          deps.revoke({ kind: 'revoked', sessionId: ctx.identity.sessionId });
        }
        return { status: 204, cookies: [clearSessionCookie] };
      },
    }),
    defineRoute<z.infer<typeof ChangePasswordBody>, undefined>({
      method: 'post',
      path: '/api/auth/change-password',
      refusedWhileImpersonating: true,
      group,
      summary: 'Change the password after re-authenticating; every session is revoked and the cookie rotated.',
      auth: 'session',
      bodyKind: 'json',
      body: ChangePasswordBody,
      rate: 'address',
      errors: ['INVALID_PASSWORD', 'INVALID_CURRENT_PASSWORD'],
      responses: { 200: { description: 'Changed; a fresh session cookie is set.', schema: AuthSessionResponse } },
      async handler({ ctx, body }) {
        const session = await accounts.changePassword(ctx.identity!.accountId, body, ctx.now);
        deps.revoke({ kind: 'revoked', accountSessions: session.account._id });
        return authSessionReply(200, session);
      },
    }),
    defineRoute<z.infer<typeof ForgotBody>, undefined>({
      method: 'post',
      path: '/api/auth/forgot-password',
      group,
      summary: 'Mail a single-use password-reset link (valid one hour) when the address has an account.',
      description:
        'Answers the same, 202, whether or not the address has an account, and whether or not a mail goes out: an account is sent at most 3 reset links an hour, and only the newest one works. Rate limited per socket address.',
      auth: 'none',
      bodyKind: 'json',
      body: ForgotBody,
      rate: 'address',
      errors: [],
      responses: { 202: { description: 'Accepted; a mail goes out if the address is known.', schema: Accepted } },
      async handler({ ctx, body }) {
        // Not awaited: the answer's timing must not tell whether the address exists.
        recovery
          .forgotPassword(body.email, ctx.now)
          .catch((e: unknown) => deps.logger.error({ err: e }, 'forgot-password failed'));
        return { status: 202, body: { status: 'accepted' } };
      },
    }),
    defineRoute<z.infer<typeof ResetBody>, undefined>({
      method: 'post',
      path: '/api/auth/reset-password',
      group,
      summary: 'Set a new password with a reset link’s token; every session of the account is revoked.',
      description:
        'The link proves the mailbox: an address not confirmed yet is confirmed, and then every token, enrollment code and uncollected device approval issued under the account before is revoked too (its sockets close).',
      auth: 'none',
      bodyKind: 'json',
      body: ResetBody,
      rate: 'address',
      errors: ['INVALID_PASSWORD', 'INVALID_LINK_TOKEN', 'EXPIRED_TOKEN'],
      responses: { 204: { description: 'The password is set; sign in with it.' } },
      async handler({ ctx, body }) {
        const { notice } = await recovery.resetPassword(body.token, body.newPassword, ctx.now);
        deps.revoke(notice);
        return { status: 204 };
      },
    }),
    defineRoute<z.infer<typeof VerifyBody>, undefined>({
      method: 'post',
      path: '/api/auth/verify-email',
      group,
      summary: 'Confirm the account’s email address with a verification link’s token, signed in as that account.',
      description:
        'The link proves the mailbox, the session the password: a session of another account is refused (400 INVALID_LINK_TOKEN) and leaves the link unspent.',
      auth: 'session',
      bodyKind: 'json',
      body: VerifyBody,
      rate: 'address',
      errors: ['INVALID_LINK_TOKEN', 'EXPIRED_TOKEN'],
      responses: { 200: { description: 'Verified.', schema: z.object({ account: PublicAccount }) } },
      async handler({ ctx, body }) {
        return {
          status: 200,
          body: { account: publicAccount(await recovery.verifyEmail(body.token, ctx.identity!.accountId, ctx.now)) },
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/auth/verify-email/resend',
      group,
      summary: 'Mail the signed-in account a new confirmation link (an unconfirmed address cannot accept invitations).',
      description:
        'Nothing is sent (`sent: false`) when the address is confirmed already, or when the account was sent 3 confirmation links within the hour. Draws on the per-address budget, as signup does.',
      auth: 'session',
      bodyKind: 'none',
      rate: 'address',
      errors: [],
      responses: { 200: { description: 'Whether a link went out.', schema: z.object({ sent: z.boolean() }) } },
      async handler({ ctx }) {
        const account = await deps.store.accounts.get(ctx.identity!.accountId);
        if (!account) throw new AppError('UNAUTHENTICATED');
        if (account.emailVerified) return { status: 200, body: { sent: false } };
        return { status: 200, body: { sent: await recovery.sendVerification(account, ctx.now) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/auth/me',
      group,
      summary: 'The signed-in user and their referral standing.',
      auth: 'session',
      bodyKind: 'none',
      rate: 'none',
      errors: [],
      responses: { 200: { description: 'The signed-in user.', schema: AuthMeResponse } },
      async handler({ ctx }) {
        const account = await deps.store.accounts.get(ctx.identity!.accountId);
        if (!account) throw new AppError('UNAUTHENTICATED');
        return {
          status: 200,
          body: {
            user: publicAccount(account),
            csrfToken: deps.csrfToken((ctx.identity as SessionIdentity).sessionId),
            referral: {
              code: account.referralCode,
              months: account.referralMonths,
              referred: account.referredBy !== null,
            },
          },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/whoami',
      group,
      summary: 'Who this credential is: account, workspace, token scope and secret-free prefix.',
      description: 'An identity read: it reports the rate budgets in the nine headers and is never rate-denied.',
      auth: 'bearer-or-session',
      bodyKind: 'none',
      rate: 'identity',
      rateHeaders: true,
      errors: [],
      responses: { 200: { description: 'The caller.', schema: WhoamiResponse } },
      async handler({ ctx }) {
        const identity = ctx.identity!;
        const account = await deps.store.accounts.get(identity.accountId);
        if (!account) throw new AppError(identity.kind === 'token' ? 'INVALID_SERVICE_TOKEN' : 'UNAUTHENTICATED');
        const token =
          identity.kind === 'token'
            ? { id: identity.tokenId, scope: identity.scope, prefix: identity.prefix, role: identity.role }
            : null;
        const projectId = identity.kind === 'token' ? identity.boardId : account.defaultProjectId;
        return {
          status: 200,
          body: {
            principal: identity.principal,
            account: {
              id: account._id,
              email: identity.kind === 'session' || identity.scope === 'account' ? account.email : null,
            },
            workspace: projectId ? { projectId } : null,
            token,
          },
        };
      },
    }),
  ];
}
