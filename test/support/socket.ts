// A WebSocket client that queues what the server sends, for awaiting messages in order.
import WebSocket from 'ws';
import { answered, codeOf } from './answered-codes.js';

export interface TestSocket {
  ws: WebSocket;
  /** The next message matching `pred` (earlier non-matching ones are skipped), within `ms`. */
  next(pred?: (m: any) => boolean, ms?: number): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  send(message: unknown): void;
  closed: Promise<{ code: number; reason: string }>;
}

export function openSocket(url: string, headers: Record<string, string> = {}): Promise<TestSocket> {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/api/ws`, { headers });
  const queue: unknown[] = [];
  const waiters: (() => void)[] = [];
  ws.on('message', (data) => {
    const message = JSON.parse(data.toString()) as { type?: unknown };
    if (message.type === 'error') answered(codeOf(message));
    queue.push(message);
    waiters.splice(0).forEach((w) => w());
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  const socket: TestSocket = {
    ws,
    closed,
    send: (message) => ws.send(JSON.stringify(message)),
    async next(pred = () => true, ms = 10_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const i = queue.findIndex(pred);
        if (i >= 0) return queue.splice(0, i + 1).at(-1);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no matching message; queued: ${JSON.stringify(queue).slice(0, 500)}`);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, left);
          waiters.push(() => (clearTimeout(t), resolve()));
        });
      }
    },
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(socket));
    ws.once('unexpected-response', (_req, res) =>
      reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode })),
    );
    ws.once('error', reject);
  });
}
