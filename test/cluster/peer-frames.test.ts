// How large a frame of the peers' channel may be (issue 42, finding 8): no larger than the
// largest command or answer needs, derived from the body limit (src/cluster/wire.ts), either way.
// A larger frame closes the channel (logged on the home as a frame that does not open); the
// node's own traffic never makes one: commands and answers are packed in frames within the
// bound, an answer too large to send goes back as lost, a command too large is never written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BoardRouter } from '../../src/cluster/board-router.js';
import { forwardEndpoint } from '../../src/cluster/forward-endpoint.js';
import { Forwarder } from '../../src/cluster/forwarder.js';
import {
  channelKey,
  EnvelopeOpener,
  HELLO_HEADER,
  openFrame,
  sealFrame,
  sealHello,
} from '../../src/cluster/signed-envelope.js';
import { largestEntryBytes, peerFrameBytes } from '../../src/cluster/wire.js';
import { BODY_LIMIT_BYTES } from '../../src/config.js';
import { BATCH_MAX, DEPENDS_MAX, type BoardCommand } from '../../src/board/commands.js';
import { createHttpServer, type HttpServer, type PeerEndpoint } from '../../src/http/uws.js';
import { createItems, type NewItem } from '../../machines/board-commands.js';
import { boardFrom } from '../../machines/board.js';

const key = Buffer.alloc(32, 7);
const LIMIT = BODY_LIMIT_BYTES;
const BOUND = peerFrameBytes(LIMIT);
const ENTRY = largestEntryBytes(LIMIT);
const pad = (bytes: number) => ({ kind: 'expire', pad: 'x'.repeat(bytes) }) as unknown as BoardCommand;

/** The home's side alone, as test/cluster/forward-endpoint.test.ts drives it. */
function home(reply: (boardId: string) => unknown = (b) => `decided ${b}`) {
  const decided: string[] = [];
  const refused: string[] = [];
  const router = {
    decideForwarded: async (boardId: string) => (decided.push(boardId), { reply: reply(boardId) }),
  } as unknown as BoardRouter;
  const peers = forwardEndpoint(
    key,
    new EnvelopeOpener(key, 'home', Date.now),
    router,
    (_peer, what) => refused.push(what),
    LIMIT,
  );
  const hello = sealHello(key, { from: 'entry', to: 'home', at: Date.now() });
  const session = peers.admit({ [HELLO_HEADER]: hello.header }, '10.0.0.2')!;
  const sent: string[] = [];
  let closed = false;
  session.opened({ send: (text) => sent.push(text), close: () => (closed = true) });
  const channel = channelKey(key, hello.nonce);
  /** Frame `n` holding one command, padded to exactly `bytes` bytes. */
  const frameOf = (n: number, bytes: number) => {
    const made = (p: number) => sealFrame(channel, 'to-home', n, JSON.stringify([[n, `b${n}`, pad(p)]]));
    return made(bytes - made(0).length);
  };
  return {
    peers,
    session,
    sent,
    decided,
    refused,
    frameOf,
    closed: () => closed,
    answers: (n: number) => JSON.parse(openFrame(channel, 'to-entry', n, sent[n - 1]!)!) as unknown[],
  };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('the bound, derived', () => {
  it('is the largest entry sealed alone, and fits the answer to the densest batch a body within the limit makes', () => {
    expect(BOUND).toBe(ENTRY + sealFrame(key, 'to-entry', Number.MAX_SAFE_INTEGER, '[]').length);
    expect(BOUND).toBeLessThan(2 * 1024 * 1024); // was 64 MiB whatever the body limit
    // BATCH_MAX items, as short as the schema lets them be sent, each naming as many links (refs of
    // the items before it) as the body holds, the rest of the body in titles.
    const refs = Array.from({ length: BATCH_MAX }, (_, i) => i.toString(36));
    const items = refs.map((ref, i) => ({ ref, title: 'x', dependsOn: refs.slice(Math.max(0, i - DEPENDS_MAX), i) }));
    const spare = LIMIT - Buffer.byteLength(JSON.stringify({ items }));
    for (const item of items) item.title += 'x'.repeat(Math.min(199, Math.floor(spare / BATCH_MAX)));
    const body = JSON.stringify({ items });
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(LIMIT);
    expect(Buffer.byteLength(body)).toBeGreaterThan(LIMIT * 0.95);
    // As the route makes them (defaults filled), on a board whose work ids are at their widest.
    const made: NewItem[] = items.map((i) => ({
      description: '',
      type: 'task',
      priority: 2,
      parentId: null,
      verify: 'none',
      maxAttempts: 3,
      criteria: [],
      doctrine: [],
      spec: [],
      labels: [],
      ...i,
    }));
    const command = [Number.MAX_SAFE_INTEGER, 'board', { kind: 'create', items: made, actor: 'agent:someone' }];
    const reply = createItems(made, 'agent:someone')(
      boardFrom([], Number.MAX_SAFE_INTEGER - 2 * BATCH_MAX, 1),
      Date.now(),
    ).reply;
    const answer = [Number.MAX_SAFE_INTEGER, { reply }];
    expect(Buffer.byteLength(JSON.stringify(command))).toBeLessThanOrEqual(ENTRY);
    expect(Buffer.byteLength(JSON.stringify(answer))).toBeLessThanOrEqual(ENTRY);
  });
});

describe('the home’s side of the bound', () => {
  it('lets uWS hand over frames up to twice the bound, so one past it is refused here and logged', () => {
    expect(home().peers.maxPayloadLength).toBe(2 * BOUND);
  });

  it('decides a frame of exactly the bound', async () => {
    const h = home();
    const frame = h.frameOf(1, BOUND);
    expect(Buffer.byteLength(frame)).toBe(BOUND);
    await h.session.message(frame, true);
    expect({ closed: h.closed(), decided: h.decided, refused: h.refused }).toEqual({
      closed: false,
      decided: ['b1'],
      refused: [],
    });
  });

  it('closes the channel on a frame one byte past the bound, logged as a frame that does not open, deciding nothing', async () => {
    const h = home();
    const frame = h.frameOf(1, BOUND + 1);
    expect(Buffer.byteLength(frame)).toBe(BOUND + 1);
    await h.session.message(frame, true);
    await turn();
    expect({ closed: h.closed(), decided: h.decided, refused: h.refused, sent: h.sent }).toEqual({
      closed: true,
      decided: [],
      refused: ['frame'],
      sent: [],
    });
  });

  it('answers `tooLarge` for a reply larger than an entry may be, and goes on', async () => {
    const h = home((boardId) => (boardId === 'b1' ? 'y'.repeat(ENTRY) : 'small'));
    await h.session.message(h.frameOf(1, 200), true);
    await turn();
    await h.session.message(h.frameOf(2, 200), true);
    await turn();
    expect(h.sent.every((f) => Buffer.byteLength(f) <= BOUND)).toBe(true);
    expect([h.answers(1), h.answers(2)]).toEqual([[[1, { tooLarge: true }]], [[2, { reply: 'small' }]]]);
    expect(h.closed()).toBe(false);
  });
});

describe('the bound over a real channel', () => {
  let server: HttpServer;
  let url: string;
  const decided: string[] = [];
  /** Byte sizes of the frames the home received. */
  const frames: number[] = [];
  /** Replies the stub home makes, by board id. */
  const replies = new Map<string, unknown>();

  beforeAll(async () => {
    const router = {
      decideForwarded: async (boardId: string) => (decided.push(boardId), { reply: replies.get(boardId) ?? boardId }),
    } as unknown as BoardRouter;
    // The home bounds by a larger body limit than its entry nodes: it may send what they refuse.
    const peers = forwardEndpoint(key, new EnvelopeOpener(key, 'home', Date.now), router, () => undefined, 4 * LIMIT);
    const counted: PeerEndpoint = {
      ...peers,
      admit: (headers, peer) => {
        const session = peers.admit(headers, peer);
        return (
          session && {
            ...session,
            message: (text, ok) => (frames.push(Buffer.byteLength(text)), session.message(text, ok)),
          }
        );
      },
    };
    const refusal = { status: 404, headers: [] as [string, string][], body: '{}' };
    server = createHttpServer(
      [],
      {
        dispatch: () => refusal,
        answerFixed: () => refusal,
        refuse: () => refusal,
        refuseRequest: () => refusal,
        requestIdOf: () => 'test',
        accepting: () => true,
        started: () => undefined,
        finished: () => undefined,
      },
      1024,
      undefined,
      counted,
    );
    url = `http://127.0.0.1:${await server.listen('127.0.0.1', 0)}`;
  });
  afterAll(() => server.stopListening());

  it('packs a turn’s commands in frames within the bound, and answers them all', async () => {
    const forwarder = new Forwarder(key, 'entry', Date.now, LIMIT);
    const to = { node: 'home', url };
    expect(await forwarder.send(to, 'warm', { kind: 'expire' }, 5000)).toMatchObject({ outcome: 'answered' });
    frames.length = 0;
    const third = Math.floor(ENTRY / 3);
    const boards = Array.from({ length: 7 }, (_, i) => `packed-${i}`);
    const answers = await Promise.all(boards.map((b) => forwarder.send(to, b, pad(third), 5000)));
    expect(answers).toEqual(boards.map((b) => ({ outcome: 'answered', answer: { reply: b } })));
    expect(frames.length).toBeGreaterThanOrEqual(3); // seven entries of a third of the bound each
    expect(Math.max(...frames)).toBeLessThanOrEqual(BOUND);
    forwarder.close();
  });

  it('never writes a command larger than the bound: it may go again, and the channel goes on', async () => {
    const forwarder = new Forwarder(key, 'entry', Date.now, LIMIT);
    const to = { node: 'home', url };
    expect(await forwarder.send(to, 'before', { kind: 'expire' }, 5000)).toMatchObject({ outcome: 'answered' });
    const seen = decided.length;
    expect(await forwarder.send(to, 'too large', pad(ENTRY), 5000)).toEqual({ outcome: 'unreachable' });
    expect(decided.length).toBe(seen);
    expect(await forwarder.send(to, 'after', { kind: 'expire' }, 5000)).toEqual({
      outcome: 'answered',
      answer: { reply: 'after' },
    });
    forwarder.close();
  });

  it('closes the channel on an answer frame past the bound: that command’s answer is lost, and the next goes on a new channel', async () => {
    const forwarder = new Forwarder(key, 'entry', Date.now, LIMIT);
    const to = { node: 'home', url };
    replies.set('huge answer', 'z'.repeat(BOUND));
    expect(await forwarder.send(to, 'huge answer', { kind: 'expire' }, 5000)).toEqual({ outcome: 'unknown' });
    expect(decided).toContain('huge answer');
    expect(await forwarder.send(to, 'next', { kind: 'expire' }, 5000)).toEqual({
      outcome: 'answered',
      answer: { reply: 'next' },
    });
    forwarder.close();
  });
});
