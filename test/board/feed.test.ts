// The board's feed over a real embedded store's log: where a subscription starts, and a replay
// that hands over every event after a seq once and in order, waits out a hole in the log (the
// board copies its last commit meanwhile), and gives up on one that never fills, within its bound.
import { describe, expect, it } from 'vitest';
import type { Identity } from '../../src/auth/identity.js';
import { BoardFeed, type BoardFeedDeps } from '../../src/board/feed/feed.js';
import { lookAt } from '../../src/board/feed/look.js';
import { LOG_GAP_WAITS, REPLAY_PAGE } from '../../src/board/feed/replay.js';
import type { BoardRecord, EventRecord } from '../../store/ports/store.js';
import { useStore } from '../support/stores.js';
import { unique } from '../support/temp.js';

const used = useStore();

const event = (boardId: string, seq: number): EventRecord =>
  ({
    _id: `${boardId}:${seq}`,
    version: 1,
    boardId,
    seq,
    type: 'item.updated',
    actor: 'agent:a',
    workId: 'W-1',
    at: seq,
    data: {},
  }) as EventRecord;

/** A board whose header says `lastSeq`, with `seqs` in its log. */
async function board(lastSeq: number, seqs: number[]): Promise<string> {
  const boardId = unique('board');
  await used.store.boards.insert({ _id: boardId, version: 1, lastSeq } as unknown as BoardRecord);
  if (seqs.length) await used.store.events.insertMissing(seqs.map((seq) => event(boardId, seq)));
  return boardId;
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

function feed(deps: Partial<BoardFeedDeps> = {}): BoardFeed {
  return new BoardFeed({
    store: used.store,
    readBoard: () => Promise.reject(new Error('no snapshots here')),
    syncLog: async () => undefined,
    clock: () => Date.now(),
    pause: async () => undefined,
    ...deps,
  });
}

/** Replays after `from`, collecting the seqs handed over. */
async function replayed(f: BoardFeed, boardId: string, from: number, stopAt = Infinity) {
  const seqs: number[] = [];
  const end = await f.replay(
    boardId,
    from,
    (e) => {
      if (e.seq > stopAt) return false;
      seqs.push(e.seq);
      return Promise.resolve(true); // a taker that waits for its reader now and then
    },
    () => true,
  );
  return { end, seqs };
}

describe('where a subscription starts', () => {
  it('starts after since while the log holds what follows it, at the head otherwise, and asks for a resync once it does not', async () => {
    const boardId = await board(10, range(4, 10)); // the log was trimmed below 4
    const f = feed();
    expect(await f.startAfter(boardId, undefined)).toEqual({ seq: 10, head: 10, resync: false });
    expect(await f.startAfter(boardId, 12)).toEqual({ seq: 10, head: 10, resync: false });
    expect(await f.startAfter(boardId, 3)).toEqual({ seq: 3, head: 10, resync: false });
    expect(await f.startAfter(boardId, 2)).toEqual({ seq: 10, head: 10, resync: true });
    expect(await f.startAfter(await board(0, []), 0)).toEqual({ seq: 0, head: 0, resync: false });
  });

  it('has the board copy its last commit to the log before it reads where the log starts', async () => {
    const boardId = await board(3, []);
    const f = feed({ syncLog: () => used.store.events.insertMissing(range(1, 3).map((seq) => event(boardId, seq))) });
    expect(await f.startAfter(boardId, 0)).toEqual({ seq: 0, head: 3, resync: false });
  });
});

describe('a replay', () => {
  it('hands over every event after the seq once and in order, page after page', async () => {
    const boardId = await board(REPLAY_PAGE + 20, range(1, REPLAY_PAGE + 20));
    const { end, seqs } = await replayed(feed(), boardId, 7);
    expect(end).toBe('done');
    expect(seqs).toEqual(range(8, REPLAY_PAGE + 20));
  });

  it('waits out a hole until the board has copied the missing events, skipping none', async () => {
    const boardId = await board(6, [1, 2, 5, 6]);
    let syncs = 0;
    const syncLog = async () => {
      if (++syncs === 3) await used.store.events.insertMissing([event(boardId, 3), event(boardId, 4)]);
    };
    const { end, seqs } = await replayed(feed({ syncLog }), boardId, 0);
    expect(end).toBe('done');
    expect(seqs).toEqual([1, 2, 3, 4, 5, 6]);
    expect(syncs).toBe(3);
  });

  it('gives up on a hole that never fills after LOG_GAP_WAITS waits, having handed over what came before it', async () => {
    const boardId = await board(4, [1, 2, 4]);
    const pauses: number[] = [];
    const f = feed({ pause: async (ms) => void pauses.push(ms) });
    const { end, seqs } = await replayed(f, boardId, 0);
    expect(end).toBe('incomplete');
    expect(seqs).toEqual([1, 2]);
    expect(pauses).toHaveLength(LOG_GAP_WAITS);
  });

  it('stops when its taker does, and when it is no longer wanted', async () => {
    const boardId = await board(5, range(1, 5));
    expect(await replayed(feed(), boardId, 0, 3)).toEqual({ end: 'stopped', seqs: [1, 2, 3] });
    expect(
      await feed().replay(
        boardId,
        0,
        () => true,
        () => false,
      ),
    ).toBe('stopped');
  });
});

describe('who reads what', () => {
  const session: Identity = { kind: 'session', principal: 'user:u', accountId: 'a', sessionId: 's' };
  const resource = (resources: string[]): Identity => ({
    kind: 'token',
    principal: 'agent:r',
    accountId: 'a',
    tokenId: 't',
    agentId: 'r',
    scope: 'resource',
    prefix: 'p',
    boardId: 'b',
    role: 'member',
    resources,
  });

  it('refuses the first read a view takes nothing of, as REST and sockets both ask', () => {
    expect(lookAt(session, 'viewer', ['items', 'roster'])).toMatchObject({ whole: true, refused: undefined });
    expect(lookAt(resource(['W-1']), 'member', ['items', 'roster'])).toMatchObject({ whole: false, refused: 'roster' });
    expect(lookAt(resource(['status']), 'member', ['items', 'roster'])).toMatchObject({ refused: 'items' });
    expect(lookAt(resource(['W-1']), 'member', ['items'], 'W-2').refused).toBe('items');
  });
});
