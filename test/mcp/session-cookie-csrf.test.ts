// /mcp reached with a person's session cookie needs the session's CSRF token, as
// every cookie-authenticated write does (a page elsewhere cannot drive the tools with the cookie).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newBoard } from '../support/board.js';
import { startTestServer, type TestServer } from '../support/server.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.stop();
});

const CALL = {
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'create_items', arguments: { items: [{ title: 'planted' }] } },
};
const ACCEPT = { accept: 'application/json, text/event-stream' };

it('refuses a cookie-authenticated /mcp call without the CSRF token', async () => {
  const board = await newBoard(srv.url);
  const q = `?projectId=${board.projectId}`;
  const forged = await board.owner.post(`/mcp${q}`, CALL, {
    ...ACCEPT,
    'x-csrf-token': '',
    origin: 'https://evil.example',
  });
  expect(forged.status).toBeGreaterThanOrEqual(400);
  const plain = await board.owner.request('POST', `/mcp${q}`, {
    raw: JSON.stringify(CALL),
    headers: { ...ACCEPT, 'content-type': 'text/plain', 'x-csrf-token': '' },
  });
  expect(plain.status).toBeGreaterThanOrEqual(400);
  expect((await board.owner.get(`/api/items${q}`)).body.items).toEqual([]);
  const ok = await board.owner.post(`/mcp${q}`, CALL, ACCEPT);
  expect(ok.status).toBe(200);
  expect((await board.owner.get(`/api/items${q}`)).body.items).toHaveLength(1);
});
