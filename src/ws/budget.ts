// What one socket may spend (SOCKET_BUDGET): messages per window, a snapshot costing what reading the
// items over REST would. A socket that spends it all is closed over budget, and the operators told.
import type { Identity } from '../auth/identity.js';
import type { Connection } from './connection.js';
import { CLOSE, SOCKET_BUDGET } from './protocol.js';

/** The current window of a socket's budget: when it started, and messages in it. */
export interface BudgetWindow {
  windowStart: number;
  used: number;
}

export const MESSAGES_SPENT = `message budget spent: at most ${SOCKET_BUDGET.messages} messages per ${SOCKET_BUDGET.windowMs / 1000} s`;
export const SNAPSHOT_SPENT = 'message budget spent: a snapshot costs one message per 1,000 items';

export interface SocketBudgetsDeps {
  clock: () => number;
  /** The socket's window; none once it closed. */
  windowOf(conn: Connection): BudgetWindow | undefined;
  /** Told of each socket closed for spending its message budget (the operators' abuse view). */
  onOverBudget?: (identity: Identity) => void;
}

export class SocketBudgets {
  constructor(private readonly deps: SocketBudgetsDeps) {}

  /** Counts `cost` messages against the socket's budget; once it is spent (or the socket closed), closes it with `reason` and answers false. */
  charge(conn: Connection, cost: number, reason: string): boolean {
    if (this.within(conn, cost)) return true;
    this.deps.onOverBudget?.(conn.identity);
    conn.close(CLOSE.overBudget, reason);
    return false;
  }

  private within(conn: Connection, cost: number): boolean {
    const window = this.deps.windowOf(conn);
    if (!window) return false;
    const now = this.deps.clock();
    if (now - window.windowStart >= SOCKET_BUDGET.windowMs) {
      window.windowStart = now;
      window.used = 0;
    }
    window.used += cost;
    return window.used <= SOCKET_BUDGET.messages;
  }
}
