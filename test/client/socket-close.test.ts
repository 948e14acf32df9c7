// A BoardSocket closed while its connection is still being made (the server has not answered the
// upgrade yet) ends quietly: connect() rejects with the close, and nothing is thrown afterwards,
// though `ws` reports the aborted handshake as an error of a socket nobody listens to any more.
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BoardSocket } from '@agent-board/client';
import { quietFor, until } from '../support/until.js';

let silent: Server;
const held: Socket[] = [];
beforeAll(async () => {
  // Accepts the upgrade request and never answers it.
  silent = createServer((socket) => void held.push(socket.on('error', () => undefined)));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  for (const s of held) s.destroy();
  await new Promise((resolve) => silent.close(resolve));
});

describe('BoardSocket.close() while connecting', () => {
  it('rejects connect() with the close and throws nothing later', async () => {
    const thrown: unknown[] = [];
    const hear = (e: unknown) => void thrown.push(e);
    process.on('uncaughtException', hear);
    try {
      const socket = new BoardSocket({
        baseUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
        token: 'agb_x',
      });
      const errors: unknown[] = [];
      socket.on('error', (e) => void errors.push(e));
      const connecting = socket.connect().catch((e: unknown) => e);
      await until(() => held.length > 0, 5000);
      socket.close();
      expect(await connecting).toMatchObject({ message: 'the board socket closed: 1000 client closed' });
      expect(socket.state).toBe('closed');
      await quietFor(200); // proves nothing comes: the aborted handshake reports its error a tick later
      expect(thrown).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      process.off('uncaughtException', hear);
    }
  });
});
