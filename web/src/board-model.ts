// What the board page holds of one board, kept current by its feed alone: every card (from the
// snapshot, then each event's patch), the columns in their order, the roster with each heartbeat,
// shouts and activity. Changes are applied at once and shown at most once per frame, and only the
// columns that changed are sorted again, so a busy fleet on a large board stays smooth. The names
// the feed carries (a roster entry's `name`, an event's `actorName`) are kept for the session
// (session.ts heardNames), so the page names other accounts' agents by their tokens' names.
import { batch, signal } from '@preact/signals';
import { client } from './api.js';
import { chainOrder, seqOf } from './chain.js';
import { BoardFeed, type BoardEvent, type Shout, type Snapshot } from './live.js';
import { hearNames } from './session.js';
import type { Card, ItemPatch, Presence } from './types.js';

export const STATES = [
  'pending',
  'ready',
  'claimed',
  'awaiting_verify',
  'verifying',
  'done',
  'blocked',
  'cancelled',
] as const;
export type State = (typeof STATES)[number];
const ACTIVITY_KEPT = 100;
const SHOUT_PAGE = 50;
/** What arrives is shown together, at most this often: a fleet's hundreds of events a second cost a few renders. */
const FLUSH_MS = 100;

const newestFirst = (a: Card, b: Card) => b.updatedAt.localeCompare(a.updatedAt) || seqOf(b.workId) - seqOf(a.workId);
const soonestExpiry = (a: Card, b: Card) =>
  (a.lease?.expiresAt ?? '').localeCompare(b.lease?.expiresAt ?? '') || chainOrder(a, b);
/** Each column's most relevant card first: the chain where work is pulled from, the lease running out soonest while held, the newest where work has ended. */
export const COLUMN_ORDER: Record<State, (a: Card, b: Card) => number> = {
  pending: chainOrder,
  ready: chainOrder,
  claimed: soonestExpiry,
  awaiting_verify: chainOrder,
  verifying: soonestExpiry,
  done: newestFirst,
  blocked: newestFirst,
  cancelled: newestFirst,
};

/** What the socket adds to a heartbeat and an event: the name the server lets this reader see, when it has read it. */
type Named = Presence & { name?: string };
type NamedEvent = BoardEvent & { actorName?: string };

export interface Agent extends Partial<Presence> {
  principal: string;
  online: boolean;
  leases: string[];
  /** When the board's events last showed it acting (a claim, a submit, a comment...), if they have. */
  actedAt?: string;
  /** The item its last heartbeat named, when it no longer holds that item's lease. */
  wasOn?: string;
}

/** Principals that are agents (a person's own moves are not an agent's). */
const isAgent = (principal: string) => principal.startsWith('agent:');

export class BoardModel {
  readonly name = signal<string | null>(null);
  /** Each state's cards in column order (a column's array is replaced only when it changed). */
  readonly columns = signal<ReadonlyMap<State, readonly Card[]>>(new Map(STATES.map((s) => [s, []])));
  readonly loaded = signal(false);
  readonly presence = signal<ReadonlyMap<string, Presence>>(new Map());
  /** When each agent was last seen acting in the board's events (no heartbeat needed), newest kept. */
  readonly acted = signal<ReadonlyMap<string, string>>(new Map());
  readonly onlineWithinMs = signal(120_000);
  /** Newest first. */
  readonly shouts = signal<Shout[]>([]);
  /** Whether older shouts than the oldest held may exist. */
  readonly moreShouts = signal(false);
  readonly activity = signal<BoardEvent[]>([]);
  readonly error = signal<unknown>(null);
  /** The last board.rewound heard while the page is open, for its notice. */
  readonly rewound = signal<BoardEvent | null>(null);
  /** The last event's seq the page shows. */
  readonly seq = signal<number | null>(null);
  readonly feed: BoardFeed;
  private cards = new Map<string, Card>();
  private byState = new Map<State, Map<string, Card>>(STATES.map((s) => [s, new Map()]));
  private dirty = new Set<State>();
  /** Events and heartbeats heard since the last flush. */
  private heardEvents: BoardEvent[] = [];
  private beats = new Map<string, Presence>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private listeners = new Set<(e: BoardEvent | null) => void>();

  constructor(readonly projectId: string) {
    this.feed = new BoardFeed(
      projectId,
      {
        snapshot: (s) => this.load(s),
        event: (e) => this.heard(e),
        shout: (s) => this.heardShout(s),
        roster: (a, within) => this.roster(a, within),
        presence: (a) => this.beat(a),
      },
      () => this.shouts.value[0]?.id ?? null,
    );
  }

  stop(): void {
    this.feed.stop();
    if (this.timer) clearTimeout(this.timer);
  }

  /**
   * Hears every event as it arrives, and `null` when the board was loaded again (events may have
   * been missed: a resync, a gap, a rewind), for the sections that keep more than the cards
   * (doctrine, spec). Returns the way to stop.
   */
  listen(fn: (e: BoardEvent | null) => void): () => void {
    this.listeners.add(fn);
    return () => void this.listeners.delete(fn);
  }

  card(workId: string): Card | undefined {
    return this.cards.get(workId);
  }

  /** Every card, for the dependency graph. */
  all(): Card[] {
    return [...this.cards.values()];
  }

  private load(s: Snapshot): void {
    this.cards = new Map(s.cards.map((c) => [c.workId, c]));
    this.byState = new Map(STATES.map((st) => [st, new Map()]));
    for (const c of s.cards) this.byState.get(c.state as State)?.set(c.workId, c);
    for (const st of STATES) this.dirty.add(st);
    this.heardEvents.push(...[...s.recent].reverse());
    hearNames(s.recent.map((e: NamedEvent) => [e.actor, e.actorName] as const));
    batch(() => {
      this.name.value = s.name;
      this.mergeShouts(s.shouts);
      if (this.shouts.value.length >= SHOUT_PAGE) this.moreShouts.value = true;
      this.error.value = null;
      this.flush();
      this.loaded.value = true;
    });
    if (this.feed.loads.value > 1) for (const fn of this.listeners) fn(null);
  }

  /** An event: into the stream, and its items' patches onto the cards. */
  private heard(e: NamedEvent): void {
    hearNames([[e.actor, e.actorName]]);
    if (e.seq !== null) this.heardEvents.push(e);
    for (const fn of this.listeners) fn(e);
    if (e.type === 'board.rewound') {
      // A rewind removes and restores items without an event each: load the board again.
      this.rewound.value = e;
      return this.feed.reload();
    }
    const { item, items } = e.data as { item?: ItemPatch; items?: ItemPatch[] };
    if (item) this.apply(item);
    for (const p of items ?? []) this.apply(p);
    this.schedule();
  }

  /** A patch over the card held at an older version; one for a card never seen must be a whole item, else the board is loaded again. */
  private apply(patch: ItemPatch): void {
    const held = this.cards.get(patch.workId);
    if (held && held.version >= patch.version) return;
    if (!held && patch.title === undefined) return this.feed.reload();
    // (A new item's patch is the whole item, its description too: kept, as a card has room for it.)
    const card = { ...held, ...patch } as Card;
    this.cards.set(card.workId, card);
    if (held && held.state !== card.state) {
      this.byState.get(held.state as State)?.delete(card.workId);
      this.dirty.add(held.state as State);
    }
    this.byState.get(card.state as State)?.set(card.workId, card);
    this.dirty.add(card.state as State);
  }

  private schedule(): void {
    this.timer ??= setTimeout(() => batch(() => this.flush()), FLUSH_MS);
  }

  /** Shows what was heard since the last flush: the columns that changed, the activity, the heartbeats. */
  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.dirty.size) {
      const next = new Map(this.columns.value);
      for (const st of this.dirty) next.set(st, [...this.byState.get(st)!.values()].sort(COLUMN_ORDER[st]));
      this.dirty.clear();
      this.columns.value = next;
    }
    if (this.heardEvents.length) {
      let acted: Map<string, string> | null = null;
      for (const e of this.heardEvents) {
        if (!isAgent(e.actor) || (this.acted.value.get(e.actor) ?? '') >= e.at) continue;
        acted ??= new Map(this.acted.value);
        if ((acted.get(e.actor) ?? '') < e.at) acted.set(e.actor, e.at);
      }
      if (acted) this.acted.value = acted;
      // Newest first, each seq once (a reload's recent events may repeat what was shown).
      const bySeq = new Map([...this.activity.value, ...this.heardEvents].map((e) => [e.seq, e]));
      this.activity.value = [...bySeq.values()].sort((a, b) => (b.seq ?? 0) - (a.seq ?? 0)).slice(0, ACTIVITY_KEPT);
      this.heardEvents = [];
    }
    if (this.beats.size) {
      const next = new Map(this.presence.value);
      for (const [principal, p] of this.beats) next.set(principal, p);
      this.beats.clear();
      this.presence.value = next;
    }
    this.seq.value = this.feed.seq;
  }

  private heardShout(s: Shout): void {
    this.mergeShouts([s]);
  }

  private mergeShouts(more: Shout[]): void {
    const byId = new Map(this.shouts.value.map((s) => [s.id, s]));
    for (const s of more) byId.set(s.id, s);
    // Shout ids sort in posting order.
    this.shouts.value = [...byId.values()].sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  }

  /** Older shouts, when the person scrolls the feed to its end (their own read: a page at a time). */
  async olderShouts(): Promise<void> {
    const oldest = this.shouts.value.at(-1)?.id;
    if (!oldest || !this.moreShouts.value) return;
    this.moreShouts.value = false;
    try {
      const page = await client.get('/api/shouts', {
        params: { query: { projectId: this.projectId, before: oldest, limit: String(SHOUT_PAGE) } },
      });
      this.mergeShouts(page.shouts);
      this.moreShouts.value = page.next !== null;
    } catch (e) {
      this.error.value = e;
      this.moreShouts.value = true;
    }
  }

  private roster(agents: Named[], within: number): void {
    hearNames(agents.map((a) => [a.principal, a.name] as const));
    this.beats.clear();
    batch(() => {
      this.onlineWithinMs.value = within;
      this.presence.value = new Map(agents.map((a) => [a.principal, a]));
    });
  }

  private beat(agent: Named): void {
    hearNames([[agent.principal, agent.name]]);
    this.beats.set(agent.principal, agent);
    this.schedule();
  }

  /**
   * The roster: every agent seen, by heartbeat or acting in the board's events (most recently
   * first; online when either is recent), then lease holders never seen, with the items each holds.
   * A heartbeat's item is dropped once the agent no longer holds its lease (the heartbeat is older).
   */
  agents(now: number): Agent[] {
    const leases = new Map<string, string[]>();
    for (const st of ['claimed', 'verifying'] as const) {
      for (const c of this.columns.value.get(st) ?? [])
        if (c.lease) leases.set(c.lease.holder, [...(leases.get(c.lease.holder) ?? []), c.workId]);
    }
    const principals = new Set([...this.presence.value.keys(), ...this.acted.value.keys()]);
    const latest = (a: Agent) => [a.lastSeenAt ?? '', a.actedAt ?? ''].sort()[1]!;
    const agents: Agent[] = [...principals].map((principal) => {
      const p = this.presence.value.get(principal);
      const actedAt = this.acted.value.get(principal);
      const held = leases.get(principal) ?? [];
      const card = p?.workId ? this.cards.get(p.workId) : undefined;
      const ended = card !== undefined && !held.includes(card.workId);
      const agent: Agent = { ...p, principal, online: false, leases: held, ...(actedAt ? { actedAt } : {}) };
      if (ended) Object.assign(agent, { workId: null, wasOn: card.workId });
      agent.online = now - Date.parse(latest(agent)) < this.onlineWithinMs.value;
      return agent;
    });
    agents.sort((a, b) => latest(b).localeCompare(latest(a)));
    for (const [principal, held] of leases)
      if (!principals.has(principal)) agents.push({ principal, online: false, leases: held });
    return agents;
  }
}
