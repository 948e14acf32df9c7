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
  /** Places taken, by credential. */
  private readonly taken = new Map<string, number>();
  /**
   * Each upgrade's place, by the socket's own identity object: reserved (false) until it opens, then
   * open (true) until it closes. Its credential is worked out again when it is given back: a
   * socket holds no string of it.
   */
  private readonly places = new WeakMap<Identity, boolean>();

  constructor(private readonly deps: SocketCapDeps) {
    this.limit = deps.limit ?? SOCKETS_PER_CREDENTIAL;
    this.later = deps.later ?? setImmediate;
  }

  /** Sockets the credential holds open (or is opening) on this node. */
  held(identity: Identity): number {
    return this.taken.get(credentialOf(identity)) ?? 0;
  }

  /**
   * Draws one request from the credential's request budget, then takes one of its places for
   * `identity` (the socket's own). Throws RATE_LIMITED with the nine rate headers: the budget's
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
    this.places.set(identity, false);
    this.later(() => {
      if (this.places.get(identity) === false) this.giveBack(identity);
    });
  }

  /** The upgrade opened its socket: its place is kept until it closes. */
  opened(identity: Identity): void {
    if (this.places.has(identity)) this.places.set(identity, true);
  }

  closed(identity: Identity): void {
    if (this.places.has(identity)) this.giveBack(identity);
  }

  private giveBack(identity: Identity): void {
    this.places.delete(identity);
    const credential = credentialOf(identity);
    const left = (this.taken.get(credential) ?? 1) - 1;
    if (left > 0) this.taken.set(credential, left);
    else this.taken.delete(credential);
  }
}
