// The operators' live view over the socket (DOMAIN.md "Operators"), run on each store adapter: an
// operator's session socket watches any board read-only (audited once per subscription) and the
// firehose (every board's events tagged with their board, in seq order per board, at most 200 a
// second with a count of the rest); anyone else is refused exactly as before the live view existed.
import { describe, expect, it } from 'vitest';
import { newBoard } from '../../support/board.js';
import { confirmedOperator, operatorEmail } from '../../support/operators.js';
import { Client, signedUp } from '../../support/server.js';
import { openSocket, type TestSocket } from '../../support/socket.js';
import { serveStore, type OpenedStore } from '../../support/stores.js';

export const cookieOf = (client: Client): Record<string, string> => ({
  cookie: [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
});
/** An error message with its request id taken out: what a client could tell apart. */
const shape = (m: { type: string; error: Record<string, unknown> }) => ({
  type: m.type,
  error: { ...m.error, requestId: undefined },
});

interface Frame {
  boardId: string;
  seq: number;
  event: { type: string };
}

/** Reads a socket's firehose frames until each board in `counts` has had its count (any other board's are read past). */
async function firehoseFrames(
  socket: TestSocket,
  counts: Record<string, number>,
  ms = 20_000,
): Promise<Record<string, Frame[]>> {
  const frames = Object.fromEntries(Object.keys(counts).map((b) => [b, [] as Frame[]]));
  while (Object.entries(counts).some(([b, n]) => frames[b]!.length < n)) {
    const m = (await socket.next((x) => x.type === 'firehose', ms)) as Frame;
    frames[m.boardId]?.push(m);
  }
  return frames;
}

export function liveFlow(name: string, open: () => Promise<OpenedStore>): void {
  describe(`the operators' live view on the ${name} store`, () => {
    const opEmail = operatorEmail();
    // Every signup comes from 127.0.0.1.
    const served = serveStore(open, { OPERATOR_EMAILS: opEmail, ADDRESS_RATE_PER_MINUTE: '100000' });
    /** The operator's session: signed up by the first case that needs it, signed in afresh after. */
    let operatorId: string | null = null;
    async function operator(): Promise<{ client: Client; accountId: string }> {
      if (operatorId === null) {
        const op = await confirmedOperator(served.srv, opEmail);
        operatorId = op.accountId;
        return op;
      }
      const client = new Client(served.srv.url);
      expect((await client.post('/api/auth/login', { email: opEmail, password: 'operator password 123' })).status).toBe(
        200,
      );
      return { client, accountId: operatorId };
    }

    it('lets an operator watch a board it is no member of, read-only, with one audit row per subscription', async () => {
      const { srv } = served;
      const board = await newBoard(srv.url);
      const [a, b] = [await board.agent('a'), await board.agent('b')];
      await a.post('/api/items', { title: 'before the operator looked' });
      const op = await operator();
      const socket = await openSocket(srv.url, cookieOf(op.client));

      socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'] });
      expect(await socket.next((m) => m.type === 'subscribed' || m.type === 'error')).toMatchObject({
        type: 'subscribed',
        boardId: board.projectId,
        role: 'operator',
        seq: 1,
      });
      await a.post('/api/items', { title: 'while the operator watches' });
      expect(await socket.next((m) => m.type === 'event')).toMatchObject({
        boardId: board.projectId,
        seq: 2,
        event: { type: 'item.created', actor: a.principal },
      });
      // An operator sees a direct shout between two agents, as a board's admin would.
      expect((await a.post('/api/shouts', { text: 'just for b', to: b.principal })).status).toBe(201);
      expect(await socket.next((m) => m.type === 'shout')).toMatchObject({
        boardId: board.projectId,
        shout: { text: 'just for b', to: b.principal },
      });

      // Asking again merges topics into the same subscription: no second audit row.
      socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['items'] });
      expect(await socket.next((m) => m.type === 'subscribed')).toMatchObject({ merged: true });
      const rows = async () => srv.store.audit.find({ target: `board:${board.projectId}` });
      expect(await rows()).toHaveLength(1);
      const [row] = await rows();
      expect(row).toMatchObject({
        actor: `user:${op.accountId}`,
        action: 'admin.live.subscribe',
        projectId: board.projectId,
        target: `board:${board.projectId}`,
        data: { operator: true, topics: ['activity'], address: '127.0.0.1', requestId: expect.any(String) },
      });

      // Read-only: the socket carries no writes, and the operator's session is no member over REST.
      socket.send({ type: 'shout', boardId: board.projectId, text: 'from the operator' });
      expect(await socket.next((m) => m.type === 'error')).toMatchObject({ error: { code: 'INVALID_INPUT' } });
      const write = await op.client.post(`/api/items?projectId=${board.projectId}`, { title: 'an operator’s item' });
      expect(write.status, write.text).toBe(403);
      expect(write.body.error.code).toBe('PROJECT_SCOPE_DENIED');
      expect((await a.get('/api/items')).body.items).toHaveLength(2);

      // A new subscription after an unsubscribe is audited again, once.
      socket.send({ type: 'unsubscribe', boardId: board.projectId });
      await socket.next((m) => m.type === 'unsubscribed');
      socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['leases'], snapshot: true });
      expect(await socket.next((m) => m.type === 'subscribed')).toMatchObject({ role: 'operator', seq: 2 });
      expect(await socket.next((m) => m.type === 'snapshot')).toMatchObject({ total: 2, last: true });
      expect((await rows()).map((r) => r.data.topics)).toEqual(expect.arrayContaining([['activity'], ['leases']]));
      expect(await rows()).toHaveLength(2);
      socket.ws.close();
    });

    it('audits each socket’s subscription with its own upgrade’s request id, also for two sockets on one session', async () => {
      const { srv } = served;
      const board = await newBoard(srv.url);
      const op = await operator();
      // Both upgrades carry the same session: its identity is shared by the requests that present it.
      const first = await openSocket(srv.url, { ...cookieOf(op.client), 'x-request-id': 'upgrade-first' });
      const second = await openSocket(srv.url, { ...cookieOf(op.client), 'x-request-id': 'upgrade-second' });
      first.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'] });
      expect(await first.next((m) => m.type === 'subscribed' || m.type === 'error')).toMatchObject({
        type: 'subscribed',
        role: 'operator',
      });
      second.send({ type: 'subscribe', boardId: board.projectId, topics: ['leases'] });
      expect(await second.next((m) => m.type === 'subscribed' || m.type === 'error')).toMatchObject({
        type: 'subscribed',
        role: 'operator',
      });
      const rows = await srv.store.audit.find({ target: `board:${board.projectId}` });
      expect(rows.map((r) => `${(r.data.topics as string[]).join()} ${r.data.requestId as string}`).sort()).toEqual([
        'activity upgrade-first',
        'leases upgrade-second',
      ]);
      first.ws.close();
      second.ws.close();
    });

    it('refuses anyone else a foreign board and the firehose, exactly as before it existed, and audits nothing', async () => {
      const { srv } = served;
      const board = await newBoard(srv.url);
      const person = await signedUp(srv.url);
      // The operator's own token is no operator's socket either: only their session is.
      const { client: opLogin } = await operator();
      const opToken = await opLogin.post('/api/accounts/tokens', { name: 'ops agent', scope: 'account' });
      expect(opToken.status, opToken.text).toBe(201);
      for (const headers of [cookieOf(person.client), { authorization: `Bearer ${opToken.body.secret}` }]) {
        const socket = await openSocket(srv.url, headers);
        const answer = async (message: unknown) => {
          socket.send(message);
          return shape(await socket.next((m) => m.type === 'error' || m.type === 'subscribed'));
        };
        const noSuchBoard = await answer({ type: 'subscribe', boardId: 'no-such-board', topics: ['activity'] });
        expect(noSuchBoard.error).toMatchObject({ code: 'PROJECT_SCOPE_DENIED' });
        expect(await answer({ type: 'subscribe', boardId: board.projectId, topics: ['activity'] })).toEqual({
          ...noSuchBoard,
          error: { ...noSuchBoard.error, details: { boardId: board.projectId } },
        });
        for (const [firehose, unknown] of [
          [
            { type: 'subscribe', topics: ['firehose'] },
            { type: 'subscribe', topics: ['nonesuch'] },
          ],
          [
            { type: 'subscribe', boardId: board.projectId, topics: ['firehose'] },
            { type: 'subscribe', boardId: board.projectId, topics: ['nonesuch'] },
          ],
          [
            { type: 'unsubscribe', topics: ['firehose'] },
            { type: 'unsubscribe', topics: ['nonesuch'] },
          ],
        ]) {
          const refused = await answer(firehose);
          expect(refused.error).toMatchObject({ code: 'INVALID_INPUT' });
          expect(refused).toEqual(await answer(unknown));
        }
        // And nothing of the board reaches it.
        await (await board.agent('busy')).post('/api/items', { title: 'not for them' });
        socket.send({ type: 'ping' });
        await socket.next((m) => m.type === 'pong');
        await expect(socket.next((m) => m.type === 'firehose' || m.type === 'event', 300)).rejects.toThrow(
          /no matching message/,
        );
        socket.ws.close();
      }
      expect(await srv.store.audit.find({ target: `board:${board.projectId}` })).toEqual([]);
      expect(await srv.store.audit.find({ action: 'admin.live.firehose', actor: `user:${person.accountId}` })).toEqual(
        [],
      );
    });

    it('shows an operator every board’s events in the firehose as they commit, tagged with their board, in order per board', async () => {
      const { srv } = served;
      const op = await operator();
      const socket = await openSocket(srv.url, cookieOf(op.client));
      socket.send({ type: 'subscribe', topics: ['firehose'] });
      expect(await socket.next((m) => m.type === 'subscribed' || m.type === 'error')).toEqual({
        type: 'subscribed',
        topics: ['firehose'],
        boards: null,
        types: null,
        perSecond: 200,
      });

      const [one, two] = [await newBoard(srv.url), await newBoard(srv.url)];
      const [x, y] = [await one.agent('x'), await two.agent('y')];
      for (let i = 0; i < 4; i++) {
        expect((await x.post('/api/items', { title: `one ${i}` })).status).toBe(201);
        expect((await y.post('/api/items', { title: `two ${i}` })).status).toBe(201);
      }
      expect((await x.post('/api/claim', {})).status).toBe(200);
      expect(
        (await y.post('/api/items/batch', { items: [{ title: 'two batch a' }, { title: 'two batch b' }] })).status,
      ).toBe(201);
      const logs = new Map<string, { seq: number; type: string }[]>();
      for (const [board, agent] of [
        [one, x],
        [two, y],
      ] as const)
        logs.set(board.projectId, (await agent.get('/api/activity?limit=200')).body.events.reverse());
      expect(logs.get(one.projectId)!.length).toBeGreaterThanOrEqual(5); // four items, a claim
      expect(logs.get(two.projectId)!.length).toBeGreaterThanOrEqual(6); // four items, a batch of two
      const frames = await firehoseFrames(socket, Object.fromEntries([...logs].map(([b, log]) => [b, log.length])));
      for (const [boardId, log] of logs)
        expect(frames[boardId]!.map((f) => [f.seq, f.event.type])).toEqual(log.map((e) => [e.seq, e.type]));
      const audited = await srv.store.audit.find({ action: 'admin.live.firehose' });
      expect(audited).toHaveLength(1);
      expect(audited[0]).toMatchObject({
        target: 'firehose',
        actor: `user:${op.accountId}`,
        data: { operator: true, address: '127.0.0.1' },
      });
      // Sent again, it narrows the same subscription (no second audit row); unsubscribe ends it.
      socket.send({
        type: 'subscribe',
        topics: ['firehose'],
        boards: [two.projectId],
        types: ['item.created', 'shout.'],
      });
      expect(await socket.next((m) => m.type === 'subscribed')).toMatchObject({
        boards: [two.projectId],
        types: ['item.created', 'shout.'],
      });
      await x.post('/api/items', { title: 'one, unwatched' });
      await y.post('/api/claim', {});
      await y.post('/api/items', { title: 'two, watched' });
      // (the claim's lease and state events are of other types, the other board's item of another board)
      // Tagged with the board's name too, read when its first events went by.
      const twoName = (await srv.store.projects.get(two.projectId))!.name;
      expect(await socket.next((m) => m.type === 'firehose')).toMatchObject({
        boardId: two.projectId,
        boardName: twoName,
        event: { type: 'item.created', data: { item: { title: 'two, watched' } } },
      });
      expect(await srv.store.audit.find({ action: 'admin.live.firehose' })).toHaveLength(1);
      socket.send({ type: 'unsubscribe', topics: ['firehose'] });
      expect(await socket.next((m) => m.type === 'unsubscribed')).toEqual({
        type: 'unsubscribed',
        topics: ['firehose'],
      });
      await y.post('/api/items', { title: 'after' });
      socket.send({ type: 'ping' });
      await socket.next((m) => m.type === 'pong');
      await expect(socket.next((m) => m.type === 'firehose', 300)).rejects.toThrow(/no matching message/);
      socket.ws.close();
    });

    it('samples the firehose to 200 events a second per socket and says how many it left out', async () => {
      const { srv } = served;
      const board = await newBoard(srv.url);
      const agent = await board.agent('bulk');
      const socket = await openSocket(srv.url, cookieOf((await operator()).client));
      socket.send({ type: 'subscribe', topics: ['firehose'], boards: [board.projectId] });
      await socket.next((m) => m.type === 'subscribed');

      // 500 events in one commit: the first 200 go out, the other 300 are counted.
      const first = await agent.post('/api/items/batch', {
        items: Array.from({ length: 500 }, (_, i) => ({ title: `bulk ${i}` })),
      });
      expect(first.status, first.text).toBe(201);
      const sent = (await firehoseFrames(socket, { [board.projectId]: 200 }))[board.projectId]!;
      expect(sent.map((f) => f.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
      expect(await socket.next((m) => m.type === 'firehose.dropped' || m.type === 'firehose', 5000)).toEqual({
        type: 'firehose.dropped',
        count: 300,
      });

      // A second after those went out (by the server's clock), 200 again.
      srv.advance(1100);
      const second = await agent.post('/api/items/batch', {
        items: Array.from({ length: 250 }, (_, i) => ({ title: `more ${i}` })),
      });
      expect(second.status, second.text).toBe(201);
      const later = (await firehoseFrames(socket, { [board.projectId]: 200 }))[board.projectId]!;
      expect(later.map((f) => f.seq)).toEqual(Array.from({ length: 200 }, (_, i) => 501 + i));
      expect(await socket.next((m) => m.type === 'firehose.dropped' || m.type === 'firehose', 5000)).toEqual({
        type: 'firehose.dropped',
        count: 50,
      });
      socket.ws.close();
    });
  });
}
