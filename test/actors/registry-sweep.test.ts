// The registry's sweep for due leases reads the boards that have a deadline, never the idle ones
// (no deadline) that an open range over the deadline index would read on every sweep.
import { describe, expect, it } from 'vitest';
import { dueSoon } from '../../actors/registry.js';
import { HIGH, planFor } from '../../store/embedded/plan.js';
import { SCHEMA } from '../../store/ports/schema.js';
import { useStore } from '../support/stores.js';
import { unique } from '../support/temp.js';

const NOW = Date.UTC(2026, 10, 29, 5);

describe('registry sweep', () => {
  const used = useStore();

  it('reads the deadline index from the first deadline on, past every board without one', () => {
    const plan = planFor(dueSoon(NOW), SCHEMA.boards, { limit: 1000 });
    expect(plan).toMatchObject({ kind: 'index', start: [0], end: [NOW + 1000, HIGH] });
  });

  it('finds the boards due within a second, and neither a later one nor one without a deadline', async () => {
    const board = (nextDeadline: number | null) => ({
      _id: unique('board'),
      version: 1,
      nextWorkSeq: 1,
      nextFencingToken: 1,
      lastSeq: 0,
      nextDeadline,
    });
    const [due, soon, later, none] = [board(NOW - 5), board(NOW + 999), board(NOW + 1001), board(null)];
    for (const b of [due, soon, later, none]) await used.store.boards.insert(b);
    const found = (await used.store.boards.select(dueSoon(NOW), ['nextDeadline'])).map((b) => b._id);
    expect(found).toEqual(expect.arrayContaining([due._id, soon._id]));
    expect(found).not.toContain(later._id);
    expect(found).not.toContain(none._id);
  });
});
