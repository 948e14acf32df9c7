// Feedback from the board's side (DOMAIN.md "Feedback") over real HTTP, run on each store: posting
// (member, write budget, an item that must exist, resource tokens naming the group), reading (owner
// and admins only, newest first, page by page), and the limits: exactly 20 open per principal and
// 500 per board, with 429 FEEDBACK_LIMIT and nothing written, holding when posts race on two nodes
// over one store, and places left behind by a node that died cleared by the next post at a limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveStore, type OpenedStore } from '../support/stores.js';
import { Client, startTestServer, type Res, type TestServer } from '../support/server.js';
import { newBoard, type TestBoard } from '../support/board.js';
import { expectError } from '../support/expect-error.js';
import type { Store } from '../../store/ports/store.js';

// Every account here signs up from 127.0.0.1.
const ENV = { ADDRESS_RATE_PER_MINUTE: '100000' };

const note = (n: number) => ({ text: `the spec clause on leases is unclear (${n})`, kind: 'problem' });

/** The board's entries as its owner reads them, every page. */
async function allFeedback(board: TestBoard, query = ''): Promise<{ id: string; from: string; status: string }[]> {
  const entries = [];
  for (let cursor: string | null = null; ;) {
    const res: Res = await board.owner.get(
      `/api/feedback?projectId=${board.projectId}&limit=200${query}${cursor ? `&cursor=${cursor}` : ''}`,
    );
    expect(res.status, res.text).toBe(200);
    entries.push(...res.body.feedback);
    cursor = res.body.nextCursor;
    if (!cursor) return entries;
  }
}

async function postMany(agent: Client, count: number, from = 0): Promise<void> {
  for (let n = from; n < from + count; n++) {
    const res = await agent.post('/api/feedback', note(n));
    expect(res.status, res.text).toBe(201);
  }
}

export function feedbackFlow(name: string, open: () => Promise<OpenedStore>): void {
  describe(`feedback on the ${name} store`, () => {
    const served = serveStore(open, ENV);
    const srv = () => served.srv;
    /** A second node over the same store (no bus between them: feedback needs none), for races between nodes. */
    let other: TestServer;
    beforeAll(async () => {
      const shared: Store = { ...srv().store, close: async () => undefined };
      other = await startTestServer(ENV, shared);
    });
    afterAll(async () => {
      await other?.stop();
    });

    it('takes a member’s feedback, about the board or one of its items, against the write budget', async () => {
      const board = await newBoard(srv().url);
      const agent = await board.agent('worker');
      expect((await agent.post('/api/items', { title: 'flaky check' })).status).toBe(201);

      const posted = await agent.post('/api/feedback', {
        text: '  the check on W-1 fails one run in three  ',
        kind: 'problem',
        workId: 'W-1',
      });
      expect(posted.status, posted.text).toBe(201);
      expect(posted.body).toEqual({
        id: expect.stringMatching(/^fb_[0-9a-z]{20}$/),
        projectId: board.projectId,
        from: agent.principal,
        kind: 'problem',
        text: 'the check on W-1 fails one run in three',
        workId: 'W-1',
        status: 'open',
        at: expect.any(String),
        closedBy: null,
        closedAt: null,
        reason: null,
        promotedWorkId: null,
      });
      const before = Number(posted.headers.get('x-ratelimit-write-remaining'));
      const second = await agent.post('/api/feedback', {
        text: 'could claims say why nothing is ready?',
        kind: 'suggestion',
      });
      expect(second.status).toBe(201);
      expect(Number(second.headers.get('x-ratelimit-write-remaining'))).toBe(before - 1);

      expectError(
        await agent.post('/api/feedback', { text: 'about nothing', kind: 'question', workId: 'W-99' }),
        404,
        'ITEM_NOT_FOUND',
      );
      expectError(await agent.post('/api/feedback', { text: 'x', kind: 'complaint' }), 400, 'INVALID_INPUT');
      expectError(
        await agent.post('/api/feedback', { text: 'x'.repeat(2001), kind: 'question' }),
        400,
        'INVALID_INPUT',
      );
      expectError(await agent.post('/api/feedback', { text: '   ', kind: 'question' }), 400, 'INVALID_INPUT');
      expect((await allFeedback(board)).map((e) => e.id)).toEqual([second.body.id, posted.body.id]);
    });

    it('lets the owner and admins read the board’s feedback, newest first and page by page, and no one else', async () => {
      const board = await newBoard(srv().url);
      const member = await board.agent('worker');
      const viewer = await board.agent('watcher', 'viewer');
      const admin = await board.agent('lead', 'admin');
      const ids: string[] = [];
      for (let n = 0; n < 5; n++) ids.push((await member.post('/api/feedback', note(n))).body.id);
      ids.reverse();

      expectError(await viewer.post('/api/feedback', note(9)), 403, 'ROLE_REQUIRED');
      expectError(await viewer.get('/api/feedback'), 403, 'ROLE_REQUIRED');
      expectError(await member.get('/api/feedback'), 403, 'ROLE_REQUIRED');

      const first = await admin.get('/api/feedback?limit=2');
      expect(first.status, first.text).toBe(200);
      expect(first.body.feedback.map((e: { id: string }) => e.id)).toEqual(ids.slice(0, 2));
      const second = await admin.get(`/api/feedback?limit=2&cursor=${first.body.nextCursor}`);
      expect(second.body.feedback.map((e: { id: string }) => e.id)).toEqual(ids.slice(2, 4));
      const last = await board.owner.get(
        `/api/feedback?projectId=${board.projectId}&limit=2&cursor=${second.body.nextCursor}`,
      );
      expect(last.body).toEqual({
        feedback: [expect.objectContaining({ id: ids[4], status: 'open' })],
        nextCursor: null,
      });
      expect((await admin.get('/api/feedback?status=resolved')).body).toEqual({ feedback: [], nextCursor: null });
      expectError(await admin.get('/api/feedback?cursor=not-a-cursor'), 400, 'INVALID_CURSOR');

      // Another board's reader sees none of them.
      const elsewhere = await newBoard(srv().url);
      expect((await allFeedback(elsewhere)).length).toBe(0);
    });

    it('lets a resource token naming the feedback group post, and no other resource token', async () => {
      const board = await newBoard(srv().url);
      const issue = async (resources: string[]) => {
        const res = await board.owner.post('/api/accounts/tokens', {
          name: 'narrow',
          scope: 'resource',
          projectId: board.projectId,
          resources,
        });
        expect(res.status, res.text).toBe(201);
        return new Client(srv().url, { authorization: `Bearer ${res.body.secret}` });
      };
      const feedback = await issue(['feedback']);
      const posted = await feedback.post('/api/feedback', note(1));
      expect(posted.status, posted.text).toBe(201);
      expectError(await feedback.get('/api/feedback'), 403, 'ROLE_REQUIRED');
      expectError(await (await issue(['shouts'])).post('/api/feedback', note(2)), 403, 'PROJECT_SCOPE_DENIED');
      expect((await allFeedback(board)).map((e) => e.id)).toEqual([posted.body.id]);
    });

    it('holds exactly 20 open entries per principal: the 21st is 429 FEEDBACK_LIMIT and nothing is written', async () => {
      const board = await newBoard(srv().url);
      const agent = await board.agent('chatty');
      await postMany(agent, 20);
      const refused = await agent.post('/api/feedback', note(20));
      expectError(refused, 429, 'FEEDBACK_LIMIT');
      expect(refused.body.error.details).toEqual({ scope: 'principal', limit: 20, open: 20 });
      expect(refused.headers.get('x-ratelimit-write-remaining')).toMatch(/^\d+$/);
      const entries = await allFeedback(board);
      expect(entries.length).toBe(20);
      expect(entries.every((e) => e.from === agent.principal && e.status === 'open')).toBe(true);
      // The limit is the principal's: another agent on the board posts.
      expect((await (await board.agent('quiet')).post('/api/feedback', note(0))).status).toBe(201);
    });

    it('holds exactly 500 open entries per board: the 501st is 429 FEEDBACK_LIMIT and nothing is written', async () => {
      const board = await newBoard(srv().url);
      const agents = await Promise.all(Array.from({ length: 25 }, (_, i) => board.agent(`agent-${i}`)));
      await Promise.all(agents.map((agent) => postMany(agent, 20)));
      const late = await board.agent('late');
      const refused = await late.post('/api/feedback', note(0));
      expectError(refused, 429, 'FEEDBACK_LIMIT');
      expect(refused.body.error.details).toEqual({ scope: 'board', limit: 500, open: 500 });
      expectError(await agents[0]!.post('/api/feedback', note(99)), 429, 'FEEDBACK_LIMIT');
      const entries = await allFeedback(board);
      expect(entries.length).toBe(500);
      expect(entries.some((e) => e.from === late.principal)).toBe(false);
      expect(await srv().store.feedback.count({ boardId: board.projectId })).toBe(500);
    }, 180_000);

    it('lets one of several posts racing for the last place at 19 open through, on two nodes over one store', async () => {
      const board = await newBoard(srv().url);
      const agent = await board.agent('racer');
      await postMany(agent, 19);
      const secret = agent.defaults.authorization!;
      const onOther = new Client(other.url, { authorization: secret });
      const raced = await Promise.all(
        [agent, onOther, agent, onOther, agent, onOther].map((c, i) => c.post('/api/feedback', note(100 + i))),
      );
      expect(raced.map((r) => r.status).sort()).toEqual([201, 429, 429, 429, 429, 429]);
      for (const r of raced.filter((r) => r.status === 429)) expectError(r, 429, 'FEEDBACK_LIMIT');
      expect((await allFeedback(board)).length).toBe(20);
      expect(await srv().store.feedback.count({ boardId: board.projectId })).toBe(20);
    }, 60_000);

    it('clears places a node that died left behind, once they are stale, when a post meets a limit', async () => {
      const board = await newBoard(srv().url);
      const agent = await board.agent('survivor');
      const store = srv().store;
      await postMany(agent, 18);
      // A node died after taking two places and before writing their entries.
      const ledger = (await store.feedbackLedgers.get(board.projectId))!;
      const ghosts = [1, 2].map((n) => ({ id: `fb_ghost${n}`, from: agent.principal, at: srv().now() }));
      expect(
        await store.feedbackLedgers.update(board.projectId, ledger.version, { open: [...ledger.open, ...ghosts] }),
      ).not.toBeNull();
      expectError(await agent.post('/api/feedback', note(18)), 429, 'FEEDBACK_LIMIT');
      srv().advance(61_000);
      expect((await agent.post('/api/feedback', note(18))).status).toBe(201);
      expect((await agent.post('/api/feedback', note(19))).status).toBe(201);
      expectError(await agent.post('/api/feedback', note(20)), 429, 'FEEDBACK_LIMIT');

      // A node died after closing an entry and before giving its place back.
      const [entry] = await store.feedback.find({ boardId: board.projectId }, { limit: 1 });
      expect(await store.feedback.update(entry!._id, entry!.version, { status: 'resolved' })).not.toBeNull();
      expect((await agent.post('/api/feedback', note(21))).status).toBe(201);
      expect((await allFeedback(board, '&status=open')).length).toBe(20);
      expect((await store.feedbackLedgers.get(board.projectId))!.open.length).toBe(20);
    });
  });
}
