// What a resource token naming work ids sees of a busy board (DOMAIN.md "Token scopes"), over real
// HTTP and WebSocket, run on each store adapter: its socket beside a workspace token's receives
// exactly its items' events and patches, the board-level events without other items' data, and
// the shouts it may hear, in order and with no gap; the workspace token's everything. Every REST
// read and socket message kind shows it the same set of items, so a second copy of the rule that
// disagreed with the first would fail here.
import { describe, expect, it } from 'vitest';
import { head, newBoard } from '../support/board.js';
import { expectError } from '../support/expect-error.js';
import { Client } from '../support/server.js';
import { openSocket, type TestSocket } from '../support/socket.js';
import { serveStore, type OpenedStore } from '../support/stores.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Message = any;

const MINE = new Set(['W-2', 'W-5']);
/** Every other item's title and every shout the token may not hear holds this word: none may reach it. */
const SECRET = 'secret';

/** The rule as DOMAIN.md states it, written out on its own: what of `e` a token naming MINE may see. */
function asMineSees(e: Message): Message | null {
  if (e.workId !== null) return MINE.has(e.workId) ? e : null;
  if (/^(doctrine|spec)\./.test(e.type)) return null;
  if (e.type !== 'items.reordered') return e;
  const order = (e.data.order as string[]).filter((w) => MINE.has(w));
  const items = ((e.data.items ?? []) as { workId: string }[]).filter((p) => MINE.has(p.workId));
  if (!order.length && !items.length) return null;
  return { ...e, data: { ...e.data, order, ...(items.length ? { items } : {}) } };
}

/** Every message up to the answer of a ping sent now: what the socket had been sent until then. */
async function drain(socket: TestSocket): Promise<Message[]> {
  socket.send({ type: 'ping' });
  const out: Message[] = [];
  for (let m = await socket.next(); m.type !== 'pong'; m = await socket.next()) out.push(m);
  return out;
}

/** Messages until an event of seq `last` arrived, then everything else sent before a ping's answer. */
async function eventsUntil(socket: TestSocket, last: number): Promise<Message[]> {
  const out: Message[] = [];
  for (;;) {
    const m = await socket.next(undefined, 20_000);
    out.push(m);
    if (m.type === 'event' && m.seq >= last) return [...out, ...(await drain(socket))];
  }
}

/** The work ids whose data a set of events, shouts or cards carries. */
function itemsNamed(things: Message[]): string[] {
  const named = new Set<string>();
  for (const t of things) {
    if (t.workId) named.add(t.workId);
    if (t.data?.item?.workId) named.add(t.data.item.workId);
    for (const p of t.data?.items ?? []) named.add(p.workId);
  }
  return [...named].sort();
}

const comparable = (e: Message) => ({ seq: e.seq, type: e.type, workId: e.workId, data: e.data });

export function visibilityFlow(name: string, open: () => Promise<OpenedStore>): void {
  describe(`what a resource token sees of a board, on the ${name} store`, () => {
    const served = serveStore(open);
    const url = () => served.srv.url;

    it('streams, replays, snapshots and answers over REST exactly its items, the board-level events and the shouts it may hear; a workspace token everything', async () => {
      const board = await newBoard(url());
      const q = `?projectId=${board.projectId}`;
      const lead = await board.agent('lead', 'admin');
      const workers = [await board.agent('w1'), await board.agent('w2'), await board.agent('w3')];
      const titles = [
        'secret one',
        'mine two',
        'secret three',
        'secret four',
        'mine five',
        'secret six',
        'secret seven',
        'secret eight',
      ];
      const batch = await lead.post('/api/items/batch', {
        items: titles.map((title, i) => ({ title, ...(i === 2 ? { dependsOn: ['W-2'] } : {}) })),
      });
      expect(batch.status).toBe(201);
      const issued = await board.owner.post('/api/accounts/tokens', {
        name: 'narrow',
        scope: 'resource',
        projectId: board.projectId,
        resources: [...MINE],
      });
      expect(issued.status).toBe(201);
      const narrow = new Client(url(), { authorization: `Bearer ${issued.body.secret}` });
      const narrowPrincipal = `agent:${issued.body.token.agentId}`;

      const watch = async (authorization: string) => {
        const socket = await openSocket(url(), { authorization });
        socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity', 'shouts'], since: 0 }); // the batch's events first, then live
        expect(await socket.next((m) => m.type === 'subscribed' || m.type === 'error')).toMatchObject({
          type: 'subscribed',
        });
        return socket;
      };
      const liveNarrow = await watch(narrow.defaults.authorization!);
      const liveWide = await watch(workers[0]!.defaults.authorization!);

      // A busy board: reorders, renames, a pause, doctrine, shouts of every kind, and three workers
      // pulling work while the narrow token works its own.
      expect((await lead.post('/api/items/reorder', { workIds: ['W-4', 'W-2'] })).status).toBe(200);
      expect((await lead.post('/api/items/reorder', { workIds: ['W-6', 'W-7'] })).status).toBe(200);
      expect((await lead.request('PATCH', '/api/items/W-2', { json: { title: 'mine two, renamed' } })).status).toBe(
        200,
      );
      expect((await lead.request('PATCH', '/api/items/W-3', { json: { title: 'secret three, renamed' } })).status).toBe(
        200,
      );
      expect(
        (await board.owner.request('PATCH', `/api/projects/${board.projectId}`, { json: { paused: true } })).status,
      ).toBe(200);
      expect(
        (await board.owner.request('PATCH', `/api/projects/${board.projectId}`, { json: { paused: false } })).status,
      ).toBe(200);
      expect(
        (await lead.post('/api/doctrine', { slug: 'secret-rule', title: 'secret rule', text: 'secret text' })).status,
      ).toBe(201);
      const mine = await narrow.post('/api/claim', { workId: 'W-5' });
      expect(mine.status).toBe(200);
      const shouts = [
        [workers[0]!, { text: 'hello everyone' }],
        [workers[1]!, { text: 'about mine two', workId: 'W-2' }],
        [workers[1]!, { text: 'secret about three', workId: 'W-3' }],
        [workers[2]!, { text: 'psst, narrow', to: narrowPrincipal }],
        [workers[2]!, { text: 'secret between workers', to: workers[0]!.principal }],
        [narrow, { text: 'working on five', workId: 'W-5' }],
      ] as const;
      for (const [from, shout] of shouts) expect((await from.post('/api/shouts', shout)).status).toBe(201);
      await Promise.all(
        workers.map(async (worker, n) => {
          for (;;) {
            const claim = await worker.post('/api/claim', {});
            if (claim.status === 409) return;
            expect(claim.status).toBe(200);
            expect(
              (
                await worker.post('/api/items/' + claim.body.workId + '/progress', {
                  leaseId: claim.body.leaseId,
                  note: `step ${n}`,
                })
              ).status,
            ).toBe(200);
            expect(
              (
                await worker.post('/api/submit', {
                  leaseId: claim.body.leaseId,
                  head: head(Number(claim.body.workId.slice(2))),
                })
              ).status,
            ).toBe(200);
          }
        }),
      );
      expect((await narrow.post('/api/submit', { leaseId: mine.body.leaseId, head: head(5) })).status).toBe(200);
      const last = (await board.owner.get(`/api/status${q}`)).body.lastSeq as number;

      // The workspace token hears every event once, in order, and every shout it may.
      const wide = await eventsUntil(liveWide, last);
      const log = wide.filter((m) => m.type === 'event');
      expect(log.map((m) => m.seq)).toEqual(Array.from({ length: last }, (_, i) => i + 1));
      expect(wide.filter((m) => m.type === 'shout').map((m) => m.shout.text)).toEqual([
        'hello everyone',
        'about mine two',
        'secret about three',
        'secret between workers',
        'working on five',
      ]);
      const expected = log.map((m) => asMineSees({ seq: m.seq, ...m.event })).filter((e) => e !== null);
      expect(
        expected.some((e) => e.type === 'board.paused') && expected.some((e) => e.type === 'items.reordered'),
      ).toBe(true);

      // The narrow socket, live: exactly those, in order, and nothing of another item.
      const lastMine = expected.at(-1)!.seq as number;
      const heard = await eventsUntil(liveNarrow, lastMine);
      const live = heard.filter((m) => m.type === 'event').map((m) => ({ seq: m.seq, ...m.event }));
      expect(live.map(comparable)).toEqual(expected.map(comparable));
      const liveShouts = heard.filter((m) => m.type === 'shout').map((m) => m.shout);
      expect(liveShouts.map((s) => s.text)).toEqual([
        'hello everyone',
        'about mine two',
        'psst, narrow',
        'working on five',
      ]);
      expect(JSON.stringify(heard)).not.toContain(SECRET);

      // Replayed from the start, and from a snapshot: the same.
      const replaying = await openSocket(url(), { authorization: narrow.defaults.authorization! });
      replaying.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity', 'shouts'], since: 0 });
      const replayed = (await eventsUntil(replaying, lastMine))
        .filter((m) => m.type === 'event')
        .map((m) => ({ seq: m.seq, ...m.event }));
      expect(replayed.map(comparable)).toEqual(expected.map(comparable));
      const snapshotting = await openSocket(url(), { authorization: narrow.defaults.authorization! });
      snapshotting.send({
        type: 'subscribe',
        boardId: board.projectId,
        topics: ['activity', 'shouts'],
        snapshot: true,
      });
      const snapshot = await snapshotting.next((m) => m.type === 'snapshot' || m.type === 'error');
      expect(snapshot).toMatchObject({ type: 'snapshot', last: true, total: 2 });
      expect(snapshot.items.map((c: Message) => [c.workId, c.state])).toEqual([
        ['W-2', 'done'],
        ['W-5', 'done'],
      ]);
      expect(snapshot.recent.map(comparable)).toEqual(expected.slice(-50).reverse().map(comparable));
      expect(snapshot.shouts.map((s: Message) => s.text)).toEqual([
        'working on five',
        'psst, narrow',
        'about mine two',
        'hello everyone',
      ]);
      expect(JSON.stringify(snapshot)).not.toContain(SECRET);
      snapshotting.send({ type: 'subscribe', boardId: board.projectId, topics: ['presence'] });
      expect(await snapshotting.next((m) => m.type === 'error')).toMatchObject({
        error: { code: 'PROJECT_SCOPE_DENIED' },
      });

      // Over REST, the same: its items, the log as the socket had it (paged), its shouts.
      const items = await narrow.get(`/api/items${q}`);
      expect(items.body.items.map((i: Message) => i.workId)).toEqual(['W-2', 'W-5']);
      expectError(await narrow.get(`/api/items/W-3${q}`), 403, 'PROJECT_SCOPE_DENIED');
      expectError(await narrow.get(`/api/agents${q}`), 403, 'PROJECT_SCOPE_DENIED');
      expectError(await narrow.get(`/api/shouts${q}&workId=W-3`), 403, 'PROJECT_SCOPE_DENIED');
      const activity: Message[] = [];
      for (let before: number | null = null, pages = 0; pages === 0 || before !== null; pages++) {
        const page = await narrow.get(`/api/activity${q}&limit=7${before === null ? '' : `&before=${before}`}`);
        expect(page.status).toBe(200);
        activity.push(...page.body.events);
        before = page.body.nextBefore;
      }
      expect(activity.reverse().map(comparable)).toEqual(expected.map(comparable));
      const history = await narrow.post(`/api/history/query${q}`, { limit: 500 });
      expect(history.body.events.reverse().map(comparable)).toEqual(expected.map(comparable));
      const restShouts = (await narrow.get(`/api/shouts${q}&limit=500`)).body.shouts;
      expect(restShouts.map((s: Message) => s.id)).toEqual(liveShouts.map((s) => s.id));
      expect(JSON.stringify([items.body, activity, history.body, restShouts])).not.toContain(SECRET);

      // One rule: every channel names the same items.
      const channels = {
        live,
        replayed,
        snapshotCards: snapshot.items,
        items: items.body.items,
        activity,
        history: history.body.events,
        liveShouts,
        restShouts,
      };
      for (const [channel, seen] of Object.entries(channels))
        expect([channel, itemsNamed(seen)]).toEqual([channel, [...MINE]]);
      for (const socket of [liveNarrow, liveWide, replaying, snapshotting]) socket.ws.close();
    });
  });
}
