// The stdio session: one agent, one process, a BoardSocket for the board and a LeaseKeeper per
// claimed lease. Leases are kept alive while the agent shows life (a tool call at least once per
// lease length); after a whole lease length of silence the keeper stops and the lease runs out on
// the board's clock, as it would for an agent that died. Whatever ends a lease (the socket, a
// refused renewal) becomes a notice at once: pushed as an MCP logging message, and put first in
// the agent's next tool result. The next call after a silence renews first, so a lease that is
// still alive is kept and one that is gone is reported before the tool runs.
import {
  BoardApiError,
  BoardClient,
  BoardSocket,
  LeaseKeeper,
  UNEXPECTED_RESPONSE,
  type LeaseGrant,
  type LeaseLoss,
} from './client.js';
import { NoticeQueue, type Notice } from './notices.js';
import { LocalError } from './results.js';
import {
  PlainLeases,
  type BoardSession,
  type LeaseReply,
  type LeaseRef,
  type SessionRefusals,
  type SubmitReply,
  type VerifyBody,
  type VerifyReply,
} from './session.js';

export interface LiveSessionOptions {
  baseUrl: string;
  token: string;
  /** The board, for a credential that reaches several (an account token); a workspace token's own by default. */
  projectId?: string;
  /** The fetch the board's calls go through (the CLI's gives up after its time-out); the platform's by default. */
  fetch?: (request: Request) => Promise<Response>;
  /** Silence after which leases are no longer renewed; by default each lease's own length. */
  idleMs?: number;
  /** Tells the client of a notice as it happens (an MCP logging message). */
  push(notice: Notice): void;
}

interface Held {
  grant: LeaseGrant;
  /** Null while the agent is quiet: nothing renews the lease. */
  keeper: LeaseKeeper | null;
  idle: ReturnType<typeof setTimeout> | null;
}

const ttlOf = (grant: LeaseGrant): number => 2 * (Date.parse(grant.expiresAt) - Date.parse(grant.renewBy));

export class LiveSession implements BoardSession {
  readonly keepsLeases = true;
  readonly pushesLive = true;
  /** Over the network: no answer, or one not from the board; leases found by work id in this process. */
  readonly refusals: SessionRefusals = {
    principal: ['GET /api/whoami'],
    anyCall: ['BOARD_UNREACHABLE', UNEXPECTED_RESPONSE],
    namingLease: ['NO_LEASE_HERE', 'LEASE_AMBIGUOUS'],
  };
  readonly client: BoardClient;
  readonly query: { projectId?: string };
  private readonly plain: PlainLeases;
  private readonly queue = new NoticeQueue();
  private readonly held = new Map<string, Held>();
  private me: Promise<{ principal: string; boardId: string | null }> | null = null;
  private socket: BoardSocket | null = null;
  /** The board the leases are on, once whoami told (keepers then hear the socket). */
  private boardId: string | undefined;
  private closed = false;

  constructor(private readonly options: LiveSessionOptions) {
    this.client = new BoardClient({
      baseUrl: options.baseUrl,
      token: options.token,
      ...(options.fetch && { fetch: options.fetch }),
    });
    this.query = options.projectId ? { projectId: options.projectId } : {};
    this.plain = new PlainLeases(this.client, this.query);
  }

  /** Who the token is, and the board's socket once that is known (asked again after a failure). */
  private identity(): Promise<{ principal: string; boardId: string | null }> {
    this.me ??= this.client.get('/api/whoami').then(
      (w) => {
        const boardId = this.options.projectId ?? w.workspace?.projectId ?? null;
        this.boardId = boardId ?? undefined;
        this.listen(w.principal, boardId);
        return { principal: w.principal, boardId };
      },
      (error: unknown) => {
        this.me = null;
        throw error;
      },
    );
    return this.me;
  }

  async principal(): Promise<string> {
    return (await this.identity()).principal;
  }

  private listen(principal: string, boardId: string | null): void {
    if (this.closed || this.socket || boardId === null) return;
    const socket = (this.socket = new BoardSocket({
      baseUrl: this.options.baseUrl,
      token: this.options.token,
      principal,
    }));
    socket.on('direct', ({ boardId: on, shout }) => {
      if (on === boardId && shout.from !== principal)
        this.tell({
          kind: 'shout.direct',
          shoutId: shout.id,
          from: shout.from,
          text: shout.text,
          workId: shout.workId,
          at: shout.at,
        });
    });
    // Leases nothing renews (the agent is quiet) still hear their warning and their end.
    socket.on('lease.expiring', (e) => {
      const held = this.find(e.workId);
      if (held && !held.keeper && e.boardId === boardId)
        this.tell({
          kind: 'lease.expiring',
          workId: e.workId,
          expiresAt: e.expiresAt,
          hint: 'Any board tool call now renews it.',
        });
    });
    const ended =
      (reason: 'expired' | 'revoked') =>
      (e: { boardId: string; workId: string; lease: { fencingToken: number }; reason: string | null }) => {
        const held = [...this.held.values()].find(
          (h) => h.grant.workId === e.workId && h.grant.fencingToken === e.lease.fencingToken,
        );
        if (held && e.boardId === boardId) this.lost(held, { reason, code: null, detail: e.reason, source: 'socket' });
      };
    socket.on('lease.expired', ended('expired'));
    socket.on('lease.revoked', ended('revoked'));
    void socket.connect().catch(() => undefined);
    void socket.subscribe(boardId, { topics: ['shouts'] }).catch(() => undefined);
  }

  /** Starts listening at once (direct shouts reach a session before its first tool call). */
  start(): void {
    void this.identity().catch(() => undefined);
  }

  async beforeCall(): Promise<Notice[]> {
    await this.identity().catch(() => undefined); // the tool's own call reports a bad credential
    // A call is a sign of life: quiet leases are renewed first (a gone one reports its loss now).
    const quiet = [...this.held.values()].filter((h) => !h.keeper);
    await Promise.all(quiet.map((h) => this.keep(h).renewNow()));
    for (const h of this.held.values()) this.arm(h);
    return this.queue.drain();
  }

  async afterCall(): Promise<Notice[]> {
    return this.queue.drain();
  }

  claimed(grant: LeaseGrant): void {
    if (this.held.has(grant.leaseId)) return; // a repeated claim answers the lease already held
    const held: Held = { grant, keeper: null, idle: null };
    this.held.set(grant.leaseId, held);
    this.keep(held);
    this.arm(held);
  }

  async renew(ref: LeaseRef, ttlSeconds?: number): Promise<LeaseReply> {
    const held = this.resolve(ref);
    if (ttlSeconds !== undefined) {
      // A new length: renewed here, then kept at it.
      const reply = await this.ending(held, () => this.plain.renew(held.grant.leaseId, ttlSeconds));
      if (reply.lease) held.grant = reply.lease;
      if (reply.revoked)
        this.lost(held, { reason: 'revoked', code: null, detail: reply.reason ?? null, source: 'release' });
      else this.resume(held, ttlSeconds);
      return reply;
    }
    const keeper = this.keep(held);
    await keeper.renewNow();
    if (!keeper.keeping) {
      const loss = await keeper.lost;
      throw (
        loss.error ??
        new LocalError(
          'NO_LEASE_HERE',
          `The lease on ${held.grant.workId} has ended (${loss.reason}${loss.detail ? `: ${loss.detail}` : ''}).`,
        )
      );
    }
    if (!keeper.lastRenewalAnswered)
      throw new LocalError(
        'BOARD_UNREACHABLE',
        'The renewal got no answer; the lease is still renewed in the background until it would run out.',
      );
    return { workId: held.grant.workId, action: 'renew', lease: keeper.lease };
  }

  async submit(ref: LeaseRef, head: string): Promise<SubmitReply> {
    const held = this.resolve(ref, 'work');
    const reply = await this.ending(held, () => this.plain.submit(held.grant.leaseId, head));
    this.forget(held);
    return reply;
  }

  async release(ref: LeaseRef): Promise<LeaseReply> {
    const held = this.resolve(ref);
    const reply = await this.ending(held, () => this.plain.release(held.grant.leaseId));
    this.forget(held);
    return reply;
  }

  async verify(body: VerifyBody): Promise<VerifyReply> {
    const held = [...this.held.values()].find((h) => h.grant.workId === body.workId && h.grant.purpose === 'verify');
    if (!held) return this.plain.verify(body);
    const reply = await this.ending(held, () => this.plain.verify(body));
    this.forget(held);
    return reply;
  }

  leaseOf(ref: LeaseRef): { leaseId: string; workId: string | null } {
    const held = this.resolve(ref);
    return { leaseId: held.grant.leaseId, workId: held.grant.workId };
  }

  leaseReport(): Record<string, unknown>[] {
    return [...this.held.values()].map((h) => {
      const lease = h.keeper?.lease ?? h.grant;
      return {
        workId: lease.workId,
        purpose: lease.purpose,
        leaseId: lease.leaseId,
        fencingToken: lease.fencingToken,
        expiresAt: lease.expiresAt,
        keptAlive: h.keeper !== null,
      };
    });
  }

  /** Stops every keeper (the leases run out on the board's clock) and the socket. */
  close(): void {
    this.closed = true;
    for (const h of this.held.values()) this.stopKeeping(h);
    this.held.clear();
    this.socket?.close();
  }

  /**
   * A call that may end the lease (submit, release, a verdict, a renewal at a new length): the keeper
   * stops first, so no renewal of its own races the call and reports the lease lost after it ended.
   * A refusal that says the lease is gone is the agent's notice; any other leaves the lease kept.
   */
  private async ending<T>(held: Held, call: () => Promise<T>): Promise<T> {
    this.stopKeeping(held);
    try {
      return await call();
    } catch (error) {
      const code = error instanceof BoardApiError ? error.code : null;
      if (code === 'LEASE_EXPIRED' || code === 'LEASE_NOT_HELD')
        this.lost(held, {
          reason: code === 'LEASE_EXPIRED' ? 'expired' : 'not-held',
          code,
          detail: null,
          source: 'submit',
        });
      else this.resume(held);
      throw error;
    }
  }

  private resume(held: Held, ttlSeconds?: number): void {
    this.keep(held, ttlSeconds);
    this.arm(held);
  }

  /** The held lease `ref` names: by lease id, by work id, or the only one held. */
  private resolve(ref: LeaseRef, purpose?: 'work' | 'verify'): Held {
    const all = [...this.held.values()].filter((h) => !purpose || h.grant.purpose === purpose);
    const found = ref.leaseId
      ? all.filter((h) => h.grant.leaseId === ref.leaseId)
      : ref.workId
        ? all.filter((h) => h.grant.workId === ref.workId)
        : all;
    if (found.length === 1) return found[0]!;
    if (found.length > 1)
      throw new LocalError(
        'LEASE_AMBIGUOUS',
        `You hold ${found.length} leases (${found.map((h) => h.grant.workId).join(', ')}); name the workId.`,
      );
    throw new LocalError(
      'NO_LEASE_HERE',
      ref.workId ? `No lease on ${ref.workId} is held through this session.` : 'No lease is held through this session.',
    );
  }

  private find(workId: string): Held | undefined {
    return [...this.held.values()].find((h) => h.grant.workId === workId);
  }

  /** The lease's keeper, made anew when the agent was quiet. */
  private keep(held: Held, ttlSeconds?: number): LeaseKeeper {
    if (held.keeper) return held.keeper;
    const boardId = this.boardId;
    const onLost = (loss: LeaseLoss) => this.lost(held, loss);
    const common = { client: this.client, lease: held.grant, onLost, ...(ttlSeconds !== undefined && { ttlSeconds }) };
    held.keeper =
      this.socket && boardId !== undefined
        ? new LeaseKeeper({ ...common, socket: this.socket, boardId })
        : new LeaseKeeper({ ...common, ...(boardId !== undefined && { boardId }) });
    held.keeper.on('renewed', (grant) => void (held.grant = grant));
    return held.keeper;
  }

  /** Renewals stop after a lease length (or idleMs) without a tool call. */
  private arm(held: Held): void {
    if (held.idle) clearTimeout(held.idle);
    const ms = this.options.idleMs ?? ttlOf(held.grant);
    held.idle = setTimeout(() => this.stopKeeping(held), ms);
    held.idle.unref?.();
  }

  private stopKeeping(held: Held): void {
    if (held.idle) clearTimeout(held.idle);
    held.idle = null;
    if (!held.keeper) return;
    held.grant = held.keeper.lease;
    held.keeper.stop();
    held.keeper = null;
  }

  /** A submit or release ends the lease: nothing is kept or told about it after that. */
  private forget(held: Held): void {
    if (held.idle) clearTimeout(held.idle);
    held.idle = null;
    this.held.delete(held.grant.leaseId);
  }

  private lost(held: Held, loss: Pick<LeaseLoss, 'reason' | 'code' | 'detail' | 'source'>): void {
    this.stopKeeping(held);
    this.forget(held);
    const notice: Notice = {
      kind: 'lease.lost',
      workId: held.grant.workId,
      purpose: held.grant.purpose,
      fencingToken: held.grant.fencingToken,
      reason: loss.reason,
      code: loss.code,
      detail: loss.detail,
    };
    // A call refused for it says so in its own answer.
    if (loss.source === 'submit' || loss.source === 'release') this.queue.told(notice);
    else this.tell(notice);
  }

  private tell(notice: Notice): void {
    if (this.queue.push(notice)) this.options.push(notice);
  }
}
