// Board homes as leases in Redis: `home:<board>` holds "<node> <url>" with a TTL. A node takes a
// free lease when a command for the board reaches it, renews it while the board's actor is active
// here, and gives it up when the actor passivates or the node begins to drain (and takes none
// after that). A dead home's boards move once its lease runs out (the TTL), to whichever node a
// command reaches next. A take or renewal answered after a give-up sent behind it (one
// connection: Redis carries them out in order) is not counted as held: the lease is gone.
import { Redis } from 'ioredis';
import { HomesGivenUp, SELF, type Home, type HomeOptions, type Homes, type NodeAddress } from './homes.js';

/** How long a home lease lasts without renewal: a dead home's boards move after this. */
export const HOME_LEASE_MS = 3000;
/**
 * A node stops counting itself home this long before its lease could lapse in Redis (measured from
 * when it sent the take or renewal, so before Redis could start the TTL): what a clock running a
 * little fast or a paused process would otherwise make two homes at once.
 */
export const HOME_MARGIN_MS = 300;
/** Where another node is home is trusted this long before Redis is asked again. */
const REMOTE_KEPT_MS = 1000;
/** Redis answers a lease command within this, or it is refused (so not counted as held). */
const COMMAND_TIMEOUT_MS = 1000;
/** A give-up is remembered this long: past it, no take or renewal sent before it can still be answered. */
const GIVEN_UP_KEPT_MS = 5 * COMMAND_TIMEOUT_MS;

const KEY = 'home:';

/** Takes the lease when it is free (renews it when it is ours already); answers the holder either way. */
const TAKE = `local v = redis.call('get', KEYS[1]) if v and v ~= ARGV[1] then return v end redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) return ARGV[1]`;
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0`;
const GIVE_UP = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`;

type Scripted = Redis & {
  homeTake(key: string, value: string, ttl: number): Promise<string>;
  homeRenew(key: string, value: string, ttl: number): Promise<number>;
  homeGiveUp(key: string, value: string): Promise<number>;
};

export interface RedisHomesOptions {
  clock?: () => number;
  leaseMs?: number;
  /** Told when this node takes a board's home, loses it to another node, or gives it up. */
  onChange?: (boardId: string, change: 'taken' | 'lost' | 'given up') => void;
}

export class RedisHomes implements Homes {
  private readonly redis: Scripted;
  /** Boards this node is home of, and until when (by this node's clock) the lease is surely ours. */
  private readonly held = new Map<string, number>();
  /** Each held board's tenure: a new number each time its lease is taken anew. */
  private readonly tenures = new Map<string, number>();
  private tenured = 0;
  private readonly remote = new Map<string, { home: Home; until: number }>();
  /** Lease commands, numbered as sent (one connection: Redis carries them out in that order). */
  private sent = 0;
  /** Each board's last give-up: its command's number, and when. */
  private readonly givenUp = new Map<string, { command: number; at: number }>();
  /** Every home given up, none taken again: the node drains. */
  private draining = false;
  /** Closed: what a take answers after is let go at once. */
  private closed = false;
  private self: NodeAddress | null = null;
  private value = '';
  private renewer: NodeJS.Timeout | null = null;
  private active: (boardId: string) => boolean = () => false;
  private readonly clock: () => number;
  private readonly leaseMs: number;

  constructor(
    url: string,
    private readonly options: RedisHomesOptions = {},
  ) {
    this.clock = options.clock ?? Date.now;
    this.leaseMs = options.leaseMs ?? HOME_LEASE_MS;
    // Fail fast: a command must not wait for Redis (without it, no home can be learned, and the command answers 503 BOARD_BUSY at once).
    this.redis = new Redis(url, {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      commandTimeout: COMMAND_TIMEOUT_MS,
    }) as Scripted;
    this.redis.on('error', () => undefined);
    this.redis.defineCommand('homeTake', { numberOfKeys: 1, lua: TAKE });
    this.redis.defineCommand('homeRenew', { numberOfKeys: 1, lua: RENEW });
    this.redis.defineCommand('homeGiveUp', { numberOfKeys: 1, lua: GIVE_UP });
  }

  start(self: NodeAddress, active: (boardId: string) => boolean): void {
    this.self = self;
    this.active = active;
    this.value = `${self.node} ${self.url}`;
    this.renewer = setInterval(() => void this.renewAll(), Math.floor(this.leaseMs / 3));
    this.renewer.unref();
  }

  tenure(boardId: string): number | null {
    const until = this.held.get(boardId);
    return until !== undefined && until > this.clock() ? (this.tenures.get(boardId) ?? null) : null;
  }

  async homeOf(boardId: string, options: HomeOptions = {}): Promise<Home> {
    const now = this.clock();
    const heldUntil = this.held.get(boardId);
    if (heldUntil !== undefined && heldUntil > now) return SELF;
    const known = this.remote.get(boardId);
    if (known && known.until > now) return known.home;
    if (!this.self) throw new Error('homes: not started');
    const takes = !this.draining || options.takeWhileDraining === true;
    if (!takes) return this.elsewhere(boardId, await this.redis.get(KEY + boardId), now);
    const take = ++this.sent;
    const holder = await this.redis.homeTake(KEY + boardId, this.value, this.leaseMs);
    if (holder === this.value) {
      if (this.closed || (this.draining && options.takeWhileDraining !== true)) {
        void this.giveUp(boardId).catch(() => undefined); // taken as the node began to drain: let go at once
        throw new HomesGivenUp(boardId);
      }
      // Given up behind the take (its actor passivated, or the node began to drain): Redis holds no lease for it now.
      if (this.givenUpAfter(boardId, take)) return this.homeOf(boardId, options);
      if (heldUntil === undefined) this.options.onChange?.(boardId, 'taken');
      this.hold(boardId, now, heldUntil);
      this.remote.delete(boardId);
      return SELF;
    }
    if (this.drop(boardId)) this.options.onChange?.(boardId, 'lost');
    return this.elsewhere(boardId, holder, now);
  }

  /** The home another node holds (kept for a while), as Redis named it; none while this node drains. */
  private elsewhere(boardId: string, holder: string | null, now: number): Home {
    if (holder === null || holder === this.value) throw new HomesGivenUp(boardId);
    const space = holder.indexOf(' ');
    const home: Home = { self: false, node: holder.slice(0, space), url: holder.slice(space + 1) };
    this.remote.set(boardId, { home, until: now + REMOTE_KEPT_MS });
    return home;
  }

  /** Whether the board's lease was given up by a command sent after `command`. */
  private givenUpAfter(boardId: string, command: number): boolean {
    return (this.givenUp.get(boardId)?.command ?? 0) > command;
  }

  private giveUp(boardId: string): Promise<number> {
    this.givenUp.set(boardId, { command: ++this.sent, at: this.clock() });
    return this.redis.homeGiveUp(KEY + boardId, this.value);
  }

  /** The lease is ours from `sent` on (when the take or renewal went out); a lease that lapsed here before (`until`) starts a new tenure. */
  private hold(boardId: string, sent: number, until: number | undefined): void {
    if (until === undefined || until <= sent) this.tenures.set(boardId, ++this.tenured);
    this.held.set(boardId, sent + this.leaseMs - HOME_MARGIN_MS);
  }

  private drop(boardId: string): boolean {
    this.tenures.delete(boardId);
    return this.held.delete(boardId);
  }

  forget(boardId: string): void {
    this.remote.delete(boardId);
  }

  async giveUpAll(deciding: (boardId: string) => boolean = () => false): Promise<void> {
    this.draining = true;
    // From now on a home is kept only while commands are being decided on it, then given up (each renewal round).
    this.active = deciding;
    await this.renewAll();
  }

  async close(): Promise<void> {
    this.draining = this.closed = true;
    if (this.renewer) clearInterval(this.renewer);
    const boards = [...this.held.keys()];
    this.held.clear();
    this.tenures.clear();
    await Promise.allSettled(boards.map((b) => this.giveUp(b)));
    this.redis.disconnect();
  }

  /** Renews the homes whose actors are active, gives up the others; a lease found taken by another node is dropped. */
  private async renewAll(): Promise<void> {
    const started = this.clock();
    await Promise.allSettled(
      [...this.held.keys()].map(async (boardId) => {
        if (!this.active(boardId)) {
          this.drop(boardId);
          this.options.onChange?.(boardId, 'given up');
          await this.giveUp(boardId);
          return;
        }
        const until = this.held.get(boardId);
        const renewal = ++this.sent;
        const renewed = await this.redis.homeRenew(KEY + boardId, this.value, this.leaseMs);
        // Given up behind the renewal (its actor passivated, its last command decided while the node drains, or the node closed): not ours now.
        if (this.givenUpAfter(boardId, renewal)) return;
        if (renewed) this.hold(boardId, started, until);
        else if (this.drop(boardId)) this.options.onChange?.(boardId, 'lost');
      }),
    );
    if (this.remote.size > 10_000)
      for (const [id, { until }] of this.remote) if (until <= started) this.remote.delete(id);
    for (const [id, { at }] of this.givenUp) if (at <= started - GIVEN_UP_KEPT_MS) this.givenUp.delete(id);
  }
}
