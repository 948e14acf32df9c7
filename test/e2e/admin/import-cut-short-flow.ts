// An import cut short between its event writes and its board's commit (a node that dies there, or
// a store that fails there and again during the clean-up) leaves nothing anyone sees: no listed,
// empty board whose log holds the old board's events at the seqs its own commits take; the sweep
// then removes what it wrote. Run on each store adapter.
import { describe, expect, it } from 'vitest';
import { IMPORT_STALE_MS } from '../../../src/admin/import.js';
import { eventId } from '../../../store/ports/store.js';
import { newBoard } from '../../support/board.js';
import { failOnce } from '../../support/fail-once.js';
import { confirmedOperator, operatorEmail } from '../../support/operators.js';
import { serveStore, type OpenedStore } from '../../support/stores.js';
import { signedUp, type Client } from '../../support/server.js';

type Line = { kind: string; record?: Record<string, unknown>; [k: string]: unknown };

export function importCutFlow(name: string, open: () => Promise<OpenedStore>): void {
  describe(`an import cut short on the ${name} store`, () => {
    const opEmail = operatorEmail();
    const served = serveStore(open, {
      OPERATOR_EMAILS: opEmail,
      ADDRESS_RATE_PER_MINUTE: '100000',
      BOARD_RATE_SCALE: '100',
    });
    const boardsOf = async (client: Client): Promise<string[]> =>
      ((await client.get('/api/projects')).body.projects as { projectId: string }[]).map((p) => p.projectId);

    it('leaves no half-written board behind, and none whose log keeps the old board’s events where its own go', async () => {
      const srv = served.srv;
      const operator = (await confirmedOperator(srv, opEmail)).client;
      const board = await newBoard(srv.url);
      const agent = await board.agent('maker');
      for (const title of ['one', 'two', 'three']) expect((await agent.post('/api/items', { title })).status).toBe(201);
      const exported = await operator.get(`/api/admin/export?projectId=${board.projectId}`);
      const lines = exported.text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Line);
      const target = await signedUp(srv.url);
      const before = await boardsOf(target.client);

      // The node fails between the events and the board's commit, and its clean-up fails too (as a crash leaves it).
      failOnce(srv.store.boards, 'commit');
      failOnce(srv.store.tokens, 'deleteMany');
      const res = await operator.post('/api/admin/import', { userId: target.accountId, lines });
      expect(res.status).toBeGreaterThanOrEqual(500);

      const leftBehind = (await boardsOf(target.client)).filter((id) => !before.includes(id));
      const found: Record<string, unknown> = { leftBehind: leftBehind.length };
      if (leftBehind.length) {
        const id = leftBehind[0]!;
        const made = await target.client.post(`/api/items?projectId=${id}`, { title: 'my first item' });
        expect(made.status, made.text).toBe(201);
        const header = (await srv.store.boards.get(id))!;
        // Give the copy to the log its moment, then read the log at the board's own seqs.
        await new Promise((r) => setTimeout(r, 500));
        const logged = await Promise.all(
          Array.from({ length: header.lastSeq }, (_, i) => srv.store.events.get(eventId(id, i + 1))),
        );
        found.ownSeqsHoldingImportedEvents = logged.filter((e) => e?.data?.imported === true).length;
        found.items = (await target.client.get(`/api/status?projectId=${id}`)).body.counts;
      }
      expect(found, 'a half-imported board stays behind').toEqual({ leftBehind: 0 });

      // What it wrote is swept once the import is stale: the board and its events.
      const [cut] = await srv.store.projects.find({ ownerId: target.accountId, importing: { $gte: 0 } });
      expect(cut).toBeDefined();
      expect(await srv.server.sweepImports()).toEqual([]);
      srv.advance(IMPORT_STALE_MS + 1000);
      expect(await srv.server.sweepImports()).toEqual([cut!._id]);
      expect(await srv.store.projects.get(cut!._id)).toBeNull();
      expect(await srv.store.events.find({ boardId: cut!._id })).toEqual([]);
      expect(await boardsOf(target.client)).toEqual(before);
    });
  });
}
