// Whether a socket may watch a board, read afresh each time it asks: its credential is read again
// (a session or token that ended since the socket opened closes it, as revalidation would, rather
// than waiting for it; a token's role may have narrowed, a takeover moves it to another account),
// and a subscribe whose read raced a membership change reads again, so none slips in under a lost role.
import type { CommittedEvent } from '../../actors/board-actor.js';
import { tokenStands } from '../auth/authenticator.js';
import type { Identity } from '../auth/identity.js';
import type { ProjectSelector, SelectedProject } from '../auth/project-selection.js';
import { lookAt, type Reader } from '../board/feed/look.js';
import type { Store } from '../../store/ports/store.js';
import type { Connection } from './connection.js';
import type { OperatorAccess, OperatorView } from './operator-access.js';
import { CLOSE, type Topic } from './protocol.js';
import type { Subscriptions } from './subscriptions.js';
import { carriesLeaseEnds } from './topics.js';

/** A subscribe between its membership read and its watch: a membership notice meanwhile makes it read again. */
export interface Probe {
  conn: Connection;
  boardId: string;
  stale: boolean;
  /** The topics the subscribe under way asks for. */
  topics: ReadonlySet<Topic>;
  /** The holder's lease endings held back meanwhile: told once the subscribe is let in or refused (AccessChecksDeps.heldBack). */
  heldBack?: CommittedEvent[];
}

/** What a socket is on a board: a member (or token) with a role, an operator watching, or nothing (null). */
export type Reach = SelectedProject | OperatorView | null;

/** A subscribe whose membership read raced a membership change reads again, at most this often. */
const MEMBERSHIP_READS = 4;

export interface AccessChecksDeps {
  selector: Pick<ProjectSelector, 'reachable' | 'closedTo'>;
  tokens: Pick<Store['tokens'], 'get'>;
  /** Whether a session still stands (Authenticator.stillValid, as revalidation asks). */
  stillValid(identity: Identity): Promise<boolean>;
  clock: () => number;
  /** Operators' sockets reach any board. */
  operators?: Pick<OperatorAccess, 'board'>;
  subscriptions: Pick<Subscriptions, 'state' | 'accountOf'>;
  /**
   * Tells the socket the lease endings a subscribe held back, once it was let in (its subscription
   * owes them) or refused (sent as the socket may see them, if it still reaches the board): LeaseNews.tell.
   */
  heldBack(conn: Connection, boardId: string, events: CommittedEvent[]): void;
}

export class AccessChecks {
  private readonly probes = new Set<Probe>();

  constructor(private readonly deps: AccessChecksDeps) {}

  /**
   * A token is read afresh: its role may have narrowed, and a board takeover moves it to the new
   * owner's account. An operator's session reaches every board. A session is read again only when
   * `readSession` (a subscribe: revalidation, the other caller, has read it just before).
   */
  async reachable(conn: Connection, boardId: string, readSession = false): Promise<Reach> {
    const identity = await this.current(conn, readSession);
    if (!identity) return null;
    if (identity.kind !== 'token')
      return (
        (await this.deps.selector.reachable(identity, boardId)) ??
        (await this.deps.operators?.board(identity, boardId)) ??
        null
      );
    return this.deps.selector.reachable(identity, boardId);
  }

  /**
   * What the socket may see of the board now, as a subscription's view is made (its reads aside:
   * what is told to a holder unasked is no read); null when it no longer reaches the board.
   */
  async readerOn(conn: Connection, boardId: string): Promise<Reader | null> {
    const reach = await this.reachable(conn, boardId);
    return reach && lookAt(conn.identity, reach.role, []);
  }

  /** Whether the socket would reach the board but it is closed (its owner's account deleted): refused BOARD_CLOSED, as REST refuses it. */
  async closed(conn: Connection, boardId: string): Promise<boolean> {
    const identity = await this.current(conn, false);
    return identity !== null && this.deps.selector.closedTo(identity, boardId);
  }

  /**
   * The socket's credential as it stands: a token read afresh (its account kept for the socket), a
   * session read again when `readSession`. One that no longer stands (revoked, reissued, expired)
   * closes the socket, as revalidation would (AccessChanges.revalidate), and is null.
   */
  private async current(conn: Connection, readSession: boolean): Promise<Identity | null> {
    const identity = conn.identity;
    if (identity.kind !== 'token')
      return !readSession || (await this.deps.stillValid(identity)) ? identity : ended(conn);
    const token = await this.deps.tokens.get(identity.tokenId);
    if (!tokenStands(token, identity, this.deps.clock())) return ended(conn);
    const state = this.deps.subscriptions.state(conn);
    if (state) state.accountId = token.accountId;
    return { ...identity, role: token.role, accountId: token.accountId };
  }

  /**
   * The socket's role on the board as it stands now, read again when a membership change lands
   * during the read. The probe stays registered for the caller, which ends it (endProbe) once the
   * subscription is in place.
   */
  async membership(
    conn: Connection,
    boardId: string,
    topics: ReadonlySet<Topic>,
  ): Promise<{ project: Reach; probe: Probe }> {
    let heldBack: CommittedEvent[] | undefined;
    for (let reads = 1; ; reads++) {
      const probe: Probe = { conn, boardId, stale: false, topics, ...(heldBack && { heldBack }) };
      this.probes.add(probe);
      let project: Reach;
      try {
        project = await this.reachable(conn, boardId, true);
      } catch (e) {
        this.endProbe(probe);
        throw e;
      }
      if (!probe.stale || reads >= MEMBERSHIP_READS) return { project, probe };
      this.probes.delete(probe);
      heldBack = probe.heldBack;
    }
  }

  /**
   * Ends a subscribe's probe; the lease endings it held back are told now: owed by the subscription
   * it made (it sends them, or they go out when it starts after them or ends), or, when none came
   * about, sent as the socket may see them if it still reaches the board.
   */
  endProbe(probe: Probe): void {
    this.probes.delete(probe);
    if (probe.heldBack) this.deps.heldBack(probe.conn, probe.boardId, probe.heldBack);
  }

  /** The subscribe under way of `conn` to the board whose subscription will carry lease endings, if any. */
  carryingLeaseEnds(conn: Connection, boardId: string): Probe | undefined {
    for (const probe of this.probes)
      if (probe.conn === conn && probe.boardId === boardId && carriesLeaseEnds(probe.topics)) return probe;
    return undefined;
  }

  /** The account's membership of the board changed: its subscribes under way read it again. */
  membershipChanged(boardId: string, accountId: string): void {
    for (const probe of this.probes)
      if (probe.boardId === boardId && this.deps.subscriptions.accountOf(probe.conn) === accountId) probe.stale = true;
  }
}

/** Closes the socket of a credential that no longer stands. */
function ended(conn: Connection): null {
  conn.close(CLOSE.revoked, 'the credential was revoked');
  return null;
}
