// Restore points and rewind over real HTTP and WebSocket (DOMAIN.md "Restore points and rewind"),
// run on each store adapter: points captured on Pro boards, the preview that writes nothing, every
// refusal of the apply in DOMAIN.md's order, a good apply and its undo, slices, integrity, a store
// that cannot read points, and a rewind racing a fleet.
import { describe, expect, it } from 'vitest';
import { head, newBoard, type TestBoard } from '../support/board.js';
import { makePro, webhookOnlyBilling } from '../support/billing.js';
import { expectError } from '../support/expect-error.js';
import { Client, signedUp } from '../support/server.js';
import { openSocket } from '../support/socket.js';
import { serveStore, type OpenedStore } from '../support/stores.js';
import { StoreUnavailableError } from '../../store/ports/store.js';
import { readLog, rewindRace } from './rewind-race.js';
import { until } from '../support/until.js';
import { failOnce } from '../support/fail-once.js';
import { QUIET_MS } from '../../actors/board-actor.js';

const SECRET = 'whsec_rewind_tests';
const CONFIRM = 'REWIND_SERVICE_BOARD';

interface Point {
  restorePointId: string;
  reason: string;
  itemCount: number;
  fingerprint: string;
}

export function rewindFlow(name: string, open: () => Promise<OpenedStore>): void {
  describe(`rewind on the ${name} store`, () => {
    const served = serveStore(open, webhookOnlyBilling(SECRET));
    const url = () => served.srv.url;
    const store = () => served.srv.store;

    const proBoard = async (): Promise<TestBoard> => {
      const board = await newBoard(url());
      await makePro(url(), store(), board, SECRET);
      return board;
    };
    const listing = async (board: TestBoard, query = '') => {
      const res = await board.owner.get(`/api/account/rewind?projectId=${board.projectId}${query}`);
      expect(res.status, res.text).toBe(200);
      return res.body as {
        currentFingerprint: string;
        points: Point[];
        preview?: {
          added: string[];
          removed: string[];
          changed: { workId: string; fields: string[] }[];
          fingerprint: string;
        };
      };
    };
    const apply = (board: TestBoard, body: Record<string, unknown>) =>
      board.owner.post(`/api/account/rewind?projectId=${board.projectId}`, body);
    const versionOf = async (board: TestBoard) =>
      (await board.owner.get(`/api/status?projectId=${board.projectId}`)).body.version as number;
    const titles = async (board: TestBoard) => {
      const res = await board.owner.get(`/api/items?projectId=${board.projectId}&limit=1000`);
      return Object.fromEntries(
        (res.body.items as { workId: string; title: string; state: string }[]).map((i) => [
          i.workId,
          `${i.title}:${i.state}`,
        ]),
      );
    };

    it('refuses a Free board with 409 BILLING_PRO_REQUIRED on both operations, naming the points it keeps all the same', async () => {
      const board = await newBoard(url());
      await (await board.agent('builder')).post('/api/items/batch', { items: [{ title: 'free work' }] });
      const refused = await board.owner.get(`/api/account/rewind?projectId=${board.projectId}`);
      expectError(refused, 409, 'BILLING_PRO_REQUIRED');
      expect(refused.body.error.details.points).toMatchObject([{ reason: 'batch', itemCount: 0 }]);
      expectError(
        await apply(board, {
          restorePointId: `rp_${board.projectId}_1`,
          confirm: CONFIRM,
          expectedFingerprint: `sha256:${'0'.repeat(64)}`,
        }),
        409,
        'BILLING_PRO_REQUIRED',
      );
      // Free keeps its newest 20 points of the last day all the same (test/e2e/pause-flow.ts): here the one before the batch.
      expect(await store().restorePoints.count({ boardId: board.projectId })).toBe(1);
    });

    it('captures points before batches and operator moves, lists them newest first, and previews one without writing', async () => {
      const board = await proBoard();
      const agent = await board.agent('builder');
      expect(
        (await agent.post('/api/items/batch', { items: [{ title: 'schema', verify: 'required' }, { title: 'api' }] }))
          .status,
      ).toBe(201);
      expect((await agent.post('/api/items/batch', { items: [{ title: 'docs' }] })).status).toBe(201);
      expect(
        (
          await board.owner.post(`/api/items/W-2/state?projectId=${board.projectId}`, {
            action: 'block',
            reason: 'waiting',
          })
        ).status,
      ).toBe(200);
      const grant = await agent.post('/api/claim', { workId: 'W-1' });
      expect((await agent.post('/api/submit', { leaseId: grant.body.leaseId, head: head(1) })).status).toBe(200);
      expect(
        (await board.owner.post(`/api/items/W-1/override?projectId=${board.projectId}`, { reason: 'hotfix' })).status,
      ).toBe(200);

      const listed = await listing(board);
      expect(listed.currentFingerprint).toMatch(/^sha256:[a-f0-9]{64}$/);
      expect(listed.points.map((p) => [p.reason, p.itemCount])).toEqual([
        ['override', 3],
        ['state', 3],
        ['batch', 2],
        ['batch', 0],
      ]);
      for (const p of listed.points) expect(p.restorePointId).toMatch(new RegExp(`^rp_${board.projectId}_\\d+$`));

      const version = await versionOf(board);
      const second = listed.points[2]!;
      const preview = await listing(board, `&restorePointId=${second.restorePointId}`);
      expect(preview.preview).toMatchObject({ fingerprint: second.fingerprint, added: [], removed: ['W-3'] });
      expect(preview.preview!.changed.map((c) => c.workId)).toEqual(['W-1', 'W-2']);
      expect(preview.preview!.changed[1]!.fields).toEqual(expect.arrayContaining(['state', 'blockedReason']));
      const slice = await listing(board, `&restorePointId=${second.restorePointId}~W-2`);
      expect(slice.preview).toMatchObject({ added: [], removed: [], changed: [{ workId: 'W-2' }] });
      expect(await versionOf(board)).toBe(version); // nothing written
      expect((await listing(board)).points).toHaveLength(4);
    });

    it('rewinds a board to its start, the point its first batch kept with no parts stored, and undoes that', async () => {
      const board = await proBoard();
      const agent = await board.agent('builder');
      expect((await agent.post('/api/items/batch', { items: [{ title: 'one' }, { title: 'two' }] })).status).toBe(201);
      const { currentFingerprint, points } = await listing(board);
      expect(points.map((p) => [p.reason, p.itemCount])).toEqual([['batch', 0]]);
      const start = points[0]!;
      expect(await store().restorePointParts.count({ pointId: start.restorePointId })).toBe(0);
      const preview = await listing(board, `&restorePointId=${start.restorePointId}`);
      expect(preview.preview).toMatchObject({ fingerprint: start.fingerprint, added: [], removed: ['W-1', 'W-2'] });

      const applied = await apply(board, {
        restorePointId: start.restorePointId,
        confirm: CONFIRM,
        expectedFingerprint: currentFingerprint,
      });
      expect(applied.status, applied.text).toBe(200);
      expect(applied.body).toMatchObject({ fingerprint: start.fingerprint, revokedLeases: [] });
      expect(await titles(board)).toEqual({});
      const undone = await apply(board, {
        restorePointId: applied.body.undoPointId,
        confirm: CONFIRM,
        expectedFingerprint: start.fingerprint,
      });
      expect(undone.status, undone.text).toBe(200);
      expect(undone.body.fingerprint).toBe(currentFingerprint);
      expect(await titles(board)).toEqual({ 'W-1': 'one:ready', 'W-2': 'two:ready' });
    });

    it('keeps a point of the board as it stood at the first commit after ten quiet minutes', async () => {
      const board = await proBoard();
      const agent = await board.agent('builder');
      await agent.post('/api/items', { title: 'steady' });
      await agent.request('PATCH', '/api/items/W-1', { json: { title: 'steady, edited' } }); // a commit soon after: no point
      const quietFingerprint = (await listing(board)).currentFingerprint;
      expect((await listing(board)).points).toEqual([]);
      served.srv.advance(QUIET_MS + 1000);
      await agent.request('PATCH', '/api/items/W-1', { json: { title: 'changed after the quiet spell' } });
      await until(async () => (await listing(board)).points.length === 1);
      expect((await listing(board)).points[0]).toMatchObject({
        reason: 'quiet',
        itemCount: 1,
        fingerprint: quietFingerprint,
      });
    });

    it('answers every refusal DOMAIN.md lists, in its order, and changes nothing', async () => {
      const board = await proBoard();
      const agent = await board.agent('builder');
      await agent.post('/api/items/batch', { items: [{ title: 'one' }] });
      await agent.post('/api/items/batch', { items: [{ title: 'two', parentId: 'W-1' }] });
      const { currentFingerprint, points } = await listing(board);
      const id = points[0]!.restorePointId;
      const good = { restorePointId: id, confirm: CONFIRM, expectedFingerprint: currentFingerprint };
      const version = await versionOf(board);

      expectError(await apply(board, { ...good, confirm: 'yes' }), 400, 'REWIND_CONFIRMATION_REQUIRED');
      expectError(await apply(board, { ...good, force: true }), 400, 'INVALID_INPUT'); // no property beyond the three
      expectError(
        await apply(board, { restorePointId: 'bad', expectedFingerprint: 'bad' }),
        400,
        'REWIND_CONFIRMATION_REQUIRED',
      ); // confirm is checked first
      expectError(await apply(board, { ...good, expectedFingerprint: undefined }), 400, 'REWIND_VERSION_REQUIRED');
      expectError(
        await apply(board, { ...good, expectedFingerprint: 'sha256:ABC', restorePointId: 'bad' }),
        400,
        'REWIND_VERSION_REQUIRED',
      );
      expectError(await apply(board, { ...good, restorePointId: 'not-a-point' }), 400, 'INVALID_REWIND_POINT');
      expectError(await apply(board, { ...good, restorePointId: 'x'.repeat(182) }), 400, 'INVALID_REWIND_POINT');
      expectError(await apply(board, { ...good, restorePointId: 7 }), 400, 'INVALID_REWIND_POINT');
      expectError(await apply(board, { ...good, restorePointId: `${id}~X-1` }), 400, 'INVALID_REWIND_SLICE');
      expectError(await apply(board, { ...good, restorePointId: `${id}~W-99` }), 400, 'INVALID_REWIND_SLICE');
      expectError(
        await apply(board, { ...good, restorePointId: `rp_${board.projectId}_99999` }),
        404,
        'REWIND_POINT_NOT_FOUND',
      );
      const other = await proBoard();
      await (await other.agent('x')).post('/api/items/batch', { items: [{ title: 'elsewhere' }] });
      const foreign = (await listing(other)).points[0]!.restorePointId;
      expectError(await apply(board, { ...good, restorePointId: foreign }), 404, 'REWIND_POINT_NOT_FOUND');
      expectError(
        await apply(board, { ...good, expectedFingerprint: `sha256:${'0'.repeat(64)}` }),
        409,
        'REWIND_VERSION_MISMATCH',
      );
      // Restoring W-2 alone (the point has no W-2 at all: the slice must name an item the point holds).
      expectError(await apply(board, { ...good, restorePointId: `${id}~W-2` }), 400, 'INVALID_REWIND_SLICE');
      // Roles: owner only for apply (admins may preview); members neither.
      const admin = await signedUp(url());
      await store().members.insert({
        _id: `${board.projectId}:${admin.accountId}`,
        version: 1,
        projectId: board.projectId,
        accountId: admin.accountId,
        role: 'admin',
        acceptedAt: Date.now(),
      });
      expect((await admin.client.get(`/api/account/rewind?projectId=${board.projectId}`)).status).toBe(200);
      // The contract lists 403 PROJECT_SCOPE_DENIED for both operations, and no ROLE_REQUIRED.
      expectError(
        await admin.client.post(`/api/account/rewind?projectId=${board.projectId}`, good),
        403,
        'PROJECT_SCOPE_DENIED',
      );
      const member = await signedUp(url());
      await store().members.insert({
        _id: `${board.projectId}:${member.accountId}`,
        version: 1,
        projectId: board.projectId,
        accountId: member.accountId,
        role: 'member',
        acceptedAt: Date.now(),
      });
      expectError(
        await member.client.get(`/api/account/rewind?projectId=${board.projectId}`),
        403,
        'PROJECT_SCOPE_DENIED',
      );
      // The preview answers a slice it cannot give with the contract's code for its id: 400 INVALID_REWIND_POINT.
      for (const slice of ['~X-1', '~W-99', '~W-2'])
        expectError(
          await board.owner.get(`/api/account/rewind?projectId=${board.projectId}&restorePointId=${id}${slice}`),
          400,
          'INVALID_REWIND_POINT',
        );
      // A session write without its CSRF token.
      expectError(
        await board.owner.request('POST', `/api/account/rewind?projectId=${board.projectId}`, {
          json: good,
          headers: { 'x-csrf-token': '' },
        }),
        403,
        'CSRF_REJECTED',
      );

      expect(await versionOf(board)).toBe(version);
      expect((await listing(board)).points.map((p) => p.restorePointId)).toEqual(points.map((p) => p.restorePointId)); // no undo point kept
      expect(await store().audit.count({ projectId: board.projectId, action: 'board.rewind' })).toBe(0);
    });

    it('restores the point’s graph, ends the leases it replaces, leaves another board alone, and its undo point undoes it', async () => {
      const board = await proBoard();
      const other = await proBoard();
      const builder = await board.agent('builder');
      const holder = await board.agent('holder');
      await (await other.agent('x')).post('/api/items/batch', { items: [{ title: 'elsewhere' }] });
      const otherBefore = await listing(other);
      const otherVersion = await versionOf(other);

      expect(
        (
          await builder.post('/api/items/batch', {
            items: [
              { title: 'schema', verify: 'required' },
              { title: 'api', dependsOn: ['W-1'] },
            ],
          })
        ).status,
      ).toBe(201);
      const good = await titles(board);
      // The agent goes wrong: a batch of junk, W-1 submitted and forced through its gate, W-2 claimed on top.
      expect(
        (await builder.post('/api/items/batch', { items: [{ title: 'junk 1' }, { title: 'junk 2' }] })).status,
      ).toBe(201);
      const first = await builder.post('/api/claim', { workId: 'W-1' });
      expect((await builder.post('/api/submit', { leaseId: first.body.leaseId, head: head(2) })).status).toBe(200);
      expect(
        (await board.owner.post(`/api/items/W-1/override?projectId=${board.projectId}`, { reason: 'agent says so' }))
          .status,
      ).toBe(200);
      const grant = await holder.post('/api/claim', { workId: 'W-2' });
      expect(grant.status, grant.text).toBe(200);
      const junker = await board.agent('junker');
      const junk = await junker.post('/api/claim', { workId: 'W-3' });
      expect(junk.status, junk.text).toBe(200);
      const holderSocket = await openSocket(url(), { authorization: holder.defaults.authorization! });
      const watcher = await openSocket(url(), { authorization: builder.defaults.authorization! });
      watcher.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'] });
      await watcher.next((m) => m.type === 'subscribed');

      const { currentFingerprint: wrecked, points } = await listing(board);
      const target = points.find((p) => p.reason === 'batch' && p.itemCount === 2)!;
      const applied = await apply(board, {
        restorePointId: target.restorePointId,
        confirm: CONFIRM,
        expectedFingerprint: wrecked,
      });
      expect(applied.status, applied.text).toBe(200);
      expect(applied.body).toMatchObject({
        projectId: board.projectId,
        restorePointId: target.restorePointId,
        fingerprint: target.fingerprint,
        revokedLeases: [
          { workId: 'W-2', holder: holder.principal, purpose: 'work' },
          { workId: 'W-3', holder: junker.principal, purpose: 'work' },
        ],
      });
      expect(applied.body.undoPointId).toMatch(new RegExp(`^rp_${board.projectId}_\\d+$`));
      expect((await listing(board)).currentFingerprint).toBe(target.fingerprint);
      expect(await titles(board)).toEqual(good);

      // The holder hears its lease end, and its submit is refused as revoked.
      const revoked = await holderSocket.next((m) => m.type === 'event' && m.event.type === 'lease.revoked');
      expect(revoked.event).toMatchObject({ workId: 'W-2', data: { reason: 'rewound' } });
      const submit = await holder.post('/api/submit', { leaseId: grant.body.leaseId, head: head(1) });
      expectError(submit, 409, 'LEASE_NOT_HELD');
      expect(submit.body.error.details).toMatchObject({ revoked: true, reason: 'rewound' });
      const renew = await holder.post('/api/lease', { leaseId: grant.body.leaseId, action: 'renew' });
      expect(renew.body).toMatchObject({ revoked: true, reason: 'rewound' });
      // W-3 is gone from the board; its holder still learns its lease was revoked by the rewind.
      expect((await junker.post('/api/lease', { leaseId: junk.body.leaseId, action: 'renew' })).body).toEqual({
        workId: 'W-3',
        action: 'renew',
        lease: null,
        revoked: true,
        reason: 'rewound',
      });
      expectError(
        await junker.post('/api/submit', { leaseId: junk.body.leaseId, head: head(3) }),
        409,
        'LEASE_NOT_HELD',
      );
      expect((await store().boards.get(board.projectId))!.retiredLeases).toEqual([
        expect.objectContaining({ workId: 'W-3', reason: 'rewound' }),
      ]);
      // The rewind's item events carry their items' patches, as every item event does; a removed item's none.
      const about = (type: string, workId: string) =>
        watcher.next((m) => m.type === 'event' && m.event.type === type && m.event.workId === workId);
      const w2 = (await board.owner.get(`/api/items/W-2?projectId=${board.projectId}`)).body;
      const waiting = { workId: 'W-2', state: 'pending', lease: null, version: w2.version }; // W-1 is not done again
      expect((await about('lease.revoked', 'W-2')).event.data.item).toMatchObject(waiting);
      expect((await about('item.state', 'W-2')).event.data).toMatchObject({
        to: 'pending',
        rewound: true,
        item: waiting,
      });
      expect((await about('lease.revoked', 'W-3')).event.data.item).toBeUndefined();
      const pushed = await watcher.next((m) => m.type === 'event' && m.event.type === 'board.rewound');
      expect(pushed.event.data).toMatchObject({
        restorePointId: target.restorePointId,
        slice: null,
        counts: { removed: 2, revokedLeases: 2 },
      });

      // Counters never go backwards: the next item is W-5, the next lease's token is above the revoked one.
      expect((await builder.post('/api/items', { title: 'after' })).body.workId).toBe('W-5');
      const regrant = await holder.post('/api/claim', { workId: 'W-1' });
      expect(regrant.body.fencingToken).toBeGreaterThan(grant.body.fencingToken);
      expect(await store().audit.findOne({ projectId: board.projectId, action: 'board.rewind' })).toMatchObject({
        data: {
          restorePointId: target.restorePointId,
          undoPointId: applied.body.undoPointId,
          from: wrecked,
          to: target.fingerprint,
        },
      });

      // Another board is untouched.
      expect(await versionOf(other)).toBe(otherVersion);
      expect((await listing(other)).currentFingerprint).toBe(otherBefore.currentFingerprint);

      // The undo point holds the wrecked graph: applying it gives the pre-rewind fingerprint back.
      // (First undo the work done since, by rewinding to the state right after the swap.)
      expect((await holder.post('/api/lease', { leaseId: regrant.body.leaseId, action: 'release' })).status).toBe(200);
      const now = await listing(board);
      const back = await apply(board, {
        restorePointId: applied.body.undoPointId,
        confirm: CONFIRM,
        expectedFingerprint: now.currentFingerprint,
      });
      expect(back.status, back.text).toBe(200);
      expect(back.body.fingerprint).toBe(wrecked);
      expect(Object.keys(await titles(board))).toEqual(['W-1', 'W-2', 'W-3', 'W-4']);
      holderSocket.ws.close();
      watcher.ws.close();
    });

    it('restores one subtree and leaves the rest of the board as it was; refuses a slice that breaks a dependency outside it', async () => {
      const board = await proBoard();
      const agent = await board.agent('builder');
      await agent.post('/api/items/batch', {
        items: [{ ref: 'e', title: 'epic', type: 'epic' }, { title: 'part', parentId: 'e' }, { title: 'outside' }],
      });
      await agent.post('/api/items/batch', { items: [{ title: 'marker' }] });
      const point = (await listing(board)).points.find((p) => p.itemCount === 3)!;
      // Both the subtree and the rest change after the point.
      await agent.request('PATCH', '/api/items/W-2', { json: { title: 'part, rewritten badly' } });
      await agent.request('PATCH', '/api/items/W-3', { json: { title: 'outside, changed on purpose' } });
      const { currentFingerprint } = await listing(board);
      const sliced = await apply(board, {
        restorePointId: `${point.restorePointId}~W-1`,
        confirm: CONFIRM,
        expectedFingerprint: currentFingerprint,
      });
      expect(sliced.status, sliced.text).toBe(200);
      // A token covering W-3 alone hears of the rewind but not of the slice's root; one covering W-1 does.
      const rewoundAs = async (resources: string[]) => {
        const token = await board.owner.post('/api/accounts/tokens', {
          name: `narrow ${resources.join(' ')}`,
          scope: 'resource',
          projectId: board.projectId,
          resources,
        });
        expect(token.status, token.text).toBe(201);
        const narrow = new Client(url(), { authorization: `Bearer ${token.body.secret}` });
        const read = await narrow.get(`/api/activity?projectId=${board.projectId}`);
        expect(read.status, read.text).toBe(200);
        return (read.body.events as { type: string; data: Record<string, unknown> }[]).find(
          (e) => e.type === 'board.rewound',
        )!;
      };
      const outside = await rewoundAs(['W-3']);
      expect(outside.data).toEqual({ restorePointId: point.restorePointId, counts: expect.any(Object) });
      expect(JSON.stringify(outside)).not.toContain('W-1');
      expect((await rewoundAs(['W-1'])).data).toMatchObject({
        restorePointId: `${point.restorePointId}~W-1`,
        slice: 'W-1',
      });
      const after = await titles(board);
      expect(after).toMatchObject({
        'W-1': 'epic:ready',
        'W-2': 'part:ready',
        'W-3': 'outside, changed on purpose:ready',
        'W-4': 'marker:ready',
      });

      // A new item depending on the epic's part; a slice whose point lacks that part would strand it.
      await agent.post('/api/items/batch', { items: [{ title: 'late part', parentId: 'W-1' }] });
      await agent.post('/api/items', { title: 'needs the late part', dependsOn: ['W-5'] });
      const late = (await listing(board)).points.find((p) => p.itemCount === 4 && p.reason === 'batch')!; // before W-5 existed
      const scope = await apply(board, {
        restorePointId: `${late.restorePointId}~W-1`,
        confirm: CONFIRM,
        expectedFingerprint: (await listing(board)).currentFingerprint,
      });
      expectError(scope, 422, 'REWIND_SLICE_SCOPE');
      expect(scope.body.error.message).toContain('W-6 depends on W-5');
      expect(Object.keys(await titles(board))).toEqual(['W-1', 'W-2', 'W-3', 'W-4', 'W-5', 'W-6']);
    });

    it('refuses to apply a point whose stored content was altered (422 REWIND_SLICE_INTEGRITY) or preview it (503)', async () => {
      const board = await proBoard();
      const agent = await board.agent('builder');
      await agent.post('/api/items/batch', { items: [{ title: 'one' }] });
      await agent.post('/api/items/batch', { items: [{ title: 'two' }] });
      const { currentFingerprint, points } = await listing(board);
      const id = points[0]!.restorePointId;
      const stored = (await store().restorePointParts.get(`${id}:0`))!;
      await store().restorePointParts.update(stored._id, stored.version, {
        text: stored.text.replace('"one"', '"tampered"'),
      });
      const version = await versionOf(board);
      // The contract's list for the preview has no 422: the altered point cannot be read.
      const previewed = await board.owner.get(`/api/account/rewind?projectId=${board.projectId}&restorePointId=${id}`);
      expectError(previewed, 503, 'SNAPSHOT_UNAVAILABLE');
      expect(previewed.body.error.message).toContain('no longer matches its fingerprint');
      expectError(
        await apply(board, { restorePointId: id, confirm: CONFIRM, expectedFingerprint: currentFingerprint }),
        422,
        'REWIND_SLICE_INTEGRITY',
      );
      expect(await versionOf(board)).toBe(version);
    });

    it('answers 503 SNAPSHOT_UNAVAILABLE when restore points cannot be read, and changes nothing', async () => {
      const board = await proBoard();
      const agent = await board.agent('builder');
      await agent.post('/api/items/batch', { items: [{ title: 'one' }] });
      await agent.post('/api/items/batch', { items: [{ title: 'two' }] });
      const { currentFingerprint, points } = await listing(board);
      const version = await versionOf(board);
      // The store's points collection fails as an unreachable database does (the adapters raise StoreUnavailableError).
      const collection = store().restorePoints;
      const saved = { get: collection.get, select: collection.select };
      const down = () => Promise.reject(new StoreUnavailableError(new Error('points unreadable')));
      Object.assign(collection, { get: down, select: down });
      try {
        expectError(
          await board.owner.get(`/api/account/rewind?projectId=${board.projectId}`),
          503,
          'SNAPSHOT_UNAVAILABLE',
        );
        expectError(
          await apply(board, {
            restorePointId: points[0]!.restorePointId,
            confirm: CONFIRM,
            expectedFingerprint: currentFingerprint,
          }),
          503,
          'SNAPSHOT_UNAVAILABLE',
        );
      } finally {
        Object.assign(collection, saved);
      }
      expect(await versionOf(board)).toBe(version);
      expect((await listing(board)).points).toHaveLength(points.length);
    });

    it(
      'keeps the log gapless and every lease fenced when a rewind races 20 agents claiming and submitting',
      { timeout: 240_000 },
      async () => {
        await rewindRace([url()], await proBoard());
      },
    );

    it('answers the log in order with the rewind in it, and audits each rewind even under a repeated X-Request-Id', async () => {
      const board = await proBoard();
      const agent = await board.agent('builder');
      await agent.post('/api/items/batch', { items: [{ title: 'one' }] });
      await agent.post('/api/items/batch', { items: [{ title: 'two' }] });
      const { currentFingerprint, points } = await listing(board);
      const sameId = { 'x-request-id': `req-${board.projectId}` };
      const first = await board.owner.post(
        `/api/account/rewind?projectId=${board.projectId}`,
        { restorePointId: points[0]!.restorePointId, confirm: CONFIRM, expectedFingerprint: currentFingerprint },
        sameId,
      );
      expect(first.status, first.text).toBe(200);
      const undo = await board.owner.post(
        `/api/account/rewind?projectId=${board.projectId}`,
        { restorePointId: first.body.undoPointId, confirm: CONFIRM, expectedFingerprint: first.body.fingerprint },
        sameId,
      );
      expect(undo.status, undo.text).toBe(200);
      const rows = await store().audit.find({ projectId: board.projectId, action: 'board.rewind' });
      expect(rows.map((r) => r.data.requestId)).toEqual([sameId['x-request-id'], sameId['x-request-id']]);
      const log = await readLog(board.owner, board.projectId);
      expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
      expect(log.filter((e) => e.type === 'board.rewound')).toHaveLength(2);
      expect(log.at(-1)).toMatchObject({ type: 'board.rewound', workId: null });
    });

    it('writes the audit row of an applied rewind even when the store refuses it the first time', async () => {
      const board = await proBoard();
      const agent = await board.agent('builder');
      await agent.post('/api/items/batch', { items: [{ title: 'one' }] });
      await agent.post('/api/items/batch', { items: [{ title: 'two' }] });
      const { currentFingerprint, points } = await listing(board);
      failOnce(store().audit, 'insert');
      const applied = await board.owner.post(`/api/account/rewind?projectId=${board.projectId}`, {
        restorePointId: points[0]!.restorePointId,
        confirm: CONFIRM,
        expectedFingerprint: currentFingerprint,
      });
      expect(applied.status, applied.text).toBe(200); // the swap is committed: the answer says so
      const rows = () => store().audit.find({ projectId: board.projectId, action: 'board.rewind' });
      await until(async () => (await rows()).length === 1, 15_000);
      expect((await rows())[0]!.data).toMatchObject({
        undoPointId: applied.body.undoPointId,
        to: applied.body.fingerprint,
      });
    });
  });
}
