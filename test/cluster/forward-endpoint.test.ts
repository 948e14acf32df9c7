// The home's side of the peer channel, without a server: what it decides, what it answers while
// the node drains, and what a frame that does not open does. (The channel over real nodes:
// test/e2e/board-homes.mongo.test.ts.)
import { describe, expect, it } from 'vitest';
import type { BoardRouter } from '../../src/cluster/board-router.js';
import { forwardEndpoint } from '../../src/cluster/forward-endpoint.js';
import {
  channelKey,
  EnvelopeOpener,
  HELLO_HEADER,
  openFrame,
  sealFrame,
  sealHello,
} from '../../src/cluster/signed-envelope.js';

const key = Buffer.alloc(32, 3);
const command = { kind: 'expire' } as const;

function endpoint() {
  const decided: string[] = [];
  const refused: string[] = [];
  const router = {
    decideForwarded: async (boardId: string) => (decided.push(boardId), { reply: `decided ${boardId}` }),
  } as unknown as BoardRouter;
  const peers = forwardEndpoint(key, new EnvelopeOpener(key, 'home', Date.now), router, (_peer, what) =>
    refused.push(what),
  );
  const hello = sealHello(key, { from: 'entry', to: 'home', at: Date.now() });
  const session = peers.admit({ [HELLO_HEADER]: hello.header }, '10.0.0.2')!;
  const sent: string[] = [];
  let closed = false;
  session.opened({ send: (text) => sent.push(text), close: () => (closed = true) });
  const channel = channelKey(key, hello.nonce);
  const frame = (n: number, entries: unknown[]) => sealFrame(channel, 'to-home', n, JSON.stringify(entries));
  const answers = (n: number) => JSON.parse(openFrame(channel, 'to-entry', n, sent[n - 1]!)!) as unknown[];
  return { peers, session, sent, decided, refused, frame, answers, closed: () => closed };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('the peer channel’s home side', () => {
  it('decides a frame’s commands and answers them together, in one frame signed for the entry node', async () => {
    const e = endpoint();
    await e.session.message(
      e.frame(1, [
        [1, 'b1', command],
        [2, 'b2', command],
      ]),
      true,
    );
    await turn();
    expect(e.decided).toEqual(['b1', 'b2']);
    expect(e.sent).toHaveLength(1);
    expect(e.answers(1)).toEqual([
      [1, { reply: 'decided b1' }],
      [2, { reply: 'decided b2' }],
    ]);
  });

  it('answers every command `retry`, undecided, while the node drains', async () => {
    const e = endpoint();
    expect(
      e.session.message(
        e.frame(1, [
          [7, 'b1', command],
          [8, 'b1', command],
        ]),
        false,
      ),
    ).toBeUndefined();
    await turn();
    expect(e.decided).toEqual([]);
    expect(e.answers(1)).toEqual([
      [7, { retry: true }],
      [8, { retry: true }],
    ]);
  });

  it('closes the channel on a frame that does not open or is not a list of commands, deciding none of it', async () => {
    for (const bad of [
      (f: ReturnType<typeof endpoint>) => f.frame(2, [[1, 'b1', command]]),
      (f: ReturnType<typeof endpoint>) => f.frame(1, [[1, 'b1', { kind: 'no such command' }]]),
      () => 'not a frame',
    ]) {
      const e = endpoint();
      await e.session.message(bad(e), true);
      await turn();
      expect({ closed: e.closed(), decided: e.decided, refused: e.refused }).toEqual({
        closed: true,
        decided: [],
        refused: ['frame'],
      });
    }
  });

  it('admits no channel whose hello does not open', () => {
    const e = endpoint();
    expect(e.peers.admit({}, '10.0.0.3')).toBeNull();
    expect(
      e.peers.admit(
        { [HELLO_HEADER]: sealHello(key, { from: 'entry', to: 'elsewhere', at: Date.now() }).header },
        '10.0.0.3',
      ),
    ).toBeNull();
    expect(e.refused).toEqual(['hello', 'hello']);
  });
});
