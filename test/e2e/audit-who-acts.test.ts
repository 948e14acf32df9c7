// Changes of who can act are audited, whoever acts (DOMAIN.md "Operators", issue 42 finding 4):
// board create, delete, pause and resume; invitations created, revoked and accepted; role changes
// and removals; transfers offered and accepted; tokens issued, reissued and revoked; rewind applied
// and undone. A row made through impersonation names both the operator and the account, and the
// operators' audit view (GET /api/admin/audit) shows both; what impersonation refuses writes none.
import { describe, expect, it } from 'vitest';
import type { AuditRecord, Filter } from '../../store/ports/store.js';
import { makePro, webhookOnlyBilling } from '../support/billing.js';
import { expectError } from '../support/expect-error.js';
import { operatorEmail, operatorSession } from '../support/operators.js';
import { Client } from '../support/server.js';
import { embeddedStore, serveStore } from '../support/stores.js';
import { unique } from '../support/temp.js';
import { verifyEmail } from '../support/verify-email.js';
import { SHARING_ENV, sharingKit, type Person } from './sharing-kit.js';

const SECRET = 'whsec_audit_who_acts';
const OPERATOR = operatorEmail();
const CONFIRM = 'REWIND_SERVICE_BOARD';

describe('audit of who can act', () => {
  const served = serveStore(embeddedStore, {
    ...SHARING_ENV,
    ...webhookOnlyBilling(SECRET),
    OPERATOR_EMAILS: OPERATOR,
  });
  const srv = () => served.srv;
  const kit = sharingKit(served);
  let operator: { client: Client; accountId: string } | null = null;

  /** The operator's own console session, address confirmed (the gate asks for it). */
  async function operatorConsole(): Promise<{ client: Client; accountId: string }> {
    if (!operator) {
      operator = await operatorSession(srv().url, OPERATOR);
      await verifyEmail(srv(), OPERATOR, operator.client);
    }
    return operator;
  }

  /** A client acting as `person` through an impersonation session, and the operator behind it. */
  async function actingAs(person: Person): Promise<{ as: Client; operatorId: string }> {
    const op = await operatorConsole();
    const as = new Client(srv().url);
    const login = await as.post('/api/auth/login', { email: OPERATOR, password: 'operator password 123' });
    expect(login.status, login.text).toBe(200);
    const started = await as.post(`/api/admin/users/${person.accountId}/impersonate`, { reason: 'support ticket 42' });
    expect(started.status, started.text).toBe(201);
    return { as, operatorId: op.accountId };
  }

  const rows = (filter: Filter<AuditRecord>) =>
    srv().store.audit.find(filter, {
      sort: [
        ['at', 1],
        ['_id', 1],
      ],
    });
  /** The one row `filter` finds, made by `actor` through a request of its own, by the account itself unless `impersonatedBy` says who. */
  async function row(filter: Filter<AuditRecord>, actor: string, impersonatedBy?: string): Promise<AuditRecord> {
    const found = await rows(filter);
    expect(found, JSON.stringify(filter)).toHaveLength(1);
    expect(found[0]).toMatchObject({ actor, data: { requestId: expect.any(String), address: expect.any(String) } });
    expect(found[0]!.data.impersonatedBy, JSON.stringify(filter)).toBe(impersonatedBy);
    return found[0]!;
  }
  const boardOf = async (person: Person) =>
    (await person.client.get('/api/projects')).body.projects[0].projectId as string;

  it('writes a row for each change of who can act, made by the accounts themselves', async () => {
    const [a, b] = [await kit.person(), await kit.person()];
    const [userA, userB] = [`user:${a.accountId}`, `user:${b.accountId}`];

    // Board create, pause, resume.
    const created = await a.client.post('/api/boards', { name: 'Shared work' });
    expect(created.status, created.text).toBe(201);
    const x = created.body.projectId as string;
    expect((await row({ projectId: x, action: 'board.create' }, userA)).data).toMatchObject({
      name: 'Shared work',
      ownerId: a.accountId,
    });
    for (const paused of [true, false])
      expect((await a.client.request('PATCH', `/api/boards/${x}`, { json: { paused } })).status).toBe(200);
    await row({ projectId: x, action: 'board.pause' }, userA);
    await row({ projectId: x, action: 'board.resume' }, userA);

    // Invitations created, accepted, revoked (once, however often asked).
    expect((await kit.invite(a.client, x, b.email)).status).toBe(201);
    const link = await kit.linkFor(b.email);
    expect(
      (await row({ projectId: x, action: 'invitation.create', target: `invitation:${link.invitationId}` }, userA)).data,
    ).toMatchObject({ email: b.email, role: 'member', replaces: [] });
    expect((await kit.accept(b.client, link)).status).toBe(200);
    expect((await row({ projectId: x, action: 'invitation.accept' }, userB)).data).toMatchObject({
      role: 'member',
      invitedBy: a.accountId,
    });
    const stranger = `${unique('stranger')}@example.com`;
    const invited = await kit.invite(a.client, x, stranger, 'viewer');
    const strangerInvitation = invited.body.invitation.invitationId as string;
    for (let i = 0; i < 2; i++)
      expect((await a.client.post(`/api/boards/${x}/invitations/${strangerInvitation}/revoke`)).status).toBe(200);
    expect((await row({ projectId: x, action: 'invitation.revoke' }, userA)).data).toMatchObject({
      email: stranger,
      role: 'viewer',
    });

    // A role change (a repeat that changes nothing is not one).
    for (let i = 0; i < 2; i++) expect((await kit.setRole(a.client, x, b.accountId, 'admin')).status).toBe(200);
    expect(await row({ projectId: x, action: 'member.role' }, userA)).toMatchObject({
      target: `account:${b.accountId}`,
      data: { from: 'member', to: 'admin' },
    });

    // A transfer offered and accepted; the new owner removes the old one, then deletes the board.
    srv().advance(61_000); // one sharing mail a minute per address and board
    const offered = await a.client.post(`/api/boards/${x}/transfers`, { toUserId: b.accountId });
    expect(offered.status, offered.text).toBe(201);
    const transferId = offered.body.transfer.transferId as string;
    expect(await row({ projectId: x, action: 'transfer.offer' }, userA)).toMatchObject({
      target: `transfer:${transferId}`,
      data: { from: a.accountId, to: b.accountId },
    });
    expect((await kit.takeOver(transferId, b.client)).status).toBe(200);
    expect(await row({ projectId: x, action: 'transfer.accept' }, userB)).toMatchObject({
      target: `transfer:${transferId}`,
      data: { from: a.accountId, to: b.accountId },
    });
    expect((await kit.remove(b.client, x, a.accountId)).status).toBe(204);
    expect(await row({ projectId: x, action: 'member.remove' }, userB)).toMatchObject({
      target: `account:${a.accountId}`,
      data: { role: 'admin', self: false },
    });
    expect((await b.client.request('DELETE', `/api/boards/${x}`)).status).toBe(204);
    await row({ projectId: x, action: 'board.delete' }, userB);
    // Every change on the board, once each: the rows outlive the board.
    expect((await rows({ projectId: x })).map((r) => r.action).sort()).toEqual(
      [
        'board.create',
        'board.pause',
        'board.resume',
        'invitation.create',
        'invitation.accept',
        'invitation.create',
        'invitation.revoke',
        'member.role',
        'transfer.offer',
        'transfer.accept',
        'member.remove',
        'board.delete',
      ].sort(),
    );

    // Tokens issued (by hand, by provisioning, through an enrollment code), reissued and revoked.
    const home = await boardOf(a);
    const issued = await a.client.post('/api/accounts/tokens', {
      name: 'builder',
      scope: 'workspace',
      projectId: home,
      role: 'member',
    });
    const tokenId = issued.body.token.id as string;
    expect(await row({ action: 'token.issue', target: `token:${tokenId}` }, userA)).toMatchObject({
      projectId: home,
      data: { tokenId, agentId: issued.body.token.agentId, scope: 'workspace', role: 'member' },
    });
    expect((await a.client.post(`/api/accounts/tokens/${tokenId}/reissue`, {})).status).toBe(200);
    await row({ action: 'token.reissue', target: `token:${tokenId}` }, userA);
    expect((await a.client.request('DELETE', `/api/accounts/tokens/${tokenId}`)).status).toBe(204);
    await row({ action: 'token.revoke', target: `token:${tokenId}` }, userA);
    const provisioned = await a.client.post('/api/accounts/provision', { projectName: 'Automation', agents: ['ci'] });
    expect(provisioned.status, provisioned.text).toBe(201);
    const auto = provisioned.body.project.projectId as string;
    await row({ projectId: auto, action: 'board.create' }, userA);
    await row(
      { projectId: auto, action: 'token.issue', target: `token:${provisioned.body.agents[0].token.id}` },
      userA,
    );
    const code = (await a.client.post(`/api/boards/${home}/agents/enroll`, { uses: 1, ttlSeconds: 600 })).body
      .code as string;
    const enrolled = await new Client(srv().url).post('/api/boards/enroll', { code, name: 'night-shift' });
    expect(enrolled.status, enrolled.text).toBe(201);
    await row({ action: 'token.issue', target: `token:${enrolled.body.token.id}` }, userA); // issued as the code's maker would

    // A rewind applied, then undone (its undo point applied).
    await makePro(srv().url, srv().store, { owner: a.client, projectId: home }, SECRET);
    expect((await a.client.post(`/api/items/batch?projectId=${home}`, { items: [{ title: 'one' }] })).status).toBe(201);
    expect((await a.client.post(`/api/items/batch?projectId=${home}`, { items: [{ title: 'two' }] })).status).toBe(201);
    const listing = (await a.client.get(`/api/account/rewind?projectId=${home}`)).body as {
      currentFingerprint: string;
      points: { restorePointId: string }[];
    };
    const applied = await a.client.post(`/api/account/rewind?projectId=${home}`, {
      restorePointId: listing.points[0]!.restorePointId,
      confirm: CONFIRM,
      expectedFingerprint: listing.currentFingerprint,
    });
    expect(applied.status, applied.text).toBe(200);
    const undone = await a.client.post(`/api/account/rewind?projectId=${home}`, {
      restorePointId: applied.body.undoPointId,
      confirm: CONFIRM,
      expectedFingerprint: applied.body.fingerprint,
    });
    expect(undone.status, undone.text).toBe(200);
    const rewinds = await rows({ projectId: home, action: 'board.rewind' });
    expect(rewinds.map((r) => [r.actor, r.data.restorePointId, r.data.undo])).toEqual([
      [userA, listing.points[0]!.restorePointId, false],
      [userA, applied.body.undoPointId, true],
    ]);
  });

  it('names the operator and the account in a row made through impersonation, shows both in the audit view, and writes none for a refused change', async () => {
    const [p, q] = [await kit.person(), await kit.person()];
    const userP = `user:${p.accountId}`;
    const home = await boardOf(p);
    // The account's own change, for the view to tell apart.
    const own = await p.client.post('/api/accounts/tokens', { name: 'mine', scope: 'account' });
    expect(own.status, own.text).toBe(201);
    const qBoard = await boardOf(q);
    expect((await kit.invite(q.client, qBoard, p.email)).status).toBe(201);
    const link = await kit.linkFor(p.email);

    const { as, operatorId } = await actingAs(p);
    const created = await as.post('/api/boards', { name: 'Made while helping' });
    expect(created.status, created.text).toBe(201);
    const made = created.body.projectId as string;
    await row({ projectId: made, action: 'board.create' }, userP, operatorId);
    for (const paused of [true, false])
      expect((await as.request('PATCH', `/api/boards/${home}`, { json: { paused } })).status).toBe(200);
    await row({ projectId: home, action: 'board.pause' }, userP, operatorId);
    await row({ projectId: home, action: 'board.resume' }, userP, operatorId);

    // Refused while impersonating: nothing changes, so nothing is written.
    const before = (await rows({ actor: userP })).length;
    expectError(await kit.accept(as, link), 403, 'IMPERSONATION_FORBIDDEN'); // a membership outlives the session
    expectError(
      await as.post(`/api/boards/${home}/invitations`, { email: `${unique('x')}@example.com`, role: 'admin' }),
      403,
      'IMPERSONATION_FORBIDDEN',
    );
    expectError(await as.request('DELETE', `/api/boards/${made}`), 403, 'IMPERSONATION_FORBIDDEN');
    expectError(
      await as.post('/api/accounts/tokens', { name: 'sneaky', scope: 'account' }),
      403,
      'IMPERSONATION_FORBIDDEN',
    );
    expectError(
      await as.request('DELETE', `/api/accounts/tokens/${own.body.token.id}`),
      403,
      'IMPERSONATION_FORBIDDEN',
    );
    expect((await rows({ actor: userP })).length).toBe(before);
    expect(await rows({ projectId: made, action: 'board.delete' })).toEqual([]);

    // The operators' view: the account as actor, the operator beside it; the account's own rows name no operator.
    const view = await (
      await operatorConsole()
    ).client.get(`/api/admin/audit?actor=${encodeURIComponent(userP)}&limit=200`);
    expect(view.status, view.text).toBe(200);
    const seen = (
      view.body.rows as { actor: string; impersonatedBy: string | null; action: string; projectId: string | null }[]
    ).map((r) => [r.action, r.projectId, r.actor, r.impersonatedBy]);
    expect(seen).toEqual(
      expect.arrayContaining([
        ['board.create', made, userP, operatorId],
        ['board.pause', home, userP, operatorId],
        ['board.resume', home, userP, operatorId],
        ['token.issue', null, userP, null],
      ]),
    );
    expect(seen.filter(([, , , by]) => by === operatorId)).toHaveLength(3);
    expect(await rows({ projectId: qBoard, action: 'invitation.accept' })).toEqual([]);
    const byBoard = await (await operatorConsole()).client.get(`/api/admin/audit?projectId=${made}`);
    expect(byBoard.body.rows).toEqual([
      expect.objectContaining({
        action: 'board.create',
        actor: userP,
        impersonatedBy: operatorId,
        data: expect.objectContaining({ impersonatedBy: operatorId }),
      }),
    ]);
  });
});
