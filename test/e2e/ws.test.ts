// The WebSocket endpoint over a real socket: authentication, role checks, topics, and resume
// with `since` (every missed event once, in order, then live).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { head, newBoard } from '../support/board.js';
import { signedUp, startTestServer, type TestServer } from '../support/server.js';
import { openSocket } from '../support/socket.js';
import { quietFor, until } from '../support/until.js';
import { closeFrame, stalledSocket } from '../../bench/raw-socket.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.stop();
});

const bearerOf = (client: { defaults: Record<string, string> }) => ({ authorization: client.defaults.authorization! });

describe('GET /api/ws', () => {
  it('refuses an upgrade without a credential, with a bad one, or from a foreign browser origin', async () => {
    await expect(openSocket(srv.url)).rejects.toMatchObject({ status: 401 });
    await expect(openSocket(srv.url, { authorization: 'Bearer agb_nope' })).rejects.toMatchObject({ status: 401 });
    const { client } = await signedUp(srv.url);
    const cookie = `board_session=${client.cookies.get('board_session')}`;
    await expect(openSocket(srv.url, { cookie, origin: 'https://evil.example' })).rejects.toMatchObject({
      status: 403,
    });
    const before = (await fetch(`${srv.url}/readyz`).then((r) => r.json())) as { sockets: number };
    const ok = await openSocket(srv.url, { cookie, origin: 'http://board.test' });
    expect(await fetch(`${srv.url}/readyz`).then((r) => r.json())).toMatchObject({ sockets: before.sockets + 1 });
    ok.ws.close();
  });

  it('pushes a board’s events to subscribers with their seq, filtered by topic', async () => {
    const board = await newBoard(srv.url);
    const agent = await board.agent('a');
    const all = await openSocket(srv.url, bearerOf(agent));
    const leasesOnly = await openSocket(srv.url, bearerOf(agent));
    all.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'] });
    leasesOnly.send({ type: 'subscribe', boardId: board.projectId, topics: ['leases'] });
    expect(await all.next((m) => m.type === 'subscribed')).toMatchObject({
      boardId: board.projectId,
      seq: 0,
      role: 'member',
    });
    await leasesOnly.next((m) => m.type === 'subscribed');

    await agent.post('/api/items', { title: 'live' });
    await agent.post('/api/claim', {});
    const created = await all.next((m) => m.type === 'event');
    expect(created).toMatchObject({
      boardId: board.projectId,
      seq: 1,
      event: { type: 'item.created', workId: 'W-1', actor: agent.principal },
    });
    const granted = await all.next((m) => m.type === 'event');
    expect(granted).toMatchObject({
      seq: 2,
      event: { type: 'lease.granted', data: { lease: { holder: agent.principal } } },
    });
    expect(JSON.stringify(granted)).not.toContain('lease_');
    expect(await leasesOnly.next((m) => m.type === 'event')).toMatchObject({
      seq: 2,
      event: { type: 'lease.granted' },
    });
    all.send({ type: 'ping' });
    expect(await all.next((m) => m.type === 'pong')).toEqual({ type: 'pong' });
    all.ws.close();
    leasesOnly.ws.close();
  });

  it('lets a viewer subscribe and tells a stranger PROJECT_SCOPE_DENIED and nothing else', async () => {
    const board = await newBoard(srv.url);
    const viewer = await board.agent('v', 'viewer');
    const stranger = await (await newBoard(srv.url)).agent('s');
    const v = await openSocket(srv.url, bearerOf(viewer));
    v.send({ type: 'subscribe', boardId: board.projectId, topics: ['items'] });
    expect(await v.next()).toMatchObject({ type: 'subscribed', role: 'viewer' });
    const s = await openSocket(srv.url, bearerOf(stranger));
    s.send({ type: 'subscribe', boardId: board.projectId, topics: ['items'] });
    expect(await s.next()).toMatchObject({ type: 'error', error: { code: 'PROJECT_SCOPE_DENIED', status: 403 } });
    const member = await board.agent('m');
    await member.post('/api/items', { title: 'private' });
    expect(await v.next((m) => m.type === 'event')).toMatchObject({ event: { type: 'item.created' } });
    await expect(s.next((m) => m.type === 'event', 500)).rejects.toThrow(/no matching message/);
    s.send({ type: 'subscribe', boardId: board.projectId, topics: ['nope'] });
    expect(await s.next()).toMatchObject({ type: 'error', error: { code: 'INVALID_INPUT' } });
    v.ws.close();
    s.ws.close();
  });

  it('resumes with since: every missed event once and in order, then live', async () => {
    const board = await newBoard(srv.url);
    const agent = await board.agent('a');
    const verifier = await board.agent('v');
    await agent.post('/api/items/batch', { items: [{ title: 'one', verify: 'required' }, { title: 'two' }] });
    const first = await openSocket(srv.url, bearerOf(agent));
    first.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'], since: 0 });
    await first.next((m) => m.type === 'subscribed');
    const seen = [(await first.next((m) => m.type === 'event')).seq, (await first.next((m) => m.type === 'event')).seq];
    expect(seen).toEqual([1, 2]);
    first.ws.close();
    await first.closed;

    const lease = (await agent.post('/api/claim', { workId: 'W-1' })).body;
    await agent.post('/api/submit', { leaseId: lease.leaseId, head: head(1) });
    const missedUpTo = (await agent.get('/api/status')).body.lastSeq;
    expect(missedUpTo).toBeGreaterThan(2);

    const again = await openSocket(srv.url, bearerOf(agent));
    again.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'], since: 2 });
    expect(await again.next((m) => m.type === 'subscribed')).toMatchObject({ seq: 2 });
    const replayed: number[] = [];
    while (replayed.length < missedUpTo - 2) replayed.push((await again.next((m) => m.type === 'event')).seq);
    expect(replayed).toEqual(Array.from({ length: missedUpTo - 2 }, (_, i) => i + 3));
    await verifier.post('/api/verify', { workId: 'W-1', head: head(1), verdict: 'pass' });
    const live = await again.next((m) => m.type === 'event');
    expect(live.seq).toBe(missedUpTo + 1);
    again.ws.close();
  });
});

describe('sockets and credentials, and a holder’s own leases', () => {
  it('closes a socket when its token is revoked or reissued, or its session logs out, and leaves others open', async () => {
    const board = await newBoard(srv.url);
    const revoked = await board.owner.post('/api/accounts/tokens', {
      name: 'r',
      scope: 'workspace',
      projectId: board.projectId,
    });
    const reissued = await board.owner.post('/api/accounts/tokens', {
      name: 'i',
      scope: 'workspace',
      projectId: board.projectId,
    });
    const byRevoked = await openSocket(srv.url, { authorization: `Bearer ${revoked.body.secret}` });
    const byReissued = await openSocket(srv.url, { authorization: `Bearer ${reissued.body.secret}` });
    const ownerCookie = `board_session=${board.owner.cookies.get('board_session')}`;
    const other = await signedUp(srv.url);
    const bySession = await openSocket(srv.url, { cookie: ownerCookie });
    const byOtherSession = await openSocket(srv.url, {
      cookie: `board_session=${other.client.cookies.get('board_session')}`,
    });

    await board.owner.request('DELETE', `/api/accounts/tokens/${revoked.body.token.id}`);
    expect(await byRevoked.closed).toEqual({ code: 4001, reason: 'the credential was revoked' });
    await board.owner.post(`/api/accounts/tokens/${reissued.body.token.id}/reissue`);
    expect((await byReissued.closed).code).toBe(4001);
    await board.owner.post('/api/auth/logout');
    expect((await bySession.closed).code).toBe(4001);
    byOtherSession.send({ type: 'ping' });
    expect(await byOtherSession.next((m) => m.type === 'pong')).toEqual({ type: 'pong' });
    byOtherSession.ws.close();
  });

  it('closes the sockets of a deleted board’s tokens and unsubscribes the sessions that watched it', async () => {
    const board = await newBoard(srv.url);
    const created = await board.owner.post('/api/projects', { name: 'short-lived' });
    const boardId = created.body.projectId as string;
    const token = await board.owner.post('/api/accounts/tokens', {
      name: 'doomed',
      scope: 'workspace',
      projectId: boardId,
    });
    const elsewhere = await board.agent('elsewhere');
    const byToken = await openSocket(srv.url, { authorization: `Bearer ${token.body.secret}` });
    const byOwner = await openSocket(srv.url, { cookie: `board_session=${board.owner.cookies.get('board_session')}` });
    const byOtherBoardToken = await openSocket(srv.url, bearerOf(elsewhere));
    byOwner.send({ type: 'subscribe', boardId, topics: ['activity'] });
    await byOwner.next((m) => m.type === 'subscribed');

    expect((await board.owner.request('DELETE', `/api/projects/${boardId}`)).status).toBe(204);
    expect(await byToken.closed).toEqual({ code: 4001, reason: 'the credential was revoked' });
    expect(await byOwner.next((m) => m.type === 'unsubscribed')).toEqual({
      type: 'unsubscribed',
      boardId,
      reason: 'The board was deleted.',
    });
    for (const open of [byOwner, byOtherBoardToken]) {
      open.send({ type: 'ping' });
      expect(await open.next((m) => m.type === 'pong')).toEqual({ type: 'pong' });
      open.ws.close();
    }
  });

  it('tells a holder of its lease expiring and expired, though it subscribed to nothing', async () => {
    const board = await newBoard(srv.url);
    const holder = await board.agent('holder');
    await holder.post('/api/items', { title: 'slow work' });
    const socket = await openSocket(srv.url, bearerOf(holder));
    await holder.post('/api/claim', { ttlSeconds: 30 });
    srv.advance(25_000); // 20% of the lease left
    expect(await socket.next((m) => m.type === 'event', 30_000)).toMatchObject({
      boardId: board.projectId,
      seq: null,
      event: { type: 'lease.expiring', workId: 'W-1', data: { holder: holder.principal } },
    });
    srv.advance(6_000);
    expect(await socket.next((m) => m.type === 'event', 30_000)).toMatchObject({
      boardId: board.projectId,
      event: { type: 'lease.expired', workId: 'W-1' },
    });
    socket.ws.close();
  }, 90_000);

  it('gives a holder whose subscribe is under way as its lease expires that event once, in its place in the replay', async () => {
    const board = await newBoard(srv.url);
    const holder = await board.agent('holder');
    await holder.post('/api/items', { title: 'slow work' });
    expect((await holder.post('/api/claim', { ttlSeconds: 30 })).status).toBe(200);
    const socket = await openSocket(srv.url, bearerOf(holder));
    const seen: { type: string; seq?: number | null; event?: { type: string } }[] = [];
    socket.ws.on('message', (data) => seen.push(JSON.parse(data.toString())));
    // The subscribe reads the token afresh; that read waits until the lease has expired.
    const tokens = srv.store.tokens;
    const read = tokens.get.bind(tokens);
    let reading = false;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    tokens.get = async (id) => ((reading = true), await gate, read(id));
    try {
      socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'], since: 0 });
      await expect.poll(() => reading).toBe(true);
      srv.advance(31_000);
      await expect
        .poll(async () => (await srv.store.events.find({ boardId: board.projectId, type: 'lease.expired' })).length, {
          timeout: 30_000,
        })
        .toBe(1);
      await quietFor(200); // proves no frame reaches the socket while its subscribe is held
    } finally {
      tokens.get = read;
      release();
    }
    await socket.next((m) => m.type === 'event' && m.event.type === 'lease.expired', 30_000);
    await quietFor(200); // proves no event comes twice
    const subscribedAt = seen.findIndex((m) => m.type === 'subscribed');
    expect(seen.slice(0, subscribedAt).filter((m) => m.type === 'event')).toEqual([]);
    const seqs = seen.filter((m) => m.type === 'event' && m.seq !== null).map((m) => m.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1)); // every event once, in order
    expect(seen.filter((m) => m.event?.type === 'lease.expired')).toHaveLength(1);
    socket.ws.close();
  }, 90_000);
});

describe('shouts over sockets', () => {
  it('pushes broadcasts to subscribers and direct shouts only to sender, addressee and operators, with a delivery receipt', async () => {
    const board = await newBoard(srv.url);
    const a = await board.agent('a');
    const b = await board.agent('b');
    const c = await board.agent('c');
    const sockets = await Promise.all([a, b, c].map((agent) => openSocket(srv.url, bearerOf(agent))));
    const owner = await openSocket(srv.url, { cookie: `board_session=${board.owner.cookies.get('board_session')}` });
    for (const s of [...sockets, owner]) {
      s.send({ type: 'subscribe', boardId: board.projectId, topics: ['shouts'] });
      await s.next((m) => m.type === 'subscribed');
    }
    const [onA, onB, onC] = sockets as [typeof owner, typeof owner, typeof owner];
    await a.post('/api/shouts', { text: 'hello all' });
    for (const s of [onA, onB, onC, owner])
      expect(await s.next((m) => m.type === 'shout')).toMatchObject({
        shout: { text: 'hello all', from: a.principal, to: null },
      });
    const direct = await a.post('/api/shouts', { text: 'just you', to: b.principal, kind: 'handoff' });
    expect(await onB.next((m) => m.type === 'shout')).toMatchObject({ shout: { text: 'just you', to: b.principal } });
    expect(await onA.next((m) => m.type === 'shout')).toMatchObject({ shout: { text: 'just you' } });
    expect(await owner.next((m) => m.type === 'shout')).toMatchObject({ shout: { text: 'just you' } });
    await expect(onC.next((m) => m.type === 'shout', 500)).rejects.toThrow(/no matching message/);
    let receipt = null;
    await until(
      async () =>
        Boolean(
          (receipt = (await a.get('/api/shouts')).body.shouts.find(
            (s: { id: string }) => s.id === direct.body.id,
          ).deliveredAt),
        ),
      { timeout: 2000, what: 'the delivery receipt' },
    ).catch(() => undefined); // asserted next
    expect(receipt).toEqual(expect.any(String));
    for (const s of [...sockets, owner]) s.ws.close();
  });

  it('hears a board’s broadcasts only while its subscription carries shouts: merged in, unsubscribed, on that board alone, and in order with its other messages', async () => {
    const board = await newBoard(srv.url);
    const other = await newBoard(srv.url);
    const a = await board.agent('a');
    const elsewhere = await other.agent('x');
    const s = await openSocket(srv.url, bearerOf(a));
    s.send({ type: 'subscribe', boardId: board.projectId, topics: ['items'] });
    await s.next((m) => m.type === 'subscribed');
    await a.post('/api/shouts', { text: 'not yet' });
    await expect(s.next((m) => m.type === 'shout', 300)).rejects.toThrow(/no matching message/);

    // A second subscribe merges 'shouts' in: broadcasts come from then on, each after what the socket was sent before it.
    s.send({ type: 'subscribe', boardId: board.projectId, topics: ['shouts'] });
    expect(await s.next((m) => m.type === 'subscribed')).toMatchObject({ merged: true, topics: ['items', 'shouts'] });
    await Promise.all([a.post('/api/shouts', { text: 'one' }), a.post('/api/shouts', { text: 'two' })]);
    s.send({ type: 'ping' });
    await elsewhere.post('/api/shouts', { text: 'on another board' });
    const texts: string[] = [];
    while (texts.length < 3) {
      const m = await s.next((x) => x.type === 'shout' || x.type === 'pong');
      texts.push(m.type === 'pong' ? 'pong' : m.shout.text);
    }
    expect(texts.slice(0, 2).sort()).toEqual(['one', 'two']);
    expect(texts[2]).toBe('pong');

    s.send({ type: 'unsubscribe', boardId: board.projectId });
    await s.next((m) => m.type === 'unsubscribed');
    await a.post('/api/shouts', { text: 'after unsubscribe' });
    await expect(s.next((m) => m.type === 'shout', 300)).rejects.toThrow(/no matching message/);

    // Subscribed again (the socket's topics were all left): broadcasts come again.
    s.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'] });
    await s.next((m) => m.type === 'subscribed');
    await a.post('/api/shouts', { text: 'back' });
    expect(await s.next((m) => m.type === 'shout')).toMatchObject({
      boardId: board.projectId,
      shout: { text: 'back' },
    });
    s.ws.close();
  });
});

describe('a board’s events to many watchers', () => {
  it(
    'sends every event once and in order to each watcher on its topics: live ones, one resuming from since, one merging activity in mid-way',
    { timeout: 60_000 },
    async () => {
      const board = await newBoard(srv.url);
      const agents = await Promise.all([0, 1, 2, 3].map((i) => board.agent(`worker-${i}`)));
      expect(
        (
          await agents[0]!.post('/api/items/batch', {
            items: Array.from({ length: 16 }, (_, i) => ({ title: `task ${i}` })),
          })
        ).status,
      ).toBe(201);
      const watch = async (topics: string[], extra: Record<string, unknown> = {}) => {
        const s = await openSocket(srv.url, bearerOf(agents[0]!));
        s.send({ type: 'subscribe', boardId: board.projectId, topics, ...extra });
        return { s, topics, start: (await s.next((m) => m.type === 'subscribed')).seq as number };
      };
      const watchers = await Promise.all([
        watch(['activity']),
        watch(['activity']),
        watch(['items']),
        watch(['leases']),
        watch(['items', 'leases']),
        watch(['presence']),
      ]);
      const work = async (agent: (typeof agents)[number]) => {
        for (;;) {
          const lease = await agent.post('/api/claim', {});
          if (lease.status !== 200) return;
          expect((await agent.post('/api/submit', { leaseId: lease.body.leaseId, head: head(1) })).status).toBe(200);
        }
      };
      const working = Promise.all(agents.map(work));
      // Mid-way: a socket that replays the log from the start while events keep coming, and one whose items-only subscription takes in activity.
      const resuming = await watch(['activity'], { since: 0 });
      const merging = await watch(['items']);
      merging.s.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'] });
      // Its items events keep coming until the merge is answered: read them too (next() would skip them).
      const beforeMerge: number[] = [];
      let mergedAt = -1;
      while (mergedAt < 0) {
        const m = await merging.s.next(
          (x) => (x.type === 'event' && x.seq !== null) || (x.type === 'subscribed' && x.merged),
        );
        if (m.type === 'event') beforeMerge.push(m.seq);
        else mergedAt = m.seq;
      }
      await working;

      const log: { seq: number; type: string }[] = [];
      for (let before: number | null = null; ;) {
        const page = (await agents[0]!.get(`/api/activity?limit=100${before ? `&before=${before}` : ''}`)).body as {
          events: { seq: number; type: string }[];
          nextBefore: number | null;
        };
        log.unshift(...page.events.reverse());
        if ((before = page.nextBefore) === null) break;
      }
      expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
      const topicOf = (type: string) =>
        type.startsWith('lease.')
          ? 'leases'
          : type.startsWith('shout')
            ? 'shouts'
            : type.startsWith('doctrine.') || type.startsWith('spec.')
              ? 'doctrine'
              : 'items';
      const expected = (w: { topics: string[]; start: number }, merged?: number) =>
        log
          .filter(
            (e) =>
              e.seq > w.start &&
              (w.topics.includes('activity') ||
                w.topics.includes(topicOf(e.type)) ||
                (merged !== undefined && e.seq > merged)),
          )
          .map((e) => e.seq);
      const received = async (s: (typeof watchers)[number]['s'], count: number) => {
        const seqs: number[] = [];
        while (seqs.length < count) seqs.push((await s.next((m) => m.type === 'event' && m.seq !== null)).seq);
        await expect(s.next((m) => m.type === 'event' && m.seq !== null, 300)).rejects.toThrow(/no matching message/);
        return seqs;
      };
      for (const w of [...watchers, resuming])
        expect(await received(w.s, expected(w).length), w.topics.join(',')).toEqual(expected(w));
      expect(resuming.start).toBe(0);
      expect(beforeMerge.every((seq) => seq <= mergedAt)).toBe(true);
      expect([
        ...beforeMerge,
        ...(await received(merging.s, expected(merging, mergedAt).length - beforeMerge.length)),
      ]).toEqual(expected(merging, mergedAt));
      for (const w of [...watchers, resuming, merging]) w.s.ws.close();
    },
  );
});

describe('a consumer that stops reading', () => {
  it(
    'is cut off with 4008 once its backlog passes the cap, while a reading socket keeps everything',
    { timeout: 120_000 },
    async () => {
      const board = await newBoard(srv.url);
      const shouters = await Promise.all(Array.from({ length: 50 }, (_, i) => board.agent(`shouter-${i}`))); // each within its write budget
      const reader = await openSocket(srv.url, bearerOf(shouters[0]!));
      reader.send({ type: 'subscribe', boardId: board.projectId, topics: ['shouts'] });
      await reader.next((m) => m.type === 'subscribed');
      const stalled = await stalledSocket(srv.url, bearerOf(shouters[0]!), {
        type: 'subscribe',
        boardId: board.projectId,
        topics: ['shouts'],
      });
      const open = async () =>
        ((await fetch(`${srv.url}/readyz`).then((r) => r.json())) as { sockets: number }).sockets;
      const withStalled = await open();

      // 2 KB shouts, fifty agents at a time, until the node has let the stalled socket go (or 11 MB went out).
      let sent = 0;
      while ((await open()) === withStalled && sent < 5500) {
        const posted = await Promise.all(
          shouters.map((s, i) => s.post('/api/shouts', { text: `${sent + i} `.padEnd(2000, 'x') })),
        );
        expect(posted.filter((p) => p.status !== 201)).toEqual([]);
        sent += shouters.length;
      }
      expect(await open()).toBe(withStalled - 1);
      expect(await closeFrame(stalled)).toEqual({
        code: 4008,
        reason: 'slow consumer: messages were dropped; reconnect with since',
      });
      let received = 0;
      while (received < sent) if ((await reader.next((m) => m.type === 'shout')).shout) received++;
      expect(received).toBe(sent);
      reader.ws.close();
    },
  );
});
