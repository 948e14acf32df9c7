// LeaseKeeper: keeps one held lease alive. It renews at a safe fraction of the lease's TTL (never
// later than renewBy), at once on a lease.expiring warning or its socket's reconnecting, and tells
// its owner the moment the lease is gone: a renewal refused, or the socket saying the lease expired
// or was revoked.
import type { BoardClient, Reply } from './board-client.js';
import type { BoardSocket } from './board-socket.js';
import { Emitter } from './emitter.js';
import { BoardApiError } from './errors.js';
import type { LeaseEnded, LeaseExpiring, LeaseGrant } from './messages.js';

export interface LeaseLoss {
  /** expired or not-held: the server refused the lease id; revoked: an operator or the lifecycle ended it; refused: the credential may no longer renew; unreachable: no renewal got through before it ran out. */
  reason: 'expired' | 'not-held' | 'revoked' | 'refused' | 'unreachable';
  workId: string;
  /** The refusal's code (LEASE_EXPIRED, LEASE_NOT_HELD, ROLE_REQUIRED…), or null when the socket or a revoked renewal told. */
  code: string | null;
  /** Why a revoked lease ended (blocked, cancelled, superseded, overridden, verified, rewound), or the refusal's message. */
  detail: string | null;
  /** What told: a renewal's answer, the socket, a submit or release's answer, or the keeper's own clock. */
  source: 'renewal' | 'socket' | 'submit' | 'release' | 'clock';
  error: unknown;
}

export type LeaseKeeperOptions = {
  client: BoardClient;
  /** The grant POST /api/claim answered. */
  lease: LeaseGrant;
  /** When to renew, as a fraction of the TTL: default 1/3, so another try fits before renewBy (1/2); held to 0.1..0.5. */
  renewAt?: number;
  /** The TTL each renewal asks for; by default the lease keeps its own. */
  ttlSeconds?: number;
  /** Called once, at once, when the lease is lost. */
  onLost?: (loss: LeaseLoss) => void;
} & (
  | {
      /** The holder's socket: lease.expired and lease.revoked reach the keeper without waiting for a renewal. */ socket: BoardSocket;
      /** The lease's board (work ids repeat across boards). */ boardId: string;
    }
  | { socket?: undefined; /** The lease's board, for a session (a token knows its board). */ boardId?: string }
);

export interface LeaseKeeperEvents extends Record<string, unknown> {
  renewed: LeaseGrant;
  expiring: LeaseExpiring;
  lost: LeaseLoss;
}

type Phase = 'keeping' | 'ending' | 'done' | 'lost';

/** The longest a renewal waits for its answer (less when the lease has less left: until it must have run out). */
const RENEWAL_TIMEOUT_MS = 30_000;

export class LeaseKeeper extends Emitter<LeaseKeeperEvents> {
  /** Resolves when the lease is lost; stays pending while it is kept, released or submitted. */
  readonly lost: Promise<LeaseLoss>;
  private resolveLost!: (loss: LeaseLoss) => void;
  private grant: LeaseGrant;
  private phase: Phase = 'keeping';
  private timer: ReturnType<typeof setTimeout> | null = null;
  private inFlight: Promise<void> | null = null;
  /** When the lease runs out by this side's clock, counted from when the granting request left. */
  private deadline = 0;
  private failures = 0;
  private answered = true;
  private readonly unlisten: (() => void)[] = [];

  constructor(private readonly options: LeaseKeeperOptions) {
    super();
    this.lost = new Promise((resolve) => (this.resolveLost = resolve));
    this.grant = options.lease;
    this.schedule(Date.now());
    const { socket, boardId } = options;
    if (socket) {
      const mine = (e: { boardId: string; workId: string }) =>
        this.phase === 'keeping' && e.boardId === boardId && e.workId === this.grant.workId;
      const ended = (e: LeaseEnded) => mine(e) && e.lease.fencingToken === this.grant.fencingToken;
      this.unlisten.push(
        socket.on(
          'lease.expired',
          (e) =>
            void (
              ended(e) && this.lose({ reason: 'expired', code: null, detail: null, source: 'socket', error: null })
            ),
        ),
        socket.on(
          'lease.revoked',
          (e) =>
            void (
              ended(e) && this.lose({ reason: 'revoked', code: null, detail: e.reason, source: 'socket', error: null })
            ),
        ),
        socket.on('lease.expiring', (e) => {
          if (!mine(e)) return;
          this.emit('expiring', e);
          void this.renewNow();
        }),
        // What the socket said while it was away is not replayed to it unless it watched the board's
        // leases: a renewal at once asks the board whether the lease is still held.
        socket.on('open', ({ resumed }) => void (resumed && this.phase === 'keeping' && this.renewNow())),
      );
    }
  }

  /** The lease as last granted or renewed. */
  get lease(): LeaseGrant {
    return this.grant;
  }

  get keeping(): boolean {
    return this.phase === 'keeping';
  }

  /**
   * Whether the board answered the latest renewal (true before any): false while one that got no
   * answer about the lease (the network, no answer in time, 429, a 5xx) is being tried again. An
   * answer may leave expiresAt as it was (a lease at its 24 h cap).
   */
  get lastRenewalAnswered(): boolean {
    return this.answered;
  }

  /** Renews now (joins a renewal already on its way). */
  renewNow(): Promise<void> {
    return (this.inFlight ??= this.renew().finally(() => (this.inFlight = null)));
  }

  /**
   * Submits the exact head under this lease, which ends it. A refusal is thrown; one that says the
   * lease is gone is reported as lost, any other (a malformed head, a 5xx) leaves it kept.
   */
  submit(head: string): Promise<Reply<'/api/submit', 'post'>> {
    return this.ending('submit', () =>
      this.options.client.post('/api/submit', { body: { leaseId: this.grant.leaseId, head }, ...this.project() }),
    );
  }

  /** Gives the lease back; refusals as for submit. */
  async release(): Promise<void> {
    await this.ending('release', () =>
      this.options.client.post('/api/lease', {
        body: { leaseId: this.grant.leaseId, action: 'release' },
        ...this.project(),
      }),
    );
  }

  /** Stops renewing, leaving the lease to run out. */
  stop(): void {
    this.end();
    this.phase = 'done';
  }

  private async renew(): Promise<void> {
    if (this.phase !== 'keeping') return;
    this.clearTimer();
    const sentAt = Date.now();
    // A renewal left unanswered (a board or proxy that holds the request) is given up as a failure
    // to try again, at the latest when the lease must have run out: the loss is told then. A slow
    // answer (a busy board) within the lease's time still counts.
    const wait = Math.max(0, Math.min(RENEWAL_TIMEOUT_MS, this.deadline - sentAt));
    try {
      const reply = await this.options.client.post('/api/lease', {
        body: {
          leaseId: this.grant.leaseId,
          action: 'renew',
          ...(this.options.ttlSeconds !== undefined && { ttlSeconds: this.options.ttlSeconds }),
        },
        ...this.project(),
        signal: AbortSignal.timeout(wait),
      });
      if (this.phase !== 'keeping') return;
      if (reply.revoked || !reply.lease)
        return this.lose({
          reason: 'revoked',
          code: null,
          detail: reply.reason ?? null,
          source: 'renewal',
          error: null,
        });
      this.grant = reply.lease;
      this.failures = 0;
      this.answered = true;
      this.schedule(sentAt);
      this.emit('renewed', reply.lease);
    } catch (error) {
      if (this.phase !== 'keeping') return;
      const loss = lossOf(error, 'renewal');
      if (loss) return this.lose(loss);
      this.answered = false;
      // No answer about the lease (the network, no answer in time, 429, a 5xx): again soon, until it must have run out.
      const left = this.deadline - Date.now();
      if (left <= 0)
        return this.lose({
          reason: 'unreachable',
          code: error instanceof BoardApiError ? error.code : null,
          detail: error instanceof Error ? error.message : String(error),
          source: 'clock',
          error,
        });
      const wanted =
        error instanceof BoardApiError && error.retryAfter !== null
          ? error.retryAfter * 1000
          : 250 * 2 ** this.failures++;
      this.timer = setTimeout(() => void this.renewNow(), Math.max(50, Math.min(wanted, left / 3)));
    }
  }

  /**
   * The next renewal, `renewAt` of the TTL after the granting request left (the first grant: after
   * the keeper was made). The TTL is twice expiresAt − renewBy, so the two sides' clocks may differ.
   */
  private schedule(sentAt: number): void {
    const ttl = 2 * (Date.parse(this.grant.expiresAt) - Date.parse(this.grant.renewBy));
    this.deadline = sentAt + ttl;
    const after = ttl * Math.min(Math.max(this.options.renewAt ?? 1 / 3, 0.1), 1 / 2);
    this.clearTimer();
    this.timer = setTimeout(() => void this.renewNow(), Math.max(0, sentAt + after - Date.now()));
  }

  private project(): { params?: { query: { projectId: string } } } {
    return this.options.boardId === undefined ? {} : { params: { query: { projectId: this.options.boardId } } };
  }

  /** A call that ends the lease: no renewal races it; refused, the lease is lost or kept as the refusal says. */
  private async ending<T>(source: 'submit' | 'release', call: () => Promise<T>): Promise<T> {
    const wasKeeping = this.phase === 'keeping';
    if (wasKeeping) this.phase = 'ending';
    this.clearTimer();
    try {
      const reply = await call();
      this.end();
      this.phase = 'done';
      return reply;
    } catch (error) {
      const loss = lossOf(error, source);
      if (loss && loss.reason !== 'refused') this.lose(loss);
      else if (wasKeeping && this.phase === 'ending') {
        // Still held (the call was malformed, not allowed, or had no answer): keep it alive.
        this.phase = 'keeping';
        void this.renewNow();
      }
      throw error;
    }
  }

  private end(): void {
    if (this.phase === 'keeping') this.phase = 'ending';
    this.clearTimer();
    this.unlisten.splice(0).forEach((off) => off());
  }

  private lose(loss: Omit<LeaseLoss, 'workId'>): void {
    if (this.phase === 'lost' || this.phase === 'done') return;
    this.end();
    this.phase = 'lost';
    const full = { ...loss, workId: this.grant.workId };
    this.emit('lost', full);
    this.options.onLost?.(full);
    this.resolveLost(full);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

/** What a refusal says about the lease: lost, or nothing (a transient failure, tried again). */
function lossOf(error: unknown, source: LeaseLoss['source']): Omit<LeaseLoss, 'workId'> | null {
  if (!(error instanceof BoardApiError)) return null;
  const base = { code: error.code, detail: error.message, source, error };
  if (error.code === 'LEASE_EXPIRED') return { ...base, reason: 'expired' };
  if (error.code === 'LEASE_NOT_HELD') return { ...base, reason: 'not-held' };
  const transient =
    error.status === 429 || error.status === 408 || error.status >= 500 || error.code === 'UNEXPECTED_RESPONSE';
  return transient ? null : { ...base, reason: 'refused' };
}
