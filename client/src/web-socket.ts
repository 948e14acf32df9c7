// The WebSocket a BoardSocket uses: the platform's own in browsers (the session cookie goes with
// the upgrade), the `ws` package in Node, which can send a Bearer token as a header.

/** The part of the WebSocket API a BoardSocket uses (browsers' WebSocket and `ws` both have it). */
export interface WebSocketLike {
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  /** `ws` only: drops the connection without a closing handshake. */
  terminate?(): void;
}

export type WebSocketFactory = (url: string, headers: Record<string, string>) => WebSocketLike | Promise<WebSocketLike>;

/** Named in a variable so that bundlers for the browser leave the Node-only package out. */
const NODE_WS = 'ws';

export async function openWebSocket(url: string, headers: Record<string, string>): Promise<WebSocketLike> {
  const Native = (globalThis as { WebSocket?: new (url: string) => WebSocketLike }).WebSocket;
  if (Native && Object.keys(headers).length === 0) return new Native(url);
  const { WebSocket } = (await import(/* @vite-ignore */ NODE_WS)) as {
    WebSocket: new (url: string, options: { headers: Record<string, string> }) => WebSocketLike;
  };
  return new WebSocket(url, { headers });
}
