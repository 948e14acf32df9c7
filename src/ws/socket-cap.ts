// What a socket upgrade costs its credential (DOMAIN.md "Principals and roles"): one request of
// its request budget, and one of at most SOCKETS_PER_CREDENTIAL sockets open at once, a token's
// own or an account's sessions' together. The places are counted on this node: a credential whose
// sockets spread over N nodes holds at most N × SOCKETS_PER_CREDENTIAL (a count in Redis would
// keep a dead node's places taken; its request budget holds across nodes all the same).
import { AppError } from '../errors/app-error.js';
import type { Identity } from '../auth/identity.js';
import type { ProjectSelector } from '../auth/project-selection.js';
import { applyRateBudget } from '../ratelimit/budgets.js';
import type { RateLimiter } from '../ratelimit/limiter.js';

export const SOCKETS_PER_CREDENTIAL = 20;

/** Whose sockets count together: a token's own; an account's sessions all. */
export const credentialOf = (identity: Identity): string =>
  identity.kind === 'token' ? `token:${identity.tokenId}` : `account:${identity.accountId}`;

/**
 * An open socket as the cap sees it: its own object (its connection: a token's sockets share one
 * identity object, so the identity cannot tell them apart) and whose it is.
 */
export interface CappedSocket {
  readonly identity: Identity;
}

export interface SocketCapDeps {
  limiter: RateLimiter;
  /** The plan an upgrade is budgeted under is its credential's board's, as for a request without projectId. */
  selector: Pick<ProjectSelector, 'select'>;
  /** BOARD_RATE_SCALE. */
  scale: number;
  limit?: number;
  /** Runs a check after the current turn of the event loop (setImmediate). */
  later?: (check: () => void) => void;
}

export class SocketCap {
  private readonly limit: number;
  private readonly later: (check: () => void) => void;
  /** Places taken, by credential: reserved by upgrades not yet opened, and held by open sockets. */
  private readonly taken = new Map<string, number>();
  /**
   * Places reserved by upgrades not yet opened, by credential. A token's sockets may share one
   * identity object, so a reservation is counted, not kept by its socket: one that opens takes one
   * of its credential's, and the check after each admission gives back one left, if any.
   */
  private readonly reserved = new Map<string, number>();
  /** The open sockets holding a place, each given back once when it closes. */
  private readonly holding = new WeakSet<CappedSocket>();

  constructor(private readonly deps: SocketCapDeps) {
    this.limit = deps.limit ?? SOCKETS_PER_CREDENTIAL;
    this.later = deps.later ?? setImmediate;
  }

  /** Sockets the credential holds open (or is opening) on this node. */
  held(identity: Identity): number {
    return this.taken.get(credentialOf(identity)) ?? 0;
  }

  /**
   * Draws one request from the credential's request budget, then reserves one of its places for
   * an upgrade of `identity`. Throws RATE_LIMITED with the nine rate headers: the budget's
   * refusal, or, with every place taken, one naming the cap. A place not opened by the next turn of
   * the event loop is given back: uWS opens an upgraded socket at once, so the upgrade was abandoned.
   */
  async admit(identity: Identity, remoteAddress: string, now: number): Promise<void> {
    const project = await this.deps.selector.select(identity, undefined, 'optional');
    const { headers } = await applyRateBudget(this.deps.limiter, {
      rate: 'read',
      identity,
      remoteAddress,
      plan: project?.plan ?? 'free',
      addressLimit: 0,
      scale: this.deps.scale,
      now,
    });
    const credential = credentialOf(identity);
    const held = this.taken.get(credential) ?? 0;
    if (held >= this.limit) {
      throw new AppError(
        'RATE_LIMITED',
        `This credential holds ${this.limit} open sockets, as many as it may (an account’s sessions count together); close one first.`,
        { scope: 'sockets', limit: this.limit },
        headers,
      );
    }
    this.taken.set(credential, held + 1);
    count(this.reserved, credential, 1);
    this.later(() => {
      if (count(this.reserved, credential, -1)) count(this.taken, credential, -1);
    });
  }

  /**
   * An upgrade opened `socket`: it takes one of its credential's reserved places until it closes.
   * None is left when the check after its admission already gave it back: the socket then holds none.
   */
  opened(socket: CappedSocket): void {
    if (count(this.reserved, credentialOf(socket.identity), -1)) this.holding.add(socket);
  }

  /** `socket` closed: its place, if it holds one, is given back (once). */
  closed(socket: CappedSocket): void {
    if (this.holding.delete(socket)) count(this.taken, credentialOf(socket.identity), -1);
  }
}

/** Adds `by` to a count (a count of 0 is no entry); false, changing nothing, when it would fall below 0. */
function count(counts: Map<string, number>, key: string, by: 1 | -1): boolean {
  const n = (counts.get(key) ?? 0) + by;
  if (n < 0) return false;
  if (n > 0) counts.set(key, n);
  else counts.delete(key);
  return true;
}
