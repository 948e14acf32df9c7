// Doctrine and spec over real HTTP, run on each store adapter: the doctrine lifecycle with its roles
// and blind tests (counted in /api/metrics), spec clauses with their versions, item links checked
// against real entries, retired clauses in status, resource tokens held to their groups, sockets
// receiving doctrine and spec events in order with the items', and the board loaded whole again.
import { describe, expect, it } from 'vitest';
import { BoardActor } from '../../actors/board-actor.js';
import { serveStore, type OpenedStore } from '../support/stores.js';
import { digest, newBoard, type TestBoard } from '../support/board.js';
import { expectError } from '../support/expect-error.js';
import { openSocket } from '../support/socket.js';
import { Client } from '../support/server.js';

const EXPECTED = digest('e');
const WRONG = digest('0');

async function resourceToken(board: TestBoard, resources: string[]): Promise<Client> {
  const res = await board.owner.post('/api/accounts/tokens', {
    name: 'narrow',
    scope: 'resource',
    projectId: board.projectId,
    resources,
  });
  if (res.status !== 201) throw new Error(`token: ${res.text}`);
  return new Client(board.owner.base, { authorization: `Bearer ${res.body.secret}` });
}

const patch = (client: Client, path: string, json: unknown) => client.request('PATCH', path, { json });

export function doctrineFlow(name: string, open: () => Promise<OpenedStore>): void {
  describe(`doctrine and spec on the ${name} store`, () => {
    const served = serveStore(open);

    it('runs the doctrine lifecycle: propose, agree once per principal, ratify, reject, level, blind tests pass and fail, role refusals', async () => {
      const board = await newBoard(served.srv.url);
      const [m1, m2, admin, viewer] = [
        await board.agent('m1'),
        await board.agent('m2'),
        await board.agent('admin', 'admin'),
        await board.agent('viewer', 'viewer'),
      ];

      expectError(
        await m1.post('/api/doctrine', {
          slug: 'small-prs',
          title: 'Small PRs',
          text: 'One change per PR.',
          expectedDigest: EXPECTED,
        }),
        403,
        'ROLE_REQUIRED',
      );
      expect((await m1.get('/api/doctrine')).body.entries).toEqual([]); // nothing written
      expectError(
        await viewer.post('/api/doctrine', { slug: 'small-prs', title: 'Small PRs', text: 'x' }),
        403,
        'ROLE_REQUIRED',
      );
      expectError(await m1.post('/api/doctrine', { slug: 'Not A Slug', title: 't', text: 'x' }), 400, 'INVALID_INPUT');
      const proposed = await m1.post('/api/doctrine', {
        slug: 'tests-first',
        title: 'Tests first',
        text: 'Write the failing test first.',
      });
      expect(proposed.status).toBe(201);
      expect(proposed.body).toMatchObject({
        slug: 'tests-first',
        status: 'proposed',
        level: 'advisory',
        agreements: 0,
        agreedBy: [],
        expectedDigestSet: false,
        proposedBy: m1.principal,
        version: 1,
      });
      expectError(
        await m2.post('/api/doctrine', { slug: 'tests-first', title: 'Again', text: 'x' }),
        409,
        'DOCTRINE_EXISTS',
      );
      const withDigest = await admin.post('/api/doctrine', {
        slug: 'small-prs',
        title: 'Small PRs',
        text: 'One change per PR.',
        expectedDigest: EXPECTED,
      });
      expect(withDigest.status).toBe(201);
      expect(withDigest.body.expectedDigestSet).toBe(true);

      expect((await m1.post('/api/doctrine/tests-first/agree')).body).toMatchObject({
        entry: { agreements: 1, agreedBy: [m1.principal] },
      });
      const again = await m1.post('/api/doctrine/tests-first/agree', {});
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ already: true, entry: { agreements: 1, version: 2 } });
      expect((await m2.post('/api/doctrine/tests-first/agree')).body.entry).toMatchObject({
        agreements: 2,
        agreedBy: [m1.principal, m2.principal],
        version: 3,
      });
      expectError(await viewer.post('/api/doctrine/tests-first/agree'), 403, 'ROLE_REQUIRED');

      for (const action of ['ratify', 'reject'])
        expectError(await m1.post(`/api/doctrine/tests-first/${action}`), 403, 'ROLE_REQUIRED');
      expectError(await m1.post('/api/doctrine/tests-first/level', { level: 'required' }), 403, 'ROLE_REQUIRED');
      expectError(
        await m1.post('/api/doctrine/tests-first/ratify', { expectedDigest: EXPECTED }),
        403,
        'ROLE_REQUIRED',
      );
      const early = await m1.post('/api/doctrine/small-prs/blind-test', { answerDigest: EXPECTED });
      expectError(early, 409, 'INVALID_TRANSITION');
      expect(early.body.error.details).toEqual({
        slug: 'small-prs',
        state: 'proposed',
        allowed: ['AGREE', 'RATIFY', 'REJECT', 'SET_LEVEL'],
      });

      expect((await admin.post('/api/doctrine/small-prs/ratify')).body.entry).toMatchObject({
        status: 'ratified',
        expectedDigestSet: true,
      });
      expect((await admin.post('/api/doctrine/tests-first/ratify', {})).body.entry).toMatchObject({
        status: 'ratified',
        expectedDigestSet: false,
      });
      expectError(await admin.post('/api/doctrine/tests-first/ratify'), 409, 'INVALID_TRANSITION');
      expectError(
        await m1.post('/api/doctrine/tests-first/blind-test', { answerDigest: EXPECTED }),
        409,
        'DOCTRINE_BLIND_TEST_UNSET',
      );
      expectError(
        await m1.post('/api/doctrine/small-prs/blind-test', { answerDigest: 'the answer in plain text' }),
        400,
        'INVALID_INPUT',
      );
      expectError(
        await viewer.post('/api/doctrine/small-prs/blind-test', { answerDigest: EXPECTED }),
        403,
        'ROLE_REQUIRED',
      );

      expect((await admin.post('/api/doctrine/small-prs/level', { level: 'required' })).body.entry).toMatchObject({
        level: 'required',
      });
      expectError(await admin.post('/api/doctrine/small-prs/level', { level: 'mandatory' }), 400, 'INVALID_INPUT');
      const pass = await m1.post('/api/doctrine/small-prs/blind-test', { answerDigest: EXPECTED });
      const fail = await m2.post('/api/doctrine/small-prs/blind-test', { answerDigest: WRONG });
      expect([pass.status, pass.body.result, fail.status, fail.body.result]).toEqual([200, 'pass', 200, 'fail']);
      expect(fail.body.entry.blindTests).toMatchObject({
        pass: 1,
        fail: 1,
        recent: [
          { by: m1.principal, result: 'pass' },
          { by: m2.principal, result: 'fail' },
        ],
      });
      expect((await viewer.get('/api/metrics')).body.blindTests).toEqual({ pass: 1, fail: 1 });

      expect(
        (await admin.post('/api/doctrine/tests-first/reject', { reason: 'too strict for spikes' })).body.entry,
      ).toMatchObject({ status: 'rejected', rejectedReason: 'too strict for spikes' });
      expectError(await m1.post('/api/doctrine/tests-first/agree'), 409, 'INVALID_TRANSITION');
      expect(
        (await admin.post('/api/doctrine/tests-first/ratify', { expectedDigest: EXPECTED })).body.entry,
      ).toMatchObject({ status: 'ratified', rejectedReason: null, expectedDigestSet: true });
      expectError(await m1.post('/api/doctrine/no-such-entry/agree'), 404, 'DOCTRINE_NOT_FOUND');
      expectError(await admin.post('/api/doctrine/Bad_Slug/ratify'), 404, 'DOCTRINE_NOT_FOUND');

      const list = await viewer.get('/api/doctrine');
      expect(
        list.body.entries.map((e: { slug: string; level: string; status: string; agreements: number }) => [
          e.slug,
          e.status,
          e.level,
          e.agreements,
        ]),
      ).toEqual([
        ['small-prs', 'ratified', 'required', 0],
        ['tests-first', 'ratified', 'advisory', 2],
      ]);
      const log = await board.owner.get(`/api/activity?projectId=${board.projectId}&limit=200`);
      expect(log.body.events.map((e: { type: string }) => e.type).reverse()).toEqual([
        'doctrine.proposed',
        'doctrine.proposed',
        'doctrine.agreed',
        'doctrine.agreed',
        'doctrine.ratified',
        'doctrine.ratified',
        'doctrine.level',
        'doctrine.blind_test',
        'doctrine.blind_test',
        'doctrine.rejected',
        'doctrine.ratified',
      ]);
      for (const text of [list.text, log.text, pass.text, fail.text, withDigest.text])
        expect(text).not.toContain('e'.repeat(64));

      // The whole board read back from the store (every entry counted: the Mongo adapter checks the sum).
      const loaded = (await served.srv.store.boards.load(board.projectId))!;
      expect(loaded.items.map((e) => e.workId).sort()).toEqual(['doctrine:small-prs', 'doctrine:tests-first']);
      expect(loaded.record.entries).toBe(2);
      const fresh = await new BoardActor(board.projectId, served.srv.store, Date.now).read();
      expect([...fresh.board.doctrine.keys()]).toEqual(['small-prs', 'tests-first']);
      expect(fresh.board.items.size).toBe(0);
    });

    it('keeps spec clauses: ids S-<n>, versions, a stale edit refused with nothing changed, retired clauses’ links in status', async () => {
      const board = await newBoard(served.srv.url);
      const [member, admin, viewer] = [
        await board.agent('m'),
        await board.agent('admin', 'admin'),
        await board.agent('viewer', 'viewer'),
      ];
      expectError(
        await member.post('/api/spec', { title: 'Auth', text: 'Every route authenticates.' }),
        403,
        'ROLE_REQUIRED',
      );
      const s1 = await admin.post('/api/spec', { title: 'Auth', text: 'Every route authenticates.' });
      const s2 = await admin.post('/api/spec', { title: 'Limits', text: 'Budgets hold across nodes.' });
      expect([s1.status, s1.body.clauseId, s2.body.clauseId]).toEqual([201, 'S-1', 'S-2']);
      expect(s1.body).toMatchObject({ status: 'draft', version: 1, createdBy: admin.principal, linkedBy: [] });
      await member.post('/api/items/batch', {
        items: [{ title: 'login', spec: ['S-1'] }, { title: 'quota', spec: ['S-1', 'S-2'] }, { title: 'other' }],
      });

      const listed = await viewer.get('/api/spec');
      expect(
        listed.body.clauses.map((c: { clauseId: string; linkedBy: string[] }) => [c.clauseId, c.linkedBy]),
      ).toEqual([
        ['S-1', ['W-1', 'W-2']],
        ['S-2', ['W-2']],
      ]);
      expect((await member.get('/api/spec/S-2')).body).toMatchObject({
        clauseId: 'S-2',
        title: 'Limits',
        linkedBy: ['W-2'],
      });

      const accepted = await patch(admin, '/api/spec/S-1', { version: 1, status: 'accepted' });
      expect(accepted.body).toMatchObject({ status: 'accepted', version: 2, updatedBy: admin.principal });
      const stale = await patch(admin, '/api/spec/S-1', { version: 1, title: 'Authentication' });
      expectError(stale, 409, 'VERSION_MISMATCH');
      expect(stale.body.error.details).toEqual({ clauseId: 'S-1', version: 2 });
      expect((await viewer.get('/api/spec/S-1')).body).toMatchObject({ title: 'Auth', status: 'accepted', version: 2 }); // nothing changed
      expectError(await patch(member, '/api/spec/S-1', { version: 2, title: 'x' }), 403, 'ROLE_REQUIRED');
      expectError(await patch(admin, '/api/spec/S-9', { version: 1, title: 'x' }), 404, 'SPEC_CLAUSE_NOT_FOUND');
      expectError(await viewer.get('/api/spec/S-9'), 404, 'SPEC_CLAUSE_NOT_FOUND');
      expectError(await viewer.get('/api/spec/clause-1'), 404, 'SPEC_CLAUSE_NOT_FOUND');

      expect((await viewer.get('/api/status')).body.retiredSpecLinks).toEqual([]);
      expect((await patch(admin, '/api/spec/S-1', { version: 2, status: 'retired' })).body).toMatchObject({
        status: 'retired',
        version: 3,
      });
      expect((await viewer.get('/api/status')).body.retiredSpecLinks).toEqual([
        { workId: 'W-1', clauseId: 'S-1' },
        { workId: 'W-2', clauseId: 'S-1' },
      ]);
      const events = (await board.owner.get(`/api/activity?projectId=${board.projectId}`)).body.events.filter(
        (e: { type: string }) => e.type.startsWith('spec.'),
      );
      expect(
        events
          .map((e: { type: string; data: { clauseId: string; clause: { version: number } } }) => [
            e.type,
            e.data.clauseId,
            e.data.clause.version,
          ])
          .reverse(),
      ).toEqual([
        ['spec.created', 'S-1', 1],
        ['spec.created', 'S-2', 1],
        ['spec.updated', 'S-1', 2],
        ['spec.updated', 'S-1', 3],
      ]);
    });

    it('checks item doctrine links against the board’s entries, and shows each linked entry’s level and status', async () => {
      const board = await newBoard(served.srv.url);
      const [member, admin] = [await board.agent('m'), await board.agent('admin', 'admin')];
      expectError(
        await member.post('/api/items', { title: 'x', doctrine: ['tests-first'] }),
        400,
        'DOCTRINE_LINK_NOT_FOUND',
      );
      expectError(
        await member.post('/api/items/batch', { items: [{ title: 'a' }, { title: 'b', doctrine: ['tests-first'] }] }),
        400,
        'DOCTRINE_LINK_NOT_FOUND',
      );
      expect((await member.get('/api/status')).body.counts.ready).toBe(0); // all or nothing
      await member.post('/api/doctrine', { slug: 'tests-first', title: 'Tests first', text: 'x' });
      await member.post('/api/doctrine', { slug: 'small-prs', title: 'Small PRs', text: 'x' });
      await admin.post('/api/doctrine/tests-first/level', { level: 'expected' });
      await admin.post('/api/doctrine/small-prs/ratify');
      const created = await member.post('/api/items', { title: 'login', doctrine: ['tests-first', 'small-prs'] });
      expect(created.status).toBe(201);
      const view = await member.get(`/api/items/${created.body.workId}`);
      expect(view.body.doctrineLinks).toEqual([
        { slug: 'tests-first', level: 'expected', status: 'proposed' },
        { slug: 'small-prs', level: 'advisory', status: 'ratified' },
      ]);
      const bad = await patch(member, `/api/items/${created.body.workId}`, { doctrine: ['tests-first', 'missing'] });
      expectError(bad, 400, 'DOCTRINE_LINK_NOT_FOUND');
      expect(bad.body.error.details).toEqual({ slug: 'missing' });
      await admin.post('/api/doctrine/small-prs/reject');
      expect((await patch(member, `/api/items/${created.body.workId}`, { doctrine: ['small-prs'] })).status).toBe(200); // a rejected entry still exists
      expect((await member.get(`/api/items/${created.body.workId}`)).body.doctrineLinks).toEqual([
        { slug: 'small-prs', level: 'advisory', status: 'rejected' },
      ]);
    });

    it('holds resource tokens to the groups they name', async () => {
      const board = await newBoard(served.srv.url);
      const admin = await board.agent('admin', 'admin');
      await admin.post('/api/doctrine', { slug: 'tests-first', title: 't', text: 'x' });
      await admin.post('/api/spec', { title: 'Auth', text: 'x' });
      const doctrine = await resourceToken(board, ['doctrine']);
      const spec = await resourceToken(board, ['spec']);
      const items = await resourceToken(board, ['items', 'W-1']);
      expect((await doctrine.get('/api/doctrine')).status).toBe(200);
      expect((await doctrine.post('/api/doctrine/tests-first/agree')).body.entry.agreements).toBe(1);
      expectError(await doctrine.get('/api/spec'), 403, 'PROJECT_SCOPE_DENIED');
      expect((await spec.get('/api/spec/S-1')).status).toBe(200);
      expectError(await spec.get('/api/doctrine'), 403, 'PROJECT_SCOPE_DENIED');
      expectError(await spec.post('/api/doctrine/tests-first/agree'), 403, 'PROJECT_SCOPE_DENIED');
      expectError(await items.get('/api/doctrine'), 403, 'PROJECT_SCOPE_DENIED');
      expectError(await items.post('/api/doctrine', { slug: 'x', title: 't', text: 'x' }), 403, 'PROJECT_SCOPE_DENIED');
      // A slug no entry can have is a missing entry, refused at the same point: after the role and the groups.
      const viewer = await board.agent('viewer', 'viewer');
      for (const slug of ['missing', 'Not_A_Slug']) {
        expectError(await items.post(`/api/doctrine/${slug}/agree`), 403, 'PROJECT_SCOPE_DENIED');
        expectError(await viewer.post(`/api/doctrine/${slug}/agree`), 403, 'ROLE_REQUIRED');
        expectError(await doctrine.post(`/api/doctrine/${slug}/ratify`), 403, 'ROLE_REQUIRED');
        expectError(await admin.post(`/api/doctrine/${slug}/ratify`), 404, 'DOCTRINE_NOT_FOUND');
      }
      // Likewise a clause id no clause can have.
      for (const clause of ['S-9', 'clause-1']) {
        expectError(await items.get(`/api/spec/${clause}`), 403, 'PROJECT_SCOPE_DENIED');
        expectError(await doctrine.get(`/api/spec/${clause}`), 403, 'PROJECT_SCOPE_DENIED');
        expectError(await patch(viewer, `/api/spec/${clause}`, { version: 1, title: 'x' }), 403, 'ROLE_REQUIRED');
        expectError(await patch(spec, `/api/spec/${clause}`, { version: 1, title: 'x' }), 403, 'ROLE_REQUIRED');
        expectError(
          await patch(admin, `/api/spec/${clause}`, { version: 1, title: 'x' }),
          404,
          'SPEC_CLAUSE_NOT_FOUND',
        );
      }
    });

    it('pushes doctrine and spec events to sockets in order with the items’ events', async () => {
      const board = await newBoard(served.srv.url);
      const [member, admin] = [await board.agent('m'), await board.agent('admin', 'admin')];
      const socket = await openSocket(served.srv.url, { authorization: member.defaults.authorization! });
      socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'] });
      expect(await socket.next((m) => m.type === 'subscribed')).toMatchObject({ seq: 0 });
      // The doctrine topic carries doctrine and spec events alone; the items topic no longer carries them.
      const [doctrineOnly, itemsOnly] = await Promise.all([
        openSocket(served.srv.url, { authorization: member.defaults.authorization! }),
        openSocket(served.srv.url, { authorization: member.defaults.authorization! }),
      ]);
      doctrineOnly.send({ type: 'subscribe', boardId: board.projectId, topics: ['doctrine'] });
      itemsOnly.send({ type: 'subscribe', boardId: board.projectId, topics: ['items'] });
      expect(await doctrineOnly.next((m) => m.type === 'subscribed')).toMatchObject({ seq: 0, topics: ['doctrine'] });
      expect(await itemsOnly.next((m) => m.type === 'subscribed')).toMatchObject({ seq: 0, topics: ['items'] });
      await member.post('/api/items', { title: 'first' });
      await member.post('/api/doctrine', { slug: 'tests-first', title: 't', text: 'x' });
      await admin.post('/api/spec', { title: 'Auth', text: 'x' });
      await member.post('/api/items', { title: 'second', doctrine: ['tests-first'], spec: ['S-1'] });
      await member.post('/api/doctrine/tests-first/agree');
      await patch(admin, '/api/spec/S-1', { version: 1, status: 'accepted' });
      await member.post('/api/claim', {});
      const seen: { seq: number; event: { type: string; workId: string | null; data: Record<string, unknown> } }[] = [];
      while (seen.length < 7) seen.push(await socket.next((m) => m.type === 'event'));
      expect(seen.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(seen.map((m) => [m.event.type, m.event.workId])).toEqual([
        ['item.created', 'W-1'],
        ['doctrine.proposed', null],
        ['spec.created', null],
        ['item.created', 'W-2'],
        ['doctrine.agreed', null],
        ['spec.updated', null],
        ['lease.granted', 'W-1'],
      ]);
      expect(seen[1]!.event.data).toMatchObject({ slug: 'tests-first', entry: { status: 'proposed' } });
      expect(seen[4]!.event.data).toMatchObject({
        slug: 'tests-first',
        by: member.principal,
        entry: { agreements: 1 },
      });
      expect(seen[5]!.event.data).toMatchObject({
        clauseId: 'S-1',
        fields: ['status'],
        clause: { status: 'accepted', version: 2 },
      });
      for (const m of seen.filter((m) => m.event.workId === null)) expect(m.event.data).not.toHaveProperty('item');

      const heard = async (s: typeof socket, n: number) => {
        const out: [number, string][] = [];
        while (out.length < n) {
          const m = await s.next((m) => m.type === 'event');
          out.push([m.seq as number, m.event.type as string]);
        }
        return out;
      };
      expect(await heard(doctrineOnly, 4)).toEqual([
        [2, 'doctrine.proposed'],
        [3, 'spec.created'],
        [5, 'doctrine.agreed'],
        [6, 'spec.updated'],
      ]);
      // The items socket hears the items' events (the claim's lease.granted goes to leases), the doctrine socket none of them.
      await member.post('/api/items', { title: 'third' });
      await admin.post('/api/doctrine/tests-first/level', { level: 'required' });
      expect(await heard(itemsOnly, 4)).toEqual([
        [1, 'item.created'],
        [4, 'item.created'],
        [8, 'item.state'],
        [9, 'item.created'],
      ]);
      expect(await heard(doctrineOnly, 1)).toEqual([[10, 'doctrine.level']]);
      for (const s of [socket, doctrineOnly, itemsOnly]) s.ws.close();
    });
  });
}
