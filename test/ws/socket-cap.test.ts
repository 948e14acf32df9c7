// The socket cap alone (src/ws/socket-cap.ts): places per credential, given back on close or when
// an upgrade never opens, and the request each upgrade draws. No server: an in-memory limiter, a
// stub selector and a hand-run "next turn".
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors/app-error.js';
import type { Identity, SessionIdentity, TokenIdentity } from '../../src/auth/identity.js';
import type { SelectedProject } from '../../src/auth/project-selection.js';
import { MemoryRateLimiter } from '../../src/ratelimit/memory.js';
import { BOARD_WINDOW_MS, PLANS, type PlanName } from '../../src/plans.js';
import { SOCKETS_PER_CREDENTIAL, SocketCap, type CappedSocket } from '../../src/ws/socket-cap.js';

const NOW = 1_800_000_000_000;
const token = (tokenId: string): TokenIdentity => ({
  kind: 'token',
  principal: `agent:${tokenId}`,
  accountId: 'acct',
  tokenId,
  agentId: tokenId,
  scope: 'workspace',
  prefix: 'agb_x',
  boardId: 'board',
  role: 'member',
  resources: null,
});
const session = (accountId: string, sessionId: string): SessionIdentity => ({
  kind: 'session',
  principal: `user:${accountId}`,
  accountId,
  sessionId,
});

function cap(plan: PlanName | null = 'free') {
  const turns: (() => void)[] = [];
  const limiter = new MemoryRateLimiter();
  const selector = { select: () => (plan ? ({ plan } as SelectedProject) : null) };
  const sockets = new SocketCap({ limiter, selector, scale: 1, later: (check) => turns.push(check) });
  const admit = (identity: Identity) => sockets.admit(identity, '10.0.0.1', NOW);
  /** An upgrade that opens its socket, as uWS does, within the turn: the socket. */
  const open = async (identity: Identity): Promise<CappedSocket> => {
    await admit(identity);
    const socket = { identity };
    sockets.opened(socket);
    return socket;
  };
  const refusal = async (identity: Identity): Promise<AppError> => {
    const e = await admit(identity).then(
      () => null,
      (e: unknown) => e,
    );
    if (!(e instanceof AppError)) throw new Error(`admitted, or not an AppError: ${String(e)}`);
    return e;
  };
  const requestsLeft = async (identity: Identity) =>
    (
      await limiter.peek(
        { key: `req:${identity.principal}`, limit: PLANS[plan ?? 'free'].requestsPerMinute, windowMs: BOARD_WINDOW_MS },
        NOW,
      )
    ).remaining;
  return { sockets, admit, open, refusal, requestsLeft, nextTurn: () => turns.splice(0).forEach((check) => check()) };
}

describe('places per credential', () => {
  it(`admits ${SOCKETS_PER_CREDENTIAL} sockets of a token and refuses the next with the cap in details; a close lets the next in`, async () => {
    const c = cap();
    const sockets: CappedSocket[] = [];
    for (let i = 0; i < SOCKETS_PER_CREDENTIAL; i++) sockets.push(await c.open(token('t1')));
    c.nextTurn();
    expect(c.sockets.held(sockets[0]!.identity)).toBe(SOCKETS_PER_CREDENTIAL);
    const refused = await c.refusal(token('t1'));
    expect({ code: refused.code, status: refused.status, details: refused.details }).toEqual({
      code: 'RATE_LIMITED',
      status: 429,
      details: { scope: 'sockets', limit: SOCKETS_PER_CREDENTIAL },
    });
    expect(Object.keys(refused.headers!)).toHaveLength(9);
    c.sockets.closed(sockets[3]!);
    c.sockets.closed(sockets[3]!); // a second close gives nothing back twice
    expect(c.sockets.held(sockets[0]!.identity)).toBe(SOCKETS_PER_CREDENTIAL - 1);
    await c.open(token('t1'));
    expect((await c.refusal(token('t1'))).details).toEqual({ scope: 'sockets', limit: SOCKETS_PER_CREDENTIAL });
  });

  it('counts an account’s sessions together, and each token on its own', async () => {
    const c = cap();
    for (let i = 0; i < SOCKETS_PER_CREDENTIAL; i++) await c.open(session('a1', i % 2 ? 's1' : 's2'));
    expect((await c.refusal(session('a1', 's3'))).details).toMatchObject({ scope: 'sockets' });
    await c.open(session('a2', 's1'));
    // Tokens of the same account (and board) are credentials of their own.
    for (let i = 0; i < SOCKETS_PER_CREDENTIAL; i++) await c.open(token('t1'));
    await c.open(token('t2'));
    expect([
      c.sockets.held(session('a1', 'x')),
      c.sockets.held(session('a2', 'x')),
      c.sockets.held(token('t1')),
      c.sockets.held(token('t2')),
    ]).toEqual([SOCKETS_PER_CREDENTIAL, 1, SOCKETS_PER_CREDENTIAL, 1]);
  });

  it('takes a place at admission, so upgrades admitted together cannot pass the cap before any opens', async () => {
    const c = cap();
    const tried = await Promise.allSettled(
      Array.from({ length: SOCKETS_PER_CREDENTIAL + 5 }, () => c.admit(token('t1'))),
    );
    expect(tried.filter((t) => t.status === 'fulfilled')).toHaveLength(SOCKETS_PER_CREDENTIAL);
  });

  it('gives back the place of an upgrade that never opened (its client went away) at the next turn, and keeps those that opened', async () => {
    const c = cap();
    const abandoned = token('t1');
    await c.admit(abandoned);
    const opened = await c.open(token('t1'));
    expect(c.sockets.held(opened.identity)).toBe(2);
    c.nextTurn();
    expect(c.sockets.held(opened.identity)).toBe(1);
    c.sockets.closed({ identity: abandoned }); // nothing more to give back
    expect(c.sockets.held(opened.identity)).toBe(1);
    c.sockets.closed(opened);
    expect(c.sockets.held(opened.identity)).toBe(0);
  });
});

describe('the request each upgrade draws', () => {
  it('draws one request per upgrade, refused ones included, on the plan of the credential’s board', async () => {
    const c = cap('pro');
    const before = await c.requestsLeft(token('t1'));
    for (let i = 0; i < SOCKETS_PER_CREDENTIAL; i++) await c.open(token('t1'));
    const refused = await c.refusal(token('t1'));
    expect(await c.requestsLeft(token('t1'))).toBe(before - SOCKETS_PER_CREDENTIAL - 1);
    expect(refused.headers).toMatchObject({
      'X-RateLimit-Request-Limit': String(PLANS.pro.requestsPerMinute),
      'X-RateLimit-Request-Remaining': String(before - SOCKETS_PER_CREDENTIAL - 1),
    });
    // No board selected (an account without a default board): the Free budget.
    const none = cap(null);
    await none.open(session('a1', 's1'));
    expect(await none.requestsLeft(session('a1', 's1'))).toBe(PLANS.free.requestsPerMinute - 1);
  });

  it('refuses an upgrade with the budget spent as a REST request would be, taking no place', async () => {
    const c = cap();
    const s = token('t1');
    for (let left = await c.requestsLeft(s); left > 0; left--) {
      c.sockets.closed(await c.open(token('t1')));
    }
    expect(c.sockets.held(s)).toBe(0);
    const refused = await c.refusal(s);
    expect({ code: refused.code, details: refused.details }).toEqual({
      code: 'RATE_LIMITED',
      details: {
        limit: PLANS.free.requestsPerMinute,
        resetAt: (NOW - (NOW % BOARD_WINDOW_MS) + BOARD_WINDOW_MS) / 1000,
      },
    });
    expect(refused.headers).toMatchObject({
      'X-RateLimit-Request-Remaining': '0',
      'Retry-After': expect.stringMatching(/^\d+$/),
    });
    expect(c.sockets.held(s)).toBe(0);
  });
});
