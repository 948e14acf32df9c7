// A create with `once` (an operator's promotion of feedback): when an item on the board carries
// the label already, nothing is made and that item is the reply, a live one before a cancelled one.
import { describe, expect, it } from 'vitest';
import { createItems, itemEvent } from '../../machines/board-commands.js';
import { boardWith, fields } from '../board/build.js';

const NOW = Date.UTC(2026, 10, 25, 12);
const LABEL = 'feedback:fb_1';
const promoted = (title: string) => ({ ...fields(title), labels: ['feedback', LABEL] });

describe('create once', () => {
  it('makes the item the first time, and answers that item after, with no event and no change', () => {
    const first = createItems([promoted('first')], 'user:op', LABEL)(boardWith(NOW, 3), NOW);
    expect(first.reply.map((i) => i.workId)).toEqual(['W-4']);
    expect(first.events.map((e) => e.type)).toEqual(['item.created']);
    const again = createItems([promoted('second')], 'user:op2', LABEL)(first.board, NOW);
    expect(again.board).toBe(first.board);
    expect(again.events).toEqual([]);
    expect(again.reply.map((i) => [i.workId, i.title])).toEqual([['W-4', 'first']]);
    // Without `once`, a second item is made as ever.
    expect(createItems([promoted('third')], 'user:op', undefined)(first.board, NOW).reply.map((i) => i.workId)).toEqual(
      ['W-5'],
    );
  });

  it('prefers a live item to a cancelled one carrying the label', () => {
    let board = createItems([promoted('cancelled one')], 'user:op')(boardWith(NOW, 1), NOW).board;
    board = itemEvent('W-2', 'user:op', () => ({ type: 'CANCEL', reason: 'duplicate' }) as never)(board, NOW).board;
    expect(board.items.get('W-2')!.state).toBe('cancelled');
    board = createItems([promoted('live one')], 'user:op')(board, NOW).board;
    expect(createItems([promoted('x')], 'user:op', LABEL)(board, NOW).reply.map((i) => i.workId)).toEqual(['W-3']);
  });
});
