// A store hiccup ends no operator socket: AccessChanges (an account's `records.changed`, and the
// minute's revalidation) keeps an operator's firehose when the operator check cannot be answered
// (`.catch(() => true)`). The check once answered a failed account read "not an operator" (it was
// the REST gate's fail-closed form), so a store that could not answer at the moment of an
// operator's own account write ended their firehose; OperatorGate.isOperator now throws instead.
import { describe, expect, it } from 'vitest';
import { OperatorGate } from '../../src/admin/gate.js';
import type { Authenticator } from '../../src/auth/authenticator.js';
import type { Identity } from '../../src/auth/identity.js';
import { AccessChanges } from '../../src/ws/access-changes.js';
import type { Connection } from '../../src/ws/connection.js';
import { OperatorAccess } from '../../src/ws/operator-access.js';
import { StoreUnavailableError, type Store } from '../../store/ports/store.js';

describe('an operator’s firehose on an account write', () => {
  it('is not ended by a store that cannot answer the account read', async () => {
    const identity: Identity = { kind: 'session', principal: 'user:op', accountId: 'op', sessionId: 's1' };
    const sent: string[] = [];
    const conn = {
      identity,
      send: (m: string) => (sent.push(m), true),
      close: () => undefined,
      backlog: () => 0,
    } as unknown as Connection;
    let down = false;
    const accounts = {
      get: async () => {
        if (down) throw new StoreUnavailableError(new Error('down, on purpose'));
        return { _id: 'op', email: 'op@example.com', emailVerified: true };
      },
    } as unknown as Store['accounts'];
    // As src/server/sockets.ts wires it: OperatorAccess asks OperatorGate.isOperator.
    const gate = new OperatorGate({} as Pick<Authenticator, 'authenticate'>, { accounts }, ['op@example.com']);
    const operators = new OperatorAccess({
      store: { accounts } as unknown as Pick<Store, 'projects' | 'accounts'>,
      audit: async () => undefined,
      isOperator: (accountId) => gate.isOperator(accountId),
      originOf: () => undefined,
      clock: () => Date.now(),
    });
    const onFirehose = new Set([conn]);
    const changes = new AccessChanges({
      subscriptions: {
        connections: () => [conn],
        subsOf: () => undefined,
        unwatch: () => false,
        accountOf: () => 'op',
      } as never,
      access: { reachable: async () => null, membershipChanged: () => undefined } as never,
      firehose: { sockets: () => onFirehose, unwatch: (c: Connection) => onFirehose.delete(c) } as never,
      operators,
      stillValid: async () => true,
    });
    expect(await operators.admits(identity)).toBe(true);

    // The operator's account is written (say, a board starred), and the store blips on the re-read.
    down = true;
    await changes.accountsChanged(['op']);
    expect(onFirehose.has(conn), `the firehose ended on a store hiccup: ${sent.join(' ')}`).toBe(true);
  });
});
