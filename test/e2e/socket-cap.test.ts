// What sockets a credential may hold (DOMAIN.md "Principals and roles"; issue 42, finding 5), over
// real upgrades: at most SOCKETS_PER_CREDENTIAL open (a token's own, an account's sessions
// together), the next refused 429 RATE_LIMITED with the cap in details and the nine rate headers;
// and every upgrade draws one request from the credential's request budget.
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newBoard } from '../support/board.js';
import { expectError } from '../support/expect-error.js';
import { openSocket, type TestSocket } from '../support/socket.js';
import { Client, signedUp, startTestServer, type Res, type TestServer } from '../support/server.js';
import { SOCKETS_PER_CREDENTIAL } from '../../src/ws/socket-cap.js';

const NINE = ['', 'request-', 'write-'].flatMap((p) =>
  ['limit', 'remaining', 'reset'].map((f) => `x-ratelimit-${p}${f}`),
);

/** An upgrade that is refused, read as a REST response is (status, headers, envelope). */
function refusedUpgrade(url: string, headers: Record<string, string>): Promise<Res> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/api/ws`, { headers });
    ws.once('open', () => (ws.close(), reject(new Error('the upgrade was accepted'))));
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        const responseHeaders = new Headers(
          Object.entries(res.headers).map(([k, v]) => [k, String(v)] as [string, string]),
        );
        resolve({ status: res.statusCode!, headers: responseHeaders, text, body: JSON.parse(text) });
      });
    });
    ws.once('error', () => undefined); // 'unexpected-response' answers it
  });
}

const bearer = (client: Client): Record<string, string> => ({ authorization: client.defaults.authorization! });
const cookie = (client: Client): Record<string, string> => ({
  cookie: `board_session=${client.cookies.get('board_session')}`,
});
const openAll = (url: string, headers: Record<string, string>, n: number): Promise<TestSocket[]> =>
  Promise.all(Array.from({ length: n }, () => openSocket(url, headers)));
const closeAll = async (sockets: TestSocket[]) => {
  for (const s of sockets) s.ws.close();
  await Promise.all(sockets.map((s) => s.closed));
};

function expectCapRefusal(res: Res): void {
  expectError(res, 429, 'RATE_LIMITED');
  expect(res.body.error.details).toEqual({ scope: 'sockets', limit: SOCKETS_PER_CREDENTIAL });
  for (const h of NINE) expect(res.headers.get(h), h).toMatch(/^\d+$/);
}

describe('sockets per credential', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer({ BOARD_RATE_SCALE: '100' });
  });
  afterAll(async () => {
    await srv.stop();
  });

  it(`opens ${SOCKETS_PER_CREDENTIAL} with one token at once and refuses the next with the cap in details; closing one lets the next in`, async () => {
    const board = await newBoard(srv.url);
    const agent = await board.agent('many-sockets');
    // All at once: places are taken as upgrades are admitted, not as sockets open.
    const tried = await Promise.allSettled(
      Array.from({ length: SOCKETS_PER_CREDENTIAL + 3 }, () => openSocket(srv.url, bearer(agent))),
    );
    const open = tried.flatMap((t) => (t.status === 'fulfilled' ? [t.value] : []));
    expect(open).toHaveLength(SOCKETS_PER_CREDENTIAL);
    expect(tried.flatMap((t) => (t.status === 'rejected' ? [(t.reason as { status?: number }).status] : []))).toEqual([
      429, 429, 429,
    ]);
    expectCapRefusal(await refusedUpgrade(srv.url, bearer(agent)));

    // The sockets held work as before.
    open[0]!.send({ type: 'ping' });
    expect(await open[0]!.next((m) => m.type === 'pong')).toEqual({ type: 'pong' });

    open[1]!.ws.close();
    await open[1]!.closed;
    const next = await openSocket(srv.url, bearer(agent));
    expectCapRefusal(await refusedUpgrade(srv.url, bearer(agent)));
    await closeAll([...open.filter((_, i) => i !== 1), next]);
    // Every place is given back once its socket closes.
    await closeAll(await openAll(srv.url, bearer(agent), SOCKETS_PER_CREDENTIAL));
  });

  it('is documented where the refusal is: GET /api/errors and the OpenAPI document name it for GET /api/ws, with the cap', async () => {
    const listed = (await new Client(srv.url).get('/api/errors')).body.errors.find(
      (e: { code: string }) => e.code === 'RATE_LIMITED',
    );
    expect(listed.raisedBy).toContain('GET /api/ws');
    expect(listed.fix).toContain('details.scope: "sockets"');
    const socket = (await new Client(srv.url).get('/docs/openapi.json')).body.paths['/api/ws'].get;
    expect(JSON.stringify(socket.responses['429'])).toContain('RATE_LIMITED');
    expect(socket.description).toContain(`at most ${SOCKETS_PER_CREDENTIAL} open sockets on each node`);
    expect(socket.description).toContain('Every upgrade draws one request from the credential’s request budget');
  });

  it('counts an account’s sessions together, and leaves another token alone', async () => {
    const board = await newBoard(srv.url);
    const { email, password } = await signedUp(srv.url);
    const [first, second] = [new Client(srv.url), new Client(srv.url)];
    for (const c of [first, second]) expect((await c.post('/api/auth/login', { email, password })).status).toBe(200);
    expect(first.cookies.get('board_session')).not.toBe(second.cookies.get('board_session'));
    const half = SOCKETS_PER_CREDENTIAL / 2;
    const held = [...(await openAll(srv.url, cookie(first), half)), ...(await openAll(srv.url, cookie(second), half))];
    expectCapRefusal(await refusedUpgrade(srv.url, cookie(first)));
    expectCapRefusal(await refusedUpgrade(srv.url, cookie(second)));

    // Two tokens of one board are two credentials: one at its cap leaves the other be.
    const [a, b] = [await board.agent('capped'), await board.agent('free')];
    const capped = await openAll(srv.url, bearer(a), SOCKETS_PER_CREDENTIAL);
    expectCapRefusal(await refusedUpgrade(srv.url, bearer(a)));
    const other = await openSocket(srv.url, bearer(b));
    other.send({ type: 'subscribe', boardId: board.projectId });
    expect((await other.next((m) => m.type === 'subscribed' || m.type === 'error')).type).toBe('subscribed');
    await closeAll([...held, ...capped, other]);
  });
});

describe('what an upgrade draws on the request budget', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer();
  });
  afterAll(async () => {
    await srv.stop();
  });

  it('draws one request per upgrade, and refuses an upgrade 429 RATE_LIMITED with the rate headers once the budget is spent', async () => {
    srv.holdBudgets();
    const board = await newBoard(srv.url);
    const agent = await board.agent('budgeted');
    const remaining = async () => Number((await agent.get('/api/status')).headers.get('x-ratelimit-request-remaining'));
    const before = await remaining();
    const socket = await openSocket(srv.url, bearer(agent));
    expect(await remaining()).toBe(before - 2); // the upgrade's request, then this one's
    socket.ws.close();
    await socket.closed;

    let left = await remaining();
    while (left > 0) {
      const batch = await Promise.all(Array.from({ length: Math.min(left, 50) }, () => agent.get('/api/status')));
      left = Math.min(...batch.map((r) => Number(r.headers.get('x-ratelimit-request-remaining'))));
    }
    const refused = await refusedUpgrade(srv.url, bearer(agent));
    expectError(refused, 429, 'RATE_LIMITED');
    expect(refused.body.error.details).toMatchObject({
      limit: Number(refused.headers.get('x-ratelimit-request-limit')),
      resetAt: Number(refused.headers.get('x-ratelimit-request-reset')),
    });
    for (const h of NINE) expect(refused.headers.get(h), h).toMatch(/^\d+$/);
    expect(refused.headers.get('x-ratelimit-request-remaining')).toBe('0');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
