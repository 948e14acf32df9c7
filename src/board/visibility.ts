// What a principal may see of a board (DOMAIN.md "Token scopes"): the one rule REST reads and
// sockets both ask, for items, events and their patches, shouts, the roster and snapshots.
//
// Everyone on a board sees all of it but direct shouts between others, which only admins, owners
// and platform operators see. A resource token sees the parts its operation groups name whole
// (`items` or `history`: every item and the log; `shouts`; `doctrine`; `spec`; `status`: the
// roster), and of the rest only the items it names: their events and patches, board-level events
// that carry no other item's data, and shouts with no item or about one it sees (seesItem).
//
// A lease is its holder's, whatever it sees of the item: a `claims` token may claim any item (the
// grant names it), and is told of its lease's events (granted, renewed, released, expired, revoked)
// as it was told of the grant, without the item's patch where it does not see the item otherwise.
// And the item it holds is its to read while it holds it (an agent reads what it works on: title,
// description, spec, and hears the shouts about it): its view takes in the items whose lease it
// holds (`held`), as the board holds them when the view is made (machines/board-queries.ts heldBy).
// A subscription's are those of the board it starts at (heldAt): the events up to there, a replay's
// included, are judged by them as REST judges the log by the leases held now, and only the live
// events after move them (followLease): a grant replayed reopens nothing.
import type { Identity, Role } from '../auth/identity.js';

/** The rule for the OpenAPI document, where REST reads and the socket describe what they answer. */
export const RESOURCE_TOKEN_VIEW =
  'A resource token naming work ids sees those items, their events and patches, board-level events without other items’ data (a reorder’s order and patches cut to its items, a rewind of a slice whose root it does not cover without `slice` and with the point’s id alone; doctrine and spec events only with the doctrine or spec group), shouts with no workId or about its items, and direct shouts to or from it; nothing of another item but its own leases’ events (lease.*, naming it the holder), without the item’s patch. Its groups open their part whole: items or history every item and event, shouts every shout, status the roster and GET /api/status (their item lists, the items agents hold and work on cut to the items it sees and its own leases, and another agent’s note emptied unless it sees every item that agent works on and holds); claims lets it claim (renew, release, submit, verify) any item, and read an item (its fields, events, patches and the shouts about it) while it holds the item’s lease. Reads it may take nothing of answer 403 PROJECT_SCOPE_DENIED.';

/** What one principal may see of one board; made once per subscription or request. */
export interface BoardView {
  principal: string;
  /** Sees every direct shout: admins, owners and platform operators. */
  allDirect: boolean;
  /** The items whose data it may see; null for every item. */
  items: ReadonlySet<string> | null;
  /** It hears the shouts about every item (else about those it sees: hearsItem). */
  shouts: boolean;
  /** Doctrine entries' and spec clauses' events. */
  doctrine: boolean;
  spec: boolean;
  /** The roster (who is seen on the board, what they hold). */
  roster: boolean;
  /** The items whose lease the principal holds, seen whole while held (beside `items`; a subscription's follows its lease events). */
  held: Set<string>;
}

const WORK_ID = /^W-\d+$/;

/**
 * The `held` of every view that sees every item: shared, and never changed (followLease changes only
 * a view of some items). A Set per view would cost each idle socket about 100 bytes.
 */
const NONE_HELD: Set<string> = new Set();

/**
 * The view of `identity` acting with `role` on a board (`operator`: a platform operator watching
 * it), holding the leases on the items of `held`.
 */
export function boardViewOf(identity: Identity, role: Role | 'operator', held: Iterable<string> = []): BoardView {
  const allDirect = role === 'admin' || role === 'owner' || role === 'operator';
  const resources = identity.kind === 'token' && identity.scope === 'resource' ? (identity.resources ?? []) : null;
  if (resources === null)
    return {
      principal: identity.principal,
      allDirect,
      items: null,
      shouts: true,
      doctrine: true,
      spec: true,
      roster: true,
      held: NONE_HELD,
    };
  const named = new Set(resources);
  const own = new Set(resources.filter((r) => WORK_ID.test(r)));
  const items = named.has('items') || named.has('history') ? null : own;
  return {
    principal: identity.principal,
    allDirect,
    items,
    shouts: items === null || named.has('shouts'),
    doctrine: named.has('doctrine'),
    spec: named.has('spec'),
    roster: named.has('status'),
    held: items === null ? NONE_HELD : new Set(held),
  };
}

/** The item lists of the board's status snapshot (GET /api/status), as statusOf makes them. */
export interface StatusLists {
  chainHead: { workId: string }[];
  leases: { workId: string; holder: string }[];
  awaitingVerification: string[];
  stalled: string[];
  retiredSpecLinks: { workId: string }[];
}

/**
 * The status snapshot as the view may see it: its lists cut to the items it sees (their titles,
 * states, holders are none of its business otherwise), its own leases kept (a lease is its
 * holder's). Counts by state are numbers, no item's data, and stay.
 */
export function statusAsSeen<S extends StatusLists>(view: BoardView, status: S): S {
  if (view.items === null) return status;
  const sees = (workId: string) => seesItem(view, workId);
  return {
    ...status,
    chainHead: status.chainHead.filter((i) => sees(i.workId)),
    leases: status.leases.filter((l) => sees(l.workId) || l.holder === view.principal),
    awaitingVerification: status.awaitingVerification.filter(sees),
    stalled: status.stalled.filter(sees),
    retiredSpecLinks: status.retiredSpecLinks.filter((l) => sees(l.workId)),
  };
}

/** One agent as the roster (GET /api/agents, the socket's roster and heartbeats) shows it. */
interface AgentSeen {
  principal: string;
  /** The item it says it works on (its heartbeat's). */
  workId: string | null;
  /** What it says of its work, in its own words (its heartbeat's); null for a holder never seen. */
  note: string | null;
  /** The items whose lease it holds (GET /api/agents only: the socket's reader passes them apart). */
  leases?: string[];
}

/**
 * An agent as the view may see it: the item it works on and those it holds (`holds`: its `leases`
 * where it lists them; null when they could not be read) cut to the items the view sees, as
 * statusAsSeen cuts the leases (an item's holder is that item's data); the view's own entry kept
 * whole (a lease is its holder's). Its note is free text about its work, which cannot be cut to
 * items: it is kept only where nothing of that work is cut (the item it works on and each it holds
 * seen, or none), else emptied, as a heartbeat that says nothing leaves it.
 */
export function agentAsSeen<A extends AgentSeen>(
  view: BoardView,
  agent: A,
  holds: readonly string[] | null = agent.leases ?? [],
): A {
  if (view.items === null || agent.principal === view.principal) return agent;
  const sees = (workId: string) => seesItem(view, workId);
  const worksOn = agent.workId !== null && sees(agent.workId) ? agent.workId : null;
  const allSeen = worksOn === agent.workId && holds !== null && holds.every(sees);
  return {
    ...agent,
    workId: worksOn,
    ...(agent.leases && { leases: agent.leases.filter(sees) }),
    ...(!allSeen && agent.note ? { note: '' } : {}),
  };
}

/**
 * The roster as the view may see it (agentAsSeen each); a holder never seen is on it only for its
 * leases, so one left none of them is left out.
 */
export function rosterAsSeen<A extends AgentSeen & { lastSeenAt: string | null }>(view: BoardView, roster: A[]): A[] {
  if (view.items === null) return roster;
  return roster.map((agent) => agentAsSeen(view, agent)).filter((a) => a.lastSeenAt !== null || a.leases?.length);
}

/**
 * The view holds the leases on the items of `held` now (a view of some items only: one of every
 * item takes them in anyway), in place of those it held: a subscription's, as of its start.
 */
export function heldAt(view: BoardView, held: Iterable<string>): void {
  if (view.items === null) return;
  view.held.clear();
  for (const workId of held) view.held.add(workId);
}

/**
 * A subscription's view follows its holder's leases as the board's events after its start (heldAt)
 * pass, in seq order: a lease granted (or renewed) opens the item to it, and its end (released, expired, revoked, or the
 * holder's submission or verdict) closes it after that event. Call it before the event is seen and
 * again after (`after`): the ending event itself is still the holder's to see.
 */
export function followLease(view: BoardView, event: BoardEvent, after: boolean): void {
  if (view.items === null || event.workId === null) return;
  const lease = event.data.lease as { holder?: unknown } | undefined;
  const mine = lease?.holder === view.principal;
  if (!after) {
    if (mine && (event.type === 'lease.granted' || event.type === 'lease.renewed')) view.held.add(event.workId);
    return;
  }
  const ended =
    (mine && (event.type === 'lease.released' || event.type === 'lease.expired' || event.type === 'lease.revoked')) ||
    ((event.type === 'item.submitted' || event.type === 'item.superseded') && event.data.by === view.principal) ||
    (event.type === 'item.verified' &&
      (event.data.verification as { by?: unknown } | undefined)?.by === view.principal);
  if (ended) view.held.delete(event.workId);
}

/** Whether the view takes in the whole board (every item, every event, every broadcast shout). */
export const seesWholeBoard = (view: BoardView): boolean =>
  view.items === null && view.shouts && view.doctrine && view.spec;

export const seesItem = (view: BoardView, workId: string): boolean =>
  view.items === null || view.items.has(workId) || view.held.has(workId);

/** Whether the view hears the shouts about an item: every item's, or those of the items it sees (its holder's included). */
export const hearsItem = (view: BoardView, workId: string): boolean => view.shouts || seesItem(view, workId);

/** Whether the view sees anything of the board's items at all (else reading them is refused, not answered empty). */
export const seesAnyItem = (view: BoardView): boolean =>
  view.items === null || view.items.size > 0 || view.held.size > 0;

/** What a read asks for: items, the event log, shouts, the roster. */
/** What a read asks for: items, the event log, shouts, the roster, or the doctrine and spec (their entries and events). */
export type BoardRead = 'items' | 'log' | 'shouts' | 'roster' | 'doctrine';

/**
 * Whether the view may ask for `what` at all (about `workId` when given): a read of what it sees
 * nothing of is refused rather than answered empty. What it gets is filtered by the rules here.
 */
export function mayRead(view: BoardView, what: BoardRead, workId?: string): boolean {
  if (what === 'roster') return view.roster;
  if (what === 'doctrine') return view.doctrine || view.spec;
  if (what === 'shouts') return workId === undefined || hearsItem(view, workId);
  return workId === undefined ? seesAnyItem(view) : seesItem(view, workId);
}

/**
 * A direct shout is seen by its sender and its addressee, whatever it is about, and by operators;
 * any other shout about an item by those who hear that item's.
 */
export function seesShout(view: BoardView, shout: { from: string; to: string | null; workId: string | null }): boolean {
  if (shout.to !== null && (shout.to === view.principal || shout.from === view.principal)) return true;
  if (shout.to !== null && !view.allDirect) return false;
  return shout.workId === null || hearsItem(view, shout.workId);
}

/**
 * Whether the event is one of a lease's own (lease.granted, renewed, released, expired, revoked)
 * and the view's principal holds that lease: a holder is told of its lease, whatever it sees of the item.
 */
const holdsLeaseOf = (view: BoardView, event: BoardEvent): boolean =>
  event.type.startsWith('lease.') && (event.data.lease as { holder?: unknown } | undefined)?.holder === view.principal;

/** An event as the log and sockets carry it. */
export interface BoardEvent {
  type: string;
  workId: string | null;
  data: Record<string, unknown>;
}

/**
 * The event as the view may see it: itself, a copy without what it may not see (a reorder's or
 * rewind's patches and order of other items, the root of a rewound slice it does not see), or
 * null when nothing of it is the view's.
 */
export function eventAsSeen<E extends BoardEvent>(view: BoardView, event: E): E | null {
  if (event.workId !== null) {
    if (seesItem(view, event.workId)) return event;
    if (!holdsLeaseOf(view, event)) return null;
    const { item: _patch, ...lease } = event.data; // its lease, not the item
    return { ...event, data: lease };
  }
  if (event.type.startsWith('doctrine.')) return view.doctrine ? event : null;
  if (event.type.startsWith('spec.')) return view.spec ? event : null;
  if (view.items === null) return event;
  const seen = event.type === 'board.rewound' ? rewoundAsSeen(view, event) : event;
  // Patches and an order are lists; a count under the same name (`board.imported`'s items) is no patch.
  const { items: listed, order: ranked, ...rest } = seen.data as { items?: unknown; order?: unknown };
  const items = Array.isArray(listed) ? (listed as { workId: string }[]) : undefined;
  const order = Array.isArray(ranked) ? (ranked as string[]) : undefined;
  if (items === undefined && order === undefined) return seen;
  const own = items?.filter((patch) => seesItem(view, patch.workId)) ?? [];
  const ownOrder = order?.filter((workId) => seesItem(view, workId)) ?? [];
  // A reorder is about the items it ranks: one that ranks none of the view's is none of its business.
  if (event.type === 'items.reordered' && own.length === 0 && ownOrder.length === 0) return null;
  return {
    ...seen,
    data: { ...rest, ...(items && own.length ? { items: own } : {}), ...(order && { order: ownOrder }) },
  };
}

/**
 * A rewound slice names its root (`slice`, and `~W-<n>` after the point's id), an item like any
 * other: a view that does not see it gets the rewind without the slice, the point's id alone.
 * The counts are numbers, no item's data, as `board.imported`'s are.
 */
function rewoundAsSeen<E extends BoardEvent>(view: BoardView, event: E): E {
  const { slice, restorePointId, ...rest } = event.data as { slice?: unknown; restorePointId?: unknown };
  if (typeof slice !== 'string' || seesItem(view, slice)) return event;
  const pointId = typeof restorePointId === 'string' ? restorePointId.split('~')[0] : restorePointId;
  return { ...event, data: { restorePointId: pointId, ...rest } };
}
