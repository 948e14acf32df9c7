// A 50,000-item board on the MongoDB wire server, over real HTTP: created in batches, claimed,
// submitted, its status read, rewound past a thousand items and the rewind undone, each swap one
// atomic commit. A board this size could not be stored at all when its items lived in its header
// document (MongoDB caps a document at 16 MB).
import { describe, expect, inject, it } from 'vitest';
import { head, newBoard } from '../support/board.js';
import { makePro, webhookOnlyBilling } from '../support/billing.js';
import { serveStore, mongoStore } from '../support/stores.js';

const uri = inject('mongoUri');
const SECRET = 'whsec_large_board';
const ITEMS = 50_000;
const BATCH = 500;

describe.skipIf(!uri)('a 50,000-item board on MongoDB', () => {
  const served = serveStore(mongoStore(uri!), webhookOnlyBilling(SECRET));

  it('is created in batches, claimed, submitted, read, rewound and undone', { timeout: 900_000 }, async () => {
    const url = served.srv.url;
    const board = await newBoard(url);
    const agent = await board.agent('builder');
    const took: Record<string, number> = {};
    const timed = async <T>(step: string, run: () => Promise<T>): Promise<T> => {
      const t = performance.now();
      const result = await run();
      took[step] = Math.round(performance.now() - t);
      return result;
    };
    const status = async () => {
      const res = await agent.get('/api/status');
      expect(res.status, res.text).toBe(200);
      return res.body as { version: number; counts: Record<string, number>; leases: { workId: string }[] };
    };
    const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

    // Created while Free (no restore point before each batch), in batches of 500.
    await timed('create 50,000 items', async () => {
      for (let made = 0; made < ITEMS; made += BATCH) {
        const res = await agent.post('/api/items/batch', {
          items: Array.from({ length: BATCH }, (_, i) => ({ title: `item ${made + i + 1}`, priority: (made + i) % 5 })),
        });
        expect(res.status, res.text).toBe(201);
      }
    });
    const lease = await timed('claim', () => agent.post('/api/claim', {}));
    expect(lease.status, lease.text).toBe(200);
    expect(
      (await timed('submit', () => agent.post('/api/submit', { leaseId: lease.body.leaseId, head: head(1) }))).status,
    ).toBe(200);
    const read = await timed('status', status);
    expect(read.counts).toMatchObject({ done: 1, ready: ITEMS - 1 });
    expect(total(read.counts)).toBe(ITEMS);

    // Pro from here: the next batch keeps the 50,000-item board as a restore point first.
    await makePro(url, served.srv.store, board, SECRET);
    for (let b = 0; b < 2; b++)
      expect(
        (
          await agent.post('/api/items/batch', {
            items: Array.from({ length: BATCH }, (_, i) => ({ title: `late ${b * BATCH + i}` })),
          })
        ).status,
      ).toBe(201);
    const held = await agent.post('/api/claim', {});
    expect(held.status, held.text).toBe(200);
    const listed = await board.owner.get(`/api/account/rewind?projectId=${board.projectId}`);
    expect(listed.status, listed.text).toBe(200);
    const points = listed.body.points as { restorePointId: string; itemCount: number; fingerprint: string }[];
    const point = points.find((p) => p.itemCount === ITEMS)!;
    expect(point).toBeDefined();
    const before = listed.body.currentFingerprint as string;

    // The rewind takes 1,000 items off and ends the lease on the claimed one, in one commit.
    const applied = await timed('rewind', () =>
      board.owner.post(`/api/account/rewind?projectId=${board.projectId}`, {
        restorePointId: point.restorePointId,
        confirm: 'REWIND_SERVICE_BOARD',
        expectedFingerprint: before,
      }),
    );
    expect(applied.status, applied.text).toBe(200);
    expect(applied.body.fingerprint).toBe(point.fingerprint);
    expect(applied.body.revokedLeases).toEqual([expect.objectContaining({ workId: held.body.workId })]);
    const rewound = await status();
    expect(total(rewound.counts)).toBe(ITEMS);
    expect(rewound.counts).toMatchObject({ done: 1, ready: ITEMS - 1, claimed: 0 });
    expect(rewound.leases).toEqual([]);

    // Its undo point brings the 1,000 items back, again in one commit.
    const undone = await timed('undo', () =>
      board.owner.post(`/api/account/rewind?projectId=${board.projectId}`, {
        restorePointId: applied.body.undoPointId,
        confirm: 'REWIND_SERVICE_BOARD',
        expectedFingerprint: point.fingerprint,
      }),
    );
    expect(undone.status, undone.text).toBe(200);
    expect(undone.body.fingerprint).toBe(before);
    const back = await status();
    expect(total(back.counts)).toBe(ITEMS + 2 * BATCH);
    console.log(`50,000 items on MongoDB (ms): ${JSON.stringify(took)}`);
  });
});
