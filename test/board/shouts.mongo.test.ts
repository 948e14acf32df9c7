// Shout retention on the MongoDB wire server: the oldest go first, in the (boardId, at) index's
// order, and only on the board trimmed (src/board/shouts.ts; the embedded store's twin is
// shouts.test.ts).
import { describe, expect, inject, it } from 'vitest';
import { postShout, trimShouts } from '../../src/board/shouts.js';
import { DAY_MS } from '../../src/plans.js';
import { mongoStore, useStore } from '../support/stores.js';
import { unique } from '../support/temp.js';

const uri = inject('mongoUri');
const NOW = Date.UTC(2026, 10, 22, 12);
const shout = (text: string) => ({ from: 'agent:a', text, kind: 'info' as const, workId: null, to: null });

describe.skipIf(!uri)('shout retention on the MongoDB wire server', () => {
  const used = useStore(mongoStore(uri!));
  const texts = async (boardId: string) =>
    (await used.store.shouts.find({ boardId }, { sort: [['_id', 1]] })).map((s) => s.text);

  it('keeps only the newest `keep` (shouts of one millisecond in id order), on that board only, and drops what the plan no longer keeps', async () => {
    const board = unique('board');
    const other = unique('other');
    await postShout(used.store, board, 'free', shout('too old'), NOW - 8 * DAY_MS);
    for (let i = 1; i <= 5; i++) await postShout(used.store, board, 'free', shout(`s${i}`), NOW + (i < 3 ? 0 : i));
    await postShout(used.store, other, 'free', shout('elsewhere'), NOW);
    const before = await texts(board);
    expect(before).toHaveLength(5); // 'too old' went on the next post
    const sameMillisecond = before.slice(0, 2);
    expect([...sameMillisecond].sort()).toEqual(['s1', 's2']);
    expect(await trimShouts(used.store, board, 'free', NOW + 10, 4)).toBe(1);
    expect(await texts(board)).toEqual([sameMillisecond[1], 's3', 's4', 's5']);
    expect(await texts(other)).toEqual(['elsewhere']);
  });
});
