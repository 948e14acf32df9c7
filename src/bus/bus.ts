// The bus port: committed event batches travel from the node that committed them to every node's
// sockets, and notices (what nodes tell each other besides) to every node. Memory here; Redis
// pub/sub carries both across nodes. The bus knows no feature: each declares the notices it sends
// and the handlers it hears them with, and the composition root names the union a bus carries.
import type { CommittedEvent } from '../../store/ports/store.js';

export type BusHandler = (boardId: string, events: CommittedEvent[]) => void;
/** Whether something holds for a board (a bus handler's interest in it). */
export type BoardPredicate = (boardId: string) => boolean;

/** Counts of other nodes' committed batches a bus received: how much of the cluster's traffic this node reads. */
export interface BatchesReceived {
  readonly read: number;
  readonly skipped: number;
}

/** What every notice is: a kind, and fields that survive JSON. */
export interface NoticeShape {
  readonly kind: string;
}

/**
 * The bus's own notice: cross-node messages may have been lost (the bus reconnected), so bring
 * everything up to the log; with `boardId`, only that board's commits may have been (its channel
 * was confirmed after the subscribe that asked for it went on), the notices were not.
 */
export type CatchUpNotice = {
  kind: 'catch-up';
  boardId?: string;
};

/**
 * What a bus made without naming its notices carries: anything. The composition root names the
 * union (src/server/notices.ts); tests of the bus itself and servers started by tests need not.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyNotice = any;

/** A handler for each kind of `N`: how a feature says what it hears. */
export type NoticeHandlers<N extends NoticeShape> = {
  [K in N['kind']]: (notice: Extract<N, { kind: K }>) => void;
};

export type NoticeHandler<N extends NoticeShape> = (notice: N | CatchUpNotice) => void;

export interface Bus<N extends NoticeShape = AnyNotice> {
  /** local: this node only; ok: connected across nodes; degraded: cross-node delivery is down. */
  readonly health: 'local' | 'ok' | 'degraded';
  /** How many times this node's receiving connection was lost: what it heard across one of them may be incomplete. */
  readonly interruptions: number;
  /** Other nodes' committed batches received so far: read (a handler was interested in the board) or skipped unread. */
  readonly received: BatchesReceived;
  /** Called once per commit, after the events are in the log. */
  publish(boardId: string, events: CommittedEvent[]): void;
  /**
   * Hears every commit: this node's own, and other nodes' to the boards it `hear`s, where
   * `interested` says so (those of no interest are not even read). A board's channel is kept while
   * a handler `keeps` it (by default, while it is interested): a handler interested in every board
   * while an operator's firehose is open keeps only those it needs besides.
   */
  subscribe(handler: BusHandler, interested?: BoardPredicate, keeps?: BoardPredicate): () => void;
  /**
   * Receives other nodes' commits to the board from now on, for as long as a handler keeps it
   * (a board no handler keeps is given up within a minute): resolves once they will be
   * received, at once while cross-node delivery is down (the catch-up after it covers that) or on
   * one node. A node receives no other board's commits.
   */
  hear(boardId: string): Promise<void>;
  /**
   * The term under which this node has been receiving the board's commits without a break: the
   * same number for as long as it has, null while it is not (and then it asks for them). A board's
   * home vouches for its copy under it (src/cluster/homes.ts, `homeCurrency`).
   */
  hearing(boardId: string): number | null;
  /** Receives every board's commits while `on` (an operator's firehose is open on this node): resolves as `hear` does. */
  hearAll(on: boolean): Promise<void>;
  /** Tells every node, this one included. */
  notify(notice: N): void;
  /** Hears every notice, of every kind. */
  onNotice(handler: NoticeHandler<N>): () => void;
  /** Hears the notices of each kind `handlers` names, with its handler for that kind. */
  listen(handlers: Partial<NoticeHandlers<N | CatchUpNotice>>): () => void;
  close(): Promise<void>;
}

/** The handlers a bus calls for each notice it hears: those of every kind, then those of its kind. */
export class NoticeListeners<N extends NoticeShape> {
  private readonly everyKind = new Set<NoticeHandler<N>>();
  private readonly byKind = new Map<string, Set<(notice: never) => void>>();

  onNotice(handler: NoticeHandler<N>): () => void {
    this.everyKind.add(handler);
    return () => this.everyKind.delete(handler);
  }

  listen(handlers: Partial<NoticeHandlers<N | CatchUpNotice>>): () => void {
    const added = Object.entries(handlers).flatMap(([kind, handler]) => {
      if (!handler) return [];
      const set = this.byKind.get(kind) ?? new Set();
      this.byKind.set(kind, set);
      set.add(handler as (notice: never) => void);
      return [() => set.delete(handler as (notice: never) => void)];
    });
    return () => added.forEach((remove) => remove());
  }

  hear(notice: N | CatchUpNotice): void {
    for (const handler of this.everyKind) handler(notice);
    for (const handler of this.byKind.get(notice.kind) ?? []) (handler as (notice: N | CatchUpNotice) => void)(notice);
  }

  clear(): void {
    this.everyKind.clear();
    this.byKind.clear();
  }
}

export class MemoryBus<N extends NoticeShape = AnyNotice> implements Bus<N> {
  readonly health = 'local' as const;
  readonly interruptions = 0;
  /** One node: no other node's batch comes. */
  readonly received: BatchesReceived = { read: 0, skipped: 0 };
  private readonly handlers = new Set<BusHandler>();
  private readonly listeners = new NoticeListeners<N>();

  notify(notice: N): void {
    this.listeners.hear(notice);
  }

  onNotice(handler: NoticeHandler<N>): () => void {
    return this.listeners.onNotice(handler);
  }

  listen(handlers: Partial<NoticeHandlers<N | CatchUpNotice>>): () => void {
    return this.listeners.listen(handlers);
  }

  publish(boardId: string, events: CommittedEvent[]): void {
    for (const handler of this.handlers) handler(boardId, events);
  }

  subscribe(handler: BusHandler): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  /** One node: every commit is this node's own. */
  async hear(): Promise<void> {}

  hearing(): number {
    return 0;
  }

  async hearAll(): Promise<void> {}

  async close(): Promise<void> {
    this.handlers.clear();
    this.listeners.clear();
  }
}
