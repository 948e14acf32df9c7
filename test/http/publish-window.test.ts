// Publishes wait a moment for each other (src/http/uws.ts PUBLISH_WINDOW_MS), and everything a
// socket is told in the meantime waits behind them: each socket hears its published and its own
// messages in the order they were sent, hears a topic exactly from its join to its leave, and
// gets what was accepted before its close frame.
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer, PUBLISH_WINDOW_MS, type HttpServer } from '../../src/http/uws.js';
import type { Connection } from '../../src/ws/hub.js';
import type { Identity } from '../../src/auth/identity.js';

describe('the publish window', () => {
  let server: HttpServer;
  let url: string;
  let opened: (conn: Connection) => void = () => undefined;

  beforeAll(async () => {
    const refusal = { status: 404, headers: [] as [string, string][], body: '{}' };
    const sockets = {
      path: '/ws',
      authenticate: async () => ({ identity: { kind: 'token', principal: 'agent:t' } as unknown as Identity }),
      open: (conn: Connection) => opened(conn),
      message: () => undefined,
      close: () => undefined,
      maxPayloadLength: 4096,
      maxBackpressure: 1 << 20,
      idleTimeoutSeconds: 60,
    };
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
      sockets,
    );
    url = `ws://127.0.0.1:${await server.listen('127.0.0.1', 0)}/ws`;
  });
  afterAll(() => server.stopListening());

  /** A client whose socket the server hands to `act` once open; resolves with every message it heard until the server closed it. */
  const session = (act: (conn: Connection) => void) =>
    new Promise<{ heard: string[]; code: number }>((resolve, reject) => {
      opened = act;
      const heard: string[] = [];
      const ws = new WebSocket(url);
      ws.on('message', (m: Buffer) => heard.push(m.toString()));
      ws.on('close', (code) => resolve({ heard, code }));
      ws.on('error', reject);
    });

  it('keeps each socket’s messages in the order sent, and a topic heard from its join to its leave', async () => {
    const { heard, code } = await session((conn) => {
      conn.join('t');
      conn.send('d0'); // before any publish: out before p1
      server.publish('t', 'p1');
      expect(conn.send('d1')).toBe(true); // behind p1
      server.publish('t', 'p2');
      conn.leave('t'); // after p2: p2 is heard, p3 is not
      server.publish('t', 'p3');
      conn.send('d2');
      server.publish('u', 'q0'); // before the join: not heard
      conn.join('u'); // joined while publishes wait: hears only what is published after the join
      server.publish('u', 'q1');
      setTimeout(() => {
        server.publish('u', 'q2');
        conn.send('d3');
        conn.close(4000, 'done'); // what was accepted goes out first
      }, PUBLISH_WINDOW_MS * 5);
    });
    expect(code).toBe(4000);
    expect(heard).toEqual(['d0', 'p1', 'd1', 'p2', 'd2', 'q1', 'q2', 'd3']);
  });

  it('counts what waits behind a publish in the socket’s backlog until it goes out', async () => {
    let during = 0;
    let after = -1;
    await session((conn) => {
      conn.join('v');
      server.publish('v', 'x');
      conn.send('y'.repeat(1000));
      during = conn.backlog();
      void conn.drained().then(() => {
        after = conn.backlog();
        conn.close(4000, 'done');
      });
    });
    expect(during).toBeGreaterThanOrEqual(1000);
    expect(after).toBe(0);
  });
});
