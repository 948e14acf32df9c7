// Pausing a board over real HTTP and WebSocket (DOMAIN.md "Pausing a board"), run on each store
// adapter: what a paused board refuses and what goes on, status, sockets, audit, idempotence, who
// may pause; a Free board's recent restore points (DOMAIN.md "Restore points and rewind"); and a
// rewind landing while 20 agents work (pause-fleet.ts).
import { FREE_POINTS } from '../../src/plans.js';
import { describe, expect, it } from 'vitest';
import { head, newBoard, type TestBoard } from '../support/board.js';
import { makePro, webhookOnlyBilling } from '../support/billing.js';
import { expectError } from '../support/expect-error.js';
import type { Client, Res } from '../support/server.js';
import { openSocket } from '../support/socket.js';
import { serveStore, type OpenedStore } from '../support/stores.js';
import { until } from '../support/until.js';
import { purgeExpired } from '../../src/board/retention.js';
import { pauseFleet } from './pause-fleet.js';
import { SHARING_ENV, sharingKit } from './sharing-kit.js';

const SECRET = 'whsec_pause_tests';
const HOUR = 3_600_000;

export function pauseFlow(name: string, open: () => Promise<OpenedStore>): void {
  describe(`pausing a board on the ${name} store`, () => {
    const served = serveStore(open, { ...SHARING_ENV, ...webhookOnlyBilling(SECRET), LEASE_MIN_TTL_SECONDS: '1' });
    const kit = sharingKit(served);
    const url = () => served.srv.url;
    const store = () => served.srv.store;
    const setPaused = (board: TestBoard, paused: boolean) =>
      board.owner.request('PATCH', `/api/projects/${board.projectId}`, { json: { paused } });
    const status = async (board: TestBoard) => (await board.owner.get(`/api/status?projectId=${board.projectId}`)).body;

    it('refuses claims and every change to the graph with 409 BOARD_PAUSED while renew, release, expiry, heartbeats, shouts, comments, doctrine and reads go on', async () => {
      const board = await newBoard(url());
      const [a, b] = [await board.agent('alpha'), await board.agent('beta')];
      const q = `?projectId=${board.projectId}`;
      expect(
        (
          await a.post('/api/items/batch', {
            items: [{ title: 'held' }, { title: 'short' }, { title: 'gated', verify: 'required' }, { title: 'ready' }],
          })
        ).status,
      ).toBe(201);
      const held = (await a.post('/api/claim', { workId: 'W-1' })).body;
      // Long enough to outlast the pause's first steps on a busy machine (2 s did not, once, in CI).
      expect((await a.post('/api/claim', { workId: 'W-2', ttlSeconds: 6 })).status).toBe(200);
      const gated = (await a.post('/api/claim', { workId: 'W-3' })).body;
      expect((await a.post('/api/submit', { leaseId: gated.leaseId, head: head(3) })).status).toBe(200);
      const socket = await openSocket(url(), { authorization: b.defaults.authorization! });
      socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['items'] });
      await socket.next((m) => m.type === 'subscribed');

      const paused = await setPaused(board, true);
      expect(paused.status, paused.text).toBe(200);
      const me = (await board.owner.get('/api/auth/me')).body.user.id as string;
      expect(paused.body).toMatchObject({
        projectId: board.projectId,
        paused: true,
        pausedBy: `user:${me}`,
        pausedAt: expect.any(String),
      });
      const pausedEvent = await socket.next((m) => m.type === 'event');
      expect(pausedEvent.event).toMatchObject({ type: 'board.paused', actor: `user:${me}`, workId: null });
      expect(await status(board)).toMatchObject({
        paused: true,
        pausedBy: `user:${me}`,
        pausedAt: paused.body.pausedAt,
      });
      const before = await status(board);
      const seqBefore = before.lastSeq as number;
      expect(
        before.leases.map((l: { workId: string }) => l.workId),
        'W-2 still leased when paused',
      ).toContain('W-2');

      // Pausing again changes nothing and logs nothing: who paused it, and when, stay.
      expect((await setPaused(board, true)).body).toMatchObject({ paused: true, pausedAt: paused.body.pausedAt });
      // Agents cannot pause or resume (account structure); neither can a workspace token of the owner's.
      expectError(
        await a.request('PATCH', `/api/projects/${board.projectId}`, { json: { paused: false } }),
        403,
        'PROJECT_SCOPE_DENIED',
      );

      const refused: [string, Promise<Res>][] = [
        ['pull-next claim', b.post('/api/claim', {})],
        ['named claim', b.post('/api/claim', { workId: 'W-4' })],
        ['verify claim', b.post('/api/claim', { workId: 'W-3', purpose: 'verify' })],
        ['submit', a.post('/api/submit', { leaseId: held.leaseId, head: head(1) })],
        ['progress', a.post('/api/items/W-1/progress', { leaseId: held.leaseId, note: 'half way' })],
        ['supersede', a.post('/api/supersede', { workId: 'W-3', head: head(33) })],
        ['verify', b.post('/api/verify', { workId: 'W-3', head: head(3), verdict: 'pass' })],
        ['create', a.post('/api/items', { title: 'late' })],
        ['batch', a.post('/api/items/batch', { items: [{ title: 'late' }] })],
        ['edit', a.request('PATCH', '/api/items/W-4', { json: { title: 'renamed' } })],
        ['reorder', board.owner.post(`/api/items/reorder${q}`, { workIds: ['W-4'] })],
        ['block', board.owner.post(`/api/items/W-4/state${q}`, { action: 'block', reason: 'wait' })],
        ['cancel', board.owner.post(`/api/items/W-4/state${q}`, { action: 'cancel', reason: 'gone' })],
        ['override', board.owner.post(`/api/items/W-3/override${q}`, { reason: 'hotfix' })],
      ];
      for (const [what, res] of refused) {
        const answer = await res;
        expect(answer.body?.error?.code, `${what}: ${answer.text}`).toBe('BOARD_PAUSED');
        expectError(answer, 409, 'BOARD_PAUSED');
        expect(answer.body.error.details).toEqual({ pausedBy: `user:${me}`, pausedAt: paused.body.pausedAt });
      }
      // Nothing was written for them, and nothing for the second pause.
      expect((await status(board)).lastSeq).toBe(seqBefore);

      // What goes on.
      const renewed = await a.post('/api/lease', { leaseId: held.leaseId, action: 'renew' });
      expect(renewed.status, renewed.text).toBe(200);
      expect(renewed.body.lease.expiresAt > held.expiresAt).toBe(true);
      expect((await a.post('/api/status/heartbeat', { status: 'idle', note: 'waiting for the resume' })).status).toBe(
        200,
      );
      expect((await a.post('/api/shouts', { text: 'paused: holding W-1', kind: 'info' })).status).toBe(201);
      expect((await a.post('/api/items/W-1/comments', { text: 'paused half way' })).status).toBe(201);
      expect(
        (
          await a.post('/api/doctrine', {
            slug: 'pause-first',
            title: 'Pause first',
            text: 'Pause the board before a rewind.',
          })
        ).status,
      ).toBe(201);
      for (const path of ['/api/items', '/api/items/W-1', '/api/activity', '/api/agents', '/api/metrics'])
        expect((await b.get(path)).status, path).toBe(200);
      // A lease keeps its deadline: W-2's expires while the board is paused.
      await until(
        async () => !(await status(board)).leases.some((l: { workId: string }) => l.workId === 'W-2'),
        20_000,
      );
      expect((await a.get('/api/items/W-2')).body).toMatchObject({ state: 'ready', lease: null, attempts: 1 });
      expect((await a.post('/api/lease', { leaseId: held.leaseId, action: 'release' })).status).toBe(200);
      expect((await a.get('/api/items/W-1')).body).toMatchObject({ state: 'ready', lease: null });
      const types = (await b.get('/api/activity?limit=50')).body.events
        .filter((e: { seq: number }) => e.seq > seqBefore)
        .map((e: { type: string }) => e.type)
        .reverse();
      // W-2's 6 s lease runs out among these on its own clock (sooner on a slow machine): its pair is
      // somewhere before the release, and the rest is in the order they were made.
      const expired = types.indexOf('lease.expired');
      expect(types.slice(expired, expired + 2)).toEqual(['lease.expired', 'item.state']);
      expect(expired).toBeLessThan(types.indexOf('lease.released'));
      expect(types.filter((_: string, i: number) => i !== expired && i !== expired + 1)).toEqual([
        'lease.renewed',
        'item.comment',
        'doctrine.proposed',
        'lease.released',
        'item.state',
      ]);

      // Resume: one board.resumed, and the board takes claims and changes again.
      const resumed = await setPaused(board, false);
      expect(resumed.body).toMatchObject({ paused: false, pausedBy: null, pausedAt: null });
      expect((await socket.next((m) => m.type === 'event' && m.event.type.startsWith('board.'))).event).toMatchObject({
        type: 'board.resumed',
        data: { pausedBy: `user:${me}`, pausedAt: paused.body.pausedAt },
      });
      expect((await setPaused(board, false)).status).toBe(200);
      expect(await status(board)).toMatchObject({ paused: false, pausedBy: null, pausedAt: null });
      expect((await b.post('/api/claim', { workId: 'W-4' })).status).toBe(200);
      expect((await board.owner.request('PATCH', `/api/projects/${board.projectId}`, { json: {} })).status).toBe(400);
      // Each change is audited once; the repeats are not.
      expect(
        (await store().audit.find({ projectId: board.projectId }))
          .filter((r) => r.action.startsWith('board.'))
          .map((r) => [r.action, r.actor]),
      ).toEqual([
        ['board.pause', `user:${me}`],
        ['board.resume', `user:${me}`],
      ]);
      const log = (await b.get('/api/activity?limit=200')).body.events as { type: string }[];
      expect(log.filter((e) => e.type === 'board.paused' || e.type === 'board.resumed')).toHaveLength(2);
      socket.ws.close();
    });

    it('audits every pause and resume it logs, twelve of them sent at once', async () => {
      const board = await newBoard(url());
      const toggles = Array.from({ length: 12 }, (_, i) => i % 2 === 0);
      const answers = await Promise.all(toggles.map((paused) => setPaused(board, paused)));
      expect(answers.map((a) => a.status)).toEqual(toggles.map(() => 200));
      const changes = ['board.paused', 'board.resumed'];
      const log = await board.owner.get(`/api/activity?projectId=${board.projectId}&limit=200`);
      const logged = (log.body.events as { type: string }[]).filter((e) => changes.includes(e.type));
      expect(logged.length).toBeGreaterThan(1);
      const audited = async () =>
        (await store().audit.find({ projectId: board.projectId })).filter(
          (r) => r.action === 'board.pause' || r.action === 'board.resume',
        );
      // Each row is written before its PATCH answers.
      expect((await audited()).map((r) => r.action).sort()).toEqual(
        logged.map((e) => (e.type === 'board.paused' ? 'board.pause' : 'board.resume')).sort(),
      );
    });

    it('lets admins pause and resume, and refuses members (ROLE_REQUIRED)', async () => {
      const board = await newBoard(url());
      const [admin, member] = [await kit.person(), await kit.person()];
      await kit.join(board, admin, 'admin');
      await kit.join(board, member, 'member');
      const patch = (who: { client: Client }, paused: boolean) =>
        who.client.request('PATCH', `/api/boards/${board.projectId}`, { json: { paused } });
      expectError(await patch(member, true), 403, 'ROLE_REQUIRED');
      expect((await status(board)).paused).toBe(false);
      const paused = await patch(admin, true);
      expect(paused.status, paused.text).toBe(200);
      expect(paused.body).toMatchObject({ paused: true, pausedBy: `user:${admin.accountId}`, role: 'admin' });
      expect(await status(board)).toMatchObject({ paused: true, pausedBy: `user:${admin.accountId}` });
      expectError(await patch(member, false), 403, 'ROLE_REQUIRED');
      expect((await patch(admin, false)).body).toMatchObject({ paused: false });
      // A rename alone says nothing about the pause.
      const renamed = await admin.client.request('PATCH', `/api/boards/${board.projectId}`, {
        json: { name: 'Renamed' },
      });
      expect(renamed.status, renamed.text).toBe(200);
      expect(renamed.body.name).toBe('Renamed');
      expect('paused' in renamed.body).toBe(false);
    });

    it('keeps a Free board’s newest 20 restore points of the last 24 hours, shows them with the Pro refusal, and restores one once the board is Pro', async () => {
      const board = await newBoard(url());
      const agent = await board.agent('builder');
      // A Free board keeps at most one point a minute before its moves: a minute apart, each batch keeps one.
      for (let n = 1; n <= 23; n++) {
        expect((await agent.post('/api/items/batch', { items: [{ title: `batch ${n}` }] })).status).toBe(201);
        served.srv.advance(FREE_POINTS.everyMs);
      }
      const refusal = await board.owner.get(`/api/account/rewind?projectId=${board.projectId}`);
      expectError(refusal, 409, 'BILLING_PRO_REQUIRED');
      const points = refusal.body.error.details.points as {
        restorePointId: string;
        itemCount: number;
        reason: string;
      }[];
      // The newest 20: the points before batches 4 to 23 (holding 3 to 22 items), newest first.
      expect(points.map((p) => p.itemCount)).toEqual(Array.from({ length: 20 }, (_, i) => 22 - i));
      expect(new Set(points.map((p) => p.reason))).toEqual(new Set(['batch']));
      expect(await store().restorePoints.count({ boardId: board.projectId })).toBe(20);
      // Apply stays Pro only.
      expectError(
        await board.owner.post(`/api/account/rewind?projectId=${board.projectId}`, {
          restorePointId: points[0]!.restorePointId,
          confirm: 'REWIND_SERVICE_BOARD',
          expectedFingerprint: `sha256:${'0'.repeat(64)}`,
        }),
        409,
        'BILLING_PRO_REQUIRED',
      );

      // Made Pro after the mishap: a point kept on Free is restored.
      await makePro(url(), store(), board, SECRET);
      const listed = await board.owner.get(`/api/account/rewind?projectId=${board.projectId}`);
      expect(listed.status, listed.text).toBe(200);
      const target = (listed.body.points as { restorePointId: string; itemCount: number }[]).find(
        (p) => p.itemCount === 10,
      )!;
      const applied = await board.owner.post(`/api/account/rewind?projectId=${board.projectId}`, {
        restorePointId: target.restorePointId,
        confirm: 'REWIND_SERVICE_BOARD',
        expectedFingerprint: listed.body.currentFingerprint,
      });
      expect(applied.status, applied.text).toBe(200);
      expect((await status(board)).counts.ready).toBe(10);
    });

    it('lets a Free board’s points age out after 24 hours, at the next capture and in the retention sweep', async () => {
      const board = await newBoard(url());
      const agent = await board.agent('builder');
      for (let n = 1; n <= 3; n++) {
        expect((await agent.post('/api/items/batch', { items: [{ title: `batch ${n}` }] })).status).toBe(201);
        served.srv.advance(FREE_POINTS.everyMs);
      }
      const count = () => store().restorePoints.count({ boardId: board.projectId });
      expect(await count()).toBe(3);
      // Within a minute of the last, a batch keeps none.
      expect((await agent.post('/api/items/batch', { items: [{ title: 'a burst' }] })).status).toBe(201);
      expect((await agent.post('/api/items/batch', { items: [{ title: 'of two' }] })).status).toBe(201);
      expect(await count()).toBe(4);
      served.srv.advance(23 * HOUR);
      await purgeExpired(store(), served.srv.now());
      expect(await count()).toBe(4);
      served.srv.advance(2 * HOUR);
      expect((await agent.post('/api/items/batch', { items: [{ title: 'a day later' }] })).status).toBe(201);
      const kept = await store().restorePoints.find({ boardId: board.projectId });
      expect(kept.map((p) => p.itemCount)).toEqual([5]);
      served.srv.advance(25 * HOUR);
      await purgeExpired(store(), served.srv.now());
      expect(await count()).toBe(0);
    });

    it(
      'lands a rewind while 20 agents work at full speed: pause, preview, apply, resume',
      { timeout: 300_000 },
      async () => {
        const board = await newBoard(url());
        await makePro(url(), store(), board, SECRET);
        await pauseFleet([url()], board);
      },
    );
  });
}
