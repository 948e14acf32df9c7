// Responses whose header lines are written out once for many (RawResponse.head): a spent budget's
// 429 and the liveness probe. Over real HTTP each carries its own request id first and every
// other header as before; one marked for an impersonation session names the operator too.
import { describe, expect, it } from 'vitest';
import { IMPERSONATION_HEADER } from '../../src/http/pipeline.js';
import { newBoard } from '../support/board.js';
import { operatorEmail, operatorSession } from '../support/operators.js';
import { Client, type Res } from '../support/server.js';
import { embeddedStore, serveStore } from '../support/stores.js';
import { verifyEmail } from '../support/verify-email.js';
import { SHARING_ENV, sharingKit } from './sharing-kit.js';

const OPERATOR = operatorEmail();
const NINE = ['', 'request-', 'write-'].flatMap((p) =>
  ['limit', 'remaining', 'reset'].map((f) => `x-ratelimit-${p}${f}`),
);

/** GET `path` until it answers 429 (at most `most` times), the 429 asked with request id `id`. */
async function spend(client: Client, path: string, id: string, most = 2000): Promise<Res> {
  for (let i = 0; i < most; i += 50) {
    const answers = await Promise.all(Array.from({ length: 50 }, () => client.get(path)));
    if (answers.some((r) => r.status === 429)) return client.get(path, { 'x-request-id': id });
    for (const r of answers) expect(r.status, r.text).toBe(200);
  }
  throw new Error(`${path} never answered 429`);
}

function expectRefusal(res: Res, id: string): void {
  expect(res.status, res.text).toBe(429);
  expect(res.headers.get('x-request-id')).toBe(id);
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  for (const h of NINE) expect(res.headers.get(h), h).toMatch(/^\d+$/);
  expect(res.headers.get('x-ratelimit-request-remaining')).toBe('0');
  expect(res.body.error).toMatchObject({ code: 'RATE_LIMITED', status: 429, requestId: id });
  expect(res.body.error.details).toEqual({
    limit: Number(res.headers.get('x-ratelimit-request-limit')),
    resetAt: Number(res.headers.get('x-ratelimit-request-reset')),
  });
}

describe('header lines written once for many responses', () => {
  const served = serveStore(embeddedStore, { ...SHARING_ENV, OPERATOR_EMAILS: OPERATOR });
  const srv = () => served.srv;
  const kit = sharingKit(served);

  it('a spent budget’s refusals: each with its own request id, the same headers and envelope otherwise', async () => {
    srv().holdBudgets();
    const board = await newBoard(srv().url);
    const agent = await board.agent('flood');
    const first = await spend(agent, '/api/status', 'refused-1');
    expectRefusal(first, 'refused-1');
    const second = await agent.get('/api/status', { 'x-request-id': 'refused-2' });
    expectRefusal(second, 'refused-2');
    const others = (res: Res) => [...res.headers].filter(([k]) => k !== 'x-request-id' && k !== 'date');
    expect(others(second)).toEqual(others(first));
    expect({ ...second.body.error, requestId: 'x' }).toEqual({ ...first.body.error, requestId: 'x' });
    expect(second.headers.get(IMPERSONATION_HEADER)).toBeNull();
  });

  it('a refusal of an impersonation session names the operator after the lines written once', async () => {
    srv().holdBudgets();
    const person = await kit.person();
    const projectId = (await person.client.get('/api/projects')).body.projects[0].projectId as string;
    const op = await operatorSession(srv().url, OPERATOR);
    await verifyEmail(srv(), OPERATOR, op.client);
    const started = await op.client.post(`/api/admin/users/${person.accountId}/impersonate`, {
      reason: 'support ticket 46',
    });
    expect(started.status, started.text).toBe(201);
    const refused = await spend(op.client, `/api/status?projectId=${projectId}`, 'acting-1');
    expectRefusal(refused, 'acting-1');
    expect(refused.headers.get(IMPERSONATION_HEADER)).toBe(op.accountId);
  });

  it('the liveness probe: its request id, then the same headers and body each time', async () => {
    const client = new Client(srv().url);
    const [a, b] = [await client.get('/healthz', { 'x-request-id': 'live-1' }), await client.get('/healthz')];
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.headers.get('x-request-id')).toBe('live-1');
    expect(b.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.headers.get('cache-control')).toBe('no-store');
    const others = (res: Res) => [...res.headers].filter(([k]) => k !== 'x-request-id' && k !== 'date');
    expect(others(b)).toEqual(others(a));
    expect(b.text).toBe(a.text);
  });
});
