// Deeply nested JSON bodies (issue 42 follow-up): the lone-surrogate check walked a body by
// recursion, so 40,000 levels and one \u escape overflowed its stack and answered 500; past
// JSON_DEPTH_MAX levels a body is now refused 400 INVALID_JSON, escape or none, and the node
// stays up. Without an escape the MCP SDK overflowed its own stack reading a deep message.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/errors/registry.js';
import { JSON_DEPTH_MAX } from '../../src/http/json-body.js';
import { newBoard } from '../support/board.js';
import { expectError } from '../support/expect-error.js';
import { Client, startTestServer, type Res, type TestServer } from '../support/server.js';

let srv: TestServer;
let agent: Client;
beforeAll(async () => {
  srv = await startTestServer();
  agent = await (await newBoard(srv.url)).agent('deep');
});
afterAll(async () => {
  await srv.stop();
});

const arrays = (levels: number, inner: string) => `${'['.repeat(levels)}${inner}${']'.repeat(levels)}`;
const objects = (levels: number, inner: string) => `${'{"a":'.repeat(levels)}${inner}${'}'.repeat(levels)}`;
const ESCAPE = '"\\u0041"';
const MCP_HEADERS = { accept: 'application/json, text/event-stream' };

function send(client: Client, path: string, raw: string, headers: Record<string, string> = {}): Promise<Res> {
  return client.request('POST', path, { raw, headers: { 'content-type': 'application/json', ...headers } });
}

function expectTooDeep(res: Res): void {
  expectError(res, 400, 'INVALID_JSON');
  expect(ERRORS).toHaveProperty(res.body.error.code);
  expect(res.body.error.message).toBe(`The body is nested deeper than ${JSON_DEPTH_MAX} levels of objects and arrays.`);
}

async function expectNodeUp(): Promise<void> {
  expect((await fetch(`${srv.url}/healthz`)).status).toBe(200);
  const made = await agent.post('/api/items', { title: 'after a deep body' });
  expect(made.status, made.text).toBe(201);
}

describe('a deeply nested body', () => {
  it('with a \\u escape is refused 400 INVALID_JSON, not 500: a Bearer write, an unauthenticated login, MCP arguments', async () => {
    expectTooDeep(await send(agent, '/api/items', `{"title":"t","extra":${arrays(100_000, ESCAPE)}}`));
    expectTooDeep(
      await send(
        new Client(srv.url),
        '/api/auth/login',
        `{"email":"a@b.c","password":"x","e":${objects(40_000, ESCAPE)}}`,
      ),
    );
    const call = (args: string) =>
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"claim_work","arguments":${args}}}`;
    expectTooDeep(await send(agent, '/mcp', call(`{"x":${objects(40_000, ESCAPE)}}`), MCP_HEADERS));
    await expectNodeUp();
  });

  it('without an escape is refused as well, before anything reads it (the MCP SDK overflowed its stack on a deep message)', async () => {
    expectTooDeep(await send(agent, '/api/items', `{"title":"t","extra":${arrays(100_000, '"A"')}}`));
    expectTooDeep(
      await send(
        new Client(srv.url),
        '/api/auth/signup',
        `{"email":"deep@example.com","password":"correct horse battery","e":${objects(40_000, '"A"')}}`,
      ),
    );
    expectTooDeep(await send(agent, '/api/claim', `{"workId":${objects(40_000, '"A"')}}`));
    expectTooDeep(
      await send(agent, '/mcp', `{"jsonrpc":"2.0","id":5,"result":{"x":${objects(40_000, '"A"')}}}`, MCP_HEADERS),
    );
    await expectNodeUp();
  });

  it(`is read up to ${JSON_DEPTH_MAX} levels, and a lone surrogate is found at any of them`, async () => {
    // The body itself is one level: `extra` holds the other JSON_DEPTH_MAX - 1, and then one more.
    const within = await send(agent, '/api/items', `{"title":"t","extra":${arrays(JSON_DEPTH_MAX - 1, '1')}}`);
    expectError(within, 400, 'INVALID_INPUT'); // parsed: refused by the route's schema (no such field)
    expectTooDeep(await send(agent, '/api/items', `{"title":"t","extra":${arrays(JSON_DEPTH_MAX, '1')}}`));
    const lone = await send(agent, '/api/items', `{"title":"t","extra":${objects(JSON_DEPTH_MAX - 1, '"\\ud800"')}}`);
    expectError(lone, 400, 'INVALID_JSON');
    expect(lone.body.error.message).toMatch(/lone surrogate/);
    const loneKey = await send(agent, '/api/items', `{"title":"t","extra":[[{"\\udc00":1}]]}`);
    expect(loneKey.body.error.message).toMatch(/lone surrogate/);
  });
});
