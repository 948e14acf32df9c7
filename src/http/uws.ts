// The uWebSockets.js transport's face: the server and the types the rest of the code uses. The
// transport itself lives in src/http/uws/, the only place that imports uWebSockets.js.
export { assertNativeBinding, createHttpServer } from './uws/server.js';
export { PUBLISH_WINDOW_MS } from './uws/publish-batch.js';
export type {
  HttpHandlers,
  HttpServer,
  PeerEndpoint,
  PeerLink,
  PeerSession,
  RefusalReason,
  SocketHandlers,
} from './uws/types.js';
