// The entry node's side of the peer channel against a real uWS endpoint (a stub decides): what
// each way a forward can end comes back as. (Over real nodes: test/e2e/board-homes.mongo.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BoardRouter } from '../../src/cluster/board-router.js';
import { forwardEndpoint } from '../../src/cluster/forward-endpoint.js';
import { Forwarder } from '../../src/cluster/forwarder.js';
import { EnvelopeOpener } from '../../src/cluster/signed-envelope.js';
import { createHttpServer, type HttpServer } from '../../src/http/uws.js';
import { freePort } from '../../bench/free-port.js';
import { until } from '../support/until.js';

const key = Buffer.alloc(32, 5);
const command = { kind: 'expire' } as const;

describe('forwarding over the peer channel', () => {
  let server: HttpServer;
  let url: string;
  let accepting = true;
  const decided: string[] = [];
  const frames: number[] = [];
  /** The 'slow' board's decision: held until the test lets it go, then answered. */
  let letSlowGo!: () => void;
  let slowAnswered = false;

  beforeAll(async () => {
    const router = {
      async decideForwarded(boardId: string) {
        decided.push(boardId);
        if (boardId === 'slow') {
          await new Promise<void>((resolve) => (letSlowGo = resolve));
          slowAnswered = true;
        }
        return boardId === 'refused'
          ? { error: { code: 'NOTHING_READY', message: 'none' } }
          : { reply: { board: boardId } };
      },
    } as unknown as BoardRouter;
    const peers = forwardEndpoint(key, new EnvelopeOpener(key, 'home', Date.now), router, () => undefined);
    const counted = {
      ...peers,
      admit: (headers: Record<string, string>, peer: string) => {
        const session = peers.admit(headers, peer);
        return (
          session && { ...session, message: (text: string, ok: boolean) => (frames.push(1), session.message(text, ok)) }
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
        accepting: () => accepting,
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

  it('sends a turn’s commands in one frame and hands each its answer: a reply or a refusal', async () => {
    const forwarder = new Forwarder(key, 'entry', Date.now);
    const home = { node: 'home', url };
    // Open the channel first, so the next three go out in one turn.
    expect(await forwarder.send(home, 'b0', command, 5000)).toEqual({
      outcome: 'answered',
      answer: { reply: { board: 'b0' } },
    });
    const before = frames.length;
    const answers = await Promise.all(['b1', 'b2', 'refused'].map((b) => forwarder.send(home, b, command, 5000)));
    expect(frames.length - before).toBe(1);
    expect(answers).toEqual([
      { outcome: 'answered', answer: { reply: { board: 'b1' } } },
      { outcome: 'answered', answer: { reply: { board: 'b2' } } },
      { outcome: 'answered', answer: { error: { code: 'NOTHING_READY', message: 'none' } } },
    ]);
    forwarder.close();
  });

  it('tells a command that may have been decided (written, no answer in time) from one that may go again', async () => {
    const forwarder = new Forwarder(key, 'entry', Date.now);
    const home = { node: 'home', url };
    expect(await forwarder.send(home, 'warm', command, 5000)).toMatchObject({ outcome: 'answered' });
    expect(await forwarder.send(home, 'slow', command, 100)).toEqual({ outcome: 'unknown' });
    // The late answer finds nobody waiting, and the channel goes on.
    letSlowGo();
    await until(() => slowAnswered, { what: 'the late answer' });
    expect(await forwarder.send(home, 'after', command, 5000)).toMatchObject({
      outcome: 'answered',
      answer: { reply: { board: 'after' } },
    });
    // A draining home answers undecided: it may go again.
    accepting = false;
    const seen = decided.length;
    expect(await forwarder.send(home, 'while draining', command, 5000)).toEqual({ outcome: 'unreachable' });
    expect(decided.length).toBe(seen);
    accepting = true;
    forwarder.close();
  });

  it('answers `unreachable`, having written nothing, when no channel opens: nobody listening, a hello refused, a node already closed', async () => {
    const forwarder = new Forwarder(key, 'entry', Date.now);
    const seen = decided.length;
    expect(
      await forwarder.send({ node: 'home', url: `http://127.0.0.1:${await freePort()}` }, 'nobody', command, 5000),
    ).toEqual({ outcome: 'unreachable' });
    expect(await forwarder.send({ node: 'not-this-one', url }, 'misaddressed', command, 5000)).toEqual({
      outcome: 'unreachable',
    });
    accepting = false;
    expect(
      await new Forwarder(key, 'entry', Date.now).send({ node: 'home', url }, 'draining at the upgrade', command, 5000),
    ).toEqual({ outcome: 'unreachable' });
    accepting = true;
    forwarder.close();
    expect(await forwarder.send({ node: 'home', url }, 'after close', command, 5000)).toEqual({
      outcome: 'unreachable',
    });
    expect(decided.length).toBe(seen);
  });
});
