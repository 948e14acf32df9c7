// POST /mcp, the board's own MCP server over stateless Streamable HTTP, driven by the SDK's client
// with a Bearer token: the pipeline refuses a missing or bad token with the registry's 401, the
// tool list and its tiers (?tools=), a claim → submit → verify round between two agents holding
// their lease ids, a lease that ran out while its agent was quiet (told first in its next result,
// and on that call's stream), refusals with their code, and the tools' operations drawing on the
// caller's own budget.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { head, newBoard } from '../support/board.js';
import { expectError } from '../support/expect-error.js';
import { Client, startTestServer, type TestServer } from '../support/server.js';
import { closeAgents, CORE_TOOLS, DIGEST, httpAgent, noticesOf, refusal, textOf } from './agents.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ LEASE_MIN_TTL_SECONDS: '1' });
});
afterAll(async () => {
  await srv.stop();
});
afterEach(closeAgents);

const tokenOf = (agent: { defaults: Record<string, string> }): string =>
  agent.defaults.authorization!.slice('Bearer '.length);
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const MCP_HEADERS = { accept: 'application/json, text/event-stream' };

describe('POST /mcp', () => {
  it('refuses a missing or bad token with the registry’s 401 before any MCP runs, and answers GET with 405', async () => {
    const anonymous = new Client(srv.url, MCP_HEADERS);
    expectError(await anonymous.post('/mcp', INITIALIZE), 401, 'AUTH_REQUIRED');
    expectError(
      await anonymous.post('/mcp', INITIALIZE, { authorization: 'Bearer agb_not_a_token' }),
      401,
      'INVALID_SERVICE_TOKEN',
    );
    const get = await anonymous.get('/mcp');
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');

    const board = await newBoard(srv.url);
    const token = tokenOf(await board.agent('raw'));
    expectError(
      await anonymous.post('/mcp?tools=everything', INITIALIZE, { authorization: `Bearer ${token}` }),
      400,
      'INVALID_INPUT',
    );
    const ok = await anonymous.post('/mcp', INITIALIZE, { authorization: `Bearer ${token}` });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(ok.text).toContain('"serverInfo":{"name":"agent-board"');
    expect(ok.headers.get('mcp-session-id')).toBeNull(); // stateless
  });

  it('lists the core eight tools, every tool with ?tools=all, and the named ones', async () => {
    const board = await newBoard(srv.url);
    const token = tokenOf(await board.agent('lister'));
    const core = await httpAgent(srv.url, token);
    const { tools } = await core.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(CORE_TOOLS);
    expect(tools.find((t) => t.name === 'submit_work')!.inputSchema.required).toEqual(['leaseId', 'head']); // nothing is held between calls
    const all = (await (await httpAgent(srv.url, token, '?tools=all')).client.listTools()).tools.map((t) => t.name);
    expect(all).toEqual(
      expect.arrayContaining([...CORE_TOOLS, 'release_lease', 'read_doctrine', 'read_spec', 'query_history']),
    );
    const named = await httpAgent(srv.url, token, '?tools=read_spec,shout');
    expect((await named.client.listTools()).tools.map((t) => t.name)).toEqual(['shout', 'read_spec']);
    expect(await named.ok('read_spec')).toEqual({ clauses: [] });
  });

  it('runs a claim → submit → verify round between two agents passing their lease ids back', async () => {
    const board = await newBoard(srv.url);
    const worker = await httpAgent(srv.url, tokenOf(await board.agent('worker')));
    const verifier = await httpAgent(srv.url, tokenOf(await board.agent('verifier')));
    await worker.ok('create_items', { items: [{ title: 'gated', verify: 'required' }] });
    const { lease } = await worker.ok('claim_work', {});
    expect(lease).toMatchObject({ workId: 'W-1', purpose: 'work', leaseId: expect.stringMatching(/^lease_/) });
    expect((await worker.ok('renew_lease', { leaseId: lease.leaseId })).lease).toMatchObject({
      workId: 'W-1',
      fencingToken: lease.fencingToken,
    });
    expect(await worker.ok('submit_work', { leaseId: lease.leaseId, head: head(3) })).toEqual({
      workId: 'W-1',
      state: 'awaiting_verify',
    });

    const mine = await verifier.call('claim_work', { purpose: 'verify' });
    expect(noticesOf(mine)).toEqual([]);
    const check = (mine.structuredContent as { result: { lease: { workId: string } } }).result;
    expect(check.lease.workId).toBe('W-1');
    const failed = await verifier.call('verify_work', { workId: 'W-1', head: head(3), verdict: 'fail' });
    expect(refusal(failed)).toMatchObject({ code: 'FINDING_REQUIRED', status: 400 });
    expect(
      await verifier.ok('verify_work', { workId: 'W-1', head: head(3), verdict: 'pass', evidence: [DIGEST] }),
    ).toEqual({ workId: 'W-1', state: 'done' });
    const status = await worker.call('board_status');
    expect(noticesOf(status)).toEqual([]);
    expect(JSON.parse(textOf(status, 0)).board.counts.done).toBe(1);
  });

  it('tells a quiet agent its lease ran out before anything else in its next call, and on that call’s stream', async () => {
    const board = await newBoard(srv.url);
    const quiet = await board.agent('quiet');
    const other = await board.agent('other');
    const agent = await httpAgent(srv.url, tokenOf(quiet));
    await agent.ok('create_items', { items: [{ title: 'left alone' }] });
    const { lease } = await agent.ok('claim_work', { ttlSeconds: 1 });
    // Nothing renews it: the board expires it.
    await expect
      .poll(async () => (await board.owner.get(`/api/items/W-1?projectId=${board.projectId}`)).body.state, {
        timeout: 15_000,
        interval: 200,
      })
      .toBe('ready');
    expect((await other.post('/api/shouts', { text: 'taking W-1', to: quiet.principal })).status).toBe(201);

    const next = await agent.call('read_shouts');
    expect(textOf(next, 0)).toMatch(/^BOARD NOTICES[^\n]*\n- LEASE LOST: your work lease on W-1 has ended \(expired\)/);
    expect(noticesOf(next)).toEqual([
      expect.objectContaining({
        kind: 'lease.lost',
        workId: 'W-1',
        purpose: 'work',
        fencingToken: lease.fencingToken,
        reason: 'expired',
      }),
      expect.objectContaining({ kind: 'shout.direct', from: other.principal, text: 'taking W-1' }),
    ]);
    expect(agent.logged.map((l) => [l.level, l.data.notice.kind])).toEqual([
      ['error', 'lease.lost'],
      ['info', 'shout.direct'],
    ]);
    // Told once; the late submit is refused with the registry's code.
    const late = await agent.call('submit_work', { leaseId: lease.leaseId, head: head(4) });
    expect(noticesOf(late)).toEqual([]);
    expect(refusal(late)).toMatchObject({
      code: expect.stringMatching(/^LEASE_(EXPIRED|NOT_HELD)$/),
      status: 409,
      meaning: expect.any(String),
      fix: expect.stringContaining('Stop'),
    });
    expect(late.isError).toBe(true);
  }, 30_000);

  it('reads the notices on no budget of the caller’s, only after a call that drew on it, and still tells a loss first', async () => {
    const board = await newBoard(srv.url);
    const quiet = await board.agent('quiet-counted');
    const other = await board.agent('other-counted');
    const agent = await httpAgent(srv.url, tokenOf(quiet));
    await agent.ok('create_items', { items: [{ title: 'left alone' }] });
    const { lease } = await agent.ok('claim_work', { ttlSeconds: 1 });
    await expect
      .poll(async () => (await board.owner.get(`/api/items/W-1?projectId=${board.projectId}`)).body.state, {
        timeout: 15_000,
        interval: 200,
      })
      .toBe('ready');
    expect((await other.post('/api/shouts', { text: 'W-1 is free', to: quiet.principal })).status).toBe(201);

    srv.holdBudgets();
    const remaining = async () => Number((await quiet.get('/api/status')).headers.get('x-ratelimit-request-remaining'));
    // A call refused before its operation drew on the budget (the body's schema) costs nothing and reads nothing.
    const r0 = await remaining();
    const refused = await agent.call('shout', { text: '' });
    expect(refusal(refused)).toMatchObject({ code: 'INVALID_INPUT', status: 400 });
    expect(noticesOf(refused)).toEqual([]);
    const r1 = await remaining();
    expect(r0 - r1).toBe(1); // the status read itself

    // The next call that draws (its one status read) is told the loss first, then the shout; its two notice reads cost nothing.
    const next = await agent.call('board_status');
    expect(textOf(next, 0)).toMatch(/^BOARD NOTICES[^\n]*\n- LEASE LOST: your work lease on W-1 has ended \(expired\)/);
    expect(noticesOf(next)).toEqual([
      expect.objectContaining({ kind: 'lease.lost', workId: 'W-1', fencingToken: lease.fencingToken }),
      expect.objectContaining({ kind: 'shout.direct', from: other.principal, text: 'W-1 is free' }),
    ]);
    expect(agent.logged.map((l) => l.data.notice.kind)).toEqual(['lease.lost', 'shout.direct']);
    const r2 = await remaining();
    expect(r1 - r2).toBe(2); // board_status's status read, and this one
    // Told once.
    expect(noticesOf(await agent.call('board_status'))).toEqual([]);
  }, 30_000);

  it('runs each tool’s operations through the pipeline on the caller’s own budget', async () => {
    const board = await newBoard(srv.url);
    const member = await board.agent('counted');
    const agent = await httpAgent(srv.url, tokenOf(member));
    srv.holdBudgets(); // no minute turns in between
    /** What a call spent of the member's budgets: read around it with the REST status read (one request each). */
    const spent = async (call: () => Promise<unknown>) => {
      const before = (await member.get('/api/status')).headers;
      await call();
      const after = (await member.get('/api/status')).headers;
      expect(after.get('x-ratelimit-request-reset')).toBe(before.get('x-ratelimit-request-reset'));
      const drop = (name: string) => Number(before.get(name)) - Number(after.get(name));
      return { requests: drop('x-ratelimit-request-remaining') - 1, writes: drop('x-ratelimit-write-remaining') };
    };
    // Exactly the tool's own operations: the status read; one write; a claim and the item's read.
    expect(await spent(() => agent.ok('board_status'))).toEqual({ requests: 1, writes: 0 });
    expect(await spent(() => agent.ok('create_items', { items: [{ title: 'counted' }] }))).toEqual({
      requests: 1,
      writes: 1,
    });
    expect(await spent(() => agent.ok('claim_work', {}))).toEqual({ requests: 2, writes: 0 });
    const viewer = await httpAgent(srv.url, tokenOf(await board.agent('watcher', 'viewer')));
    expect(refusal(await viewer.call('create_items', { items: [{ title: 'not mine to add' }] }))).toMatchObject({
      code: 'ROLE_REQUIRED',
      status: 403,
    });
  });
});
