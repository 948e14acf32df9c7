// The board at a glance (GET /api/status): a pure snapshot of the committed board, with the two
// facts that live outside it read by the caller: how many agents are online, and when the board
// last changed.
import type { Board } from '../../machines/board.js';
import { chain, countsByState, liveLeases, priorityChain, stalled } from '../../machines/board-queries.js';
import { retiredSpecLinks } from '../../machines/doctrine-commands.js';
import type { BoardRecord, Store } from '../../store/ports/store.js';
import { pauseViewOf } from './pause.js';
import { statusAsSeen, type BoardView } from './visibility.js';
import type { Maybe } from '../../store/ports/maybe.js';
import { newestOf, type Newest } from '../../actors/board-actor.js';

export const CHAIN_HEAD_SIZE = 10;

export interface StatusInput {
  projectId: string;
  name: string;
  board: Board;
  record: Pick<BoardRecord, 'version' | 'lastSeq'>;
  agentsOnline: number;
  /** When the board's newest event was appended, or null before the first. */
  lastActivityAt: number | null;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function statusOf(input: StatusInput) {
  return {
    projectId: input.projectId,
    name: input.name,
    ...versionView(input.board, input.record),
    agentsOnline: input.agentsOnline,
    lastActivityAt: input.lastActivityAt === null ? null : iso(input.lastActivityAt),
  };
}

/** What the snapshot says that follows from one committed version alone. */
function versionView(board: Board, record: StatusInput['record']) {
  return {
    version: record.version,
    ...pauseViewOf(board),
    lastSeq: record.lastSeq,
    counts: countsByState(board),
    chainHead: priorityChain(board, 'ready', CHAIN_HEAD_SIZE).map((i) => ({
      workId: i.workId,
      title: i.title,
      priority: i.priority,
    })),
    leases: liveLeases(board).map((i) => {
      const lease = i.life.lease!;
      return {
        workId: i.workId,
        holder: lease.holder,
        purpose: lease.purpose,
        fencingToken: lease.fencingToken,
        expiresAt: iso(lease.expiresAt),
      };
    }),
    awaitingVerification: [...chain(board, 'awaiting_verify')].map((i) => i.workId),
    stalled: stalled(board),
    retiredSpecLinks: retiredSpecLinks(board),
  };
}

/**
 * GET /api/status's body as `view` may see it (visibility.ts statusAsSeen): the whole board's,
 * kept per record (statusJson), or one cut to a resource token's items, made for the request.
 */
export function statusJsonFor(view: BoardView, input: StatusInput): Buffer {
  if (view.items === null) return statusJson(input);
  return Buffer.from(JSON.stringify(statusAsSeen(view, statusOf(input))));
}

/** A record's body as last sent, with the parts it was built from. */
interface Sent {
  /**
   * Where versionView's JSON members (no braces) lie in `body`, in bytes: the record's own part,
   * the same for every request, read back from the body when another part changes rather than
   * kept a second time beside it (a node holds one of these for every board read lately).
   */
  from: number;
  to: number;
  projectId: string;
  name: string;
  agentsOnline: number;
  lastActivityAt: number | null;
  body: Buffer;
}

/**
 * By committed record: a board actor hands out one record per version, so each version's part is
 * built once, on the first read after its commit, and the whole body again only when the name, the
 * agents online or the last activity differ from the request before.
 */
const sent = new WeakMap<object, Sent>();

/**
 * GET /api/status's body as UTF-8 JSON. Bytes, not a string: uWS sends them as they are, where a
 * string would be flattened, measured and encoded for every response. A fleet polling a quiet
 * board is sent the same bytes each time.
 */
export function statusJson(input: StatusInput): Buffer {
  const last = sent.get(input.record);
  if (
    last &&
    last.projectId === input.projectId &&
    last.name === input.name &&
    last.agentsOnline === input.agentsOnline &&
    last.lastActivityAt === input.lastActivityAt
  )
    return last.body;
  const members = last
    ? last.body.toString('utf8', last.from, last.to)
    : JSON.stringify(versionView(input.board, input.record)).slice(1, -1);
  const head = `{"projectId":${JSON.stringify(input.projectId)},"name":${JSON.stringify(input.name)},`;
  const json = `${head}${members},"agentsOnline":${input.agentsOnline},"lastActivityAt":${activityJson(input.lastActivityAt)}}`;
  // Its own memory, not a slice of Buffer's shared pool: a kept slice would keep the pool's whole 8 KB.
  const body = Buffer.allocUnsafeSlow(Buffer.byteLength(json));
  body.write(json);
  const from = Buffer.byteLength(head);
  sent.set(input.record, {
    from,
    to: from + Buffer.byteLength(members),
    projectId: input.projectId,
    name: input.name,
    agentsOnline: input.agentsOnline,
    lastActivityAt: input.lastActivityAt,
    body,
  });
  return body;
}

/** The last activity as JSON, kept for the next request: it is the same until the board changes, and formatting a date costs more than the rest of the body. */
let lastActivityJson = { at: null as number | null, json: 'null' };
function activityJson(at: number | null): string {
  if (at !== lastActivityJson.at) lastActivityJson = { at, json: at === null ? 'null' : `"${iso(at)}"` };
  return lastActivityJson.json;
}

/**
 * When the board last changed: its newest event (seq `lastSeq`), as the actor holds it from the
 * last commit's outbox, else from the log; null on a board with no events yet.
 */
export function lastActivityOf(
  store: Pick<Store, 'events'>,
  boardId: string,
  committed: { record: Pick<BoardRecord, 'lastSeq' | 'outbox'>; newest?: Newest | null },
): Maybe<number | null> {
  const { record } = committed;
  if (record.lastSeq === 0) return null;
  const held = newestOf(committed);
  if (held?.seq === record.lastSeq) return held.at;
  const known = lastActivity.get(record);
  if (known !== undefined) return known;
  return store.events.get(`${boardId}:${record.lastSeq}`).then((event) => {
    const at = event?.at ?? null;
    if (at !== null) lastActivity.set(record, at);
    return at;
  });
}

/** What the log said of a record's newest event, read once per record (the outbox had moved on). */
const lastActivity = new WeakMap<object, number>();
