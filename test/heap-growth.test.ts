// The node's heap growth is set once at start (src/heap-growth.ts), unless the operator set it.
import { describe, expect, it } from 'vitest';
import { HEAP_GROWING_PERCENT, heapGrowthFlag } from '../src/heap-growth.js';

describe('heap growth', () => {
  it('sets the heap growing percent when the node was started without one', () => {
    expect(heapGrowthFlag([])).toBe(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
    expect(heapGrowthFlag(['--enable-source-maps', '--max-old-space-size=4096'])).toBe('--heap-growing-percent=20');
  });

  it('keeps the operator’s own, from the command line or NODE_OPTIONS, in either spelling', () => {
    expect(heapGrowthFlag(['--heap-growing-percent=50'])).toBeNull();
    expect(heapGrowthFlag(['--inspect', '--max-old-space-size=512 --heap_growing_percent=35'])).toBeNull();
  });
});
