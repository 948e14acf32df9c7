// The board at a glance (GET /api/status): a pure snapshot of the committed board, with the two
// facts that live outside it read by the caller: how many agents are online, and when the board
// last changed.
import { chain, countsByState, liveLeases, priorityChain, stalled, type Board } from '../../machines/board.js';
import { retiredSpecLinks } from '../../machines/doctrine-commands.js';
import type { BoardRecord, Store } from '../../store/ports/store.js';
import { pauseViewOf } from './pause.js';

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
  const { board } = input;
  return {
    projectId: input.projectId,
    name: input.name,
    version: input.record.version,
    ...pauseViewOf(board),
    lastSeq: input.record.lastSeq,
    counts: countsByState(board),
    chainHead: priorityChain(board, 'ready', CHAIN_HEAD_SIZE).map((i) => ({ workId: i.workId, title: i.title, priority: i.priority })),
    leases: liveLeases(board).map((i) => {
      const lease = i.life.lease!;
      return { workId: i.workId, holder: lease.holder, purpose: lease.purpose, fencingToken: lease.fencingToken, expiresAt: iso(lease.expiresAt) };
    }),
    awaitingVerification: [...chain(board, 'awaiting_verify')].map((i) => i.workId),
    stalled: stalled(board),
    retiredSpecLinks: retiredSpecLinks(board),
    agentsOnline: input.agentsOnline,
    lastActivityAt: input.lastActivityAt === null ? null : iso(input.lastActivityAt),
  };
}

/**
 * When the board last changed: its newest event (seq `lastSeq`), read from the last commit's
 * outbox the actor holds, else from the log; null on a board with no events yet.
 */
export async function lastActivityOf(store: Pick<Store, 'events'>, boardId: string, record: Pick<BoardRecord, 'lastSeq' | 'outbox'>): Promise<number | null> {
  if (record.lastSeq === 0) return null;
  const held = record.outbox?.at(-1);
  if (held?.seq === record.lastSeq) return held.at;
  return (await store.events.get(`${boardId}:${record.lastSeq}`))?.at ?? null;
}
