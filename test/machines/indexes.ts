// For machine tests: a board's maintained indexes must equal the ones computed from its items alone.
import { expect } from 'vitest';
import { indexOf } from '../../machines/board-index.js';
import type { Board } from '../../machines/board.js';

export function expectIndexesRebuilt(board: Board): void {
  const rebuilt = indexOf(board.items.values());
  for (const [name, tree] of Object.entries(board.index)) {
    const fresh = rebuilt[name as keyof typeof rebuilt];
    if (name === 'counts') expect(tree, name).toEqual(fresh);
    else
      expect((tree as { toArray(): unknown[] }).toArray(), name).toEqual((fresh as { toArray(): unknown[] }).toArray());
  }
}
