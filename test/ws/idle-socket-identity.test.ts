// What an idle socket holds of its credential (src/server/sockets.ts): the identity its
// credential's requests share, but for an account's own session, which has a copy of its own by
// which its upgrade's origin is kept (an operator's audit rows ask for it); what is worked out per
// credential (its board's selection) is shared by its sockets and by such a copy.
// No server: the selector over records held in memory, the cap with an in-memory limiter.
import { describe, expect, it } from 'vitest';
import { ownIdentity, sharedIdentity, type SessionIdentity } from '../../src/auth/identity.js';
import { ProjectSelector } from '../../src/auth/project-selection.js';
import { MemoryRateLimiter } from '../../src/ratelimit/memory.js';
import type { MemberRecord, ProjectRecord } from '../../store/ports/store.js';
import { mayBeOperator } from '../../src/ws/operator-access.js';
import { SocketCap } from '../../src/ws/socket-cap.js';
import { workspaceToken } from '../support/identities.js';

const NOW = 1_800_000_000_000;
const token = workspaceToken();
const session: SessionIdentity = { kind: 'session', principal: 'user:acct', accountId: 'acct', sessionId: 'sess-1' };

function selector(): ProjectSelector {
  const project = { _id: 'board', name: 'Board', plan: 'free', ownerId: 'owner' } as unknown as ProjectRecord;
  const member = { _id: 'board:acct', role: 'member' } as unknown as MemberRecord;
  return new ProjectSelector({
    projects: { get: (id) => (id === 'board' ? project : null) },
    members: { get: (id) => (id === 'board:acct' ? member : null) },
    accounts: { get: () => null },
  });
}

describe('an idle socket’s identity', () => {
  it('is a copy of its own that gives back the identity it was copied from', () => {
    const own = ownIdentity(token);
    expect(own).not.toBe(token);
    expect(own).toEqual(token);
    expect(sharedIdentity(own)).toBe(token);
    expect(sharedIdentity(ownIdentity(own))).toBe(token);
    expect(sharedIdentity(token)).toBe(token);
  });

  it('finds its credential’s selection, not one made again for each socket', () => {
    const select = selector();
    const first = select.select(token, undefined, 'optional');
    expect(first).toMatchObject({ id: 'board', role: 'member', plan: 'free', owned: false });
    for (let i = 0; i < 3; i++) expect(select.select(ownIdentity(token), undefined, 'optional')).toBe(first);
    // A socket's copy that comes first makes the selection its credential's requests then find.
    const again = selector();
    const bySocket = again.select(ownIdentity(token), 'board', 'required');
    expect(again.select(token, 'board', 'required')).toBe(bySocket);
  });

  it('takes a place of its own under the cap, given back when it closes', async () => {
    const cap = new SocketCap({
      limiter: new MemoryRateLimiter(),
      selector: { select: () => null },
      scale: 1000,
      limit: 2,
      later: () => undefined,
    });
    // Each socket its own object; the copies of the identity count as one credential.
    const [a, b, c] = [
      { identity: ownIdentity(token) },
      { identity: ownIdentity(token) },
      { identity: ownIdentity(token) },
    ];
    await cap.admit(a.identity, '10.0.0.1', NOW);
    cap.opened(a);
    await cap.admit(b.identity, '10.0.0.1', NOW);
    cap.opened(b);
    expect(cap.held(token)).toBe(2);
    await expect(cap.admit(c.identity, '10.0.0.1', NOW)).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    cap.closed(a);
    cap.closed(a); // told twice, given back once
    expect(cap.held(token)).toBe(1);
    await cap.admit(c.identity, '10.0.0.1', NOW);
    cap.opened(c);
    expect(cap.held(token)).toBe(2);
  });

  it('keeps an origin only where an operator’s audit row may ask for it: an account’s own session', () => {
    expect(mayBeOperator(ownIdentity(session))).toBe(true);
    expect(mayBeOperator(ownIdentity(token))).toBe(false);
    const impersonated: SessionIdentity = { ...session, impersonation: { operatorId: 'op', operatorSessionId: 's' } };
    expect(mayBeOperator(ownIdentity(impersonated))).toBe(false);
  });
});
