// What a rewind and its undo leave behind them over real HTTP, run on each store adapter: item
// versions that never repeat, metrics that count no rewind as work done, an audit row for every
// apply, and a preview that tells what the apply does.
import { describe, expect, it } from 'vitest';
import { head, newBoard, type TestBoard } from '../support/board.js';
import { makePro, webhookOnlyBilling } from '../support/billing.js';
import { serveStore, type OpenedStore } from '../support/stores.js';

const SECRET = 'whsec_rewind_history';
const CONFIRM = 'REWIND_SERVICE_BOARD';

interface Listing {
  currentFingerprint: string;
  points: { restorePointId: string; reason: string; itemCount: number; fingerprint: string }[];
  preview?: { added: string[]; removed: string[]; changed: { workId: string; fields: string[] }[] };
}

export function rewindHistoryFlow(name: string, open: () => Promise<OpenedStore>): void {
  describe(`what a rewind leaves on the ${name} store`, () => {
    const served = serveStore(open, webhookOnlyBilling(SECRET));
    const url = () => served.srv.url;

    const proBoard = async (): Promise<TestBoard> => {
      const board = await newBoard(url());
      await makePro(url(), served.srv.store, board, SECRET);
      return board;
    };
    const listing = async (board: TestBoard, query = ''): Promise<Listing> => {
      const res = await board.owner.get(`/api/account/rewind?projectId=${board.projectId}${query}`);
      expect(res.status, res.text).toBe(200);
      return res.body as Listing;
    };
    const apply = (board: TestBoard, restorePointId: string, expectedFingerprint: string) =>
      board.owner.post(`/api/account/rewind?projectId=${board.projectId}`, {
        restorePointId,
        confirm: CONFIRM,
        expectedFingerprint,
      });

    it('refuses an edit at a version read before a rewind removed the item and its undo brought it back', async () => {
      const board = await proBoard();
      const agent = await board.agent('builder');
      expect((await agent.post('/api/items/batch', { items: [{ title: 'v1' }] })).status).toBe(201);
      expect((await agent.get('/api/items/W-1')).body.version).toBe(1);
      for (const title of ['v2', 'v3'])
        expect((await agent.request('PATCH', '/api/items/W-1', { json: { title } })).status).toBe(200);
      const { currentFingerprint, points } = await listing(board);
      const rewound = await apply(board, points.at(-1)!.restorePointId, currentFingerprint); // the empty board
      expect(rewound.status, rewound.text).toBe(200);
      const undone = await apply(board, rewound.body.undoPointId, rewound.body.fingerprint);
      expect(undone.status, undone.text).toBe(200);

      const back = (await agent.get('/api/items/W-1')).body;
      expect([back.title, back.version]).toEqual(['v3', 4]);
      const stale = await agent.request('PATCH', '/api/items/W-1', { json: { title: 'stale', expectedVersion: 1 } });
      expect(stale.status, stale.text).toBe(409);
      expect(stale.body.error.code).toBe('VERSION_MISMATCH');
      // The mark is in the board's header, so a node that loads the board next keeps to it.
      expect((await served.srv.store.boards.load(board.projectId))?.record.removedVersion).toBe(3);
    });

    it('counts an item finished once as one done in GET /api/metrics, however often a rewind puts it back', async () => {
      const board = await proBoard();
      const agent = await board.agent('builder');
      expect((await agent.post('/api/items/batch', { items: [{ title: 'one' }] })).status).toBe(201);
      const grant = await agent.post('/api/claim', { workId: 'W-1' });
      expect((await agent.post('/api/submit', { leaseId: grant.body.leaseId, head: head(1) })).status).toBe(200);
      const reopen = await board.owner.post(`/api/items/W-1/state?projectId=${board.projectId}`, { action: 'reopen' });
      expect(reopen.status, reopen.text).toBe(200);
      const listed = await listing(board);
      let target = listed.points.find((p) => p.reason === 'reopen')!.restorePointId; // W-1 done
      let fingerprint = listed.currentFingerprint;
      for (let i = 0; i < 4; i++) {
        const applied = await apply(board, target, fingerprint);
        expect(applied.status, applied.text).toBe(200);
        [target, fingerprint] = [applied.body.undoPointId, applied.body.fingerprint];
      }
      const log = await board.owner.get(`/api/activity?projectId=${board.projectId}&limit=200`);
      const moves = (log.body.events as { type: string; data: Record<string, unknown> }[]).filter(
        (e) => e.type === 'item.state' && e.data.rewound === true,
      );
      expect(moves).toHaveLength(4);
      const metrics = await board.owner.get(`/api/metrics?projectId=${board.projectId}`);
      expect(metrics.status, metrics.text).toBe(200);
      const done = (metrics.body.throughputPerDay as { done: number }[]).reduce((n, d) => n + d.done, 0);
      expect(done).toBe(1);
    });

    it('audits each of two identical rewinds sent at once that both land, once each', async () => {
      const board = await proBoard();
      const agent = await board.agent('builder');
      expect((await agent.post('/api/items/batch', { items: [{ title: 'one' }] })).status).toBe(201);
      expect((await agent.post('/api/items/batch', { items: [{ title: 'two' }] })).status).toBe(201);
      const first = await listing(board);
      const point = first.points[0]!.restorePointId; // before the second batch: W-1 only
      const rewound = await apply(board, point, first.currentFingerprint);
      expect(rewound.status, rewound.text).toBe(200);
      // The board is the point again; a claim changes no fingerprint, so both applies may land.
      expect((await agent.post('/api/claim', { workId: 'W-1' })).status).toBe(200);
      const answers = await Promise.all([1, 2].map(() => apply(board, point, rewound.body.fingerprint)));
      const landed = answers.filter((a) => a.status === 200).length;
      expect(landed).toBeGreaterThan(0);

      const log = await board.owner.get(`/api/activity?projectId=${board.projectId}&limit=200`);
      const rewinds = (log.body.events as { type: string }[]).filter((e) => e.type === 'board.rewound');
      const rows = await served.srv.store.audit.find({ projectId: board.projectId, action: 'board.rewind' });
      expect({ rewinds: rewinds.length, rows: rows.length }).toEqual({ rewinds: 1 + landed, rows: 1 + landed });
    });

    it('previews a slice as its apply then goes: an item moved out of the subtree is changed, not added', async () => {
      const board = await proBoard();
      const agent = await board.agent('builder');
      const epics = [{ title: 'root', type: 'epic' }, { title: 'child', parentId: 'W-1' }, { title: 'elsewhere' }];
      expect((await agent.post('/api/items/batch', { items: epics })).status).toBe(201);
      expect((await agent.post('/api/items/batch', { items: [{ title: 'later' }] })).status).toBe(201);
      const moved = await agent.request('PATCH', '/api/items/W-2', { json: { parentId: 'W-3' } });
      expect(moved.status, moved.text).toBe(200);
      const { currentFingerprint, points } = await listing(board);
      const sliced = `${points[0]!.restorePointId}~W-1`; // before the second batch: W-2 under W-1

      const { preview } = await listing(board, `&restorePointId=${sliced}`);
      expect(preview).toMatchObject({ added: [], removed: [], changed: [{ workId: 'W-2', fields: ['parentId'] }] });
      const applied = await apply(board, sliced, currentFingerprint);
      expect(applied.status, applied.text).toBe(200);
      expect((await agent.get('/api/items/W-2')).body.parentId).toBe('W-1');
      const after = (await board.owner.get(`/api/items?projectId=${board.projectId}`)).body.items as unknown[];
      expect(after).toHaveLength(4);
    });
  });
}
