// An impersonation session holds only while the operator's own session does, on every node: the
// other node, which holds both sessions in its identity cache (src/auth/identity-cache.ts), refuses
// the impersonation at once when the operator's session is signed out on one node (only the bus's
// notice about the operator's session can tell it: the impersonation session's own record is
// unchanged), and closes its socket there; and closes it there at once when the operator stops
// being one on the other node (their account's write told through the bus, not the minute's recheck).
// The end is written down once, whichever node notices it.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { modify } from '../../../store/ports/store.js';
import { MAX_AGE_MS } from '../../../src/auth/identity-cache.js';
import { confirmedOperator, operatorEmail, signedUp } from '../../support/operators.js';
import { twoNodesOnRedis, type RedisNodes } from '../../support/redis-nodes.js';
import { Client } from '../../support/server.js';
import { openSocket } from '../../support/socket.js';
import { until } from '../../support/until.js';

const url = inject('redisUrl');
/** Well under an entry's own age: a change seen within it was told, not aged out. */
const TOLD_WITHIN_MS = Math.min(3000, MAX_AGE_MS / 3);
const OPERATOR = operatorEmail();
const DEMOTED = operatorEmail();

describe.skipIf(!url)('an impersonation session across two nodes', () => {
  let nodes: RedisNodes;
  beforeAll(async () => {
    nodes = await twoNodesOnRedis(url!, { env: { OPERATOR_EMAILS: [OPERATOR, DEMOTED].join(',') } });
  }, 60_000);
  afterAll(async () => {
    await nodes?.stop();
  });

  it('ends on the other node when the operator’s own session signs out on one', async () => {
    const operator = await confirmedOperator(nodes.a, OPERATOR);
    const victim = await signedUp(nodes.a.url);
    const started = await operator.client.post(`/api/admin/users/${victim.accountId}/impersonate`, {
      reason: 'support ticket 8',
    });
    expect(started.status, started.text).toBe(201);
    const cookie = `board_session=${operator.client.cookies.get('board_session')}`;
    const onB = new Client(nodes.b.url, { cookie });
    for (let i = 0; i < 2; i++) expect((await onB.get('/api/auth/me')).body.user.id).toBe(victim.accountId); // cached on b
    const socket = await openSocket(nodes.b.url, { cookie, origin: 'http://board.test' });

    const own = new Client(nodes.a.url);
    own.cookies.set('board_session', operator.client.cookies.get('board_operator_session')!);
    own.csrfToken = started.body.operatorCsrfToken as string;
    const told = Date.now();
    expect((await own.post('/api/auth/logout')).status).toBe(204);

    await until(async () => (await onB.get('/api/auth/me')).status === 401, TOLD_WITHIN_MS);
    expect(Date.now() - told).toBeLessThan(MAX_AGE_MS);
    expect(await socket.closed).toEqual({ code: 4001, reason: 'the credential was revoked' });
    // Presented on both nodes again: still one end row.
    expect((await new Client(nodes.a.url, { cookie }).get('/api/auth/me')).status).toBe(401);
    expect((await onB.get('/api/auth/me')).status).toBe(401);
    const rows = () =>
      nodes.store.audit.find({ action: 'admin.impersonation.end', target: `account:${victim.accountId}` });
    await until(async () => (await rows()).length > 0, TOLD_WITHIN_MS);
    expect(await rows()).toEqual([
      expect.objectContaining({ data: expect.objectContaining({ automatic: true, cause: 'operator-session-ended' }) }),
    ]);
  });

  it('closes its socket on the other node at once when the operator is no longer one', async () => {
    const operator = await confirmedOperator(nodes.a, DEMOTED);
    const victim = await signedUp(nodes.a.url);
    const started = await operator.client.post(`/api/admin/users/${victim.accountId}/impersonate`, {
      reason: 'support ticket 9',
    });
    expect(started.status, started.text).toBe(201);
    const cookie = `board_session=${operator.client.cookies.get('board_session')}`;
    const socket = await openSocket(nodes.b.url, { cookie, origin: 'http://board.test' });

    // On node a, the operator's address no longer confirmed: no operator now.
    await modify(nodes.a.store.accounts, operator.accountId, () => ({ emailVerified: false }));

    const closed = await Promise.race([
      socket.closed,
      new Promise((r) => setTimeout(() => r('still open'), TOLD_WITHIN_MS)),
    ]);
    expect(closed, 'the socket on b outlived its operator’s standing').toEqual({
      code: 4001,
      reason: 'the credential was revoked',
    });
  });
});
