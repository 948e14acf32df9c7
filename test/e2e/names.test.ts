// Names, not ids (issue 47): a viewer of another account's board is told the board's agents by their
// tokens' names over the socket (roster, snapshot events, each heartbeat, live events) and never the
// owner's address; the board's admins are told a person without a display name by their address;
// an operator's firehose tags a board with its owner's address and names its actors, and the
// console's account view lists each board with its owner.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newBoard, type TestBoard } from '../support/board.js';
import { confirmedOperator, operatorEmail } from '../support/operators.js';
import { Client, signedUp, startTestServer, type TestServer } from '../support/server.js';
import { openSocket, type TestSocket } from '../support/socket.js';
import { until } from '../support/until.js';

const opEmail = operatorEmail();
let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ OPERATOR_EMAILS: opEmail });
});
afterAll(async () => {
  await srv?.stop();
});

const cookieOf = (client: Client) => ({
  cookie: [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
  origin: 'http://board.test',
});

/** A socket that also keeps every message as sent, to look for what must not be there. */
async function watching(client: Client): Promise<TestSocket & { texts: string[] }> {
  const socket = await openSocket(srv.url, cookieOf(client));
  const texts: string[] = [];
  socket.ws.on('message', (data) => texts.push(data.toString()));
  return Object.assign(socket, { texts });
}

/** A person of another account made a member of the board, with `role`, straight in the store. */
async function joined(board: TestBoard, role: 'viewer' | 'admin') {
  const person = await signedUp(srv.url);
  await srv.store.members.insert({
    _id: `${board.projectId}:${person.accountId}`,
    version: 1,
    projectId: board.projectId,
    accountId: person.accountId,
    role,
    acceptedAt: Date.now(),
  });
  return person;
}

describe('names on the socket', () => {
  it('tells a viewer of another account’s board its agents by their tokens’ names, and never the owner’s address', async () => {
    const board = await newBoard(srv.url);
    const ownerEmail = (await board.owner.get('/api/auth/me')).body.user.email as string;
    const builder = await board.agent('builder-7');
    const created = await builder.post('/api/items', { title: 'named work' });
    expect(created.status, created.text).toBe(201);
    const beat = { status: 'working', note: 'building', workId: created.body.workId };
    expect((await builder.post('/api/status/heartbeat', beat)).status).toBe(200);
    // The owner (no display name) acts too: a viewer may not be told their address.
    const own = await board.owner.post(`/api/items?projectId=${board.projectId}`, { title: 'the owner’s item' });
    expect(own.status, own.text).toBe(201);

    const viewer = await joined(board, 'viewer');
    const socket = await watching(viewer.client);
    socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity', 'presence'], snapshot: true });
    expect(await socket.next((m) => m.type === 'subscribed' || m.type === 'error')).toMatchObject({ role: 'viewer' });
    const snapshot = await socket.next((m) => m.type === 'snapshot' && m.last);
    const recent = snapshot.recent as { actor: string; actorName?: string; type: string }[];
    expect(recent.find((e) => e.actor === builder.principal)).toMatchObject({ actorName: 'builder-7' });
    const owners = recent.filter((e) => e.actor.startsWith('user:'));
    expect(owners).toHaveLength(1);
    expect(owners[0]).not.toHaveProperty('actorName');
    const roster = await socket.next((m) => m.type === 'roster');
    expect(roster.agents).toEqual([expect.objectContaining({ principal: builder.principal, name: 'builder-7' })]);

    // A new agent's first heartbeat comes named; its events then do too, as do the first agent's.
    const second = await board.agent('builder-8');
    expect((await second.post('/api/status/heartbeat', { status: 'idle' })).status).toBe(200);
    expect(await socket.next((m) => m.type === 'presence')).toMatchObject({
      agent: { principal: second.principal, name: 'builder-8', status: 'idle' },
    });
    expect((await second.post('/api/items', { title: 'by the second' })).status).toBe(201);
    expect(await socket.next((m) => m.type === 'event')).toMatchObject({
      event: { type: 'item.created', actor: second.principal, actorName: 'builder-8' },
    });
    expect((await builder.post('/api/items', { title: 'by the first, live' })).status).toBe(201);
    expect(await socket.next((m) => m.type === 'event')).toMatchObject({
      event: { actor: builder.principal, actorName: 'builder-7' },
    });

    expect(socket.texts.length).toBeGreaterThan(4);
    expect(socket.texts.filter((t) => t.includes(ownerEmail))).toEqual([]);
    socket.ws.close();

    // The board's admin is told a person without a display name by their address, as its member list shows it.
    const admin = await joined(board, 'admin');
    const adminSocket = await watching(admin.client);
    adminSocket.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'], snapshot: true });
    const adminSnapshot = await adminSocket.next((m) => m.type === 'snapshot' && m.last);
    const ownersItem = (adminSnapshot.recent as { actor: string; actorName?: string }[]).find((e) =>
      e.actor.startsWith('user:'),
    );
    expect(ownersItem).toMatchObject({ actorName: ownerEmail });
    adminSocket.ws.close();
  });

  it('shows an operator a board by name with its owner’s address, and its agents by name, in the firehose and the account view', async () => {
    const board = await newBoard(srv.url);
    const ownerEmail = (await board.owner.get('/api/auth/me')).body.user.email as string;
    const boardName = (await board.owner.get('/api/projects')).body.projects[0].name as string;
    const builder = await board.agent('night-builder');
    const viewer = await joined(board, 'viewer');
    const op = await confirmedOperator(srv, opEmail);

    const socket = await openSocket(srv.url, cookieOf(op.client));
    socket.send({ type: 'subscribe', topics: ['firehose'], boards: [board.projectId] });
    await socket.next((m) => m.type === 'subscribed');
    // The node reads a board's name and an actor's on the first event it hears of them: later frames carry them.
    let frame: { boardName: string | null; ownerEmail: string | null; event: { actorName?: string } } | null = null;
    await until(async () => {
      expect((await builder.post('/api/items', { title: 'for the firehose' })).status).toBe(201);
      frame = await socket.next((m) => m.type === 'firehose');
      return frame!.ownerEmail !== null && frame!.event.actorName !== undefined;
    });
    expect(frame).toMatchObject({
      boardId: board.projectId,
      boardName,
      ownerEmail,
      event: { actor: builder.principal, actorName: 'night-builder' },
    });
    socket.ws.close();

    // The console's account view: the viewer's boards, each with its owner.
    const detail = await op.client.get(`/api/admin/users/${viewer.accountId}`);
    expect(detail.status, detail.text).toBe(200);
    expect(detail.body.boards).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ projectId: board.projectId, name: boardName, ownerEmail, owned: false }),
        expect.objectContaining({ ownerEmail: viewer.email, owned: true }),
      ]),
    );
  });
});
