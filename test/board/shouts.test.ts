// Shouts on a store: retention (plan history, the newest 5,000 per board), who reads a direct
// shout, and the delivery receipt when its addressee fetches it.
import { describe, expect, it } from 'vitest';
import {
  postShout,
  readShouts,
  SHOUT_TRIM_EVERY,
  ShoutTrims,
  SHOUTS_KEPT_PER_BOARD,
  trimShouts,
} from '../../src/board/shouts.js';
import { DAY_MS } from '../../src/plans.js';
import { seesShout, type BoardView } from '../../src/board/visibility.js';
import { useStore } from '../support/stores.js';
import { unique } from '../support/temp.js';

const NOW = Date.UTC(2026, 10, 22, 12);
const shout = (text: string, over: { to?: string; from?: string; workId?: string } = {}) => ({
  from: over.from ?? 'agent:a',
  text,
  kind: 'info' as const,
  workId: over.workId ?? null,
  to: over.to ?? null,
});

const used = useStore();
/** A member's (or, with allDirect, an admin's) view of the whole board. */
const member = (principal: string, allDirect = false): BoardView => ({
  principal,
  allDirect,
  items: null,
  shouts: true,
  doctrine: true,
  spec: true,
  roster: true,
  held: new Set(),
});

const texts = async (boardId: string) =>
  (await used.store.shouts.find({ boardId }, { sort: [['_id', 1]] })).map((s) => s.text);

describe('shout retention', () => {
  it('keeps the newest 5,000 per board', () => {
    expect(SHOUTS_KEPT_PER_BOARD).toBe(5000);
  });

  it('drops what is older than the plan keeps on a post that trims, and only then', async () => {
    const spaced = unique('spaced');
    await postShout(used.store, spaced, 'free', shout('8 days old'), NOW - 8 * DAY_MS);
    await postShout(used.store, spaced, 'free', shout('not trimmed'), NOW, false);
    expect(await texts(spaced)).toEqual(['8 days old', 'not trimmed']);
    await postShout(used.store, spaced, 'free', shout('trimmed'), NOW + 1);
    expect(await texts(spaced)).toEqual(['not trimmed', 'trimmed']);
  });

  it('drops what is older than the plan keeps, on each post that trims', async () => {
    const free = unique('free');
    const pro = unique('pro');
    for (const board of [free, pro]) {
      await postShout(used.store, board, 'pro', shout('8 days old'), NOW - 8 * DAY_MS);
      await postShout(used.store, board, 'pro', shout('6 days old'), NOW - 6 * DAY_MS);
    }
    await postShout(used.store, free, 'free', shout('now'), NOW);
    await postShout(used.store, pro, 'pro', shout('now'), NOW);
    expect(await texts(free)).toEqual(['6 days old', 'now']);
    expect(await texts(pro)).toEqual(['8 days old', '6 days old', 'now']);
  });

  it('keeps only the newest `keep`, oldest first to go, on that board only', async () => {
    const board = unique('board');
    const other = unique('other');
    for (let i = 1; i <= 5; i++) await postShout(used.store, board, 'free', shout(`s${i}`), NOW + i);
    await postShout(used.store, other, 'free', shout('elsewhere'), NOW);
    expect(await trimShouts(used.store, board, 'free', NOW + 10, 3)).toBe(2);
    expect(await texts(board)).toEqual(['s3', 's4', 's5']);
    expect(await texts(other)).toEqual(['elsewhere']);
  });

  it('trims a board on its first post on this node, then on every 100th, each board on its own', () => {
    const trims = new ShoutTrims();
    const due = (board: string, posts: number) => Array.from({ length: posts }, () => trims.due(board));
    expect(SHOUT_TRIM_EVERY).toBe(100);
    const a = due('a', 201);
    expect(a.flatMap((d, i) => (d ? [i] : []))).toEqual([0, 100, 200]);
    expect(due('b', 2)).toEqual([true, false]);
    expect(due('a', 1)).toEqual([false]);
  });

  it('follows at most 10,000 boards: past that it starts over, and each board is trimmed again on its next post', () => {
    const trims = new ShoutTrims();
    trims.due('first');
    expect(trims.due('first')).toBe(false);
    for (let i = 1; i < 10_000; i++) trims.due(`board-${i}`);
    expect(trims.due('first')).toBe(false); // still followed: 10,000 boards
    expect(trims.due('one-too-many')).toBe(true);
    expect(trims.due('first')).toBe(true);
  });
});

describe('reading shouts', () => {
  it('shows a direct shout to its sender, addressee and operators only', () => {
    const direct = { ...shout('psst', { to: 'agent:b' }) };
    expect([
      seesShout(member('agent:a'), direct),
      seesShout(member('agent:b'), direct),
      seesShout(member('agent:c'), direct),
      seesShout(member('user:o', true), direct),
    ]).toEqual([true, true, false, true]);
    expect(seesShout(member('agent:c'), shout('hello'))).toBe(true);
  });

  it('pages past others’ direct shouts, filters by item, and marks the reader’s own delivered', async () => {
    const board = unique('board');
    const posted = [];
    for (let i = 1; i <= 6; i++)
      posted.push(
        await postShout(
          used.store,
          board,
          'free',
          shout(`s${i}`, i % 2 ? { to: 'agent:x' } : { workId: i === 4 ? 'W-4' : undefined }),
          NOW + i,
        ),
      );
    posted.push(await postShout(used.store, board, 'free', shout('for c', { to: 'agent:c' }), NOW + 7));
    const c = member('agent:c');
    const page = await readShouts(used.store, board, c, { limit: 2 }, NOW + 100);
    expect(page.map((s) => s.text)).toEqual(['s2', 's4']);
    const rest = await readShouts(used.store, board, c, { since: page.at(-1)!._id, limit: 10 }, NOW + 100);
    expect(rest.map((s) => [s.text, s.deliveredAt])).toEqual([
      ['s6', null],
      ['for c', NOW + 100],
    ]);
    expect((await used.store.shouts.get(posted.at(-1)!._id))!.deliveredAt).toBe(NOW + 100);
    expect((await readShouts(used.store, board, c, { workId: 'W-4', limit: 10 }, NOW)).map((s) => s.text)).toEqual([
      's4',
    ]);
  });
});
