// Operators' access routes over real HTTP, run on each store adapter (DOMAIN.md "Operators"):
// acting as an account (impersonation: marked, audited, refused the owner's own actions, ended
// explicitly or by itself at 30 minutes), the allowlist that spares addresses, ranges and email
// domains the per-address budgets, and mailing an account.
//
// Every client here speaks through a trusted proxy (127.0.0.1) with an X-Forwarded-For address of
// its own, so the per-address budget (4 a minute here) is each client's own.
import { describe, expect, it } from 'vitest';
import { IMPERSONATION_PATH, OPERATOR_SESSION_COOKIE, SESSION_COOKIE } from '../../../src/auth/authenticator.js';
import { MAX_ENTRIES } from '../../../src/admin/allowlist.js';
import { operationOf } from '../../../src/http/route.js';
import { routeErrors } from '../../../src/http/route-errors.js';
import { POLL_BUDGET_FACTOR } from '../../../src/plans.js';
import { DOMAIN_BUDGET_FACTOR } from '../../../src/ratelimit/budgets.js';
import { serveStore, type OpenedStore } from '../../support/stores.js';
import { expectError } from '../../support/expect-error.js';
import { head } from '../../support/board.js';
import { openSocket } from '../../support/socket.js';
import { CLOSE } from '../../../src/ws/protocol.js';
import { Client, type Res } from '../../support/server.js';
import { unique } from '../../support/temp.js';
import { verifyEmail } from '../../support/verify-email.js';

const ADDRESS_LIMIT = 4;
const PASSWORD = 'correct horse battery staple';

/** A browser: keeps cookies like Client, and sends each only under the Path it was set with. */
class Browser extends Client {
  private readonly paths = new Map<string, string>();

  override async request(
    method: string,
    path: string,
    opts: { json?: unknown; raw?: string | Buffer; headers?: Record<string, string> } = {},
  ): Promise<Res> {
    const bare = path.split('?')[0]!;
    const held = new Map<string, string>();
    for (const [name, value] of this.cookies) {
      const scope = this.paths.get(name) ?? '/';
      if (scope !== '/' && bare !== scope && !bare.startsWith(`${scope}/`)) {
        held.set(name, value);
        this.cookies.delete(name);
      }
    }
    const res = await super.request(method, path, opts);
    for (const line of res.headers.getSetCookie()) {
      const name = line.split('=')[0]!.trim();
      this.paths.set(name, /;\s*Path=([^;]*)/i.exec(line)?.[1] ?? '/');
      held.delete(name);
    }
    for (const [name, value] of held) this.cookies.set(name, value);
    return res;
  }
}

let lastAddress = 0;
/** An address of its own for each client (198.18.0.0/15, the benchmarking range). */
const nextAddress = (): string => {
  lastAddress++;
  return `198.18.${Math.floor(lastAddress / 250)}.${(lastAddress % 250) + 1}`;
};

/** The operations an operator acting as an account may not make (the route table marks them refusedWhileImpersonating). */
const REFUSED_WHILE_IMPERSONATING = [
  'POST /api/auth/change-password',
  'POST /api/account/email',
  'DELETE /api/account',
  'POST /api/accounts/tokens',
  'POST /api/accounts/tokens/{tokenId}/reissue',
  'POST /api/auth/device/approve',
  'POST /api/projects/{projectId}/agents/enroll',
  'POST /api/boards/{projectId}/agents/enroll',
  'DELETE /api/projects/{projectId}/agents/enroll/{codeId}',
  'DELETE /api/boards/{projectId}/agents/enroll/{codeId}',
  'POST /api/accounts/provision',
  'POST /api/account/billing/checkout',
  'POST /api/account/billing/portal',
  'POST /api/account/billing/annual',
  'PATCH /api/accounts/tokens/{tokenId}',
  'DELETE /api/accounts/tokens/{tokenId}',
  'DELETE /api/projects/{projectId}',
  'DELETE /api/boards/{projectId}',
  'POST /api/boards/{projectId}/invitations',
  'POST /api/boards/{projectId}/invitations/{invitationId}/revoke',
  'POST /api/boards/{projectId}/invitations/{invitationId}/resend',
  'POST /api/boards/invitations/{invitationId}/accept',
  'POST /api/accounts/claim-anonymous',
  'POST /api/projects/{projectId}/claim-nonce',
  'POST /api/boards/{projectId}/claim-nonce',
  'POST /api/projects/{projectId}/claim',
  'POST /api/boards/{projectId}/claim',
  'POST /api/boards/{projectId}/members/{userId}/role',
  'DELETE /api/boards/{projectId}/members/{userId}',
  'POST /api/boards/{projectId}/transfers',
  'POST /api/boards/transfers/{transferId}/accept',
  'POST /api/account/rewind',
];

export function accessFlow(name: string, open: () => Promise<OpenedStore>): void {
  describe(`operators' access routes on the ${name} store`, () => {
    const opEmail = `${unique('operator')}@ops.example.com`;
    const otherOpEmail = `${unique('operator2')}@ops.example.com`;
    const served = serveStore(open, {
      OPERATOR_EMAILS: `${opEmail},${otherOpEmail}`,
      ADDRESS_RATE_PER_MINUTE: String(ADDRESS_LIMIT),
      TRUSTED_PROXIES: '127.0.0.1',
    });
    const advance = (ms: number) => served.srv.advance(ms);

    const browser = (address = nextAddress()) => new Browser(served.srv.url, { 'x-forwarded-for': address });
    async function signUp(
      email = `${unique('user')}@example.com`,
    ): Promise<{ client: Browser; accountId: string; email: string }> {
      const client = browser();
      const res = await client.post('/api/auth/signup', { email, password: PASSWORD });
      expect(res.status, res.text).toBe(201);
      return { client, accountId: res.body.account.id, email };
    }
    /** The operator, signed in on a browser of its own (signed up by the first case that asks). */
    async function operator(): Promise<{ client: Browser; accountId: string; email: string }> {
      const client = browser();
      const signup = await client.post('/api/auth/signup', { email: opEmail, password: PASSWORD });
      if (signup.status === 201) {
        // An operator's address is confirmed: the link followed signed in on another device (whose
        // address, not this browser's, the sign-in and the link draw on).
        const elsewhere = browser();
        expect((await elsewhere.post('/api/auth/login', { email: opEmail, password: PASSWORD })).status).toBe(200);
        await verifyEmail(served.srv, opEmail, elsewhere);
        return { client, accountId: signup.body.account.id, email: opEmail };
      }
      const login = await client.post('/api/auth/login', { email: opEmail, password: PASSWORD });
      expect(login.status, login.text).toBe(200);
      return { client, accountId: login.body.account.id, email: opEmail };
    }
    const rows = (filter: Record<string, string>) => served.srv.store.audit.find(filter as never);
    const shape = (res: Res) => ({ status: res.status, error: { ...res.body.error, requestId: undefined } });

    it('acts as the account: marked on every response and audit row, the owner’s own actions refused, the console back after the end', async () => {
      const op = await operator();
      const person = await signUp();
      const projectId = (await person.client.get('/api/projects')).body.projects[0].projectId as string;
      // An item waiting at the verify gate, for an audited action taken as the account.
      const token = await person.client.post('/api/accounts/tokens', {
        name: 'builder',
        scope: 'workspace',
        projectId,
        role: 'member',
      });
      expect(token.status, token.text).toBe(201);
      const agent = new Client(served.srv.url, { authorization: `Bearer ${token.body.secret}` });
      expect((await agent.post('/api/items', { title: 'gated', verify: 'required' })).status).toBe(201);
      const lease = (await agent.post('/api/claim', { workId: 'W-1' })).body;
      expect((await agent.post('/api/submit', { leaseId: lease.leaseId, head: head(1) })).status).toBe(200);

      expect((await op.client.get('/api/admin/codebase')).status).toBe(200);
      expectError(await op.client.post(`/api/admin/users/${person.accountId}/impersonate`, {}), 400, 'INVALID_INPUT');
      expectError(
        await op.client.post(`/api/admin/users/${person.accountId}/impersonate`, { reason: 'x' }),
        400,
        'INVALID_INPUT',
      );
      expectError(
        await op.client.post(`/api/admin/users/${op.accountId}/impersonate`, { reason: 'myself, why not' }),
        400,
        'INVALID_INPUT',
      );
      expectError(
        await op.client.post('/api/admin/users/no-such-account/impersonate', { reason: 'support ticket 41' }),
        404,
        'NOT_FOUND',
      );

      const started = await op.client.post(`/api/admin/users/${person.accountId}/impersonate`, {
        reason: 'support ticket 42',
      });
      expect(started.status, started.text).toBe(201);
      expect(started.body).toMatchObject({
        account: { id: person.accountId, email: person.email },
        csrfToken: expect.any(String),
        operatorCsrfToken: expect.any(String),
      });
      expect(Date.parse(started.body.expiresAt) - served.srv.now()).toBeGreaterThan(29 * 60_000);
      expect(Date.parse(started.body.expiresAt) - served.srv.now()).toBeLessThanOrEqual(30 * 60_000);
      const setCookies = started.headers.getSetCookie();
      expect(setCookies.find((c) => c.startsWith(`${OPERATOR_SESSION_COOKIE}=`))).toMatch(
        new RegExp(`Path=${IMPERSONATION_PATH};.*HttpOnly`),
      );
      expect(setCookies.find((c) => c.startsWith(`${SESSION_COOKIE}=`))).toMatch(/Path=\/;.*HttpOnly.*Max-Age=1800/);
      const impersonationCookie = op.client.cookies.get(SESSION_COOKIE)!;
      const operatorCsrf = started.body.operatorCsrfToken as string;
      // A socket opened as the account closes when the impersonation ends.
      const socket = await openSocket(served.srv.url, { cookie: `${SESSION_COOKIE}=${impersonationCookie}` });

      // The browser acts as the account now, and every response says who is behind it.
      const me = await op.client.get('/api/auth/me');
      expect(me.status, me.text).toBe(200);
      expect(me.body.user.id).toBe(person.accountId);
      expect(me.headers.get('x-impersonated-by')).toBe(op.accountId);
      const overridden = await op.client.post(`/api/items/W-1/override?projectId=${projectId}`, {
        reason: 'hotfix for the ticket',
      });
      expect(overridden.status, overridden.text).toBe(200);
      expect(overridden.headers.get('x-impersonated-by')).toBe(op.accountId);
      const [override] = await rows({ projectId, action: 'item.override' });
      expect(override).toMatchObject({
        actor: `user:${person.accountId}`,
        data: { workId: 'W-1', impersonatedBy: op.accountId },
      });
      // The owner's own responses are not marked.
      const own = await person.client.get('/api/auth/me');
      expect(own.headers.get('x-impersonated-by')).toBe(null);

      const [impersonate] = await rows({ action: 'admin.impersonate', target: `account:${person.accountId}` });
      expect(impersonate).toMatchObject({
        actor: `user:${op.accountId}`,
        data: { reason: 'support ticket 42', operator: true },
      });
      expect(impersonate!.data.impersonatedBy).toBeUndefined();

      // What only the owner may do is refused, and nothing happens.
      const tokensBefore = (await person.client.get('/api/accounts/tokens')).body;
      const refused = [
        await op.client.post('/api/accounts/tokens', { name: 'sneaky', scope: 'account' }),
        await op.client.post(`/api/accounts/tokens/${token.body.token.id}/reissue`, {}),
        await op.client.post('/api/auth/change-password', {
          currentPassword: PASSWORD,
          newPassword: 'another password entirely',
        }),
        await op.client.post('/api/account/email', {
          currentPassword: PASSWORD,
          newEmail: `${unique('moved')}@example.com`,
        }),
        await op.client.request('DELETE', '/api/account', {
          json: { confirmEmail: person.email, currentPassword: PASSWORD },
        }),
        await op.client.post(`/api/account/billing/checkout?projectId=${projectId}`, { interval: 'month' }),
        await op.client.post(`/api/projects/${projectId}/agents/enroll`, { uses: 1, ttlSeconds: 600 }),
        await op.client.post('/api/accounts/provision', { projectName: 'side board', agents: ['a'] }),
      ];
      for (const res of refused) expectError(res, 403, 'IMPERSONATION_FORBIDDEN');
      expect((await person.client.get('/api/accounts/tokens')).body).toEqual(tokensBefore);
      expect((await browser().post('/api/auth/login', { email: person.email, password: PASSWORD })).status).toBe(200);
      expect((await served.srv.store.accounts.get(person.accountId))!.email).toBe(person.email);

      // The console is shut to this browser meanwhile; the impersonation routes answer the operator.
      expectError(await op.client.get('/api/admin/codebase'), 404, 'NOT_FOUND');
      const state = await op.client.get(IMPERSONATION_PATH);
      expect(state.status, state.text).toBe(200);
      expect(state.body).toMatchObject({
        impersonating: { accountId: person.accountId, email: person.email, reason: 'support ticket 42' },
        csrfToken: operatorCsrf,
      });

      // The end takes the operator's own session's CSRF token, not the impersonation session's.
      expectError(
        await op.client.post(`${IMPERSONATION_PATH}/end`, undefined, { 'x-csrf-token': started.body.csrfToken }),
        403,
        'CSRF_REJECTED',
      );
      const ended = await op.client.post(`${IMPERSONATION_PATH}/end`, undefined, { 'x-csrf-token': operatorCsrf });
      expect(ended.status, ended.text).toBe(200);
      expect(ended.body).toEqual({ ended: true, accountId: person.accountId, csrfToken: operatorCsrf });
      expect(ended.headers.getSetCookie().find((c) => c.startsWith(`${OPERATOR_SESSION_COOKIE}=`))).toMatch(
        new RegExp(`Path=${IMPERSONATION_PATH};.*Max-Age=0`),
      );
      expect(op.client.cookies.has(OPERATOR_SESSION_COOKIE)).toBe(false);
      expect((await socket.closed).code).toBe(CLOSE.revoked);

      const console = await op.client.get('/api/admin/codebase');
      expect(console.status, console.text).toBe(200);
      expect(console.headers.get('x-impersonated-by')).toBe(null);
      expect((await op.client.get('/api/auth/me')).body.user.id).toBe(op.accountId);
      expect((await op.client.get(IMPERSONATION_PATH)).body.impersonating).toBe(null);
      const [end] = await rows({ action: 'admin.impersonation.end', target: `account:${person.accountId}` });
      expect(end).toMatchObject({ actor: `user:${op.accountId}`, data: { automatic: false, operator: true } });
      // The impersonation session is dead for anyone holding it.
      expectError(
        await new Client(served.srv.url, { cookie: `${SESSION_COOKIE}=${impersonationCookie}` }).get('/api/auth/me'),
        401,
        'UNAUTHENTICATED',
      );
      // Ending again changes nothing and writes nothing.
      const again = await op.client.post(`${IMPERSONATION_PATH}/end`);
      expect(again.body).toMatchObject({ ended: false, accountId: null });
      expect(await rows({ action: 'admin.impersonation.end', target: `account:${person.accountId}` })).toHaveLength(1);
    });

    it('ends by itself at 30 minutes: refused from then on, the end written once when noticed', async () => {
      const op = await operator();
      const person = await signUp();
      const started = await op.client.post(`/api/admin/users/${person.accountId}/impersonate`, {
        reason: 'checking a report',
      });
      expect(started.status, started.text).toBe(201);
      expect((await op.client.get('/api/auth/me')).body.user.id).toBe(person.accountId);

      advance(31 * 60_000);
      expectError(await op.client.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
      expect(op.client.cookies.has(SESSION_COOKIE)).toBe(false);
      const [end] = await rows({ action: 'admin.impersonation.end', target: `account:${person.accountId}` });
      expect(end).toMatchObject({
        actor: `user:${op.accountId}`,
        data: { automatic: true, reason: 'checking a report', operator: true },
      });
      expect(end!.data.endedAt).toBe(Date.parse(started.body.expiresAt));

      // The console stays shut until the operator takes their session back.
      expectError(await op.client.get('/api/admin/codebase'), 404, 'NOT_FOUND');
      const back = await op.client.post(`${IMPERSONATION_PATH}/end`, undefined, {
        'x-csrf-token': started.body.operatorCsrfToken,
      });
      expect(back.status, back.text).toBe(200);
      expect(back.body.ended).toBe(false);
      expect((await op.client.get('/api/admin/codebase')).status).toBe(200);
      expect(await rows({ action: 'admin.impersonation.end', target: `account:${person.accountId}` })).toHaveLength(1);
    });

    it('an expired impersonation presented only to the end route is written down there, once', async () => {
      const op = await operator();
      const person = await signUp();
      const started = await op.client.post(`/api/admin/users/${person.accountId}/impersonate`, {
        reason: 'second look',
      });
      expect(started.status, started.text).toBe(201);
      advance(31 * 60_000);
      const back = await op.client.post(`${IMPERSONATION_PATH}/end`, undefined, {
        'x-csrf-token': started.body.operatorCsrfToken,
      });
      expect(back.body).toMatchObject({ ended: false, accountId: person.accountId });
      const ends = await rows({ action: 'admin.impersonation.end', target: `account:${person.accountId}` });
      expect(ends).toHaveLength(1);
      expect(ends[0]!.data).toMatchObject({ automatic: true });
    });

    it('refuses anyone but an operator’s own session, as an unknown path: impersonating, ending, even as an impersonated operator', async () => {
      const unknown = shape(await new Client(served.srv.url).get('/api/admin/no-such-route'));
      const person = await signUp();
      const target = await signUp();
      const forged = new Client(served.srv.url, { cookie: `${OPERATOR_SESSION_COOKIE}=forged` });
      // A person's real session in the operator's cookie is still not an operator's.
      const smuggled = new Client(served.srv.url, {
        cookie: `${OPERATOR_SESSION_COOKIE}=${person.client.cookies.get(SESSION_COOKIE)}`,
      });
      for (const client of [person.client, forged, smuggled, new Client(served.srv.url)]) {
        expect(
          shape(await client.post(`/api/admin/users/${target.accountId}/impersonate`, { reason: 'let me in please' })),
        ).toEqual(unknown);
        expect(shape(await client.post(`${IMPERSONATION_PATH}/end`))).toEqual(unknown);
        expect(shape(await client.get(IMPERSONATION_PATH))).toEqual(unknown);
      }
      expect(await rows({ action: 'admin.impersonate', target: `account:${target.accountId}` })).toHaveLength(0);

      // An operator acting as another operator's account does not get that operator's console.
      const op = await operator();
      const other = await signUp(otherOpEmail);
      await verifyEmail(served.srv, otherOpEmail, other.client);
      expect((await other.client.get('/api/admin/codebase')).status).toBe(200);
      const started = await op.client.post(`/api/admin/users/${other.accountId}/impersonate`, {
        reason: 'their dashboard is odd',
      });
      expect(started.status, started.text).toBe(201);
      const asOther = new Client(served.srv.url, {
        cookie: `${SESSION_COOKIE}=${op.client.cookies.get(SESSION_COOKIE)}`,
      });
      expect(shape(await asOther.get('/api/admin/codebase'))).toEqual(unknown);
      expect(
        shape(
          await asOther.post(`/api/admin/users/${target.accountId}/impersonate`, { reason: 'chained impersonation' }),
        ),
      ).toEqual(unknown);
      expect(
        (
          await op.client.post(`${IMPERSONATION_PATH}/end`, undefined, {
            'x-csrf-token': started.body.operatorCsrfToken,
          })
        ).body.ended,
      ).toBe(true);
    });

    it('acts as one account at a time: starting another ends the one the client still holds', async () => {
      const op = await operator();
      const first = await signUp();
      const second = await signUp();
      const started = await op.client.post(`/api/admin/users/${first.accountId}/impersonate`, {
        reason: 'first ticket',
      });
      expect(started.status, started.text).toBe(201);
      const held = op.client.cookies.get(SESSION_COOKIE)!;
      // Not a browser: it sends the operator's cookie everywhere, beside the impersonation.
      const both = new Client(served.srv.url, {
        'x-forwarded-for': nextAddress(),
        cookie: `${SESSION_COOKIE}=${held}; ${OPERATOR_SESSION_COOKIE}=${op.client.cookies.get(OPERATOR_SESSION_COOKIE)}`,
        'x-csrf-token': started.body.operatorCsrfToken,
      });
      const next = await both.post(`/api/admin/users/${second.accountId}/impersonate`, { reason: 'second ticket' });
      expect(next.status, next.text).toBe(201);
      expectError(
        await new Client(served.srv.url, { cookie: `${SESSION_COOKIE}=${held}` }).get('/api/auth/me'),
        401,
        'UNAUTHENTICATED',
      );
      const [end] = await rows({ action: 'admin.impersonation.end', target: `account:${first.accountId}` });
      expect(end).toMatchObject({ actor: `user:${op.accountId}`, data: { automatic: false } });
      const now = new Client(served.srv.url, { cookie: `${SESSION_COOKIE}=${both.cookies.get(SESSION_COOKIE)}` });
      expect((await now.get('/api/auth/me')).body.user.id).toBe(second.accountId);
    });

    it('guards exactly the owner-only operations: the account’s credentials, its agents’, who can act on its boards, and its money', () => {
      const guarded = served.srv.server.routes.filter((r) => r.refusedWhileImpersonating);
      expect(guarded.map(operationOf).sort()).toEqual([...REFUSED_WHILE_IMPERSONATING].sort());
      for (const route of guarded) expect(routeErrors(route), operationOf(route)).toContain('IMPERSONATION_FORBIDDEN');
    });

    it('lists, adds and removes allowlist entries, each change audited with its reason', async () => {
      const op = await operator();
      const person = await signUp();
      const unknown = shape(await new Client(served.srv.url).get('/api/admin/no-such-route'));
      expect(shape(await person.client.get('/api/admin/allowlist'))).toEqual(unknown);
      expect(
        shape(await person.client.post('/api/admin/allowlist', { value: '192.0.2.1', reason: 'let me through' })),
      ).toEqual(unknown);

      expectError(await op.client.post('/api/admin/allowlist', { value: '192.0.2.1' }), 400, 'INVALID_INPUT');
      for (const value of [
        'not an address!',
        '192.0.2.1/33',
        '999.1.1.1',
        'loopback',
        'example',
        '2001:db8::/129',
        'a'.repeat(301),
      ]) {
        expectError(
          await op.client.post('/api/admin/allowlist', { value, reason: 'office network' }),
          400,
          'INVALID_INPUT',
        );
      }
      const added: Res[] = [];
      for (const value of ['192.0.2.1', '::FFFF:192.0.2.2', '192.0.2.128/25', '2001:DB8:0:0::/48', '@Corp-1.Example']) {
        advance(1000); // distinct times: newest first is then one order
        added.push(await op.client.post('/api/admin/allowlist', { value, reason: 'office network' }));
      }
      for (const res of added) expect(res.status, res.text).toBe(201);
      expect(added.map((r) => [r.body.entry.kind, r.body.entry.value])).toEqual([
        ['address', '192.0.2.1'],
        ['address', '192.0.2.2'],
        ['cidr', '192.0.2.128/25'],
        ['cidr', '2001:db8::/48'],
        ['domain', 'corp-1.example'],
      ]);
      expect(added[0]!.body.entry).toMatchObject({ reason: 'office network', addedBy: `user:${op.accountId}` });
      const repeated = await op.client.post('/api/admin/allowlist', { value: '192.0.2.1', reason: 'again' });
      expect(repeated.status).toBe(200);
      expect(repeated.body.entry.reason).toBe('office network');

      const all = (await op.client.get('/api/admin/allowlist?limit=200')).body.entries.map(
        (e: { value: string }) => e.value,
      );
      const mine = ['corp-1.example', '2001:db8::/48', '192.0.2.128/25', '192.0.2.2', '192.0.2.1'];
      expect(all.filter((v: string) => mine.includes(v))).toEqual(mine);
      const first = await op.client.get('/api/admin/allowlist?limit=2');
      expect(first.body.entries.map((e: { value: string }) => e.value)).toEqual(all.slice(0, 2));
      const second = await op.client.get(
        `/api/admin/allowlist?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`,
      );
      expect(second.body.entries.map((e: { value: string }) => e.value)).toEqual(all.slice(2, 4));
      expectError(await op.client.get('/api/admin/allowlist?cursor=nonsense'), 400, 'INVALID_CURSOR');
      expectError(await op.client.get('/api/admin/allowlist?limit=201'), 400, 'INVALID_INPUT');

      const addRows = await rows({ action: 'admin.allowlist.add', target: 'allowlist:192.0.2.128/25' });
      expect(addRows).toHaveLength(1);
      expect(addRows[0]).toMatchObject({
        actor: `user:${op.accountId}`,
        data: { reason: 'office network', kind: 'cidr', value: '192.0.2.128/25' },
      });
      expect(await rows({ action: 'admin.allowlist.add', target: 'allowlist:192.0.2.1' })).toHaveLength(1);

      const remove = (value: string, reason?: string) =>
        op.client.request('DELETE', '/api/admin/allowlist', {
          json: { value, ...(reason !== undefined && { reason }) },
        });
      expectError(await remove('192.0.2.128/25'), 400, 'INVALID_INPUT');
      expectError(await remove('192.0.2.99', 'not listed anyway'), 404, 'NOT_FOUND');
      const removed = await remove('192.0.2.128/25', 'the office moved');
      expect(removed.status, removed.text).toBe(200);
      expect(removed.body.removed).toMatchObject({ kind: 'cidr', value: '192.0.2.128/25' });
      const [removeRow] = await rows({ action: 'admin.allowlist.remove', target: 'allowlist:192.0.2.128/25' });
      expect(removeRow).toMatchObject({
        actor: `user:${op.accountId}`,
        data: { reason: 'the office moved', addedReason: 'office network' },
      });
      const after = (await op.client.get('/api/admin/allowlist?limit=200')).body.entries.map(
        (e: { value: string }) => e.value,
      );
      expect(after).not.toContain('192.0.2.128/25');
      expect(after).toContain('192.0.2.1');
    });

    it('refuses an entry past the 10,000 it may hold with 409 ALLOWLIST_LIMIT, writing nothing', async () => {
      const op = await operator();
      const store = served.srv.store;
      const before = await store.allowlist.count({});
      const filler = Array.from({ length: MAX_ENTRIES - before }, (_, i) => ({
        _id: `address:198.18.${i >> 8}.${i & 255}`,
        version: 1,
        kind: 'address' as const,
        value: `198.18.${i >> 8}.${i & 255}`,
        reason: 'filler',
        addedBy: 'user:test',
        at: 1,
      }));
      await store.allowlist.insertMissing(filler);
      try {
        const audited = (await rows({ action: 'admin.allowlist.add' })).length;
        expectError(
          await op.client.post('/api/admin/allowlist', { value: '203.0.113.77', reason: 'one too many' }),
          409,
          'ALLOWLIST_LIMIT',
        );
        expect(await store.allowlist.count({})).toBe(MAX_ENTRIES);
        expect(await store.allowlist.get('address:203.0.113.77')).toBeNull();
        expect(await rows({ action: 'admin.allowlist.add' })).toHaveLength(audited);
      } finally {
        await store.allowlist.deleteMany({ addedBy: 'user:test' });
      }
    }, 120_000);

    it('spares listed addresses, ranges and email domains the per-address budgets, where an unlisted client is refused', async () => {
      const op = await operator();
      for (const value of ['203.0.113.10', '203.0.113.128/25', 'corp-2.example']) {
        const added = await op.client.post('/api/admin/allowlist', { value, reason: 'load test from the office' });
        expect(added.status, added.text).toBe(201);
      }
      const signups = async (address: string, n: number, email = () => `${unique('u')}@example.com`) => {
        const statuses: number[] = [];
        for (let i = 0; i < n; i++)
          statuses.push(
            (await browser(address).post('/api/auth/signup', { email: email(), password: PASSWORD })).status,
          );
        return statuses;
      };
      const logins = async (address: string, n: number, email = () => `${unique('nobody')}@example.com`) => {
        const statuses: number[] = [];
        for (let i = 0; i < n; i++)
          statuses.push(
            (await browser(address).post('/api/auth/login', { email: email(), password: 'not the password' })).status,
          );
        return statuses;
      };
      const refusedAfter = (ok: number, n: number) => [...Array<number>(n).fill(ok), 429];

      served.srv.holdBudgets();
      expect(await signups('203.0.113.11', ADDRESS_LIMIT + 1)).toEqual(refusedAfter(201, ADDRESS_LIMIT));
      expect(await signups('203.0.113.10', ADDRESS_LIMIT + 2)).toEqual(Array(ADDRESS_LIMIT + 2).fill(201));
      expect(await logins('203.0.113.10', ADDRESS_LIMIT + 2)).toEqual(Array(ADDRESS_LIMIT + 2).fill(401));
      expect(await logins('203.0.113.200', ADDRESS_LIMIT + 2)).toEqual(Array(ADDRESS_LIMIT + 2).fill(401)); // in the range
      expect(await logins('203.0.113.12', ADDRESS_LIMIT + 1)).toEqual(refusedAfter(401, ADDRESS_LIMIT));
      // An email of a listed domain (or a subdomain) draws on its own budget, not the address's...
      let n = 0;
      expect(await logins('203.0.113.13', ADDRESS_LIMIT + 2, () => `u${n++}@corp-2.example`)).toEqual(
        Array(ADDRESS_LIMIT + 2).fill(401),
      );
      expect(await signups('203.0.113.14', ADDRESS_LIMIT + 1, () => `${unique('u')}@eu.corp-2.example`)).toEqual(
        Array(ADDRESS_LIMIT + 1).fill(201),
      );
      expect(await logins('203.0.113.15', ADDRESS_LIMIT + 1, () => `${unique('u')}@corp-2.example.org`)).toEqual(
        refusedAfter(401, ADDRESS_LIMIT),
      );
      // ...so guessing one account's password is as slow as ever, and as the email is only the
      // client's word, one address still has a (wider) budget for them; a malformed one is no exemption.
      expect(await logins('203.0.113.16', ADDRESS_LIMIT + 1, () => 'boss@corp-2.example')).toEqual(
        refusedAfter(401, ADDRESS_LIMIT),
      );
      const wide = ADDRESS_LIMIT * DOMAIN_BUDGET_FACTOR;
      expect(await logins('203.0.113.18', wide + 1, () => `${unique('u')}@corp-2.example`)).toEqual(
        refusedAfter(401, wide),
      );
      expect((await logins('203.0.113.19', ADDRESS_LIMIT + 1, () => `${unique('u')}@x@corp-2.example`)).at(-1)).toBe(
        429,
      );

      // The device flow's poll budget (its own, larger) spares listed addresses too.
      const polls = async (address: string, n: number) => {
        const statuses: number[] = [];
        for (let i = 0; i < n; i++)
          statuses.push(
            (await browser(address).post('/api/auth/device/poll', { deviceCode: 'no-such-device-code' })).status,
          );
        return statuses;
      };
      const pollLimit = ADDRESS_LIMIT * POLL_BUDGET_FACTOR;
      expect((await polls('203.0.113.17', pollLimit + 1)).at(-1)).toBe(429);
      expect(await polls('203.0.113.129', pollLimit + 1)).not.toContain(429);

      // Removed: the address counts again, at once on this node.
      expect(
        (
          await op.client.request('DELETE', '/api/admin/allowlist', {
            json: { value: '203.0.113.10', reason: 'load test over' },
          })
        ).status,
      ).toBe(200);
      expect(await logins('203.0.113.10', ADDRESS_LIMIT + 1)).toEqual(refusedAfter(401, ADDRESS_LIMIT));
    });

    it('mails an account through the mailer and keeps subject and text in the audit', async () => {
      const op = await operator();
      const person = await signUp();
      const unknown = shape(await new Client(served.srv.url).get('/api/admin/no-such-route'));
      expect(
        shape(
          await person.client.post(`/api/admin/users/${person.accountId}/contact`, { subject: 'Hi', text: 'Hello' }),
        ),
      ).toEqual(unknown);

      const before = served.srv.mail.sent.length;
      const bad = [
        { subject: 'Hi\r\nBcc: everyone@example.com', text: 'Hello' },
        { subject: 'Hi\nthere', text: 'Hello' },
        { subject: 'Hi\u2028there', text: 'Hello' },
        { subject: 'x'.repeat(201), text: 'Hello' },
        { subject: '   ', text: 'Hello' },
        { subject: 'Hi', text: 'x'.repeat(10_001) },
        { subject: 'Hi', text: 'bell\u0007' },
        { subject: 'Hi', text: ' \n ' },
        { subject: 'Hi' },
      ];
      for (const body of bad)
        expectError(await op.client.post(`/api/admin/users/${person.accountId}/contact`, body), 400, 'INVALID_INPUT');
      expectError(
        await op.client.post('/api/admin/users/no-such-account/contact', { subject: 'Hi', text: 'Hello' }),
        404,
        'NOT_FOUND',
      );
      expect(served.srv.mail.sent.length).toBe(before);

      const text = 'Hello,\n\nyour boards made 40,000 requests in the last hour.\n\tCould you tell us what runs there?';
      const res = await op.client.post(`/api/admin/users/${person.accountId}/contact`, {
        subject: 'About your boards',
        text,
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({ sent: true, accountId: person.accountId, to: person.email });
      const mail = await served.srv.mail.next(person.email, /^About your boards$/);
      expect(mail.text.startsWith(text)).toBe(true);
      const [row] = await rows({ action: 'admin.contact', target: `account:${person.accountId}` });
      expect(row).toMatchObject({
        actor: `user:${op.accountId}`,
        data: { subject: 'About your boards', text, operator: true },
      });
    });
  });
}
