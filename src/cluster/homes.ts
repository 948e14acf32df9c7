// Which node is a board's home (the single activation of its actor across nodes): the port, and
// the answer when there is one node. The log's correctness never rests on it: the store's version
// check does, so two nodes that both believe they are home cost retries, never a double grant.
// What agents are told does: only the home decides, so while a node surely holds the lease
// (`tenure`) its board cannot change without it, and it may answer from it without asking.
import type { Bus } from '../bus/bus.js';

/** A node as its peers reach it. */
export interface NodeAddress {
  node: string;
  url: string;
}

export type Home = { self: true } | ({ self: false } & NodeAddress);

export interface HomeOptions {
  /**
   * For a request that was in flight as the node began to drain: a board nobody holds is taken
   * (not renewed: it lapses within the lease), so it is decided here under a home as before.
   */
  takeWhileDraining?: boolean;
}

export const SELF: Home = { self: true };

export interface Homes {
  /** The board's home: this node when it holds the home lease or has just taken a free one, else the holder. */
  homeOf(boardId: string, options?: HomeOptions): Promise<Home>;
  /**
   * While this node surely holds the board's home lease (by its own clock, with a margin before
   * the lease could pass to another node): a number that changes each time it takes the lease
   * anew. Null otherwise. Never asks Redis.
   */
  tenure(boardId: string): number | null;
  /** The home another node was believed to be proved wrong (moved, unreachable): ask again next time. */
  forget(boardId: string): void;
  /**
   * Starts renewing the leases of the boards this node is home of, while `active` says their
   * actors are (a passivated board's home is given up); `self` is how peers reach this node.
   */
  start(self: NodeAddress, active: (boardId: string) => boolean): void;
  /**
   * The node begins to drain: every home is given up as soon as no command is being decided on
   * it (`deciding`; at once for most, at a renewal round for the others, which are renewed
   * meanwhile), so peers take the boards rather than after the TTL, and no board changes under a
   * peer's home without it. `homeOf` then only learns other nodes' homes, and rejects with
   * HomesGivenUp for a board that has none (unless `takeWhileDraining`).
   */
  giveUpAll(deciding?: (boardId: string) => boolean): Promise<void>;
  /** Gives every home still held up and lets go of Redis. */
  close(): Promise<void>;
}

/** This node has given up its homes (it drains) and a board has no home elsewhere: it takes none. */
export class HomesGivenUp extends Error {
  constructor(boardId: string) {
    super(`homes: given up (draining), and board ${boardId} has no home elsewhere`);
    this.name = 'HomesGivenUp';
  }
}

/**
 * A home's currency token for a board (actors/board-actor.ts `Currency`): the same while this node
 * stays the board's home (one tenure) and has been receiving the board's commits without a break
 * (its channel confirmed, the bus connected since: a peer's commit would have been heard); null
 * while any of that is not sure.
 */
export function homeCurrency(
  tenure: number | null,
  bus: Pick<Bus, 'health' | 'interruptions' | 'hearing'>,
  boardId: string,
): string | null {
  if (tenure === null) return null;
  const heard = heardCurrency(bus, boardId);
  return heard === null ? null : `${tenure}:${heard}`;
}

/**
 * The token of a node that shares its store without board homes (tests run nodes so): the same
 * while it has been receiving the board's commits without a break, null otherwise.
 */
export function heardCurrency(bus: Pick<Bus, 'health' | 'interruptions' | 'hearing'>, boardId: string): string | null {
  if (bus.health === 'degraded') return null;
  const term = bus.hearing(boardId);
  return term === null ? null : `${bus.interruptions}:${term}`;
}
