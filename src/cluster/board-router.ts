// Where a board command is decided. With one node, here. With several (homes in Redis), on the
// board's home only: this node when it is home or takes the free home, else the home it forwards
// to. A home that cannot be reached keeps its boards until its lease runs out; commands wait for
// that within their deadline, then take the home here, or get 503 BOARD_BUSY with Retry-After.
// Only a home decides, so a home's board cannot change without it (src/cluster/homes.ts): a node
// that cannot learn the home (Redis unreachable, and no lease of its own still sure) decides
// nothing and answers 503 BOARD_BUSY at once, and the agent retries, on any node. A draining node
// has given up its homes: its requests still in flight go to the boards' next homes, or take a
// board nobody holds (without renewing it) and are decided here; its lease timers take none.
import { BoardBusyError } from '../../actors/board-actor.js';
import type { BoardRegistry } from '../../actors/registry.js';
import { toAppError, type CommandRoute } from '../board/board-access.js';
import { decisionOf, type BoardCommand } from '../board/commands.js';
import type { PointPorts } from '../board/restore-points.js';
import { isAppError } from '../errors/app-error.js';
import { StoreUnavailableError } from '../../store/ports/store.js';
import { HomesGivenUp, type Homes } from './homes.js';
import type { Forwarder } from './forwarder.js';
import { errorOf, refusalOf, type Answer } from './wire.js';

/** How long a command may wait for its board's home (a failover included) before 503 BOARD_BUSY. */
export const COMMAND_DEADLINE_MS = 8000;
/** Between two tries at a home that could not be reached. */
const UNREACHABLE_PAUSE_MS = 100;

export interface RouterParts {
  registry: BoardRegistry;
  points: PointPorts;
  clock: () => number;
  /** Absent: one node, every board decided here. */
  cluster?: { homes: Homes; forwarder: Forwarder };
  /** Told when Redis could not say where a board's home is (the command is refused as busy). */
  onHomesUnavailable?: (error: unknown) => void;
  /** Told of each command decided on this node, and whether a peer forwarded it (the e2e reads who decided what). */
  onDecided?: (boardId: string, kind: BoardCommand['kind'], forwarded: boolean) => void;
  /**
   * Told of an unknown error a forwarded command met here: the peer is answered INTERNAL with
   * nothing of it, so this is the one place it can be logged with its stack.
   */
  onInternal?: (error: unknown, boardId: string, command: BoardCommand) => void;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const refused = (e: unknown): Promise<never> => Promise.reject(toAppError(e));

export class BoardRouter implements CommandRoute {
  /** Commands being decided on this node, by board (a draining node keeps a home while it has some). */
  private readonly deciding = new Map<string, number>();

  constructor(private readonly parts: RouterParts) {}

  /** Whether a command is being decided on this node for the board. */
  isDeciding(boardId: string): boolean {
    return this.deciding.has(boardId);
  }

  /** Rejects with the registry error its caller answers (BoardAccess passes it on as it is). */
  ask(boardId: string, command: BoardCommand): Promise<unknown> {
    const decided = this.parts.cluster
      ? this.route(boardId, command, this.parts.clock() + COMMAND_DEADLINE_MS)
      : this.decideHere(boardId, command);
    return decided.catch(refused);
  }

  /** A command a peer forwarded: decided here when this node is (or now becomes) the board's home. */
  async decideForwarded(boardId: string, command: BoardCommand): Promise<Answer> {
    try {
      if (!(await this.isHome(boardId))) return { moved: true };
      return { reply: await this.decideHere(boardId, command, true) };
    } catch (e) {
      const mapped = toAppError(e);
      if (!isAppError(mapped) && !(mapped instanceof StoreUnavailableError))
        this.parts.onInternal?.(e, boardId, command);
      return refusalOf(mapped);
    }
  }

  /** Whether this node is the board's home; not when Redis cannot say (the sender asks again). */
  private async isHome(boardId: string): Promise<boolean> {
    try {
      return (await this.parts.cluster!.homes.homeOf(boardId)).self;
    } catch (e) {
      this.homesUnknown(e);
      return false;
    }
  }

  /**
   * Decides a command on this node's actor. Its refusal leaves the router as its registry error
   * (toAppError, in `ask` and `decideForwarded`): the one mapping, on the node that decided, for a
   * command that entered here and one a peer forwarded alike, so the peers' answer only carries it
   * (src/cluster/wire.ts); the router's own 503 BOARD_BUSY (no home to be had in time) goes the same way.
   */
  private decideHere(boardId: string, command: BoardCommand, forwarded = false): Promise<unknown> {
    this.parts.onDecided?.(boardId, command.kind, forwarded);
    this.deciding.set(boardId, (this.deciding.get(boardId) ?? 0) + 1);
    let decided: Promise<unknown>;
    try {
      const decide = decisionOf(command, this.parts.points);
      const actor = this.parts.registry.get(boardId);
      decided = decide instanceof Promise ? decide.then((d) => actor.ask(d)) : actor.ask(decide);
    } catch (e) {
      decided = Promise.reject(e);
    }
    const done = () => {
      const left = this.deciding.get(boardId)! - 1;
      if (left > 0) this.deciding.set(boardId, left);
      else this.deciding.delete(boardId);
    };
    decided.then(done, done);
    return decided;
  }

  /** Redis could not say where a board's home is (reported); or this node drains and takes no home (as it should). */
  private homesUnknown(e: unknown): void {
    if (!(e instanceof HomesGivenUp)) this.parts.onHomesUnavailable?.(e);
  }

  private async route(boardId: string, command: BoardCommand, deadline: number): Promise<unknown> {
    const { homes, forwarder } = this.parts.cluster!;
    for (let moves = 0; ;) {
      let home;
      try {
        // A draining node still takes a free home for a request in flight; its own lease timers leave boards to their next homes.
        home = await homes.homeOf(boardId, { takeWhileDraining: command.kind !== 'expire' });
      } catch (e) {
        this.homesUnknown(e);
        throw new BoardBusyError(boardId);
      }
      if (home.self) return this.decideHere(boardId, command);
      const left = deadline - this.parts.clock();
      if (left <= 0) throw new BoardBusyError(boardId);
      const sent = await forwarder.send(home, boardId, command, left);
      if (sent.outcome === 'unknown') throw new BoardBusyError(boardId);
      const { answer } = sent.outcome === 'unreachable' ? { answer: null } : sent;
      if (answer && 'reply' in answer) return answer.reply;
      if (answer && !('moved' in answer)) throw errorOf(answer);
      // Unreachable, or no longer the home: ask again (at once after the first move, after a short pause otherwise).
      homes.forget(boardId);
      if (answer === null || moves++ > 0)
        await pause(Math.min(UNREACHABLE_PAUSE_MS, Math.max(0, deadline - this.parts.clock())));
    }
  }
}
