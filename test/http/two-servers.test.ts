// Two servers in one process share nothing of the transport (src/http/uws/): each numbers its own
// sockets, keeps its own publish window and its own held responses, and one stopping leaves the
// other serving HTTP and sockets. Every check here failed while that state lived at module level.
import { connect } from 'node:net';
import WebSocket from 'ws';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createHttpServer, PUBLISH_WINDOW_MS, type HttpServer } from '../../src/http/uws.js';
import { defineRoute } from '../../src/http/route.js';
import type { RawResponse } from '../../src/http/responses.js';
import type { Connection } from '../../src/ws/hub.js';
import type { Identity } from '../../src/auth/identity.js';
import { signedUp, startTestServer, type TestServer } from '../support/server.js';
import { openSocket, type TestSocket } from '../support/socket.js';

const reply = (body: string): RawResponse => ({ status: 200, headers: [['content-type', 'text/plain']], body });

/** A socket as both ends see it: the server's Connection, and what its client heard. */
interface Pair {
  conn: Connection;
  heard: string[];
  client: WebSocket;
  closed: Promise<number>;
}

/** A bare transport: GET /answer answers what `answer` gives, and /ws opens sockets the test drives. */
class Transport {
  answer: () => RawResponse | Promise<RawResponse> = () => reply('ok');
  private opening: ((conn: Connection) => void)[] = [];
  private readonly clients: WebSocket[] = [];
  readonly server: HttpServer;
  url = '';

  constructor() {
    const route = defineRoute({
      method: 'get',
      path: '/answer',
      group: 'test',
      summary: 'an answer the test decides',
      auth: 'none',
      bodyKind: 'none',
      rate: 'none',
      errors: [],
      responses: {},
      handler: () => ({ status: 200 }),
    });
    const refusal = { status: 404, headers: [] as [string, string][], body: '{}' };
    this.server = createHttpServer(
      [route],
      {
        dispatch: () => this.answer(),
        answerFixed: () => refusal,
        refuse: () => refusal,
        refuseRequest: () => refusal,
        requestIdOf: () => 'test',
        accepting: () => true,
        started: () => undefined,
        finished: () => undefined,
      },
      1024,
      {
        path: '/ws',
        authenticate: async () => ({ identity: { kind: 'token', principal: 'agent:t' } as unknown as Identity }),
        open: (conn) => this.opening.shift()?.(conn),
        message: () => undefined,
        close: () => undefined,
        maxPayloadLength: 4096,
        maxBackpressure: 1 << 20,
        idleTimeoutSeconds: 60,
      },
    );
  }

  async listen(): Promise<this> {
    this.url = `127.0.0.1:${await this.server.listen('127.0.0.1', 0)}`;
    return this;
  }

  /** Opens one socket (one at a time: the server's open callback hands over the next Connection). */
  async socket(): Promise<Pair> {
    const opened = new Promise<Connection>((resolve) => this.opening.push(resolve));
    const client = new WebSocket(`ws://${this.url}/ws`);
    this.clients.push(client);
    const heard: string[] = [];
    client.on('message', (m: Buffer) => heard.push(m.toString()));
    const closed = new Promise<number>((resolve) => client.on('close', resolve));
    await new Promise((resolve, reject) => (client.once('open', resolve), client.once('error', reject)));
    return { conn: await opened, heard, client, closed };
  }

  stop(): void {
    for (const client of this.clients) client.terminate();
    this.server.stopListening();
  }
}

/**
 * Waits for `check` turn by turn of the event loop (setImmediate, and Date for the deadline: the
 * tests below fake setTimeout, and a timer-driven wait would advance or miss their clock).
 */
async function eventually(check: () => boolean, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((resolve) => setImmediate(resolve));
  return check();
}

describe('two transports in one process', () => {
  const started: Transport[] = [];
  const start = async () => {
    const transport = await new Transport().listen();
    started.push(transport);
    return transport;
  };
  afterEach(() => {
    vi.useRealTimers();
    for (const transport of started.splice(0)) transport.stop();
  });

  it('numbers each server’s sockets on its own', async () => {
    const [a, b] = [await start(), await start()];
    const ids = [];
    for (const server of [a, b, a, b]) ids.push((await server.socket()).conn.id);
    expect(ids).toEqual([1, 1, 2, 2]);
  });

  it('holds back nothing on one server while the other’s publish window is open', async () => {
    const [a, b] = [await start(), await start()];
    const [onA, onB] = [await a.socket(), await b.socket()];
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }); // the windows close when the test says
    onA.conn.join('t');
    a.server.publish('t', 'p'); // A's window opens
    onB.conn.join('t'); // B has no publish waiting: at once
    onB.conn.send('d'); // and at the end of this turn
    expect(await eventually(() => onB.heard.length > 0)).toBe(true);
    expect(onB.heard).toEqual(['d']);
    b.server.publish('t', 'q'); // B's own window: B's socket hears it, A's (on A's topic t) never does
    expect(onA.heard).toEqual([]);
    vi.advanceTimersByTime(PUBLISH_WINDOW_MS);
    expect(await eventually(() => onA.heard.length > 0 && onB.heard.length > 1)).toBe(true);
    expect(onA.heard).toEqual(['p']);
    expect(onB.heard).toEqual(['d', 'q']);
  });

  it('does not hurry one server’s publish window when a socket closes on the other', async () => {
    const [a, b] = [await start(), await start()];
    const [onA, onB] = [await a.socket(), await b.socket()];
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    onA.conn.join('t');
    a.server.publish('t', 'p');
    onB.conn.send('last');
    onB.conn.close(4000, 'done'); // B's own queue goes out before its close frame; A's window is not B's
    expect(await onB.closed).toBe(4000);
    expect(onB.heard).toEqual(['last']);
    await eventually(() => onA.heard.length > 0, 200); // proving a negative: a moment for a stray publish to arrive
    expect(onA.heard).toEqual([]);
    vi.advanceTimersByTime(PUBLISH_WINDOW_MS);
    expect(await eventually(() => onA.heard.length > 0)).toBe(true);
    expect(onA.heard).toEqual(['p']);
  });

  it('writes one server’s held responses whatever the other holds back', async () => {
    const [a, b] = [await start(), await start()];
    let release: ((response: RawResponse) => void) | null = null;
    a.answer = () => new Promise((resolve) => (release = resolve));
    let answeredA = false;
    const fromA = fetch(`http://${a.url}/answer`)
      .then((res) => res.text())
      .finally(() => (answeredA = true));
    expect(await eventually(() => release !== null)).toBe(true);
    // A's answer is ready but held for the end of the turn: keep back the setImmediate that would write it.
    const kept: (() => void)[] = [];
    const realSetImmediate = globalThis.setImmediate;
    globalThis.setImmediate = ((fn: (...args: unknown[]) => void, ...args: unknown[]) => {
      kept.push(() => fn(...args));
      return { unref: () => undefined } as unknown as NodeJS.Immediate;
    }) as unknown as typeof setImmediate;
    try {
      release!(reply('from A'));
      await new Promise((resolve) => process.nextTick(resolve)); // after the promise jobs that hold A's response
    } finally {
      globalThis.setImmediate = realSetImmediate;
    }
    try {
      expect(kept.length).toBeGreaterThan(0);
      // B's answer, also held to the end of a turn (it comes from a promise), goes out on B's own.
      b.answer = async () => reply('from B');
      const fromB = fetch(`http://${b.url}/answer`).then((res) => res.text());
      const timeout = new Promise((resolve) => setTimeout(() => resolve('no answer'), 3000));
      expect(await Promise.race([fromB, timeout])).toBe('from B');
      expect(answeredA).toBe(false);
    } finally {
      for (const run of kept.splice(0)) run(); // what was kept back goes out, whatever failed above
    }
    expect(await fromA).toBe('from A');
  });
});

/** Whether a new connection to `url` is refused. */
const refused = (url: string) =>
  new Promise<boolean>((resolve) => {
    const { hostname, port } = new URL(url);
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(true));
  });

describe('two nodes in one process', () => {
  let nodes: TestServer[] = [];
  afterEach(async () => {
    await Promise.all(nodes.map((node) => node.stop()));
    nodes = [];
  });

  const socketOn = async (node: TestServer): Promise<TestSocket> => {
    const { client } = await signedUp(node.url);
    const cookie = `board_session=${client.cookies.get('board_session')}`;
    return openSocket(node.url, { cookie, origin: 'http://board.test' });
  };

  it('keeps one serving HTTP and sockets when the other stops', async () => {
    nodes = [await startTestServer(), await startTestServer()];
    const [a, b] = nodes as [TestServer, TestServer];
    const [onA, onB] = [await socketOn(a), await socketOn(b)];
    await a.stop();
    nodes = [b];
    await onA.closed;
    expect(await refused(a.url)).toBe(true); // a fresh connection (fetch would reuse one A still holds open)
    expect((await fetch(`${b.url}/healthz`)).status).toBe(200);
    onB.send({ type: 'ping' });
    expect(await onB.next((m) => m.type === 'pong')).toEqual({ type: 'pong' });
    const another = await socketOn(b);
    another.send({ type: 'ping' });
    expect(await another.next((m) => m.type === 'pong')).toEqual({ type: 'pong' });
    onB.ws.close();
    another.ws.close();
  });
});
