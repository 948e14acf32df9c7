// @agent-board/client: the board's REST operations typed from its OpenAPI document, its live
// socket with resume, and a keeper for held leases. Runs in Node 20+ and in browsers.
export {
  BoardClient,
  rateOf,
  type Answer,
  type BoardClientOptions,
  type PathsWith,
  type RateBudget,
  type RateWindow,
  type Reply,
} from './board-client.js';
export { BoardApiError, UNEXPECTED_RESPONSE, type ErrorCode } from './errors.js';
export { Emitter } from './emitter.js';
export type { components, operations, paths } from './schema.js';
export {
  BoardSocket,
  type BoardSocketEvents,
  type BoardSocketOptions,
  type SocketState,
  type SubscribeOptions,
  type Subscribed,
} from './board-socket.js';
export { LeaseKeeper, type LeaseKeeperEvents, type LeaseKeeperOptions, type LeaseLoss } from './lease-keeper.js';
export { openWebSocket, type WebSocketFactory, type WebSocketLike } from './web-socket.js';
export {
  topicOf,
  type BoardEvent,
  type ClientMessage,
  type EventLease,
  type LeaseEnded,
  type LeaseExpiring,
  type LeaseGrant,
  type LoggedEvent,
  type ServerMessage,
  type Shout,
  type Topic,
} from './messages.js';
