// What an operator acting as an account may not do (DOMAIN.md "Operators", issue 42 finding 3):
// whatever outlives the impersonation or changes who can act or pay is refused, 403
// IMPERSONATION_FORBIDDEN with nothing changed, decided by the route table alone; reads and the
// board's ordinary work go on; and every response of the session names the operator
// (X-Impersonated-By), refusals made before authentication included.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { Authenticator, SESSION_COOKIE } from '../../src/auth/authenticator.js';
import { ProjectSelector } from '../../src/auth/project-selection.js';
import { ERRORS } from '../../src/errors/registry.js';
import { ResolutionObserver } from '../../src/errors/observed-resolution.js';
import { IMPERSONATION_HEADER, Pipeline } from '../../src/http/pipeline.js';
import type { RawResponse } from '../../src/http/responses.js';
import { routeErrors } from '../../src/http/route-errors.js';
import { operationOf } from '../../src/http/route.js';
import { MemoryRateLimiter } from '../../src/ratelimit/memory.js';
import { expectError } from '../support/expect-error.js';
import { anonymousBoard } from '../support/onboarding.js';
import { operatorEmail, operatorSession } from '../support/operators.js';
import { Client, type Res } from '../support/server.js';
import { embeddedStore, serveStore } from '../support/stores.js';
import { unique } from '../support/temp.js';
import { verifyEmail } from '../support/verify-email.js';
import { SHARING_ENV, sharingKit, type Person } from './sharing-kit.js';

const OPERATOR = operatorEmail();
const OPERATOR_PASSWORD = 'operator password 123'; // operatorSession's
const PASSWORD = 'correct horse battery staple'; // signedUp's
const OPERATION = /^(GET|POST|PATCH|PUT|DELETE) \//;

describe('impersonation limits', () => {
  const served = serveStore(embeddedStore, { ...SHARING_ENV, OPERATOR_EMAILS: OPERATOR });
  const srv = () => served.srv;
  const kit = sharingKit(served);
  let operatorId: string | null = null;

  /** The operator on a client of their own, address confirmed (the gate asks for it), signed in. */
  async function operator(): Promise<{ client: Client; operatorId: string }> {
    if (operatorId === null) {
      const op = await operatorSession(srv().url, OPERATOR);
      await verifyEmail(srv(), OPERATOR, op.client);
      operatorId = op.accountId;
      return { client: op.client, operatorId };
    }
    const client = new Client(srv().url);
    const login = await client.post('/api/auth/login', { email: OPERATOR, password: OPERATOR_PASSWORD });
    expect(login.status, login.text).toBe(200);
    return { client, operatorId };
  }

  /** A client acting as `person` through an impersonation session the operator opened. */
  async function actingAs(person: Person): Promise<{ as: Client; operatorId: string }> {
    const op = await operator();
    const started = await op.client.post(`/api/admin/users/${person.accountId}/impersonate`, {
      reason: 'support ticket 42',
    });
    expect(started.status, started.text).toBe(201);
    return { as: op.client, operatorId: op.operatorId };
  }

  const marked = (res: Res) => res.headers.get(IMPERSONATION_HEADER);

  it('refuses every operation DOMAIN.md lists, 403 IMPERSONATION_FORBIDDEN, marked, with nothing changed', async () => {
    const { store } = srv();
    const person = await kit.person();
    const projectId = (await person.client.get('/api/projects')).body.projects[0].projectId as string;
    const owner = { owner: person.client, projectId };
    // What the refused operations would change: a member, a pending invitation, a token, a transfer offered to the person, a device waiting for approval.
    const member = await kit.person();
    expect((await kit.invite(person.client, projectId, member.email)).status).toBe(201);
    expect((await kit.accept(member.client, await kit.linkFor(member.email))).status).toBe(200);
    const invited = await kit.invite(person.client, projectId, `${unique('invited')}@example.com`);
    expect(invited.status, invited.text).toBe(201);
    const invitationId = invited.body.invitation.invitationId as string;
    const token = await person.client.post('/api/accounts/tokens', {
      name: 'builder',
      scope: 'workspace',
      projectId,
      role: 'member',
    });
    expect(token.status, token.text).toBe(201);
    const tokenId = token.body.token.id as string;
    const giver = await kit.person();
    const given = (await giver.client.get('/api/projects')).body.projects[0].projectId as string;
    expect((await kit.invite(giver.client, given, person.email)).status).toBe(201);
    expect((await kit.accept(person.client, await kit.linkFor(person.email))).status).toBe(200);
    srv().advance(61_000); // one sharing mail a minute per address and board
    const offered = await giver.client.post(`/api/boards/${given}/transfers`, { toUserId: person.accountId });
    expect(offered.status, offered.text).toBe(201);
    const transferId = offered.body.transfer.transferId as string;
    const code = await person.client.post(`/api/projects/${projectId}/agents/enroll`, { uses: 2, ttlSeconds: 600 });
    expect(code.status, code.text).toBe(201);
    const codeId = code.body.id as string;
    const device = await new Client(srv().url).post('/api/auth/device/start', { clientName: 'laptop-agent' });
    expect(device.status, device.text).toBe(200);
    // An anonymous board to take over (by its claim secret, or a nonce its agent minted), and an invitation to the person.
    const anon = await anonymousBoard(srv().url);
    const minted = await anon.agent.post(`/api/projects/${anon.projectId}/claim-nonce`);
    expect(minted.status, minted.text).toBe(201);
    const nonce = minted.body.nonce as string;
    const host = await kit.person();
    const hosted = (await host.client.get('/api/projects')).body.projects[0].projectId as string;
    srv().advance(61_000);
    expect((await kit.invite(host.client, hosted, person.email)).status).toBe(201);
    const link = await kit.linkFor(person.email);

    const { as, operatorId } = await actingAs(person);
    const board = `/api/boards/${projectId}`;
    const REFUSED: Record<string, () => Promise<Res>> = {
      'POST /api/auth/change-password': () =>
        as.post('/api/auth/change-password', { currentPassword: PASSWORD, newPassword: 'another password entirely' }),
      'POST /api/account/email': () =>
        as.post('/api/account/email', { currentPassword: PASSWORD, newEmail: `${unique('moved')}@example.com` }),
      'DELETE /api/account': () =>
        as.request('DELETE', '/api/account', { json: { confirmEmail: person.email, currentPassword: PASSWORD } }),
      'POST /api/accounts/tokens': () => as.post('/api/accounts/tokens', { name: 'sneaky', scope: 'account' }),
      'POST /api/accounts/tokens/{tokenId}/reissue': () => as.post(`/api/accounts/tokens/${tokenId}/reissue`, {}),
      'PATCH /api/accounts/tokens/{tokenId}': () =>
        as.request('PATCH', `/api/accounts/tokens/${tokenId}`, { json: { expiresAt: null } }),
      'DELETE /api/accounts/tokens/{tokenId}': () => as.request('DELETE', `/api/accounts/tokens/${tokenId}`),
      'POST /api/projects/{projectId}/agents/enroll': () =>
        as.post(`/api/projects/${projectId}/agents/enroll`, { uses: 1, ttlSeconds: 600 }),
      'POST /api/boards/{projectId}/agents/enroll': () =>
        as.post(`${board}/agents/enroll`, { uses: 1, ttlSeconds: 600 }),
      'DELETE /api/projects/{projectId}/agents/enroll/{codeId}': () =>
        as.request('DELETE', `/api/projects/${projectId}/agents/enroll/${codeId}`),
      'DELETE /api/boards/{projectId}/agents/enroll/{codeId}': () =>
        as.request('DELETE', `${board}/agents/enroll/${codeId}`),
      'POST /api/accounts/provision': () =>
        as.post('/api/accounts/provision', { projectName: 'side board', agents: ['a'] }),
      'POST /api/auth/device/approve': () =>
        as.post('/api/auth/device/approve', { userCode: device.body.userCode, projectId, approve: true }),
      'POST /api/boards/{projectId}/invitations': () =>
        as.post(`${board}/invitations`, { email: `${unique('sneaky')}@example.com`, role: 'admin' }),
      'POST /api/boards/{projectId}/invitations/{invitationId}/revoke': () =>
        as.post(`${board}/invitations/${invitationId}/revoke`),
      'POST /api/boards/{projectId}/invitations/{invitationId}/resend': () =>
        as.post(`${board}/invitations/${invitationId}/resend`),
      'POST /api/boards/invitations/{invitationId}/accept': () =>
        as.post(`/api/boards/invitations/${link.invitationId}/accept`, { token: link.token }),
      'POST /api/accounts/claim-anonymous': () =>
        as.post('/api/accounts/claim-anonymous', { claimSecret: anon.claimSecret }),
      'POST /api/projects/{projectId}/claim-nonce': () => as.post(`/api/projects/${projectId}/claim-nonce`),
      'POST /api/boards/{projectId}/claim-nonce': () => as.post(`${board}/claim-nonce`),
      'POST /api/projects/{projectId}/claim': () => as.post(`/api/projects/${anon.projectId}/claim`, { nonce }),
      'POST /api/boards/{projectId}/claim': () => as.post(`/api/boards/${anon.projectId}/claim`, { nonce }),
      'POST /api/boards/{projectId}/members/{userId}/role': () =>
        as.post(`${board}/members/${member.accountId}/role`, { role: 'admin' }),
      'DELETE /api/boards/{projectId}/members/{userId}': () =>
        as.request('DELETE', `${board}/members/${member.accountId}`),
      'POST /api/boards/{projectId}/transfers': () => as.post(`${board}/transfers`, { toUserId: member.accountId }),
      'POST /api/boards/transfers/{transferId}/accept': () => as.post(`/api/boards/transfers/${transferId}/accept`),
      'DELETE /api/projects/{projectId}': () => as.request('DELETE', `/api/projects/${projectId}`),
      'DELETE /api/boards/{projectId}': () => as.request('DELETE', board),
      'POST /api/account/billing/checkout': () =>
        as.post(`/api/account/billing/checkout?projectId=${projectId}`, { interval: 'month' }),
      'POST /api/account/billing/portal': () => as.post(`/api/account/billing/portal?projectId=${projectId}`),
      'POST /api/account/billing/annual': () => as.post(`/api/account/billing/annual?projectId=${projectId}`),
      'POST /api/account/rewind': () =>
        as.post(`/api/account/rewind?projectId=${projectId}`, {
          restorePointId: `rp_${projectId}_1`,
          confirm: 'REWIND_SERVICE_BOARD',
          expectedFingerprint: `sha256:${'0'.repeat(64)}`,
        }),
    };
    // The route table marks exactly these, and nothing else.
    expect(
      srv()
        .server.routes.filter((r) => r.refusedWhileImpersonating)
        .map(operationOf)
        .sort(),
    ).toEqual(Object.keys(REFUSED).sort());

    const state = async () => ({
      account: await store.accounts
        .get(person.accountId)
        .then((a) => [a?.email, a?.passwordHash, a?.deletedAt ?? null]),
      tokens: await store.tokens.find({ accountId: person.accountId }),
      boards: await store.projects.find({ ownerId: { $in: [person.accountId, giver.accountId, anon.accountId] } }),
      members: await store.members.find({ projectId: { $in: [projectId, given, hosted, anon.projectId] } }),
      invitations: await store.invitations.find({ projectId: { $in: [projectId, hosted] } }),
      transfers: await store.transfers.find({ projectId: given }),
      enrollments: (await store.enrollments.find({ projectId })).map((e) => e.usesLeft),
      grants: (await store.deviceGrants.find({})).map((g) => g.status),
      billing: await store.billing.get(projectId),
      audit: (await store.audit.find({ projectId: { $in: [projectId, given] } } as never)).length,
    });
    const before = await state();
    expect(before.boards).toHaveLength(3);
    expect(before.invitations.map((i) => i.status).sort()).toEqual(['accepted', 'pending', 'pending']);
    expect(before.grants).toEqual(['pending']);

    for (const [operation, call] of Object.entries(REFUSED)) {
      const res = await call();
      expectError(res, 403, 'IMPERSONATION_FORBIDDEN');
      expect(marked(res), operation).toBe(operatorId);
    }
    expect(await state()).toEqual(before);
    // The password still signs the person in, and the board and the invitation are where they were.
    expect(
      (await new Client(srv().url).post('/api/auth/login', { email: person.email, password: PASSWORD })).status,
    ).toBe(200);
    expect(await store.projects.get(projectId)).not.toBeNull();
    const pending = before.invitations.find((i) => i.status === 'pending' && i.projectId === projectId)!;
    expect(await kit.pendingOf(projectId, pending.email)).toBe(1);

    // The account itself does them: the marking is the impersonation's alone.
    const own = await person.client.request('DELETE', `/api/accounts/tokens/${tokenId}`);
    expect(own.status, own.text).toBe(204);
    expect(marked(own)).toBeNull();
    expect((await owner.owner.post(`${board}/members/${member.accountId}/role`, { role: 'viewer' })).status).toBe(200);
  });

  it('lets reads and the board’s ordinary work go on, marked', async () => {
    const person = await kit.person();
    const projectId = (await person.client.get('/api/projects')).body.projects[0].projectId as string;
    const { as, operatorId } = await actingAs(person);
    const q = `?projectId=${projectId}`;
    const allowed = [
      await as.get('/api/auth/me'),
      await as.get('/api/projects'),
      await as.get('/api/accounts/tokens'),
      await as.get(`/api/boards/${projectId}/members`),
      await as.get(`/api/boards/${projectId}/invitations`),
      await as.post(`/api/items${q}`, { title: 'looked into for the ticket' }),
      await as.get(`/api/items/W-1${q}`),
      await as.get(`/api/status${q}`),
      await as.request('PATCH', `/api/projects/${projectId}`, { json: { name: 'Renamed while helping' } }),
    ];
    expect(allowed.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 201, 200, 200, 200]);
    for (const res of allowed) expect(marked(res)).toBe(operatorId);
    expect(allowed[0]!.body.user.id).toBe(person.accountId);
    expect(allowed[6]!.body).toMatchObject({ workId: 'W-1', title: 'looked into for the ticket' });
  });

  it('marks every response of the session: a 200, a 400 refused before authentication, an ITEM_NOT_FOUND 404, a 403 refusal', async () => {
    const person = await kit.person();
    const projectId = (await person.client.get('/api/projects')).body.projects[0].projectId as string;
    const { as, operatorId } = await actingAs(person);
    const q = `?projectId=${projectId}`;

    const ok = await as.get('/api/auth/me');
    expect(ok.status).toBe(200);
    // The body is read before the credential: this refusal comes before authentication.
    const invalid = await as.post(`/api/items${q}`, { nonsense: true });
    expectError(invalid, 400, 'INVALID_INPUT');
    const notJson = await as.request('POST', `/api/items${q}`, {
      raw: 'title=x',
      headers: { 'content-type': 'text/plain' },
    });
    expectError(notJson, 415, 'JSON_REQUIRED');
    const missing = await as.get(`/api/items/W-999${q}`);
    expectError(missing, 404, 'ITEM_NOT_FOUND');
    const forbidden = await as.request('DELETE', `/api/boards/${projectId}`);
    expectError(forbidden, 403, 'IMPERSONATION_FORBIDDEN');
    // The console is shut to the impersonation session: its 404 is an unknown path's, marked as well.
    const console = await new Client(srv().url, { cookie: `${SESSION_COOKIE}=${as.cookies.get(SESSION_COOKIE)}` }).get(
      '/api/admin/codebase',
    );
    expectError(console, 404, 'NOT_FOUND');
    for (const res of [ok, invalid, notJson, missing, forbidden, console])
      expect(marked(res), `${res.status} ${res.text.slice(0, 80)}`).toBe(operatorId);

    // The account's own responses, and a Bearer call beside the cookie, are not the impersonation's.
    const own = await person.client.post(`/api/items${q}`, { nonsense: true });
    expectError(own, 400, 'INVALID_INPUT');
    expect(marked(own)).toBeNull();
    const token = await person.client.post('/api/accounts/tokens', {
      name: 'builder',
      scope: 'workspace',
      projectId,
      role: 'member',
    });
    const bearer = await new Client(srv().url, {
      authorization: `Bearer ${token.body.secret}`,
      cookie: `${SESSION_COOKIE}=${as.cookies.get(SESSION_COOKIE)}`,
    }).post('/api/items', { nonsense: true });
    expectError(bearer, 400, 'INVALID_INPUT');
    expect(marked(bearer)).toBeNull();
  });

  it('marks the replies made before any route (unknown path, 405, 413) when their request carries an impersonation session', async () => {
    const person = await kit.person();
    const { as, operatorId } = await actingAs(person);
    const impersonation = `${SESSION_COOKIE}=${as.cookies.get(SESSION_COOKIE)}`;
    const own = `${SESSION_COOKIE}=${person.client.cookies.get(SESSION_COOKIE)}`;
    // The node's own pipeline, as src/server.ts builds it, over the same store.
    const pipeline = new Pipeline({
      authenticator: new Authenticator(srv().store),
      operators: { admit: () => Promise.reject(new Error('no operator routes here')) },
      selector: new ProjectSelector({} as never),
      limiter: new MemoryRateLimiter(),
      observer: new ResolutionObserver(
        () => srv().now(),
        () => undefined,
      ),
      logger: pino({ level: 'silent' }),
      publicUrl: 'http://board.test',
      allowedOrigins: new Set(),
      clientAddress: (peer) => peer,
      csrfKey: Buffer.alloc(32),
      cookieSecure: false,
      addressRatePerMinute: 1000,
      boardRateScale: 1,
      clock: () => srv().now(),
    });
    const header = (r: RawResponse) => r.headers.find(([k]) => k === IMPERSONATION_HEADER)?.[1] ?? null;
    for (const [code, status, headers] of [
      ['NOT_FOUND', 404, {}],
      ['METHOD_NOT_ALLOWED', 405, { allow: 'GET, HEAD' }],
      ['BODY_TOO_LARGE', 413, {}],
    ] as const) {
      const reply = await pipeline.reject(code, unique('req'), undefined, undefined, headers, {
        cookie: impersonation,
      });
      expect([reply.status, header(reply)]).toEqual([status, operatorId]);
      expect(
        header(await pipeline.reject(code, unique('req'), undefined, undefined, headers, { cookie: own })),
      ).toBeNull();
      expect(
        header(
          await pipeline.reject(code, unique('req'), undefined, undefined, headers, {
            cookie: impersonation,
            authorization: 'Bearer agb_x',
          }),
        ),
      ).toBeNull();
      // Without a session cookie nothing is looked up: the reply is made at once.
      const bare = pipeline.reject(code, unique('req'), undefined, undefined, headers, {});
      expect(bare).not.toBeInstanceOf(Promise);
      expect(header(bare as RawResponse)).toBeNull();
    }
  });

  it('marks the transport’s own refusals over HTTP: an unknown path’s 404, a wrong method’s 405, a body too large, declared or read', async () => {
    const person = await kit.person();
    const { as, operatorId } = await actingAs(person);
    const unknown = await as.get('/api/no-such-path');
    expectError(unknown, 404, 'NOT_FOUND');
    const wrongMethod = await as.get('/api/claim');
    expectError(wrongMethod, 405, 'METHOD_NOT_ALLOWED');
    expect(wrongMethod.headers.get('allow')).toBe('POST');
    const declared = await as.request('POST', '/api/items', {
      raw: JSON.stringify({ pad: 'x'.repeat(300 * 1024) }),
      headers: { 'content-type': 'application/json' },
    });
    expectError(declared, 413, 'BODY_TOO_LARGE');
    // Sent in chunks with no length declared: refused once the body read passes the cap.
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 5; i++) controller.enqueue(new TextEncoder().encode(' '.repeat(64 * 1024)));
        controller.close();
      },
    });
    const cookie = `${SESSION_COOKIE}=${as.cookies.get(SESSION_COOKIE)}`;
    const streamed = await fetch(`${srv().url}/api/items`, {
      method: 'POST',
      body: chunks,
      duplex: 'half',
      headers: { cookie, 'content-type': 'application/json' },
    } as RequestInit);
    expect(streamed.status).toBe(413);
    for (const res of [unknown, wrongMethod, declared]) expect(marked(res), `${res.status}`).toBe(operatorId);
    expect(streamed.headers.get(IMPERSONATION_HEADER)).toBe(operatorId);
    // The account's own session, and no session at all, are answered unmarked.
    expect(marked(await person.client.get('/api/no-such-path'))).toBeNull();
    expect(marked(await new Client(srv().url).get('/api/claim'))).toBeNull();
  });

  it('lists the refused operations in one place: the registry names none by hand, GET /api/errors and the OpenAPI document read them from the routes', async () => {
    const routes = srv().server.routes;
    const guarded = routes
      .filter((r) => r.refusedWhileImpersonating)
      .map(operationOf)
      .sort();
    // A list kept by hand in the registry would drift from the routes: it holds none.
    expect(ERRORS.IMPERSONATION_FORBIDDEN.raisedBy.filter((op) => OPERATION.test(op))).toEqual([]);
    const listed = (await new Client(srv().url).get('/api/errors')).body.errors.find(
      (e: { code: string }) => e.code === 'IMPERSONATION_FORBIDDEN',
    );
    expect((listed.raisedBy as string[]).filter((op) => OPERATION.test(op)).sort()).toEqual(guarded);
    for (const route of routes)
      expect(routeErrors(route).includes('IMPERSONATION_FORBIDDEN'), operationOf(route)).toBe(
        route.refusedWhileImpersonating === true,
      );
    const doc = (await new Client(srv().url).get('/docs/openapi.json')).body;
    for (const route of routes) {
      const responses = JSON.stringify(doc.paths[route.path]?.[route.method]?.responses ?? {});
      expect(responses.includes('IMPERSONATION_FORBIDDEN'), operationOf(route)).toBe(
        route.refusedWhileImpersonating === true,
      );
    }
  });
});
