// A WebSocket client on a bare TCP socket, for what library clients do not do: stop reading
// altogether (a stalled consumer), and read the server's frames afterwards.
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

/** Upgrades, sends `message` (a subscribe), then pauses: from here on nothing is read until resumed. */
export async function stalledSocket(url: string, headers: Record<string, string>, message: unknown): Promise<Socket> {
  const { hostname, port } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port) });
  await new Promise((resolve, reject) => (socket.once('connect', resolve), socket.once('error', reject)));
  socket.on('error', () => undefined);
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.write(
    `GET /api/ws HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`,
  );
  await new Promise<void>((resolve) => socket.once('data', () => resolve()));
  socket.pause();
  const payload = Buffer.from(JSON.stringify(message));
  const mask = randomBytes(4);
  const header =
    payload.length < 126
      ? Buffer.from([0x81, 0x80 | payload.length])
      : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
  socket.write(Buffer.concat([header, mask, payload.map((b, i) => b ^ mask[i % 4]!)]));
  return socket;
}

/** Reads the rest of the stream and returns the server's close frame, if it sent one. */
export async function closeFrame(socket: Socket): Promise<{ code: number; reason: string } | null> {
  const chunks: Buffer[] = [];
  socket.on('data', (d: Buffer) => chunks.push(d));
  socket.resume();
  await new Promise((resolve) => socket.once('close', resolve));
  const bytes = Buffer.concat(chunks);
  for (let at = 0; at + 2 <= bytes.length;) {
    const opcode = bytes[at]! & 0x0f;
    let length = bytes[at + 1]! & 0x7f;
    let start = at + 2;
    if (length === 126) {
      length = bytes.readUInt16BE(start);
      start += 2;
    } else if (length === 127) {
      length = Number(bytes.readBigUInt64BE(start));
      start += 8;
    }
    if (opcode === 0x8)
      return { code: bytes.readUInt16BE(start), reason: bytes.subarray(start + 2, start + length).toString('utf8') };
    at = start + length;
  }
  return null;
}
