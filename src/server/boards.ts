// A node's boards: the actor registry (one actor per active board), and with several nodes the
// router that takes each command to its board's home, the forwarder it sends with and the
// endpoint where peers' forwarded commands arrive. Board access is what routes ask.
import type { Logger } from 'pino';
import { BoardRegistry } from '../../actors/registry.js';
import type { CommittedEvent, Store } from '../../store/ports/store.js';
import type { ServerKeys } from '../auth/keys.js';
import { BoardAccess } from '../board/board-access.js';
import { leaseEnds } from '../board/notices.js';
import { captureQuiet } from '../board/restore-points.js';
import type { Bus } from '../bus/bus.js';
import { BoardRouter } from '../cluster/board-router.js';
import { forwardEndpoint } from '../cluster/forward-endpoint.js';
import { Forwarder } from '../cluster/forwarder.js';
import { heardCurrency, homeCurrency, type Homes } from '../cluster/homes.js';
import { EnvelopeOpener } from '../cluster/signed-envelope.js';
import type { Config } from '../config.js';
import type { PeerEndpoint } from '../http/uws.js';
import type { Notice } from './notices.js';

/** How often, at most, a Redis outage that hides boards' homes is logged. */
const HOMES_REPORT_MS = 10_000;

export interface BoardsParts {
  config: Config;
  store: Store;
  clock: () => number;
  logger: Logger;
  bus: Bus<Notice>;
  keys: ServerKeys;
  homes: Homes | undefined;
  /** Told of each commit here, before it is published (the watch and metrics count it). */
  committed: (boardId: string, events: CommittedEvent[]) => void;
  /** Told of each lease warning sent (metrics count it). */
  warned: () => void;
}

export interface Boards {
  registry: BoardRegistry;
  router: BoardRouter;
  access: BoardAccess;
  /** Where peers' forwarded commands arrive; absent on one node. */
  peers: PeerEndpoint | undefined;
  /** The node begins to drain: its homes are given up as their commands under way are decided, so peers take its boards while its requests finish. */
  giveUpHomes(): Promise<void>;
  close(): Promise<void>;
}

export function startBoards(parts: BoardsParts): Boards {
  const { config, store, clock, logger, bus, homes } = parts;
  const registry = new BoardRegistry(store, {
    clock,
    onCommit: (boardId, events) => {
      parts.committed(boardId, events);
      bus.publish(boardId, events);
      const ended = leaseEnds(events);
      if (ended.length) bus.notify({ kind: 'lease.ended', boardId, events: ended });
    },
    onWarning: (boardId, w) => {
      parts.warned();
      bus.notify({ kind: 'lease.expiring', boardId, workId: w.workId, holder: w.holder, expiresAt: w.expiresAt });
    },
    onListenerError: (e) => logger.error({ err: e }, 'a commit listener failed; the command itself was committed'),
    onQuiet: (boardId, before) =>
      void captureQuiet(store, boardId, before, clock()).catch((e: unknown) =>
        logger.warn({ err: e, boardId }, 'restore points: the quiet-spell point was not kept'),
      ),
    // A lease's expiry goes through the router (made next), so a node that is no longer home forwards it.
    expire: (boardId): Promise<unknown> => router.ask(boardId, { kind: 'expire' }),
    // Only a board's home decides: while it surely holds the lease and has heard the board's commits
    // without a break, nothing changes its board unseen. Nodes sharing a store without homes
    // (tests) vouch only while they have heard; one node alone on its store always.
    ...(homes
      ? { currency: (boardId: string) => homeCurrency(homes.tenure(boardId), bus, boardId) }
      : bus.health !== 'local' && { currency: (boardId: string) => heardCurrency(bus, boardId) }),
  });
  const forwarder = homes ? new Forwarder(parts.keys.forward, config.nodeId, clock, config.bodyLimitBytes) : null;
  const router: BoardRouter = new BoardRouter({
    registry,
    points: store,
    clock,
    ...(homes && forwarder && { cluster: { homes, forwarder } }),
    onHomesUnavailable: reportedAtMost(HOMES_REPORT_MS, clock, (e) =>
      logger.warn(
        { err: e },
        'board homes: redis unavailable, so this node cannot learn which node decides a board: its commands answer 503 BOARD_BUSY until it can',
      ),
    ),
    onInternal: (e, boardId, command) =>
      logger.error(
        { err: e, boardId, command: command.kind },
        'a forwarded board command failed here; its peer was answered INTERNAL',
      ),
    ...(homes &&
      logger.isLevelEnabled('debug') && {
        onDecided: (boardId: string, command: string, forwarded: boolean) =>
          logger.debug({ boardId, command, forwarded }, 'board command decided here'),
      }),
  });
  registry.start();
  const peers = homes && peerEndpoint(parts, router);
  return {
    registry,
    router,
    access: new BoardAccess(registry, router),
    peers,
    async giveUpHomes() {
      await homes?.giveUpAll((boardId) => router.isDeciding(boardId));
    },
    async close() {
      await homes?.close();
      forwarder?.close();
    },
  };
}

/** The endpoint where peers forward commands to the boards this node is home to. */
function peerEndpoint(parts: BoardsParts, router: BoardRouter): PeerEndpoint {
  const { keys, config, clock, logger } = parts;
  return forwardEndpoint(
    keys.forward,
    new EnvelopeOpener(keys.forward, config.nodeId, clock),
    router,
    (peer, what) =>
      logger.warn(
        { peer },
        what === 'hello'
          ? 'board homes: refused a peer channel whose hello did not open (signature, addressee, stamp or reuse)'
          : 'board homes: closed a peer channel on a frame that did not open (signature, number or form)',
      ),
    config.bodyLimitBytes,
  );
}

/** `report`, called at most once per `ms`. */
function reportedAtMost(ms: number, clock: () => number, report: (e: unknown) => void): (e: unknown) => void {
  let reportedAt = -Infinity;
  return (e) => {
    if (clock() - reportedAt < ms) return;
    reportedAt = clock();
    report(e);
  };
}
