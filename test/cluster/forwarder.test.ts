// The entry node's side of the peer channel against a real uWS endpoint (a stub decides): what
// each way a forward can end comes back as. (Over real nodes: test/e2e/board-homes.mongo.test.ts.)
import { createHash } from 'node:crypto';
import { createServer, type AddressInfo, type Socket } from 'node:net';
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
  /** Channels the home admitted. */
  let admitted = 0;
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
        if (session) admitted++;
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

  it('sends a task’s commands in one frame and hands each its answer: a reply or a refusal', async () => {
    const forwarder = new Forwarder(key, 'entry', Date.now);
    const home = { node: 'home', url };
    // Open the channel first, so the next three go out together.
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

  it('keeps a channel whose home answers its pings', async () => {
    const forwarder = new Forwarder(key, 'entry', Date.now, undefined, 20);
    const home = { node: 'home', url };
    expect(await forwarder.send(home, 'b0', command, 5000)).toMatchObject({ outcome: 'answered' });
    const before = admitted;
    await new Promise((resolve) => setTimeout(resolve, 200)); // ten heartbeats, nothing else sent
    expect(await forwarder.send(home, 'b1', command, 5000)).toMatchObject({ outcome: 'answered' });
    expect(admitted).toBe(before);
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

/**
 * A home speaking WebSocket by hand: it accepts the upgrade, then answers nothing (not even a ping);
 * `heard` gets the first byte (opcode) of each frame that comes after the upgrade.
 */
async function handMadeHome(heard: (opcode: number) => void = () => undefined) {
  const connections: Socket[] = [];
  const server = createServer({ allowHalfOpen: true }, (s) => {
    connections.push(s);
    let head = '';
    s.on('data', (data: Buffer) => {
      if (!head.includes('\r\n\r\n')) {
        head += data.toString('latin1');
        const k = /sec-websocket-key: (.*)\r\n/i.exec(head)?.[1]?.trim();
        if (!head.includes('\r\n\r\n') || !k) return;
        const accept = createHash('sha1').update(`${k}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
        s.write(
          `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
        );
        return;
      }
      heard(data[0]! & 0x0f);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    at: { node: 'home', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` },
    connections,
    async stop() {
      for (const c of connections) c.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('a home gone without a word', () => {
  it('is found by its missing pongs: the channel ends, what was written is told `unknown` then, and the next command opens a new one', async () => {
    const home = await handMadeHome();
    const forwarder = new Forwarder(key, 'entry', Date.now, undefined, 50);
    const sent = Date.now();
    // Written, never answered: without the heartbeat it would wait out its 10 s.
    expect(await forwarder.send(home.at, 'first', command, 10_000)).toEqual({ outcome: 'unknown' });
    expect(Date.now() - sent).toBeLessThan(5_000);
    expect(home.connections).toHaveLength(1);
    expect(await forwarder.send(home.at, 'second', command, 300)).toEqual({ outcome: 'unknown' });
    expect(home.connections).toHaveLength(2);
    forwarder.close();
    await home.stop();
  });
});

describe('a home that begins to close the channel', () => {
  it('has the commands sent after its close frame answered `unreachable`, never written', async () => {
    // The hand-made home sends a close frame and keeps its side of TCP open, as one whose close
    // handshake is under way (uWS ending a connection) does for a moment.
    const framesAfterClose: number[] = [];
    let closing = false;
    const made = await handMadeHome((opcode) => closing && framesAfterClose.push(opcode)); // 8 is the entry's close reply
    const { at } = made;
    const forwarder = new Forwarder(key, 'entry', Date.now);
    const first = forwarder.send(at, 'first', command, 200); // opens the channel; written, never answered
    await until(() => made.connections.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    closing = true;
    made.connections[0]!.write(Buffer.from([0x88, 0x02, 0x03, 0xe8])); // close, 1000
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await forwarder.send(at, 'second', command, 500)).toEqual({ outcome: 'unreachable' });
    expect(await first).toEqual({ outcome: 'unknown' });
    expect(framesAfterClose.filter((opcode) => opcode !== 8)).toEqual([]);
    forwarder.close();
    await made.stop();
  });
});
