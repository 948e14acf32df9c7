// A tool call whose arguments fail the tool's input schema. docs/agents.md: "Refusals are tool
// errors (isError) whose text starts `REFUSED <CODE> (<status>)` … and whose
// structuredContent.error carries code, status, message, meaning, fix…". The SDK once refused such a
// call itself, before the tool's wrapper ran: "MCP error -32602: Input validation error: …", no
// code, no structuredContent, so an agent (or its harness) that reads structuredContent.error found
// nothing. The server now checks the arguments itself; the schemas it lists are the tools' own.
// An argument a tool does not take is refused too, as the contract refuses a body with unknown
// properties (INVALID_INPUT): the SDK once stripped it unseen, so a misspelt `workID` claimed the
// head of the chain rather than the item named.
import { toJsonSchemaCompat } from '@modelcontextprotocol/sdk/server/zod-json-schema-compat.js';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { BoardClient } from '../../src/mcp/client.js';
import { LiveSession } from '../../src/mcp/live-session.js';
import { LogSession, ToldMemory } from '../../src/mcp/log-session.js';
import { allTools } from '../../src/mcp/mcp-server.js';
import { inputOf } from '../../src/mcp/tool-set.js';
import { newBoard } from '../support/board.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { closeAgents, httpAgent, refusal, stdioAgent, textOf } from './agents.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.stop();
});
afterEach(closeAgents);

it('refuses arguments that fail the input schema in the documented refusal shape, over /mcp and stdio', async () => {
  const board = await newBoard(srv.url);
  const token = (await board.agent('typo')).defaults.authorization!.slice('Bearer '.length);
  for (const agent of [await httpAgent(srv.url, token), await stdioAgent(srv.url, token)]) {
    const result = await agent.call('claim_work', { ttlSeconds: 'an hour' });
    expect(result.isError).toBe(true);
    expect(textOf(result, 0)).toMatch(/^REFUSED INVALID_INPUT \(400\): arguments\.ttlSeconds: /);
    expect(result.structuredContent).toMatchObject({
      notices: [],
      error: {
        code: 'INVALID_INPUT',
        status: 400,
        message: expect.stringMatching(/^arguments\.ttlSeconds: .*expected number/),
        details: { field: 'arguments.ttlSeconds' },
      },
    });
    // A missing required argument too; nothing reached the board.
    const missing = await agent.call('create_items', {});
    expect(missing.structuredContent).toMatchObject({ error: { code: 'INVALID_INPUT', status: 400 } });
  }
  expect((await board.owner.get(`/api/items?projectId=${board.projectId}`)).body.items).toEqual([]);
});

it('refuses an argument a tool does not take, over /mcp and stdio, and nothing reaches the board', async () => {
  const board = await newBoard(srv.url);
  const agentClient = await board.agent('misspeller');
  await agentClient.post('/api/items/batch', { items: [{ title: 'one' }, { title: 'two' }] });
  const token = agentClient.defaults.authorization!.slice('Bearer '.length);
  for (const agent of [
    await httpAgent(srv.url, token, '?tools=all'),
    await stdioAgent(srv.url, token, { BOARD_MCP_TOOLS: 'all' }),
  ]) {
    const misspelt = await agent.call('claim_work', { workID: 'W-2' });
    expect(misspelt.isError, `claim_work took workID: ${textOf(misspelt, 0)}`).toBe(true);
    expect(textOf(misspelt, 0)).toMatch(/^REFUSED INVALID_INPUT \(400\): unknown property: arguments\.workID\n/);
    expect(refusal(misspelt)).toMatchObject({
      code: 'INVALID_INPUT',
      status: 400,
      details: { field: 'arguments.workID' },
    });
    // A tool that takes no argument, and a property of an item that create_items does not take.
    expect(refusal(await agent.call('board_status', { verbose: true }))).toMatchObject({
      code: 'INVALID_INPUT',
      details: { field: 'arguments.verbose' },
    });
    expect(refusal(await agent.call('create_items', { items: [{ title: 'three', owner: 'me' }] }))).toMatchObject({
      code: 'INVALID_INPUT',
      details: { field: 'arguments.items.0.owner' },
    });
  }
  const { items } = (await agentClient.get('/api/items')).body as { items: { workId: string; state: string }[] };
  expect(items.map((i) => `${i.workId} ${i.state}`)).toEqual(['W-1 ready', 'W-2 ready']);
}, 30_000);

it('lists each tool’s input as its own JSON Schema, over /mcp and stdio', async () => {
  const client = new BoardClient({ baseUrl: 'http://127.0.0.1:9' });
  const log = new LogSession({
    client,
    noticeClient: client,
    drew: () => false,
    query: {},
    principal: 'agent:listed',
    now: Date.now(),
    memory: new ToldMemory(),
  });
  const live = new LiveSession({ baseUrl: 'http://127.0.0.1:9', token: 'agb_listed', push: () => undefined });
  // As the SDK lists a tool registered with its input: its properties, and no other.
  const own = (session: LogSession | LiveSession) =>
    Object.fromEntries(
      allTools(session).map((t) => [
        t.name,
        toJsonSchemaCompat(inputOf(t), { strictUnions: true, pipeStrategy: 'input' }),
      ]),
    );
  const expected = { log: own(log), live: own(live) };
  live.close();
  const board = await newBoard(srv.url);
  const token = (await board.agent('reader')).defaults.authorization!.slice('Bearer '.length);
  for (const [kind, agent] of [
    ['log', await httpAgent(srv.url, token, '?tools=all')],
    ['live', await stdioAgent(srv.url, token, { BOARD_MCP_TOOLS: 'all' })],
  ] as const) {
    const { tools } = await agent.client.listTools();
    expect(Object.fromEntries(tools.map((t) => [t.name, t.inputSchema]))).toEqual(expected[kind]);
    for (const tool of tools) expect(tool.inputSchema.additionalProperties, tool.name).toBe(false);
  }
}, 30_000);
