// The identity cache drops what it holds when notices may have been lost (a whole node's catch-up
// after the bus was away), and keeps it for a catch-up of one board: a board's channel confirmed
// late lost that board's commits, not the notices that say a record changed.
import { describe, expect, it } from 'vitest';
import { IdentityCache } from '../../src/auth/identity-cache.js';
import type { ProjectRecord } from '../../store/ports/store.js';

describe('the identity cache on a catch-up', () => {
  it('keeps its records for one board’s catch-up and drops them for the whole node’s', async () => {
    let reads = 0;
    const project = { _id: 'p1', version: 1 } as unknown as ProjectRecord;
    const none = async () => null;
    const cache = new IdentityCache(
      {
        projects: { get: async () => (reads++, project) },
        members: { get: none },
        accounts: { get: none },
        sessions: { get: none },
        tokens: { get: none, findOne: none },
      } as never,
      { hearsNotices: () => true, interruptions: () => 0, clock: () => Date.now() },
    );
    expect(await cache.projects.get('p1')).toEqual(project);
    expect(await cache.projects.get('p1')).toEqual(project);
    expect(reads).toBe(1);
    cache.hears['catch-up']({ boardId: 'b1' });
    expect(await cache.projects.get('p1')).toEqual(project);
    expect(reads).toBe(1); // kept
    cache.hears['catch-up']({});
    expect(await cache.projects.get('p1')).toEqual(project);
    expect(reads).toBe(2); // read again
  });
});
