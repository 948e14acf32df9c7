// The operators' feedback triage (DOMAIN.md "Operators", "Feedback") over real HTTP, run on each
// store: the gate, every board's entries newest first with filters and pages, resolve and dismiss
// (a reason required to dismiss) giving the entry's place back, and promote: one item, labelled and
// traceable, even when two operators promote at the same moment (on one node, and on two over one
// store and one Redis, as several nodes run), and a promotion that died half way taken over later
// without making a second item.
// Every action's audit row is checked.
import { beforeAll, describe, expect, inject, it, onTestFinished } from 'vitest';
import { serveStore, type OpenedStore } from '../../support/stores.js';
import { Client, signedUp, type TestServer } from '../../support/server.js';
import { confirmedOperator, operatorEmail } from '../../support/operators.js';
import { newBoard, type TestBoard } from '../../support/board.js';
import { twoNodesOnRedis } from '../../support/redis-nodes.js';
import { expectError } from '../../support/expect-error.js';
import type { AuditRecord, Store } from '../../../store/ports/store.js';

// Every account here signs up from 127.0.0.1.
const ENV = { ADDRESS_RATE_PER_MINUTE: '100000' };
const STALE_MS = 120_000;

/** The operator audit rows about `target`, oldest first. */
const rows = async (srv: TestServer, target: string): Promise<AuditRecord[]> =>
  srv.store.audit.find(
    { target },
    {
      sort: [
        ['at', 1],
        ['_id', 1],
      ],
    },
  );

/** The board's items labelled for the entry. */
async function itemsFor(
  board: TestBoard,
  id: string,
): Promise<{ workId: string; title: string; labels: string[]; state: string; description: string; type: string }[]> {
  const res = await board.owner.get(`/api/items?projectId=${board.projectId}&limit=1000`);
  expect(res.status, res.text).toBe(200);
  return res.body.items.filter((i: { labels: string[] }) => i.labels.includes(`feedback:${id}`));
}

export function adminFeedbackFlow(name: string, open: () => Promise<OpenedStore>): void {
  describe(`operators' feedback triage on the ${name} store`, () => {
    const emails = [operatorEmail(), operatorEmail()];
    const env = { ...ENV, OPERATOR_EMAILS: emails.join(',') };
    const served = serveStore(open, env);
    const srv = () => served.srv;
    const redisUrl = inject('redisUrl');
    let op: Client;
    let op2: Client;
    let opId: string;
    beforeAll(async () => {
      ({ client: op, accountId: opId } = await confirmedOperator(srv(), emails[0]!));
      ({ client: op2 } = await confirmedOperator(srv(), emails[1]!));
    });

    /** An operator signed in on `node` (accounts and sessions are the shared store's). */
    async function operatorOn(node: TestServer, email: string): Promise<Client> {
      const client = new Client(node.url);
      expect((await client.post('/api/auth/login', { email, password: 'operator password 123' })).status).toBe(200);
      return client;
    }

    /** Both operators promote each of four entries at the same moment: one item each, audited once as made. */
    async function race(board: TestBoard, a: Client, b: Client): Promise<void> {
      const agent = await board.agent('reporter');
      const entries = [];
      for (let n = 0; n < 4; n++) entries.push(await posted(board, { text: `race ${n}`, kind: 'suggestion' }, agent));
      for (const entry of entries) {
        const both = await Promise.all([
          a.post(`/api/admin/feedback/${entry.id}/promote`, { reason: 'first' }),
          b.post(`/api/admin/feedback/${entry.id}/promote`, { reason: 'second' }),
        ]);
        for (const res of both) expect(res.status, res.text).toBe(200);
        expect(both.map((r) => r.body.created).sort()).toEqual([false, true]);
        expect(both[0]!.body.workId).toBe(both[1]!.body.workId);
        const made = await itemsFor(board, entry.id);
        expect(made.map((i) => i.workId)).toEqual([both[0]!.body.workId]);
        expect((await rows(srv(), `feedback:${entry.id}`)).map((r) => r.data.created).sort()).toEqual([false, true]);
      }
      const all = (await board.owner.get(`/api/items?projectId=${board.projectId}&limit=1000`)).body.items;
      expect(all).toHaveLength(4);
    }

    async function posted(
      board: TestBoard,
      body: Record<string, unknown> = { text: 'the verify gate needs a second agent we do not have', kind: 'problem' },
      agent?: Client,
    ) {
      const res = await (agent ?? (await board.agent('reporter'))).post('/api/feedback', body);
      expect(res.status, res.text).toBe(201);
      return res.body as { id: string; from: string };
    }

    it('answers everyone but an operator’s session as an unknown path', async () => {
      const board = await newBoard(srv().url);
      const { id } = await posted(board);
      const agent = await board.agent('agent', 'admin');
      const person = await signedUp(srv().url);
      for (const client of [new Client(srv().url), person.client, board.owner, agent]) {
        expectError(await client.get('/api/admin/feedback'), 404, 'NOT_FOUND');
        expectError(await client.post(`/api/admin/feedback/${id}/promote`, { reason: 'looks real' }), 404, 'NOT_FOUND');
        expectError(await client.post(`/api/admin/feedback/${id}/resolve`), 404, 'NOT_FOUND');
      }
      expect((await srv().store.feedback.get(id))!.status).toBe('open');
    });

    it('lists every board’s feedback newest first, by status and by board, page by page', async () => {
      const a = await newBoard(srv().url);
      const b = await newBoard(srv().url);
      const first = await posted(a);
      const second = await posted(b, { text: 'how do I read the spec?', kind: 'question' });
      const third = await posted(a, { text: 'shouts could carry links', kind: 'suggestion' });

      const page = await op.get('/api/admin/feedback?limit=2');
      expect(page.status, page.text).toBe(200);
      expect(page.body.feedback.map((e: { id: string }) => e.id)).toEqual([third.id, second.id]);
      const next = await op.get(`/api/admin/feedback?limit=2&cursor=${page.body.nextCursor}`);
      expect(next.body.feedback[0].id).toBe(first.id);

      const onA = await op.get(`/api/admin/feedback?projectId=${a.projectId}`);
      expect(onA.body).toEqual({
        feedback: [
          expect.objectContaining({ id: third.id, projectId: a.projectId, kind: 'suggestion' }),
          expect.objectContaining({ id: first.id }),
        ],
        nextCursor: null,
      });
      await op.post(`/api/admin/feedback/${first.id}/resolve`);
      const resolved = await op.get(`/api/admin/feedback?status=resolved&projectId=${a.projectId}`);
      expect(resolved.body.feedback.map((e: { id: string }) => e.id)).toEqual([first.id]);
      const openOnA = await op.get(`/api/admin/feedback?status=open&projectId=${a.projectId}`);
      expect(openOnA.body.feedback.map((e: { id: string }) => e.id)).toEqual([third.id]);

      expectError(await op.get('/api/admin/feedback?cursor=nope'), 400, 'INVALID_CURSOR');
      expectError(await op.get('/api/admin/feedback?status=closed'), 400, 'INVALID_INPUT');
    });

    it('resolves and dismisses open entries once, audited, and gives their places back', async () => {
      const board = await newBoard(srv().url);
      const agent = await board.agent('chatty');
      const ids: string[] = [];
      for (let n = 0; n < 20; n++) ids.push((await posted(board, { text: `note ${n}`, kind: 'suggestion' }, agent)).id);
      expectError(await agent.post('/api/feedback', { text: 'one more', kind: 'question' }), 429, 'FEEDBACK_LIMIT');

      const resolved = await op.post(`/api/admin/feedback/${ids[0]}/resolve`, { reason: 'fixed in the docs' });
      expect(resolved.status, resolved.text).toBe(200);
      expect(resolved.body.feedback).toMatchObject({
        id: ids[0],
        status: 'resolved',
        closedBy: `user:${opId}`,
        closedAt: expect.any(String),
        reason: 'fixed in the docs',
      });
      expect((await agent.post('/api/feedback', { text: 'one more', kind: 'question' })).status).toBe(201);
      expectError(await agent.post('/api/feedback', { text: 'and another', kind: 'question' }), 429, 'FEEDBACK_LIMIT');

      expectError(await op.post(`/api/admin/feedback/${ids[1]}/dismiss`, {}), 400, 'INVALID_INPUT');
      const dismissed = await op.post(`/api/admin/feedback/${ids[1]}/dismiss`, { reason: 'not about this service' });
      expect(dismissed.body.feedback).toMatchObject({ status: 'dismissed', reason: 'not about this service' });
      expect((await agent.post('/api/feedback', { text: 'and another', kind: 'question' })).status).toBe(201);

      const again = await op2.post(`/api/admin/feedback/${ids[0]}/dismiss`, { reason: 'late to the party' });
      expectError(again, 409, 'FEEDBACK_CLOSED');
      expect(again.body.error.details).toMatchObject({ status: 'resolved' });
      expectError(await op.post(`/api/admin/feedback/${ids[1]}/resolve`), 409, 'FEEDBACK_CLOSED');
      expectError(await op.post('/api/admin/feedback/fb_00000000000000000000/resolve'), 404, 'FEEDBACK_NOT_FOUND');
      expectError(
        await op.post('/api/admin/feedback/not-an-id/promote', { reason: 'typo' }),
        404,
        'FEEDBACK_NOT_FOUND',
      );

      const [resolveRow] = await rows(srv(), `feedback:${ids[0]}`);
      expect(await rows(srv(), `feedback:${ids[0]}`)).toHaveLength(1);
      expect(resolveRow).toMatchObject({
        action: 'admin.feedback.resolve',
        actor: `user:${opId}`,
        projectId: board.projectId,
        data: { reason: 'fixed in the docs', operator: true },
      });
      expect(await rows(srv(), `feedback:${ids[1]}`)).toEqual([
        expect.objectContaining({
          action: 'admin.feedback.dismiss',
          data: expect.objectContaining({ reason: 'not about this service' }),
        }),
      ]);
      expect(
        (await board.owner.get(`/api/feedback?projectId=${board.projectId}&status=resolved`)).body.feedback.map(
          (e: { id: string }) => e.id,
        ),
      ).toEqual([ids[0]]);
    });

    it('promotes an entry into one item on its board, labelled and traceable, and promotes it once', async () => {
      const board = await newBoard(srv().url);
      const worker = await board.agent('worker');
      await worker.post('/api/items', { title: 'lease renewals' });
      const entry = await posted(
        board,
        {
          text: 'Renewals past the 24 h cap fail silently\nThey should say so in the reply.',
          kind: 'problem',
          workId: 'W-1',
        },
        worker,
      );
      expectError(await op.post(`/api/admin/feedback/${entry.id}/promote`, {}), 400, 'INVALID_INPUT');

      const promoted = await op.post(`/api/admin/feedback/${entry.id}/promote`, { reason: 'real bug' });
      expect(promoted.status, promoted.text).toBe(200);
      expect(promoted.body).toEqual({
        feedback: expect.objectContaining({
          id: entry.id,
          status: 'promoted',
          promotedWorkId: 'W-2',
          reason: 'real bug',
        }),
        workId: 'W-2',
        created: true,
      });
      const item = (await board.owner.get(`/api/items/W-2?projectId=${board.projectId}`)).body;
      expect(item).toMatchObject({
        title: 'Renewals past the 24 h cap fail silently',
        type: 'bug',
        labels: ['feedback', `feedback:${entry.id}`],
        state: 'ready',
      });
      expect(item.description).toContain('They should say so in the reply.');
      expect(item.description).toContain(`feedback ${entry.id}`);
      expect(item.description).toContain(worker.principal);

      const again = await op2.post(`/api/admin/feedback/${entry.id}/promote`, { reason: 'me too' });
      expect(again.body).toMatchObject({ workId: 'W-2', created: false });
      expect(await itemsFor(board, entry.id)).toHaveLength(1);
      expectError(await op.post(`/api/admin/feedback/${entry.id}/resolve`), 409, 'FEEDBACK_CLOSED');
      expect((await board.owner.get(`/api/feedback?projectId=${board.projectId}`)).body.feedback[0]).toMatchObject({
        status: 'promoted',
        promotedWorkId: 'W-2',
      });

      const audit = await rows(srv(), `feedback:${entry.id}`);
      expect(audit.map((r) => [r.action, r.data.workId, r.data.created, r.data.reason])).toEqual([
        ['admin.feedback.promote', 'W-2', true, 'real bug'],
        ['admin.feedback.promote', 'W-2', false, 'me too'],
      ]);
      // Promoted, the entry no longer counts as open.
      expect((await srv().store.feedbackLedgers.get(board.projectId))!.open.map((p) => p.id)).not.toContain(entry.id);
    });

    it('makes one item when two operators promote the same entries at the same moment on one node', async () => {
      await race(await newBoard(srv().url), op, op2);
    }, 60_000);

    // Several nodes on one store run with Redis (docs/operating.md): without a bus, a node would
    // hold its copy of a board another node changed, as the sole writer it then believes it is.
    it.skipIf(!redisUrl)(
      'makes one item when two operators on two nodes (one store, one Redis) promote the same entries at the same moment',
      async () => {
        const shared: Store = { ...srv().store, close: async () => undefined };
        const nodes = await twoNodesOnRedis(redisUrl!, { env, homes: true, store: shared });
        onTestFinished(() => nodes.stop());
        const [a, b] = [await operatorOn(nodes.a, emails[0]!), await operatorOn(nodes.b, emails[1]!)];
        // Read on either node, the board shows the one item.
        await race(await newBoard(nodes.a.url), a, b);
        await race(await newBoard(nodes.b.url), a, b);
      },
      60_000,
    );

    it('waits for a promotion under way, then takes over one that died, without making a second item', async () => {
      const board = await newBoard(srv().url);
      const store = srv().store;
      const claim = async (id: string, at: number) => {
        const entry = (await store.feedback.get(id))!;
        expect(
          await store.feedback.update(id, entry.version, {
            status: 'promoting',
            promotion: { token: 'dead-node', by: 'user:gone', at },
          }),
        ).not.toBeNull();
      };

      // A promotion under way elsewhere (its claim is fresh): this one waits, then says so.
      const stuck = await posted(board);
      await claim(stuck.id, srv().now());
      const busy = await op.post(`/api/admin/feedback/${stuck.id}/promote`, { reason: 'now' });
      expectError(busy, 503, 'FEEDBACK_BUSY');
      expect(busy.headers.get('retry-after')).toBe('1');
      expectError(await op.post(`/api/admin/feedback/${stuck.id}/resolve`), 409, 'FEEDBACK_CLOSED');
      expect(await itemsFor(board, stuck.id)).toHaveLength(0);

      // It died before making the item: past the staleness bound, the next promote makes it.
      srv().advance(STALE_MS + 1000);
      const taken = await op.post(`/api/admin/feedback/${stuck.id}/promote`, { reason: 'taking over' });
      expect(taken.status, taken.text).toBe(200);
      expect(taken.body).toMatchObject({ created: true, feedback: { status: 'promoted' } });
      expect((await itemsFor(board, stuck.id)).map((i) => i.workId)).toEqual([taken.body.workId]);
      expect((await rows(srv(), `feedback:${stuck.id}`)).at(-1)!.data).toMatchObject({ takeover: true, created: true });

      // It died after making the item: the next promote adopts that item.
      const half = await posted(board, { text: 'half done', kind: 'question' });
      const made = await (
        await board.agent('ghost', 'admin')
      ).post('/api/items', { title: 'half done', labels: ['feedback', `feedback:${half.id}`] });
      expect(made.status).toBe(201);
      await claim(half.id, srv().now() - STALE_MS - 1000);
      const adopted = await op.post(`/api/admin/feedback/${half.id}/promote`, { reason: 'finish it' });
      expect(adopted.body).toMatchObject({
        workId: made.body.workId,
        created: false,
        feedback: { status: 'promoted', promotedWorkId: made.body.workId },
      });
      expect(await itemsFor(board, half.id)).toHaveLength(1);
    }, 60_000);

    it('goes with its board: a deleted board leaves no feedback behind', async () => {
      const { client: owner } = await signedUp(srv().url);
      const created = await owner.post('/api/projects', { name: 'short-lived' });
      expect(created.status, created.text).toBe(201);
      const projectId = created.body.projectId as string;
      const token = await owner.post('/api/accounts/tokens', { name: 'agent', scope: 'workspace', projectId });
      const agent = new Client(srv().url, { authorization: `Bearer ${token.body.secret}` });
      const entry = (await agent.post('/api/feedback', { text: 'bye', kind: 'question' })).body;
      expect(await srv().store.feedbackLedgers.get(projectId)).not.toBeNull();
      expect((await owner.request('DELETE', `/api/projects/${projectId}`)).status).toBe(204);

      expect(await srv().store.feedback.get(entry.id)).toBeNull();
      expect(await srv().store.feedbackLedgers.get(projectId)).toBeNull();
      expectError(
        await op.post(`/api/admin/feedback/${entry.id}/promote`, { reason: 'too late' }),
        404,
        'FEEDBACK_NOT_FOUND',
      );
    });
  });
}
