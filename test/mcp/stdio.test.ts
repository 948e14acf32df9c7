// `agent-board mcp` over stdio, spawned from the bin and driven by the SDK's own client against a
// running server: the tool list and its tiers, a claim → submit → verify round between two agents
// (leases kept alive by the server), a lease that runs out while its agent is quiet (pushed as a
// logging message, and first in the next tool result), a direct shout reaching the agent, and
// refusals carrying the registry's code, meaning and fix.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { head, newBoard } from '../support/board.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { pace } from '../support/until.js';
import { closeAgents, CORE_TOOLS, noticesOf, refusal, stdioAgent, textOf } from './agents.js';

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

describe('agent-board mcp (stdio)', () => {
  it('lists the core eight tools by default, every tool with BOARD_MCP_TOOLS=all, and just the named ones', async () => {
    const board = await newBoard(srv.url);
    const token = tokenOf(await board.agent('lister'));
    const core = await stdioAgent(srv.url, token);
    const { tools } = await core.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(CORE_TOOLS);
    for (const t of tools) expect(t.description!.length).toBeGreaterThan(80); // each teaches its step
    expect(tools.find((t) => t.name === 'submit_work')!.inputSchema.properties).toHaveProperty('workId'); // stdio knows leases by item
    expect(core.client.getInstructions()).toMatch(/claim_work.*submit_work/s);

    const all = (await (await stdioAgent(srv.url, token, { BOARD_MCP_TOOLS: 'all' })).client.listTools()).tools.map(
      (t) => t.name,
    );
    expect(all.slice(0, 8)).toEqual(CORE_TOOLS);
    expect(all).toEqual(
      expect.arrayContaining([
        'release_lease',
        'read_doctrine',
        'propose_doctrine',
        'read_spec',
        'query_history',
        'read_item',
      ]),
    );
    expect(all.length).toBeGreaterThan(12);

    const named = await stdioAgent(srv.url, token, { BOARD_MCP_TOOLS: 'board_status,read_doctrine' });
    expect((await named.client.listTools()).tools.map((t) => t.name)).toEqual(['board_status', 'read_doctrine']);
    const doctrine = await named.ok('read_doctrine');
    expect(doctrine).toHaveProperty('entries');
  });

  it('runs a claim → submit → verify round between two agents, each knowing its lease by the item', async () => {
    const board = await newBoard(srv.url);
    const worker = await stdioAgent(srv.url, tokenOf(await board.agent('worker')));
    const verifier = await stdioAgent(srv.url, tokenOf(await board.agent('verifier')));

    const made = await worker.ok('create_items', {
      items: [
        { title: 'gated work', verify: 'required', ref: 'a' },
        { title: 'after it', dependsOn: ['a'] },
      ],
    });
    expect(made.items.map((i: { workId: string; state: string }) => [i.workId, i.state])).toEqual([
      ['W-1', 'ready'],
      ['W-2', 'pending'],
    ]);

    // A 2 s lease, kept alive by the server while the agent keeps calling: well past its length.
    const claimed = await worker.ok('claim_work', { ttlSeconds: 2 });
    expect(claimed).toMatchObject({
      lease: { workId: 'W-1', purpose: 'work' },
      item: { workId: 'W-1', title: 'gated work', state: 'claimed' },
    });
    const started = Date.now();
    while (Date.now() - started < 5000) {
      const status = await worker.ok('board_status');
      expect(status.you.leases).toEqual([expect.objectContaining({ workId: 'W-1', keptAlive: true })]);
      await pace(800); // the agent's own pace: the lease lives on real timers, so real time passes
    }
    const submitted = await worker.call('submit_work', { head: head(1) });
    expect(submitted.isError).toBeFalsy();
    expect(noticesOf(submitted)).toEqual([]);
    expect(JSON.parse(textOf(submitted, 0))).toEqual({ workId: 'W-1', state: 'awaiting_verify' });

    const check = await verifier.ok('claim_work', { purpose: 'verify' });
    expect(check).toMatchObject({
      lease: { workId: 'W-1', purpose: 'verify' },
      item: { submission: { head: head(1) } },
    });
    expect(await verifier.ok('verify_work', { workId: 'W-1', head: head(1), verdict: 'pass' })).toEqual({
      workId: 'W-1',
      state: 'done',
    });
    const item = await board.owner.get(`/api/items/W-2?projectId=${board.projectId}`);
    expect(item.body.state).toBe('ready');
    // Nothing about the finished leases was pushed or told.
    expect([...worker.logged, ...verifier.logged].filter((l) => l.data.notice.kind === 'lease.lost')).toEqual([]);
  }, 60_000);

  it('tells a quiet agent its lease ran out, first thing in its next result; a direct shout reaches it; refusals carry the code', async () => {
    const board = await newBoard(srv.url);
    const quietAgent = await board.agent('quiet');
    const other = await board.agent('other');
    const agent = await stdioAgent(srv.url, tokenOf(quietAgent));

    const nothing = await agent.call('claim_work');
    expect(nothing.isError).toBe(true);
    expect(refusal(nothing)).toMatchObject({
      code: 'NOTHING_READY',
      status: 409,
      meaning: 'No item is ready for this principal to claim.',
      fix: expect.stringContaining('claim again'),
    });
    expect(textOf(nothing, 0)).toMatch(/^REFUSED NOTHING_READY \(409\)/);

    await agent.ok('create_items', { items: [{ title: 'left alone' }] });
    expect(await agent.ok('claim_work', { ttlSeconds: 2 })).toMatchObject({ lease: { workId: 'W-1' } });
    // Quiet: after a lease length without a call the server stops renewing; the board expires it and says so.
    await expect
      .poll(() => agent.logged.find((l) => l.data.notice.kind === 'lease.lost'), { timeout: 20_000, interval: 200 })
      .toMatchObject({ level: 'error', data: { text: expect.stringContaining('LEASE LOST') } });
    // Before it ran out, the warning that nothing renewed it.
    const kinds = agent.logged.map((l) => l.data.notice.kind);
    expect(kinds.indexOf('lease.expiring')).toBeGreaterThanOrEqual(0);
    expect(kinds.indexOf('lease.expiring')).toBeLessThan(kinds.indexOf('lease.lost'));
    expect(agent.logged.find((l) => l.data.notice.kind === 'lease.expiring')).toMatchObject({
      level: 'warning',
      data: { text: expect.stringContaining('Any board tool call now renews it') },
    });
    const shout = await other.post(`/api/shouts`, { text: 'W-1 is mine now', to: quietAgent.principal });
    expect(shout.status).toBe(201);
    await expect
      .poll(() => agent.logged.find((l) => l.data.notice.kind === 'shout.direct'), { timeout: 10_000 })
      .toMatchObject({ level: 'info' });

    const next = await agent.call('board_status');
    expect(next.isError).toBeFalsy();
    expect(textOf(next, 0)).toMatch(/^BOARD NOTICES[^\n]*\n- LEASE LOST: your work lease on W-1 has ended \(expired\)/);
    expect(textOf(next, 0)).toContain(`DIRECT SHOUT from ${other.principal}`);
    expect(noticesOf(next).map((n) => n.kind)).toEqual(['lease.lost', 'shout.direct']);
    expect(JSON.parse(textOf(next, 1)).you.leases).toEqual([]);
    // Told once.
    expect(noticesOf(await agent.call('board_status'))).toEqual([]);

    const late = await agent.call('submit_work', { workId: 'W-1', head: head(2) });
    expect(refusal(late)).toMatchObject({ code: 'NO_LEASE_HERE', fix: expect.stringContaining('claim_work') });
    const invalid = await agent.call('shout', { text: '' });
    expect(refusal(invalid)).toMatchObject({ code: 'INVALID_INPUT', status: 400 });
  }, 60_000);
});
