// What an idle socket no longer holds of its own, and the rules kept without it: its hub state is
// made at its first message (its budget's window still starting when it opened), the usage counters
// count its time from the hub's open sockets (whole seconds, as before), and a token's sockets share
// one identity object while each connection keeps its own place under the cap. No server: the parts
// alone, with a hand-run clock.
import { describe, expect, it } from 'vitest';
import { UsageRecorder, type UsageSocket } from '../../src/admin/usage.js';
import { MemoryRateLimiter } from '../../src/ratelimit/memory.js';
import type { Store } from '../../store/ports/store.js';
import type { Connection } from '../../src/ws/connection.js';
import { SocketCap } from '../../src/ws/socket-cap.js';
import { small, Subscriptions } from '../../src/ws/subscriptions.js';
import { workspaceToken } from '../support/identities.js';

const T0 = Date.UTC(2026, 10, 29, 10, 0);
const token = workspaceToken();
const conn = (id: number): Connection =>
  ({ id, identity: token, join: () => undefined, leave: () => undefined }) as unknown as Connection;

describe('an idle socket’s hub state', () => {
  it('is made when first asked for, its budget window starting when the socket opened', () => {
    const subs = new Subscriptions(() => undefined);
    const [a, b] = [conn(1), conn(2)];
    subs.open(a, T0);
    subs.open(b, T0 + 1500);
    expect([...subs.states()]).toEqual([]);
    expect([subs.openedAt(a), subs.openedAt(b)]).toEqual([T0, T0 + 1500]);
    expect(subs.subsOf(b)).toBeNull();
    expect(subs.accountOf(b)).toBe('acct');
    expect(subs.isOpen(b)).toBe(true);
    const state = subs.state(b)!;
    expect(state).toMatchObject({
      windowStart: T0 + 1500,
      used: 0,
      subs: null,
      accountId: 'acct',
      openedAt: T0 + 1500,
    });
    expect(subs.state(b)).toBe(state);
    expect([...subs.states()]).toEqual([state]);
    state.accountId = 'acct-2'; // a takeover moves the token
    expect(subs.accountOf(b)).toBe('acct-2');
    expect(subs.openedAt(b)).toBe(T0 + 1500);
    subs.close(b);
    subs.close(a);
    expect([subs.state(a), subs.state(b), subs.openedAt(a), subs.subsOf(a)]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect([subs.isOpen(a), subs.size, subs.of(token.principal)]).toEqual([false, 0, undefined]);
  });

  it('finds a principal’s sockets, whole to a reader going through them as one closes', () => {
    const subs = new Subscriptions(() => undefined);
    const conns = [conn(1), conn(2), conn(3)];
    for (const c of conns) subs.open(c, T0);
    const seen: number[] = [];
    for (const c of subs.of(token.principal) ?? []) {
      seen.push(c.id);
      if (c.id === 1) subs.close(conns[1]!); // a send that closes a socket of the same principal
    }
    expect(seen).toEqual([1, 2, 3]);
    expect(subs.of(token.principal)?.map((c) => c.id)).toEqual([1, 3]);
    subs.close(conns[1]!); // already closed: nothing changes
    subs.close(conns[0]!);
    expect(subs.of(token.principal)?.map((c) => c.id)).toEqual([3]);
    subs.close(conns[2]!);
    expect(subs.of(token.principal)).toBeUndefined();
  });

  it('keeps times as small integers where they are, and any other number as it is', () => {
    expect(small(T0 + 5 - T0)).toBe(5);
    expect(small(2.5)).toBe(2.5);
    expect(small(T0)).toBe(T0);
    expect(small(-3)).toBe(-3);
  });
});

describe('socket time in the usage counters', () => {
  it('counts whole seconds per socket from when it opened: at each flush what it added, at its close the rest', async () => {
    let now = T0;
    const added = new Map<string, number>();
    const store = {
      usage: {
        add: (id: string, _key: unknown, counts: Record<string, number>) => {
          if (counts.socketSeconds) added.set(id, (added.get(id) ?? 0) + counts.socketSeconds);
          return Promise.resolve(false);
        },
      },
    } as unknown as Pick<Store, 'usage'>;
    const usage = new UsageRecorder(store, () => now);
    const open = new Map<UsageSocket, number>();
    usage.countSockets({ connections: () => open.keys(), openedAt: (c) => open.get(c) });
    const principal = () => [...added].find(([id]) => id.endsWith(':principal:agent:agent-1'))?.[1] ?? 0;
    const [a, b, c] = [{ identity: token }, { identity: token }, { identity: token }];
    open.set(a, T0);
    now = T0 + 700;
    open.set(b, now);
    now = T0 + 2700;
    await usage.flush(); // a: 2 s, b: 2.0 s → 2
    expect(principal()).toBe(4);
    now = T0 + 3100;
    open.set(c, now); // opened after the flush: counted from its open
    now = T0 + 4200;
    usage.socketClosed(a); // 4.2 s in all, 2 counted: 2 more
    open.delete(a);
    usage.socketClosed(a); // gone: nothing more
    expect(principal()).toBe(4);
    await usage.flush(); // a's 2, b: 3.5 s → 3, 1 more; c: 1.1 s → 1
    expect(principal()).toBe(8);
    now = T0 + 4900;
    await usage.flush(); // b 4.2 s → 4, 1 more; c 1.8 s → 1, nothing
    expect(principal()).toBe(9);
    now = T0 + 6000;
    usage.socketClosed(c); // 2.9 s → 2, 1 more
    open.delete(c);
    usage.socketClosed(b); // 5.3 s → 5, 1 more
    open.delete(b);
    await usage.flush();
    expect(principal()).toBe(11);
    expect([...added].filter(([id]) => id.endsWith(':board:board'))).toEqual([[expect.any(String), 11]]);
  });
});

describe('a token’s sockets under the cap', () => {
  it('share one identity, each connection holding its own place, given back once; an upgrade never opened gives its back', async () => {
    const turns: (() => void)[] = [];
    const cap = new SocketCap({
      limiter: new MemoryRateLimiter(),
      selector: { select: () => null },
      scale: 1000,
      limit: 3,
      later: (check) => turns.push(check),
    });
    const nextTurn = () => turns.splice(0).forEach((check) => check());
    const [a, b, c] = [conn(1), conn(2), conn(3)];
    await cap.admit(token, '10.0.0.1', T0);
    cap.opened(a);
    await cap.admit(token, '10.0.0.1', T0); // abandoned: never opens
    await cap.admit(token, '10.0.0.1', T0);
    cap.opened(b);
    expect(cap.held(token)).toBe(3);
    await expect(cap.admit(token, '10.0.0.1', T0)).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    nextTurn();
    expect(cap.held(token)).toBe(2);
    cap.closed(a);
    cap.closed(a); // told twice, given back once
    cap.closed(c); // never opened: nothing to give back
    expect(cap.held(token)).toBe(1);
    await cap.admit(token, '10.0.0.1', T0);
    nextTurn(); // its check comes before it opens: the place is given back, and the socket holds none
    cap.opened(c);
    expect(cap.held(token)).toBe(1);
    cap.closed(c);
    cap.closed(b);
    expect(cap.held(token)).toBe(0);
  });
});
