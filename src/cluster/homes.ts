// Which node is a board's home (the single activation of its actor across nodes): the port, and
// the answer when there is one node. Correctness never rests on it: the store's version check
// does, so two nodes that both believe they are home cost retries, never a double grant.

/** A node as its peers reach it. */
export interface NodeAddress {
  node: string;
  url: string;
}

export type Home = { self: true } | ({ self: false } & NodeAddress);

export const SELF: Home = { self: true };

export interface Homes {
  /** The board's home: this node when it holds the home lease or has just taken a free one, else the holder. */
  homeOf(boardId: string): Promise<Home>;
  /** The home another node was believed to be proved wrong (moved, unreachable): ask again next time. */
  forget(boardId: string): void;
  /**
   * Starts renewing the leases of the boards this node is home of, while `active` says their
   * actors are (a passivated board's home is given up); `self` is how peers reach this node.
   */
  start(self: NodeAddress, active: (boardId: string) => boolean): void;
  /** Gives every home up (a draining node), so peers take the boards at once rather than after the TTL. */
  close(): Promise<void>;
}
