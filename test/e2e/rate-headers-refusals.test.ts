// The nine rate headers go on every authenticated board response, refusals included (DOMAIN.md
// "Status, heartbeat, agents"; hardening issue). Over real HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newBoard } from '../support/board.js';
import { startTestServer, type Res, type TestServer } from '../support/server.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.stop();
});

const NINE = ['', 'Request-', 'Write-'].flatMap((p) =>
  ['Limit', 'Remaining', 'Reset'].map((f) => `x-ratelimit-${p.toLowerCase()}${f.toLowerCase()}`),
);

function expectNine(res: Res, status: number): void {
  expect(res.status, res.text).toBe(status);
  for (const h of NINE) expect(res.headers.get(h), `${h} on ${status}`).toMatch(/^\d+$/);
}

describe('rate headers on board refusals', () => {
  it('are on 400, 403, 404 and 409 refusals as on successes, and count what the request drew', async () => {
    const board = await newBoard(srv.url);
    const agent = await board.agent('refused');
    const viewer = await board.agent('watcher', 'viewer');
    expectNine(await agent.get('/api/status'), 200);
    expectNine(await agent.post('/api/claim', { workId: 'W-999' }), 404);
    expectNine(await agent.post('/api/claim', {}), 409);
    expectNine(await agent.post('/api/claim', { workId: 'not a work id' }), 400);
    expectNine(await viewer.post('/api/items', { title: 'not allowed' }), 403);
    const before = Number((await agent.get('/api/status')).headers.get('x-ratelimit-request-remaining'));
    const refused = await agent.post('/api/claim', { workId: 'W-999' });
    expect(Number(refused.headers.get('x-ratelimit-request-remaining'))).toBe(before - 1);
  });
});
