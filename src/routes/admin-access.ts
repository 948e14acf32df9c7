// Operator routes: acting as an account, the address allowlist, and contacting an account (DOMAIN.md "Operators"). Rules live in src/admin/; these only bind them.
import { z } from 'zod';
import { Contact, ContactSubject, ContactText } from '../admin/contact.js';
import { Impersonation } from '../admin/impersonation.js';
import { IMPERSONATION_PATH, OPERATOR_SESSION_COOKIE, SESSION_COOKIE } from '../auth/authenticator.js';
import { AppError } from '../errors/app-error.js';
import { serializeCookie } from '../http/cookies.js';
import { defineRoute, type RequestContext, type Route } from '../http/route.js';
import type { RouteDeps } from './deps.js';
import { adminBase, PageQuery, Reason } from './admin-shared.js';

const USER_ID = /^[\w-]{1,64}$/;
const userIdOf = (ctx: RequestContext): string => {
  const id = ctx.params.userId ?? '';
  if (!USER_ID.test(id)) throw new AppError('NOT_FOUND', 'No account has that id.');
  return id;
};

const ImpersonateBody = z.strictObject({ reason: Reason });
const ImpersonateResponse = z.object({
  account: z.object({ id: z.string(), email: z.string() }),
  expiresAt: z
    .string()
    .describe(
      'When the impersonation session ends by itself (30 minutes, or the operator’s own session’s end if sooner).',
    ),
  csrfToken: z.string().describe('The impersonation session’s CSRF token, for writes made as the account.'),
  operatorCsrfToken: z
    .string()
    .describe('The operator’s own session’s CSRF token, for POST /api/admin/impersonation/end.'),
});
const EndResponse = z.object({
  ended: z
    .boolean()
    .describe(
      'Whether this call ended a live impersonation session (false: there was none, or it had ended by itself).',
    ),
  accountId: z.string().nullable(),
  csrfToken: z.string().describe('The operator’s own session’s CSRF token (the console’s again).'),
});
const StateResponse = z.object({
  impersonating: z
    .object({
      accountId: z.string(),
      email: z.string().nullable(),
      reason: z.string(),
      startedAt: z.string(),
      expiresAt: z.string(),
    })
    .nullable(),
  csrfToken: z.string().describe('The operator’s own session’s CSRF token, for the end.'),
});

const AllowlistValue = z
  .string()
  .min(1)
  .max(300)
  .describe(
    'An IP address (203.0.113.7), a CIDR range (203.0.113.0/24, 2001:db8::/48) or an email domain (example.com, covering its subdomains).',
  );
const AllowlistAddBody = z.strictObject({ value: AllowlistValue, reason: Reason });
const AllowlistRemoveBody = z.strictObject({ value: AllowlistValue, reason: Reason });
const AllowlistEntry = z.object({
  id: z.string(),
  kind: z.enum(['address', 'cidr', 'domain']),
  value: z.string(),
  reason: z.string(),
  addedBy: z.string(),
  at: z.string(),
});
const AllowlistPage = z.object({ entries: z.array(AllowlistEntry), nextCursor: z.string().nullable() });

const ContactBody = z.strictObject({ subject: ContactSubject, text: ContactText });
const ContactResponse = z.object({ sent: z.literal(true), accountId: z.string(), to: z.string() });

const iso = (ms: number): string => new Date(ms).toISOString();
const entryOut = (e: {
  id: string;
  kind: 'address' | 'cidr' | 'domain';
  value: string;
  reason: string;
  addedBy: string;
  at: number;
}) => ({ ...e, at: iso(e.at) });
const seconds = (ms: number): number => Math.max(0, Math.ceil(ms / 1000));

/** What the admin-access routes use of the server's dependencies. */
export type AdminAccessDeps = Pick<RouteDeps, 'config' | 'store' | 'allowlist' | 'mailer' | 'csrfToken' | 'revoke'>;

export function adminAccessRoutes(deps: AdminAccessDeps): Route[] {
  const impersonation = new Impersonation(deps.store, deps.revoke);
  const contact = new Contact(deps.store, deps.mailer, deps.config.publicUrl);
  const { allowlist } = deps;
  /** The operator's waiting session: sent by the browser only to the impersonation routes. */
  const operatorCookie = (value: string, maxAge: number): string =>
    serializeCookie({ name: OPERATOR_SESSION_COOKIE, value, maxAge }, deps.config.cookieSecure, IMPERSONATION_PATH);

  return [
    defineRoute<z.infer<typeof ImpersonateBody>, undefined>({
      ...adminBase,
      method: 'post',
      path: '/api/admin/users/{userId}/impersonate',
      summary:
        'Act as the account for 30 minutes: an impersonation session of its own replaces the session cookie, the operator’s session waits for the end.',
      description:
        'Every response to the impersonation session carries X-Impersonated-By (the operator’s account id) and every audit row it causes `impersonatedBy`. ' +
        'What outlives the session or changes who can act or pay is refused meanwhile (403 IMPERSONATION_FORBIDDEN): password and email changes, account deletion, tokens (issue, reissue, change, revoke), enrollment codes, device approvals and an anonymous board’s takeover links, invitations (create, revoke), role changes, member removal, transfers (offer, accept), deleting a board, billing and applying a rewind. ' +
        `The operator’s own session moves to the ${OPERATOR_SESSION_COOKIE} cookie, sent only under ${IMPERSONATION_PATH}: the console answers 404 until POST ${IMPERSONATION_PATH}/end.`,
      bodyKind: 'json',
      body: ImpersonateBody,
      errors: ['INVALID_INPUT'],
      responses: { 201: { description: 'Acting as the account; both cookies are set.', schema: ImpersonateResponse } },
      async handler({ ctx, body }) {
        const started = await impersonation.start(ctx, userIdOf(ctx), body.reason);
        return {
          status: 201,
          body: {
            account: { id: started.account._id, email: started.account.email },
            expiresAt: iso(started.expiresAt),
            csrfToken: deps.csrfToken(started.sessionId),
            operatorCsrfToken: deps.csrfToken(started.operator.sessionId),
          },
          cookies: [{ name: SESSION_COOKIE, value: started.secret, maxAge: seconds(started.expiresAt - ctx.now) }],
          headers: {
            'set-cookie': operatorCookie(started.operator.secret, seconds(started.operator.expiresAt - ctx.now)),
          },
        };
      },
    }),
    defineRoute({
      ...adminBase,
      method: 'post',
      path: `${IMPERSONATION_PATH}/end`,
      summary:
        'End acting as an account: its impersonation session is revoked and the operator’s own session is the session cookie again.',
      description: `Reached with the operator’s own session, from the ${OPERATOR_SESSION_COOKIE} cookie the browser sends here (with that session’s CSRF token), or from the session cookie. Idempotent: with no impersonation under way it only puts the operator’s session back.`,
      bodyKind: 'none',
      errors: [],
      responses: { 200: { description: 'The console’s session is back.', schema: EndResponse } },
      async handler({ ctx }) {
        const ended = await impersonation.end(ctx);
        return {
          status: 200,
          body: { ended: ended.ended, accountId: ended.accountId, csrfToken: deps.csrfToken(ended.operator.sessionId) },
          cookies: [
            { name: SESSION_COOKIE, value: ended.operator.secret, maxAge: seconds(ended.operator.expiresAt - ctx.now) },
          ],
          headers: { 'set-cookie': operatorCookie('', 0) },
        };
      },
    }),
    defineRoute({
      ...adminBase,
      method: 'get',
      path: IMPERSONATION_PATH,
      summary:
        'Whether this browser acts as an account now (whom, why, until when), for the console’s banner and its end button.',
      bodyKind: 'none',
      errors: [],
      responses: { 200: { description: 'The impersonation under way, or null.', schema: StateResponse } },
      async handler({ ctx }) {
        const state = await impersonation.state(ctx);
        const now = state.impersonating;
        return {
          status: 200,
          body: {
            impersonating: now && { ...now, startedAt: iso(now.startedAt), expiresAt: iso(now.expiresAt) },
            csrfToken: deps.csrfToken(state.operator.sessionId),
          },
        };
      },
    }),
    defineRoute<undefined, z.infer<typeof PageQuery>>({
      ...adminBase,
      method: 'get',
      path: '/api/admin/allowlist',
      summary: 'The addresses, CIDR ranges and email domains exempt from the per-address budgets, newest first.',
      bodyKind: 'none',
      query: PageQuery,
      errors: ['INVALID_CURSOR'],
      responses: { 200: { description: 'A page of entries.', schema: AllowlistPage } },
      async handler({ query }) {
        const page = await allowlist.list(query.cursor, query.limit);
        return { status: 200, body: { entries: page.entries.map(entryOut), nextCursor: page.nextCursor } };
      },
    }),
    defineRoute<z.infer<typeof AllowlistAddBody>, undefined>({
      ...adminBase,
      method: 'post',
      path: '/api/admin/allowlist',
      summary:
        'Exempt an address, a CIDR range or an email domain from the per-address budgets (every node within 10 s).',
      description:
        'An email domain exempts sign-up and sign-in with an email of it (or of a subdomain) from the address’s budget; each such email draws on a budget of its own instead. An entry already listed is answered as it is (200, unchanged).',
      bodyKind: 'json',
      body: AllowlistAddBody,
      errors: ['ALLOWLIST_LIMIT'],
      responses: {
        201: { description: 'Listed.', schema: z.object({ entry: AllowlistEntry }) },
        200: { description: 'Listed already; unchanged.', schema: z.object({ entry: AllowlistEntry }) },
      },
      async handler({ ctx, body }) {
        const added = await allowlist.add(ctx, body.value, body.reason);
        return { status: added.created ? 201 : 200, body: { entry: entryOut(added.entry) } };
      },
    }),
    defineRoute<z.infer<typeof AllowlistRemoveBody>, undefined>({
      ...adminBase,
      method: 'delete',
      path: '/api/admin/allowlist',
      summary:
        'Remove an entry from the allowlist: its addresses draw on the per-address budgets again (every node within 10 s).',
      bodyKind: 'json',
      body: AllowlistRemoveBody,
      errors: [],
      responses: { 200: { description: 'Removed.', schema: z.object({ removed: AllowlistEntry }) } },
      async handler({ ctx, body }) {
        return { status: 200, body: { removed: entryOut(await allowlist.remove(ctx, body.value, body.reason)) } };
      },
    }),
    defineRoute<z.infer<typeof ContactBody>, undefined>({
      ...adminBase,
      method: 'post',
      path: '/api/admin/users/{userId}/contact',
      summary: 'Mail the account’s address (subject and text kept in the audit).',
      bodyKind: 'json',
      body: ContactBody,
      errors: [],
      responses: { 200: { description: 'Accepted for delivery.', schema: ContactResponse } },
      async handler({ ctx, body }) {
        const sent = await contact.send(ctx, userIdOf(ctx), body.subject, body.text);
        return { status: 200, body: { sent: true, ...sent } };
      },
    }),
  ];
}
