// The operators' export and import (DOMAIN.md "Operators", Data) over real HTTP, run on each store
// adapter: a board's export holds no secret or hash, is streamed as it is read, and imports as a
// new board with the same graph and history and none of the old credentials, within the plan.
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { sha256 } from '../../../src/auth/authenticator.js';
import { PAGE } from '../../../src/admin/export.js';
import type { BoardItem } from '../../../machines/board.js';
import type { EventRecord, FindOptions } from '../../../store/ports/store.js';
import { serveStore, type OpenedStore } from '../../support/stores.js';
import { head, newBoard, type TestBoard } from '../../support/board.js';
import { expectError } from '../../support/expect-error.js';
import { until } from '../../support/until.js';
import { confirmedOperator, operatorEmail } from '../../support/operators.js';
import { Client, signedUp, type Res } from '../../support/server.js';

type Line = { kind: string; boardId?: string; record?: Record<string, unknown>; lines?: number; [k: string]: unknown };

const lines = (res: Res): Line[] =>
  res.text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);

export function dataFlow(name: string, open: () => Promise<OpenedStore>): void {
  describe(`export and import on the ${name} store`, () => {
    const opEmail = operatorEmail();
    const served = serveStore(open, {
      OPERATOR_EMAILS: opEmail,
      ADDRESS_RATE_PER_MINUTE: '100000',
      BOARD_RATE_SCALE: '100',
    });
    const store = () => served.srv.store;
    const restore: (() => void)[] = [];
    afterEach(() => restore.splice(0).forEach((undo) => undo()));
    let operator: Client | null = null;
    const op = async (): Promise<Client> => (operator ??= (await confirmedOperator(served.srv, opEmail)).client);
    const accountOf = async (client: Client): Promise<string> =>
      (await client.get('/api/auth/me')).body.user.id as string;

    /** A board with a graph (parent, dependencies), history, a live lease, a shout, an invitation and agents' tokens. */
    async function fixture() {
      const board = await newBoard(served.srv.url);
      const worker = await board.agent('worker');
      const verifier = await board.agent('verifier');
      const made = await worker.post('/api/items/batch', {
        items: [
          { ref: 'epic', title: 'Epic', type: 'epic' },
          { ref: 'schema', title: 'Schema', parentId: 'epic', verify: 'required', priority: 1, labels: ['db'] },
          { ref: 'api', title: 'API', parentId: 'epic', dependsOn: ['schema'], description: 'the routes' },
          { ref: 'docs', title: 'Docs', dependsOn: ['api'] },
          { ref: 'spare', title: 'Spare', priority: 0 },
        ],
      });
      expect(made.status, made.text).toBe(201);
      const grant = await worker.post('/api/claim', { workId: 'W-2' });
      expect(grant.status, grant.text).toBe(200);
      expect((await worker.post('/api/submit', { leaseId: grant.body.leaseId, head: head(1) })).status).toBe(200);
      const verifyLease = await verifier.post('/api/claim', { purpose: 'verify' });
      expect(verifyLease.status, verifyLease.text).toBe(200);
      expect(
        (await verifier.post('/api/verify', { workId: 'W-2', head: head(1), verdict: 'pass' })).body,
      ).toMatchObject({ state: 'done' });
      const held = await worker.post('/api/claim', { workId: 'W-5' }); // still held when exported
      expect(held.status, held.text).toBe(200);
      expect((await worker.post('/api/shouts', { text: 'schema is in' })).status).toBe(201);
      const invited = await board.owner.post(`/api/boards/${board.projectId}/invitations`, {
        email: `${board.projectId}@invited.example.com`,
        role: 'member',
      });
      expect(invited.status, invited.text).toBe(201);
      return {
        board,
        worker,
        verifier,
        leaseIds: [grant.body.leaseId as string, verifyLease.body.leaseId as string, held.body.leaseId as string],
      };
    }

    /** Every secret and hash the store keeps for the board and its owner, and the secrets handed out. */
    async function secretsOf(board: TestBoard, ownerId: string, handedOut: string[]): Promise<string[]> {
      const s = store();
      const account = await s.accounts.get(ownerId);
      const tokens = await s.tokens.find({ boardId: board.projectId });
      const invitations = await s.invitations.find({ projectId: board.projectId });
      const sessions = await s.sessions.find({ accountId: ownerId });
      const cookies = [...board.owner.cookies.values()];
      const found = [
        account!.passwordHash,
        ...tokens.map((t) => t.secretHash),
        ...invitations.map((i) => i.tokenHash),
        ...sessions.map((x) => x._id),
        ...cookies,
        ...cookies.map(sha256),
        ...handedOut,
      ];
      expect(tokens.length).toBeGreaterThanOrEqual(2);
      expect(invitations.length).toBe(1);
      expect(sessions.length).toBeGreaterThanOrEqual(1);
      return found;
    }

    it('exports a board and its account with no secret or hash in them, and audits each export', async () => {
      const { board, worker, verifier, leaseIds } = await fixture();
      const ownerId = await accountOf(board.owner);
      const secrets = await secretsOf(board, ownerId, [
        ...leaseIds,
        worker.defaults.authorization!.slice(7),
        verifier.defaults.authorization!.slice(7),
      ]);
      const operator = await op();

      const boardExport = await operator.get(`/api/admin/export?projectId=${board.projectId}`);
      expect(boardExport.status, boardExport.text).toBe(200);
      expect(boardExport.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
      const accountExport = await operator.get(`/api/admin/export?userId=${ownerId}`);
      expect(accountExport.status, accountExport.text).toBe(200);
      for (const exported of [boardExport, accountExport]) {
        for (const secret of secrets) expect(exported.text.includes(secret), `an export holds ${secret}`).toBe(false);
        expect(exported.text).not.toMatch(/"(passwordHash|secretHash|tokenHash|leaseId|endedLeases)":/); // as keys (the first line names them)
        const all = lines(exported);
        expect(all[0]).toMatchObject({
          kind: 'export',
          format: 1,
          leftOut: { fields: { account: ['passwordHash'], token: ['secretHash'], invitation: ['tokenHash'] } },
        });
        expect(all.at(-1)).toEqual({ kind: 'end', lines: all.length });
        const kinds = new Set(all.map((l) => l.kind));
        for (const kind of ['board', 'item', 'member', 'invitation', 'token', 'event', 'shout', 'audit'])
          expect(kinds, kind).toContain(kind);
        expect(all.filter((l) => l.kind === 'item')).toHaveLength(5);
      }
      const account = lines(accountExport).find((l) => l.kind === 'account')!;
      expect(account.record).toMatchObject({ _id: ownerId, email: expect.any(String) });
      // The account's own tokens once, not again with its board.
      const tokenIds = lines(accountExport)
        .filter((l) => l.kind === 'token')
        .map((l) => l.record!._id);
      expect(new Set(tokenIds).size).toBe(tokenIds.length);

      const rows = await store().audit.find({ action: 'admin.export' } as never);
      expect(rows.map((r) => r.target)).toEqual(
        expect.arrayContaining([`board:${board.projectId}`, `account:${ownerId}`]),
      );
      expect(rows.find((r) => r.target === `board:${board.projectId}`)).toMatchObject({
        actor: expect.stringMatching(/^user:/),
        projectId: board.projectId,
      });

      expectError(await operator.get('/api/admin/export?projectId=no-such-board'), 404, 'NOT_FOUND');
      expectError(
        await operator.get(`/api/admin/export?projectId=${board.projectId}&userId=${ownerId}`),
        400,
        'INVALID_INPUT',
      );
      expectError(await operator.get('/api/admin/export'), 400, 'INVALID_INPUT');
    });

    it('imports a board’s export as a new board: the same graph and history, marked imported, and none of the old credentials', async () => {
      const { board, worker } = await fixture();
      const target = await signedUp(served.srv.url);
      const operator = await op();
      const exported = await operator.get(`/api/admin/export?projectId=${board.projectId}`);
      expect(exported.status).toBe(200);
      const before = (await store().boards.load(board.projectId))!;
      const oldEvents = await store().events.find({ boardId: board.projectId }, { sort: [['seq', 1]] });
      expect(oldEvents.length).toBe(before.record.lastSeq);

      const res = await operator.post('/api/admin/import', { userId: target.accountId, lines: lines(exported) });
      expect(res.status, res.text).toBe(201);
      const newId = res.body.projectId as string;
      expect(newId).not.toBe(board.projectId);
      expect(res.body).toMatchObject({
        from: board.projectId,
        items: 5,
        events: oldEvents.length,
        skipped: expect.objectContaining({ token: 2, invitation: 1, member: 1 }),
      });

      // The same items and graph; the held item is as its lease would leave it (ready, no lease).
      const after = (await store().boards.load(newId))!;
      const byId = (items: unknown[]) => new Map((items as BoardItem[]).map((i) => [i.workId, i]));
      const [was, is] = [byId(before.items), byId(after.items)];
      expect([...is.keys()].sort()).toEqual([...was.keys()].sort());
      for (const [workId, old] of was) {
        const now = is.get(workId)!;
        // An item not ready yet has no readyAt: undefined, or null as MongoDB keeps undefined.
        const { life, state, endedLeases: _e, readyAt, ...fields } = old;
        expect(now, workId).toMatchObject({ ...fields, state: state === 'claimed' ? 'ready' : state, endedLeases: [] });
        expect(now.readyAt ?? null, workId).toBe(readyAt ?? null);
        expect(now.life, workId).toEqual({
          ...life,
          lease: null,
          workHolders: state === 'claimed' ? [] : life.workHolders,
        });
      }
      expect(was.get('W-5')!.state).toBe('claimed');
      expect(is.get('W-3')).toMatchObject({ parentId: 'W-1', dependsOn: ['W-2'], state: 'ready' });
      expect(after.record).toMatchObject({
        nextWorkSeq: before.record.nextWorkSeq,
        lastSeq: before.record.lastSeq + 1,
        nextDeadline: null,
        counts: { pending: 1, ready: 3, done: 1 },
      });

      // The same history, each event marked imported, then the import itself.
      const newEvents = await store().events.find({ boardId: newId }, { sort: [['seq', 1]] });
      const strip = ({ seq, type, actor, workId, at, data }: EventRecord) => ({ seq, type, actor, workId, at, data });
      expect(newEvents.slice(0, -1).map((e) => strip({ ...e, data: { ...e.data, imported: undefined } }))).toEqual(
        oldEvents.map((e) => strip({ ...e, data: { ...e.data, imported: undefined } })),
      );
      expect(newEvents.slice(0, -1).every((e) => e.data.imported === true)).toBe(true);
      expect(newEvents.at(-1)).toMatchObject({
        seq: before.record.lastSeq + 1,
        type: 'board.imported',
        workId: null,
        data: { from: board.projectId, items: 5, events: oldEvents.length },
      });

      // None of the old credentials: no tokens, invitations or members but the new owner.
      expect(await store().tokens.count({ boardId: newId })).toBe(0);
      expect(await store().invitations.count({ projectId: newId })).toBe(0);
      expect((await store().members.find({ projectId: newId })).map((m) => [m.accountId, m.role])).toEqual([
        [target.accountId, 'owner'],
      ]);
      expectError(await worker.get(`/api/status?projectId=${newId}`), 403, 'PROJECT_SCOPE_DENIED');
      expectError(await board.owner.get(`/api/status?projectId=${newId}`), 403, 'PROJECT_SCOPE_DENIED');

      // The new owner has a working board that goes on from there.
      const listed = await target.client.get('/api/projects');
      expect(listed.body.projects.map((p: { projectId: string }) => p.projectId)).toContain(newId);
      const status = await target.client.get(`/api/status?projectId=${newId}`);
      expect(status.status, status.text).toBe(200);
      expect(status.body.counts).toMatchObject({ done: 1, ready: 3, pending: 1, claimed: 0 });
      const added = await target.client.post(`/api/items?projectId=${newId}`, {
        title: 'after the move',
        dependsOn: ['W-4'],
      });
      expect(added.status, added.text).toBe(201);
      expect(added.body).toMatchObject({ workId: `W-${before.record.nextWorkSeq}`, state: 'pending' });
      const activity = await target.client.get(`/api/activity?projectId=${newId}&limit=3`);
      expect(activity.body.events[0].seq).toBeGreaterThan(before.record.lastSeq + 1);
      // A token narrowed to one item reads the log too: the import's marker counts items, patches none.
      const narrow = await target.client.post('/api/accounts/tokens', {
        name: 'one item',
        scope: 'resource',
        projectId: newId,
        resources: ['W-1'],
      });
      expect(narrow.status, narrow.text).toBe(201);
      const asNarrow = new Client(served.srv.url, { authorization: `Bearer ${String(narrow.body.secret)}` });
      const seen = await asNarrow.get('/api/activity?limit=200');
      expect(seen.status, seen.text).toBe(200);
      expect(seen.body.events.find((e: { type: string }) => e.type === 'board.imported')).toMatchObject({
        data: { from: board.projectId, items: 5 },
      });

      const [row] = await store().audit.find({ target: `board:${newId}` });
      expect(row).toMatchObject({
        action: 'admin.import',
        projectId: newId,
        data: expect.objectContaining({ userId: target.accountId, from: board.projectId, items: 5, operator: true }),
      });
    });

    it('refuses an import into an account at its board limit, and one that is not a whole board’s export', async () => {
      const { board } = await fixture();
      const operator = await op();
      const exported = lines(await operator.get(`/api/admin/export?projectId=${board.projectId}`));
      const full = await signedUp(served.srv.url);
      for (const n of [2, 3])
        expect((await full.client.post('/api/projects', { name: `board ${n}` })).status).toBe(201);
      const owned = await store().projects.count({ ownerId: full.accountId });
      expect(owned).toBe(3);
      expectError(
        await operator.post('/api/admin/import', { userId: full.accountId, lines: exported }),
        403,
        'FREE_PROJECT_LIMIT',
      );
      expect(await store().projects.count({ ownerId: full.accountId })).toBe(owned);

      const room = await signedUp(served.srv.url);
      expectError(
        await operator.post('/api/admin/import', { userId: room.accountId, lines: exported.slice(0, -1) }),
        400,
        'INVALID_INPUT',
      ); // cut short
      const boardless = exported.filter((l) => l.kind !== 'board' && l.kind !== 'end');
      expectError(
        await operator.post('/api/admin/import', {
          userId: room.accountId,
          lines: [...boardless, { kind: 'end', lines: boardless.length + 1 }],
        }),
        400,
        'INVALID_INPUT',
      );
      const looped = exported.map((l) =>
        l.kind === 'item' && l.record!.workId === 'W-2' ? { ...l, record: { ...l.record, dependsOn: ['W-4'] } } : l,
      );
      expectError(
        await operator.post('/api/admin/import', { userId: room.accountId, lines: looped }),
        400,
        'CONFLICTING_DEPENDENCIES',
      );
      const tampered = exported.map((l) => (l.kind === 'item' ? { ...l, record: { ...l.record, secret: 'x' } } : l));
      expectError(
        await operator.post('/api/admin/import', { userId: room.accountId, lines: tampered }),
        400,
        'INVALID_INPUT',
      );
      expectError(
        await operator.post('/api/admin/import', { userId: 'no-such-account', lines: exported }),
        404,
        'NOT_FOUND',
      );
      expect(await store().projects.count({ ownerId: room.accountId })).toBe(1);
    });

    it('answers everyone but an operator as an unknown path, a large body included', async () => {
      const { board } = await fixture();
      const person = await signedUp(served.srv.url);
      const shape = (res: Res) => ({
        status: res.status,
        code: res.body?.error?.code,
        message: res.body?.error?.message,
      });
      const unknownGet = shape(await person.client.get('/api/admin/no-such-route'));
      expect(unknownGet.status).toBe(404);
      expect(shape(await person.client.get(`/api/admin/export?projectId=${board.projectId}`))).toEqual(unknownGet);
      expect(shape(await board.owner.get(`/api/admin/export?projectId=${board.projectId}`))).toEqual(unknownGet);
      expect(shape(await person.client.post('/api/admin/import', { userId: person.accountId, lines: [] }))).toEqual(
        shape(await person.client.post('/api/admin/no-such-route', { userId: person.accountId, lines: [] })),
      );
      // Past the server's body limit, the import answers a non-operator as any path would: 413, nothing read past the limit.
      const big = { userId: person.accountId, lines: [{ kind: 'export', padding: 'x'.repeat(400_000) }] };
      const unknownBig = shape(await person.client.post('/api/admin/no-such-route', big));
      expect(unknownBig.status).toBe(413);
      expect(shape(await person.client.post('/api/admin/import', big))).toEqual(unknownBig);
      // An operator may send it (and learns what is wrong with it).
      const operator = await op();
      expectError(await operator.post('/api/admin/import', big), 400, 'INVALID_INPUT');
      expect((await operator.get('/api/auth/me')).status).toBe(200); // its connection goes on (a body read in two steps leaves it reading)
    });

    it(
      'streams a 5,000-item board: every item is sent before the log is read, the log a page at a time, and it imports whole',
      { timeout: 600_000 },
      async () => {
        const board = await newBoard(served.srv.url);
        const agent = await board.agent('bulk');
        for (let made = 0; made < 5000; made += 500) {
          const res = await agent.post('/api/items/batch', {
            items: Array.from({ length: 500 }, (_, i) => ({
              title: `item ${made + i + 1}`,
              description: 'd'.repeat(200),
              ...(made + i > 0 ? { dependsOn: [`W-${made + i}`] } : {}),
            })),
          });
          expect(res.status, res.text).toBe(201);
        }
        const header = (await store().boards.get(board.projectId))!; // the header alone
        const lastSeq = header.lastSeq;
        // The events still in the header's outbox (the last commit's, and any before it whose copy to
        // the log had not landed when it was written) come from the header, not from the log.
        const held = (header.outbox ?? []).length;
        expect(lastSeq).toBeGreaterThanOrEqual(5000);

        // The log's reads of this board wait until every item has reached the client.
        const events = store().events;
        const find = events.find.bind(events);
        const limits: (number | undefined)[] = [];
        let release!: () => void;
        const released = new Promise<void>((resolve) => (release = resolve));
        events.find = (async (filter: { boardId?: string }, options?: FindOptions<EventRecord>) => {
          if (filter.boardId === board.projectId) {
            limits.push(options?.limit);
            await released;
          }
          return find(filter as never, options);
        }) as typeof events.find;
        restore.push(() => (events.find = find), release);

        const operator = await op();
        const cookie = [...operator.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
        const received: Buffer[] = [];
        let itemsSeen = 0;
        let allItems!: () => void;
        const itemsArrived = new Promise<void>((resolve) => (allItems = resolve));
        const done = new Promise<string>((resolve, reject) => {
          http
            .get(`${served.srv.url}/api/admin/export?projectId=${board.projectId}`, { headers: { cookie } }, (res) => {
              expect(res.statusCode).toBe(200);
              let partial = '';
              res.on('data', (chunk: Buffer) => {
                received.push(chunk);
                const whole = (partial + chunk.toString()).split('\n');
                partial = whole.pop()!;
                itemsSeen += whole.filter((line) => line.startsWith('{"kind":"item"')).length;
                if (itemsSeen === 5000) allItems();
              });
              res.on('end', () => resolve(Buffer.concat(received).toString()));
              res.on('error', reject);
            })
            .on('error', reject);
        });
        void done.catch(() => undefined); // awaited below; a failure before then is reported there
        await itemsArrived; // would never come if the body were built whole before sending
        await until(() => limits.length > 0); // the log's first page is asked for, and waits
        expect(limits.length).toBe(1);
        release();
        const text = await done;
        const all = text
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Line);
        expect(all.at(-1)).toEqual({ kind: 'end', lines: all.length });
        expect(all.filter((l) => l.kind === 'event').map((l) => l.record!.seq)).toEqual(
          Array.from({ length: lastSeq }, (_, i) => i + 1),
        );
        // A page at a time (the outbox's events come from the board's header, not the log).
        expect(limits.every((l) => l !== undefined && l <= PAGE)).toBe(true);
        expect(limits.length).toBeGreaterThanOrEqual(Math.floor((lastSeq - held) / PAGE));

        // Several megabytes: past the server's body limit, within the import's.
        const target = await signedUp(served.srv.url);
        const body = { userId: target.accountId, lines: all };
        expect(JSON.stringify(body).length).toBeGreaterThan(1024 * 1024);
        const imported = await operator.post('/api/admin/import', body);
        expect(imported.status, imported.text).toBe(201);
        expect(imported.body).toMatchObject({ items: 5000, events: lastSeq });
        const status = await target.client.get(`/api/status?projectId=${imported.body.projectId}`);
        expect(status.body.counts).toMatchObject({ ready: 1, pending: 4999 });
      },
    );
  });
}
