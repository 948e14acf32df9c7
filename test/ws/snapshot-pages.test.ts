// A snapshot's messages against the socket's backlog cap: a board within the documented limits
// (long titles of multi-byte characters, items' full patches in the newest events, long shouts)
// once made a last page over 1 MiB, which no socket may be sent: every snapshot subscribe to it
// closed 4008. Each message now fits beside what a paced sender lets wait, and the pages, joined,
// are the whole snapshot in order.
import { describe, expect, it } from 'vitest';
import { emptyBoard } from '../../machines/board.js';
import { createItems } from '../../machines/board-commands.js';
import { publicCard } from '../../machines/item-view.js';
import type { Snapshot } from '../../src/board/feed/snapshot.js';
import { snapshotMessages } from '../../src/ws/board-view.js';
import { REPLAY_BACKLOG } from '../../src/ws/delivery.js';
import { SNAPSHOT } from '../../src/ws/protocol.js';
import type { EventRecord, ShoutRecord } from '../../store/ports/store.js';
import { fields, run } from '../board/build.js';

/** The socket's backlog cap (src/http/uws/sockets.ts): no message may pass it. */
const CAP = 1024 * 1024;
const big = (n: number, prefix = '') => `${prefix} `.padEnd(n, '€');

/** 500 items with 200-character titles, their creations (4,000-character descriptions) as the newest events, 50 long shouts. */
function largeSnapshot(): Snapshot {
  const now = 1_000_000;
  const inputs = Array.from({ length: SNAPSHOT.pageSize }, (_, i) => fields(big(200, `${i}`)));
  const { board } = run(emptyBoard(), createItems(inputs, 'agent:a'), now);
  const items = [...board.items.values()];
  const recent = items.slice(0, SNAPSHOT.recent).map((item, i): EventRecord => ({
    _id: `b:${i + 1}`,
    version: 1,
    boardId: 'b',
    seq: SNAPSHOT.recent - i,
    type: 'item.created',
    actor: 'agent:a',
    workId: item.workId,
    at: now,
    data: { item: { ...publicCard(item), description: big(4000) } },
  }));
  const shouts = Array.from({ length: SNAPSHOT.recent }, (_, i): ShoutRecord => ({
    _id: `b:${String(SNAPSHOT.recent - i).padStart(4, '0')}`,
    version: 1,
    boardId: 'b',
    from: 'agent:a',
    text: big(2000, `${i}`),
    kind: 'info',
    workId: null,
    to: null,
    at: now,
    deliveredAt: null,
  }));
  return { seq: SNAPSHOT.recent, items, total: items.length, recent, shouts };
}

describe('snapshot messages', () => {
  it('stay under the backlog cap beside what a paced sender lets wait, and join into the whole snapshot in order', () => {
    const snapshot = largeSnapshot();
    const messages = [...snapshotMessages('b', 'board', snapshot, true)];
    const sizes = messages.map((m) => Buffer.byteLength(m));
    const together = sizes.reduce((a, b) => a + b, 0);
    expect(together).toBeGreaterThan(CAP); // what one last page held before
    // The sender waits for the client to read once REPLAY_BACKLOG waits; each message fits after it.
    for (const size of sizes) expect(size).toBeLessThanOrEqual(CAP - REPLAY_BACKLOG);

    const pages = messages.map((m) => JSON.parse(m) as Record<string, unknown>);
    expect(pages.map((p) => p.part)).toEqual(pages.map((_, i) => i));
    expect(pages.map((p) => p.last)).toEqual(pages.map((_, i) => i === pages.length - 1));
    for (const p of pages)
      expect(p).toMatchObject({ type: 'snapshot', boardId: 'b', seq: 50, name: 'board', total: 500 });
    const joined = (key: string) => pages.flatMap((p) => (p[key] as { [k: string]: unknown }[] | undefined) ?? []);
    expect(joined('items').map((c) => c.workId)).toEqual([...snapshot.items].map((i) => i.workId));
    expect(joined('recent').map((e) => e.seq)).toEqual(snapshot.recent.map((e) => e.seq));
    expect(joined('shouts').map((s) => s.id)).toEqual(snapshot.shouts.map((s) => s._id));
    const last = pages.at(-1)!;
    expect(last.recent).toBeDefined();
    expect(last.shouts).toBeDefined();
  });

  it('keep a small board in one message, its newest events and shouts on it as before', () => {
    const snapshot = largeSnapshot();
    const small: Snapshot = {
      ...snapshot,
      items: [...snapshot.items].slice(0, 3),
      total: 3,
      recent: snapshot.recent.slice(0, 2).map((e) => ({ ...e, data: {} })),
      shouts: [],
    };
    const [only, ...more] = [...snapshotMessages('b', 'board', small, false)];
    expect(more).toEqual([]);
    const page = JSON.parse(only!);
    expect(page).toMatchObject({ part: 0, last: true, recent: [{ seq: 50 }, { seq: 49 }] });
    expect(page.items).toHaveLength(3);
    expect(page.shouts).toBeUndefined(); // not asked for
  });
});
