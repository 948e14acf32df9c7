// The nodes' channel for forwarded board commands on uWS: admitted at the upgrade, each message a
// request in flight until its session answered it. It keeps no state beyond each socket's own.
import type uWS from 'uWebSockets.js';
import type { HttpHandlers, PeerEndpoint, PeerSession } from './types.js';
import { writeWhole } from './respond.js';

interface PeerData {
  session: PeerSession;
  /** Open, and not yet closed: the socket may be written. */
  live: boolean;
}

/**
 * The peers' channel: admitted at the upgrade (synchronously: the hello is checked in place),
 * refused as an unknown path otherwise, and while the node drains. Each message counts as a
 * request in flight until its session has answered it, so a draining node answers what it took.
 */
export function mountPeers(app: uWS.TemplatedApp, peers: PeerEndpoint, handlers: HttpHandlers): void {
  app.ws<PeerData>(peers.path, {
    maxPayloadLength: peers.maxPayloadLength,
    maxBackpressure: peers.maxPayloadLength * 2,
    closeOnBackpressureLimit: 1,
    // A peer gone without a word (a host lost) is found by its missing pongs, and its session freed.
    idleTimeout: 120,
    sendPingsAutomatically: true,
    upgrade(res, req, context) {
      const headers: Record<string, string> = {};
      req.forEach((k, v) => {
        headers[k] = v;
      });
      const requestId = handlers.requestIdOf(headers);
      if (!handlers.accepting()) return writeWhole(res, handlers.refuse('draining', requestId), false);
      const session = peers.admit(headers, Buffer.from(res.getRemoteAddressAsText()).toString());
      if (!session) return writeWhole(res, handlers.refuse('not-found', requestId), false);
      res.upgrade<PeerData>(
        { session, live: false },
        headers['sec-websocket-key']!,
        headers['sec-websocket-protocol'] ?? '',
        headers['sec-websocket-extensions'] ?? '',
        context,
      );
    },
    open(ws) {
      const data = ws.getUserData();
      data.live = true;
      const end = () => {
        if (data.live) ws.end(1000);
      };
      data.session.opened({
        send: (text) => {
          if (data.live && ws.send(text, false) === 2) end(); // dropped: the peer's answers are incomplete, so the channel ends
        },
        close: end,
      });
    },
    message(ws, message) {
      const pending = ws.getUserData().session.message(Buffer.from(message).toString('utf8'), handlers.accepting());
      if (!pending) return;
      handlers.started();
      void pending.finally(() => handlers.finished());
    },
    close(ws) {
      const data = ws.getUserData();
      data.live = false; // uWS frees the socket after this callback: never touch it again
      data.session.closed();
    },
  });
}
