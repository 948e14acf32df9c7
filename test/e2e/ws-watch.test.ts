// Watching a board over the socket alone: a subscription that starts from a snapshot (the board's
// cards in pages, the newest events and shouts), events that carry each item's patch so a watcher
// applies them without reading items back (and never a lease id), the roster and heartbeats on the
// `presence` topic, missed shouts on resume, and the shout feed read newest first over REST.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digest, head, newBoard } from '../support/board.js';
import { Client, startTestServer, type TestServer } from '../support/server.js';
import { openSocket, type TestSocket } from '../support/socket.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ LEASE_MIN_TTL_SECONDS: '1' });
});
afterAll(async () => {
  await srv.stop();
});

type Card = Record<string, unknown> & { workId: string; version: number };
const bearerOf = (client: { defaults: Record<string, string> }) => ({ authorization: client.defaults.authorization! });
const onBoard = (projectId: string, path: string) => `${path}${path.includes('?') ? '&' : '?'}projectId=${projectId}`;
/** The fields GET /api/items has that a snapshot's card leaves out. */
const NOT_ON_CARDS = ['description', 'criteria', 'doctrine', 'spec', 'progress'];

async function allItems(client: Client, projectId: string): Promise<Card[]> {
  const items: Card[] = [];
  for (let after: string | null = null; ;) {
    const page = await client.get(onBoard(projectId, `/api/items?limit=1000${after ? `&after=${after}` : ''}`));
    items.push(...page.body.items);
    if (!page.body.next) return items;
    after = page.body.next;
  }
}

const asCard = (item: Card): Card =>
  Object.fromEntries(Object.entries(item).filter(([k]) => !NOT_ON_CARDS.includes(k))) as Card;

/** Reads a snapshot off the socket: every page, in order, into a map of cards. */
async function readSnapshot(
  socket: TestSocket,
): Promise<{ seq: number; cards: Map<string, Card>; last: Record<string, unknown>; pages: number }> {
  const cards = new Map<string, Card>();
  for (let part = 0; ; part++) {
    const m = await socket.next((x) => x.type === 'snapshot', 20_000);
    expect(m.part).toBe(part);
    for (const card of m.items as Card[]) cards.set(card.workId, card);
    if (m.last) {
      expect(cards.size).toBe(m.total);
      return { seq: m.seq, cards, last: m, pages: part + 1 };
    }
  }
}

/** Applies events from the socket to `cards` until `seq`; every event naming an item must carry its patch. */
async function applyUntil(
  socket: TestSocket,
  cards: Map<string, Card>,
  from: number,
  seq: number,
  frames: string[],
): Promise<void> {
  for (let at = from; at < seq;) {
    const m = await socket.next((x) => x.type === 'event' && x.seq !== null, 20_000); // (a lease warning to its holder has no seq)
    frames.push(JSON.stringify(m));
    expect(m.seq).toBe(at + 1);
    at = m.seq;
    const data = m.event.data as { item?: Card; items?: Card[] };
    if (m.event.workId !== null && m.event.type !== 'item.comment')
      expect(data.item, `${m.event.type} ${m.event.workId}`).toBeDefined();
    for (const patch of [...(data.item ? [data.item] : []), ...(data.items ?? [])]) {
      const held = cards.get(patch.workId);
      if (!held || held.version < patch.version) cards.set(patch.workId, asCard({ ...held, ...patch } as Card));
    }
  }
}

describe('watching a board over the socket', () => {
  it('starts from a snapshot and stays equal to the server by applying the events’ patches, which never carry a lease id', async () => {
    const board = await newBoard(srv.url);
    const { owner, projectId } = board;
    const [a, b] = [await board.agent('a'), await board.agent('b')];
    const made = await owner.post(onBoard(projectId, '/api/items/batch'), {
      items: [
        { title: 'first', ref: 'one' },
        { title: 'second', ref: 'two', dependsOn: ['one'] },
        { title: 'gated', verify: 'required', criteria: [digest('c')] },
        { title: 'spare' },
        { title: 'short' },
      ],
    });
    expect(made.status).toBe(201);

    const socket = await openSocket(srv.url, bearerOf(a));
    socket.send({ type: 'subscribe', boardId: projectId, topics: ['activity'], snapshot: true });
    expect(await socket.next((m) => m.type === 'subscribed')).toMatchObject({ seq: 5 });
    const snap = await readSnapshot(socket);
    expect(snap.seq).toBe(5);
    expect(snap.last).toMatchObject({ name: expect.any(String), total: 5 });
    expect((snap.last.recent as { seq: number }[]).map((e) => e.seq)).toEqual([5, 4, 3, 2, 1]);
    expect([...snap.cards.values()]).toEqual((await allItems(owner, projectId)).map(asCard));

    // Every kind of change: claim, renew, progress, submit (unlocking a dependent), supersede,
    // verify fail and pass, edit, reorder, block and unblock, cancel and reopen, release, expiry, comment.
    const leases: string[] = [];
    const claim = async (agent: Client, body: Record<string, unknown>) => {
      const res = await agent.post('/api/claim', body);
      expect(res.status).toBe(200);
      leases.push(res.body.leaseId);
      return res.body as { leaseId: string; workId: string };
    };
    const ok = (res: { status: number; text: string }) => expect(res.status, res.text).toBeLessThan(300);
    const w1 = await claim(a, { workId: 'W-1' });
    ok(await a.post('/api/lease', { leaseId: w1.leaseId, action: 'renew' }));
    ok(await a.post('/api/items/W-1/progress', { leaseId: w1.leaseId, note: 'halfway' }));
    ok(await a.post('/api/submit', { leaseId: w1.leaseId, head: head(1) }));
    const w3 = await claim(a, { workId: 'W-3' });
    ok(await a.post('/api/submit', { leaseId: w3.leaseId, head: head(3) }));
    ok(await a.post('/api/supersede', { workId: 'W-3', head: head(33) }));
    await claim(b, { workId: 'W-3', purpose: 'verify' });
    ok(await b.post('/api/verify', { workId: 'W-3', head: head(33), verdict: 'fail', finding: digest('f') }));
    ok(
      await owner.request('PATCH', onBoard(projectId, '/api/items/W-2'), {
        json: { title: 'second, renamed', labels: ['ui'] },
      }),
    );
    ok(await owner.post(onBoard(projectId, '/api/items/reorder'), { workIds: ['W-4', 'W-2'] }));
    ok(await owner.post(onBoard(projectId, '/api/items/W-2/state'), { action: 'block', reason: 'waiting on design' }));
    ok(await owner.post(onBoard(projectId, '/api/items/W-2/state'), { action: 'unblock' }));
    ok(await owner.post(onBoard(projectId, '/api/items/W-4/state'), { action: 'cancel' }));
    ok(await owner.post(onBoard(projectId, '/api/items/W-4/state'), { action: 'reopen' }));
    const w2 = await claim(b, { workId: 'W-2' });
    ok(await b.post('/api/lease', { leaseId: w2.leaseId, action: 'release' }));
    ok(await owner.post(onBoard(projectId, '/api/items/W-4/comments'), { text: 'nice' }));
    await claim(a, { workId: 'W-5', ttlSeconds: 1 });
    await expect
      .poll(async () => (await owner.get(onBoard(projectId, '/api/items/W-5'))).body.state, { timeout: 10_000 })
      .toBe('ready');

    const { lastSeq } = (await owner.get(onBoard(projectId, '/api/status'))).body;
    const frames: string[] = [];
    await applyUntil(socket, snap.cards, snap.seq, lastSeq, frames);
    expect([...snap.cards.values()]).toEqual((await allItems(owner, projectId)).map(asCard));
    const types = new Set(frames.map((f) => JSON.parse(f).event.type));
    for (const t of [
      'lease.granted',
      'lease.renewed',
      'lease.released',
      'lease.expired',
      'item.submitted',
      'item.superseded',
      'item.verified',
      'item.updated',
      'items.reordered',
      'item.state',
      'item.progress',
      'item.comment',
    ])
      expect(types).toContain(t);
    for (const leaseId of leases) expect(frames.join('\n')).not.toContain(leaseId);
    socket.ws.close();
  });

  it('sends a large board in pages, then only what happened after the snapshot', async () => {
    const board = await newBoard(srv.url);
    const agent = await board.agent('bulk');
    for (let i = 0; i < 3; i++)
      expect(
        (
          await agent.post('/api/items/batch', {
            items: Array.from({ length: 400 }, (_, j) => ({ title: `item ${i * 400 + j + 1}` })),
          })
        ).status,
      ).toBe(201);
    const socket = await openSocket(srv.url, bearerOf(agent));
    socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['items'], snapshot: true });
    const snap = await readSnapshot(socket);
    expect(snap).toMatchObject({ seq: 1200, pages: 3 });
    expect(snap.cards.size).toBe(1200);
    expect(snap.last.shouts).toBeUndefined(); // not asked for
    const grant = await agent.post('/api/claim', {});
    const next = await socket.next((m) => m.type === 'event');
    expect(next).toMatchObject({
      seq: 1202,
      event: {
        type: 'item.state',
        workId: grant.body.workId,
        data: { from: 'ready', to: 'claimed', item: { state: 'claimed', lease: { holder: agent.principal } } },
      },
    });

    // Reloading costs the socket's own budget like reading the items over REST: 2 messages for 1,200 items.
    // Each round is an unsubscribe, a subscribe and its snapshot: 4 of the 100 messages in 10 s.
    for (let i = 0; i < 30; i++) {
      socket.send({ type: 'unsubscribe', boardId: board.projectId });
      socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['items'], snapshot: true });
    }
    expect(await socket.closed).toMatchObject({ code: 4029 });
  });

  it('gives a snapshot of what the credential may read of the items: a token naming work ids gets only those, one naming none is refused', async () => {
    const board = await newBoard(srv.url);
    expect(
      (
        await board.owner.post(onBoard(board.projectId, '/api/items/batch'), {
          items: [{ title: 'not yours' }, { title: 'yours' }],
        })
      ).status,
    ).toBe(201);
    const token = async (resources: string[]) => {
      const res = await board.owner.post('/api/accounts/tokens', {
        name: 'narrow',
        scope: 'resource',
        projectId: board.projectId,
        resources,
      });
      expect(res.status).toBe(201);
      return openSocket(srv.url, { authorization: `Bearer ${res.body.secret}` });
    };
    const narrow = await token(['W-2']);
    narrow.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'], snapshot: true });
    const own = await readSnapshot(narrow);
    expect([...own.cards.keys()]).toEqual(['W-2']);
    const blind = await token(['shouts']);
    blind.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'], snapshot: true });
    expect(await blind.next((m) => m.type === 'error' || m.type === 'snapshot')).toMatchObject({
      type: 'error',
      error: { code: 'PROJECT_SCOPE_DENIED' },
    });
    const wide = await token(['items']);
    wide.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'], snapshot: true });
    expect([...(await readSnapshot(wide)).cards.keys()].sort()).toEqual(['W-1', 'W-2']);
    for (const socket of [narrow, blind, wide]) socket.ws.close();
  });

  it('refuses the event stream to a token whose REST read of the log is refused, and lets it watch the shouts', async () => {
    const board = await newBoard(srv.url);
    expect((await board.owner.post(onBoard(board.projectId, '/api/items'), { title: 'one' })).status).toBe(201);
    const issued = await board.owner.post('/api/accounts/tokens', {
      name: 'feedback only',
      scope: 'resource',
      projectId: board.projectId,
      resources: ['feedback'],
    });
    expect(issued.status, issued.text).toBe(201);
    const authorization = `Bearer ${issued.body.secret}`;
    const rest = new Client(srv.url, { authorization });
    expect((await rest.get('/api/activity')).body).toMatchObject({ error: { code: 'PROJECT_SCOPE_DENIED' } });
    expect((await rest.get('/api/shouts')).status).toBe(200);

    const socket = await openSocket(srv.url, { authorization });
    const answer = () => socket.next((m) => m.type === 'subscribed' || m.type === 'error');
    for (const topics of [['activity'], ['items'], ['leases'], ['doctrine'], ['shouts', 'items']]) {
      socket.send({ type: 'subscribe', boardId: board.projectId, topics, since: 0 });
      expect(await answer(), topics.join()).toMatchObject({ type: 'error', error: { code: 'PROJECT_SCOPE_DENIED' } });
    }
    socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['shouts'], since: 0 });
    expect(await answer()).toMatchObject({ type: 'subscribed', topics: ['shouts'] });
    // Merging an event topic into it asks the same read.
    socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'] });
    expect(await answer()).toMatchObject({ type: 'error', error: { code: 'PROJECT_SCOPE_DENIED' } });
    const paused = await board.owner.request('PATCH', `/api/projects/${board.projectId}`, { json: { paused: true } });
    expect(paused.status, paused.text).toBe(200);
    expect((await board.owner.post(onBoard(board.projectId, '/api/shouts'), { text: 'heard' })).status).toBe(201);
    expect(await socket.next((m) => m.type === 'shout' || m.type === 'event')).toMatchObject({
      type: 'shout',
      shout: { text: 'heard' },
    });
    socket.ws.close();
  });

  it('lets a token of the doctrine or spec group watch the doctrine topic alone, and hear their events', async () => {
    const board = await newBoard(srv.url);
    for (const group of ['doctrine', 'spec']) {
      const issued = await board.owner.post('/api/accounts/tokens', {
        name: `${group} only`,
        scope: 'resource',
        projectId: board.projectId,
        resources: [group],
      });
      expect(issued.status, issued.text).toBe(201);
      const authorization = `Bearer ${issued.body.secret}`;
      expect((await new Client(srv.url, { authorization }).get(`/api/${group}`)).status).toBe(200);
      const socket = await openSocket(srv.url, { authorization });
      const answer = () => socket.next((m) => m.type === 'subscribed' || m.type === 'error');
      socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'] });
      expect(await answer(), group).toMatchObject({ type: 'error', error: { code: 'PROJECT_SCOPE_DENIED' } });
      socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['doctrine'] });
      expect(await answer(), group).toMatchObject({ type: 'subscribed', topics: ['doctrine'] });
      const made = await board.owner.post(onBoard(board.projectId, '/api/spec'), { title: group, text: 'Holds.' });
      expect(made.status, made.text).toBe(201);
      if (group === 'spec')
        expect(await socket.next((m) => m.type === 'event')).toMatchObject({ event: { type: 'spec.created' } });
      socket.ws.close();
    }
  });

  it('pushes the roster on subscribe and each heartbeat to presence watchers only', async () => {
    const board = await newBoard(srv.url);
    const [a, b] = [await board.agent('a'), await board.agent('b')];
    expect((await a.post('/api/status/heartbeat', { status: 'idle', note: 'starting' })).status).toBe(200);
    const watcher = await openSocket(srv.url, bearerOf(b));
    const other = await openSocket(srv.url, bearerOf(b));
    watcher.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity', 'presence'] });
    other.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'] });
    const roster = await watcher.next((m) => m.type === 'roster');
    expect(roster).toMatchObject({
      boardId: board.projectId,
      onlineWithinMs: 120_000,
      agents: [{ principal: a.principal, status: 'idle', note: 'starting', workId: null }],
    });
    await other.next((m) => m.type === 'subscribed');
    expect((await b.post('/api/status/heartbeat', { status: 'working', note: 'on it' })).status).toBe(200);
    const beat = await watcher.next((m) => m.type === 'presence');
    expect(beat).toMatchObject({
      boardId: board.projectId,
      agent: { principal: b.principal, status: 'working', note: 'on it', lastSeenAt: expect.any(String) },
    });
    other.send({ type: 'ping' });
    await other.next((m) => m.type === 'pong');
    await expect(other.next((m) => m.type === 'presence' || m.type === 'roster', 300)).rejects.toThrow(
      /no matching message/,
    );
    watcher.ws.close();
    other.ws.close();
  });

  it('gives a resuming socket the shouts it missed, and the feed newest first over REST', async () => {
    const board = await newBoard(srv.url);
    const { owner, projectId } = board;
    const agent = await board.agent('talker');
    const posted: string[] = [];
    for (let i = 1; i <= 5; i++) posted.push((await agent.post('/api/shouts', { text: `shout ${i}` })).body.id);

    const first = await openSocket(srv.url, bearerOf(agent));
    first.send({ type: 'subscribe', boardId: projectId, topics: ['activity'], snapshot: true });
    const snap = await readSnapshot(first);
    expect((snap.last.shouts as { text: string }[]).map((s) => s.text)).toEqual([
      'shout 5',
      'shout 4',
      'shout 3',
      'shout 2',
      'shout 1',
    ]);
    first.ws.close();

    for (let i = 6; i <= 7; i++) posted.push((await agent.post('/api/shouts', { text: `shout ${i}` })).body.id);
    const resumed = await openSocket(srv.url, bearerOf(agent));
    resumed.send({
      type: 'subscribe',
      boardId: projectId,
      topics: ['activity'],
      since: snap.seq,
      shoutsAfter: posted[4],
    });
    expect((await resumed.next((m) => m.type === 'shout')).shout.text).toBe('shout 6');
    expect((await resumed.next((m) => m.type === 'shout')).shout.text).toBe('shout 7');
    resumed.ws.close();

    const newest = await owner.get(onBoard(projectId, '/api/shouts?order=newest&limit=3'));
    expect(newest.body.shouts.map((s: { text: string }) => s.text)).toEqual(['shout 7', 'shout 6', 'shout 5']);
    const older = await owner.get(
      onBoard(projectId, `/api/shouts?before=${encodeURIComponent(newest.body.next)}&limit=3`),
    );
    expect(older.body.shouts.map((s: { text: string }) => s.text)).toEqual(['shout 4', 'shout 3', 'shout 2']);
    const oldest = await owner.get(
      onBoard(projectId, `/api/shouts?before=${encodeURIComponent(older.body.next)}&limit=3`),
    );
    expect(oldest.body).toMatchObject({ shouts: [{ text: 'shout 1' }], next: null });
    expect(
      (await owner.get(onBoard(projectId, `/api/shouts?before=${posted[2]}&since=${posted[0]}`))).body.error.code,
    ).toBe('INVALID_CURSOR');
  });
});
