// BoardSocket over a scripted connection, for what a real server should never do: replaying
// events and shouts the client already has (dropped by seq and by id), and the typed notices
// made from raw messages. The resume against a real server is test/client/socket-resume.test.ts.
import { afterEach, describe, expect, it } from 'vitest';
import {
  BoardSocket,
  type ClientMessage,
  type LeaseEnded,
  type LeaseExpiring,
  type LoggedEvent,
  type WebSocketLike,
} from '@agent-board/client';
import { quietFor } from '../support/until.js';

/** One scripted connection: what the socket sent, and calls to play the server's part. */
class Scripted implements WebSocketLike {
  onopen: WebSocketLike['onopen'] = null;
  onmessage: WebSocketLike['onmessage'] = null;
  onerror: WebSocketLike['onerror'] = null;
  onclose: WebSocketLike['onclose'] = null;
  readonly sent: ClientMessage[] = [];
  send(data: string): void {
    this.sent.push(JSON.parse(data) as ClientMessage);
  }
  close(code = 1000, reason = ''): void {
    this.onclose?.({ code, reason });
  }
  deliver(...messages: unknown[]): void {
    for (const m of messages) this.onmessage?.({ data: JSON.stringify(m) });
  }
}

const connections: Scripted[] = [];
const sockets: BoardSocket[] = [];
afterEach(() => {
  sockets.splice(0).forEach((s) => s.close());
  connections.length = 0;
});

function scriptedSocket(principal?: string): BoardSocket {
  const socket = new BoardSocket({
    baseUrl: 'http://board.test',
    token: 'agb_scripted',
    backoff: { initialMs: 10, maxMs: 20 },
    ...(principal && { principal }),
    webSocket: (url, headers) => {
      expect(url).toBe('ws://board.test/api/ws');
      expect(headers).toEqual({ authorization: 'Bearer agb_scripted' });
      const ws = new Scripted();
      connections.push(ws);
      setTimeout(() => ws.onopen?.({}), 0);
      return ws;
    },
  });
  sockets.push(socket);
  return socket;
}

const event = (
  seq: number | null,
  type: string,
  workId: string | null = 'W-1',
  data: Record<string, unknown> = {},
) => ({
  type: 'event',
  boardId: 'b1',
  seq,
  event: { type, actor: 'agent:a', workId, at: '2030-01-01T00:00:00.000Z', data },
});
const shout = (id: string, to: string | null = null) => ({
  type: 'shout',
  boardId: 'b1',
  shout: {
    id,
    from: 'agent:b',
    to,
    text: id,
    kind: 'note',
    at: '2030-01-01T00:00:00.000Z',
    deliveredAt: null,
    workId: null,
  },
});

describe('BoardSocket', () => {
  it('resubscribes with since and shoutsAfter after a drop, and drops what it already had', async () => {
    const socket = scriptedSocket();
    const events: LoggedEvent[] = [];
    const shouts: string[] = [];
    socket.on('event', (e) => events.push(e));
    socket.on('shout', (s) => shouts.push(s.shout.id));
    await socket.connect();
    const subscribed = socket.subscribe('b1');
    const first = connections[0]!;
    expect(first.sent).toEqual([{ type: 'subscribe', boardId: 'b1', topics: ['activity'] }]);
    first.deliver({ type: 'subscribed', boardId: 'b1', topics: ['activity'], seq: 0, role: 'member' });
    expect(await subscribed).toMatchObject({ seq: 0 });
    first.deliver(event(1, 'item.created'), event(2, 'item.created'), shout('s1'), event(3, 'lease.granted'));
    first.close(1006, '');
    expect(socket.state).toBe('reconnecting');

    await expect.poll(() => connections.length).toBe(2);
    const second = connections[1]!;
    await expect
      .poll(() => second.sent)
      .toEqual([{ type: 'subscribe', boardId: 'b1', topics: ['activity'], since: 3, shoutsAfter: 's1' }]);
    // A server replaying from further back than asked: the repeats are dropped.
    second.deliver(
      { type: 'subscribed', boardId: 'b1', topics: ['activity'], seq: 3, role: 'member' },
      event(2, 'item.created'),
      event(3, 'lease.granted'),
      shout('s1'),
      event(4, 'lease.renewed'),
      shout('s2'),
    );
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(shouts).toEqual(['s1', 's2']);
    expect(socket.lastSeq('b1')).toBe(4);
  });

  it('makes typed notices of lease warnings and endings and of direct shouts to its principal, and stops on 4001', async () => {
    const socket = scriptedSocket('agent:me');
    const notices: (LeaseExpiring | LeaseEnded)[] = [];
    const direct: string[] = [];
    for (const type of ['lease.expiring', 'lease.expired', 'lease.revoked'] as const)
      socket.on(type, (n) => notices.push(n));
    socket.on('direct', (d) => direct.push(d.shout.id));
    await socket.connect();
    const ws = connections[0]!;
    const lease = { holder: 'agent:me', purpose: 'work', fencingToken: 7, expiresAt: '2030-01-01T00:15:00.000Z' };
    ws.deliver(
      event(null, 'lease.expiring', 'W-2', { holder: 'agent:me', expiresAt: '2030-01-01T00:15:00.000Z' }),
      event(8, 'lease.expired', 'W-2', { lease }),
      event(9, 'lease.revoked', 'W-3', { lease, reason: 'overridden' }),
      shout('to-me', 'agent:me'),
      shout('to-someone-else', 'agent:other'),
      shout('to-all'),
    );
    expect(notices).toEqual([
      {
        boardId: 'b1',
        workId: 'W-2',
        at: '2030-01-01T00:00:00.000Z',
        holder: 'agent:me',
        expiresAt: '2030-01-01T00:15:00.000Z',
      },
      { boardId: 'b1', workId: 'W-2', seq: 8, at: '2030-01-01T00:00:00.000Z', lease, reason: null },
      { boardId: 'b1', workId: 'W-3', seq: 9, at: '2030-01-01T00:00:00.000Z', lease, reason: 'overridden' },
    ]);
    expect(direct).toEqual(['to-me']);

    const closes: unknown[] = [];
    socket.on('close', (c) => closes.push(c));
    ws.close(4001, 'the credential was revoked');
    expect(closes).toEqual([{ code: 4001, reason: 'the credential was revoked', reconnecting: false }]);
    expect(socket.state).toBe('closed');
    await quietFor(100); // proves it does not connect again
    expect(connections).toHaveLength(1);
  });

  it('turns a socket error message into a BoardApiError that refuses the waiting subscribe', async () => {
    const socket = scriptedSocket();
    await socket.connect();
    const refused = socket.subscribe('elsewhere');
    connections[0]!.deliver({
      type: 'error',
      error: {
        code: 'PROJECT_SCOPE_DENIED',
        status: 403,
        message: 'no',
        meaning: 'The credential cannot reach that project.',
        fix: 'Use a token of that board.',
        requestId: 'r1',
      },
    });
    await expect(refused).rejects.toMatchObject({
      name: 'BoardApiError',
      status: 403,
      code: 'PROJECT_SCOPE_DENIED',
      fix: 'Use a token of that board.',
      requestId: 'r1',
    });
  });
});
