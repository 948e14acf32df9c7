// Usage counters written by several nodes at once (src/admin/usage.ts over the usage port's `add`),
// on each store: every node's increments land once, and a subject's first row of the day counts it
// active on the platform row once, whichever node's flush created the row.
import { describe, expect, inject, it } from 'vitest';
import { dayOf, UsageRecorder, usageId } from '../../src/admin/usage.js';
import type { RequestContext } from '../../src/request-context.js';
import { embeddedStore, mongoStore, useStore, type OpenedStore } from '../support/stores.js';

const NOW = Date.UTC(2026, 10, 28, 9, 0);
const NODES = 6;
const AGENTS = 20;

const request = (agent: number): RequestContext =>
  ({
    now: NOW,
    identity: { kind: 'token', principal: `agent:a${agent}`, accountId: `acct-${agent % 4}`, boardId: 'board-1' },
    project: { id: 'board-1' },
    remoteAddress: `198.51.100.${agent}`,
    operation: 'GET /api/status',
  }) as unknown as RequestContext;

function nodesSuite(name: string, open: () => Promise<OpenedStore>): void {
  describe(`usage counters from ${NODES} nodes: ${name}`, () => {
    const held = useStore(open);

    it('sums every node’s increments and counts each subject active once, flushes running at once', async () => {
      const nodes = Array.from({ length: NODES }, () => new UsageRecorder(held.store, () => NOW));
      for (let round = 0; round < 3; round++) {
        for (const node of nodes) for (let a = 0; a < AGENTS; a++) node.record(request(a), 200);
        await Promise.all(nodes.map((n) => n.flush()));
        for (const node of nodes) expect(node.lastFlush?.error).toBeNull();
      }
      const day = dayOf(NOW);
      const row = (scope: Parameters<typeof usageId>[1], key: string) => held.store.usage.get(usageId(day, scope, key));
      const perAgent = NODES * 3;
      for (let a = 0; a < AGENTS; a++) {
        expect((await row('principal', `agent:a${a}`))?.counts).toEqual({ requests: perAgent });
        expect((await row('address', `198.51.100.${a}`))?.counts).toEqual({ requests: perAgent });
      }
      expect((await row('account', 'acct-0'))?.counts).toEqual({ requests: perAgent * (AGENTS / 4) });
      expect((await row('board', 'board-1'))?.counts).toEqual({ requests: perAgent * AGENTS });
      expect((await row('platform', 'all'))?.counts).toEqual({
        requests: perAgent * AGENTS,
        activeAgents: AGENTS,
        activeAccounts: 4,
        activeBoards: 1,
      });
    });
  });
}

nodesSuite('embedded', embeddedStore);
const uri = inject('mongoUri');
if (uri) nodesSuite('mongo', mongoStore(uri));
