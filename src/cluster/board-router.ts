// Where a board command is decided. With one node, here. With several (homes in Redis), on the
// board's home: this node when it is home or takes the free home, else the home it forwards to.
// A home that cannot be reached keeps its boards until its lease runs out; commands wait for that
// within their deadline, then take the home here, or get 503 BOARD_BUSY with Retry-After.
import { BoardBusyError } from '../../actors/board-actor.js';
import type { BoardRegistry } from '../../actors/registry.js';
import type { CommandRoute } from '../board/board-access.js';
import { decisionOf, type BoardCommand } from '../board/commands.js';
import type { PointPorts } from '../board/restore-points.js';
import type { Homes } from './homes.js';
import type { Forwarder } from './forwarder.js';
import { errorOf, refusalOf, type Answer } from './wire.js';

/** How long a command may wait for its board's home (a failover included) before 503 BOARD_BUSY. */
export const COMMAND_DEADLINE_MS = 8000;
/** Between two tries at a home that could not be reached. */
const UNREACHABLE_PAUSE_MS = 100;
/** A command sent on this many times (homes moving under it) is decided here; the version check keeps it right. */
const MOVES_FOLLOWED = 4;

export interface RouterParts {
  registry: BoardRegistry;
  points: PointPorts;
  clock: () => number;
  /** Absent: one node, every board decided here. */
  cluster?: { homes: Homes; forwarder: Forwarder };
  /** Told when Redis could not say where a board's home is (the command is decided here). */
  onHomesUnavailable?: (error: unknown) => void;
  /** Told of each command decided on this node, and whether a peer forwarded it (the e2e reads who decided what). */
  onDecided?: (boardId: string, kind: BoardCommand['kind'], forwarded: boolean) => void;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class BoardRouter implements CommandRoute {
  constructor(private readonly parts: RouterParts) {}

  ask(boardId: string, command: BoardCommand): Promise<unknown> {
    return this.parts.cluster ? this.route(boardId, command, this.parts.clock() + COMMAND_DEADLINE_MS) : this.decideHere(boardId, command);
  }

  /** A command a peer forwarded: decided here when this node is (or now becomes) the board's home. */
  async decideForwarded(boardId: string, command: BoardCommand): Promise<Answer> {
    try {
      if (!(await this.isHome(boardId))) return { moved: true };
      return { reply: await this.decideHere(boardId, command, true) };
    } catch (e) {
      return refusalOf(e);
    }
  }

  private async isHome(boardId: string): Promise<boolean> {
    try {
      return (await this.parts.cluster!.homes.homeOf(boardId)).self;
    } catch (e) {
      this.parts.onHomesUnavailable?.(e);
      return true;
    }
  }

  private decideHere(boardId: string, command: BoardCommand, forwarded = false): Promise<unknown> {
    this.parts.onDecided?.(boardId, command.kind, forwarded);
    const decide = decisionOf(command, this.parts.points);
    const actor = this.parts.registry.get(boardId);
    return decide instanceof Promise ? decide.then((d) => actor.ask(d)) : actor.ask(decide);
  }

  private async route(boardId: string, command: BoardCommand, deadline: number): Promise<unknown> {
    const { homes, forwarder } = this.parts.cluster!;
    for (let moves = 0; ; ) {
      let home;
      try {
        home = await homes.homeOf(boardId);
      } catch (e) {
        this.parts.onHomesUnavailable?.(e);
        return this.decideHere(boardId, command);
      }
      if (home.self || moves >= MOVES_FOLLOWED) return this.decideHere(boardId, command);
      const left = deadline - this.parts.clock();
      if (left <= 0) throw new BoardBusyError(boardId);
      const sent = await forwarder.send(home, boardId, command, left);
      if (sent.outcome === 'unknown') throw new BoardBusyError(boardId);
      if (sent.outcome === 'unreachable') {
        homes.forget(boardId);
        await pause(Math.min(UNREACHABLE_PAUSE_MS, Math.max(0, deadline - this.parts.clock())));
        continue;
      }
      const { answer } = sent;
      if ('reply' in answer) return answer.reply;
      if ('moved' in answer) {
        homes.forget(boardId);
        moves++;
        continue;
      }
      throw errorOf(answer);
    }
  }
}
