// Sockets follow who may watch a board: an agent's socket across a board takeover (its token moves
// to the person's account and the same socket goes on subscribing), and a membership change whose
// notice never arrived, found when the node revalidates its sockets (as after a bus outage).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MemoryBus } from '../../src/bus/bus.js';
import { Client, signedUp, startTestServer, type TestServer } from '../support/server.js';
import { openSocket } from '../support/socket.js';

let srv: TestServer;
const bus = new MemoryBus();
beforeAll(async () => {
  srv = await startTestServer({}, undefined, bus);
});
afterAll(async () => {
  await srv.stop();
});

it('lets an agent’s open socket subscribe again after a person took its anonymous board over', async () => {
  const provisioned = await new Client(srv.url).post('/api/accounts/anon-provision', { projectName: 'Night shift' });
  expect(provisioned.status, provisioned.text).toBe(201);
  const { projectId, secret, claimSecret } = provisioned.body as {
    projectId: string;
    secret: string;
    claimSecret: string;
  };
  const socket = await openSocket(srv.url, { authorization: `Bearer ${secret}` });
  socket.send({ type: 'subscribe', boardId: projectId, topics: ['activity'] });
  await socket.next((m) => m.type === 'subscribed');
  socket.send({ type: 'unsubscribe', boardId: projectId });
  await socket.next((m) => m.type === 'unsubscribed');

  const person = await signedUp(srv.url);
  expect((await person.client.post('/api/accounts/claim-anonymous', { claimSecret })).status).toBe(200);

  socket.send({ type: 'subscribe', boardId: projectId, topics: ['activity'] });
  expect(await socket.next((m) => m.type === 'subscribed' || m.type === 'error')).toMatchObject({
    type: 'subscribed',
    boardId: projectId,
    role: 'member',
  });
  socket.ws.close();
});

it('ends a subscription whose membership changed without a notice, when the node revalidates its sockets', async () => {
  const [owner, lowered, removed] = await Promise.all([signedUp(srv.url), signedUp(srv.url), signedUp(srv.url)]);
  const projectId = (await owner.client.get('/api/projects')).body.projects[0].projectId as string;
  const sockets = [];
  for (const who of [lowered, removed]) {
    // Members written straight to the store, and changed there: no notice goes out for any of it.
    await srv.store.members.insert({
      _id: `${projectId}:${who.accountId}`,
      version: 1,
      projectId,
      accountId: who.accountId,
      role: 'admin',
      acceptedAt: Date.now(),
    });
    const socket = await openSocket(srv.url, {
      cookie: [...who.client.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      origin: 'http://board.test',
    });
    socket.send({ type: 'subscribe', boardId: projectId, topics: ['activity'] });
    expect(await socket.next((m) => m.type === 'subscribed')).toMatchObject({ role: 'admin' });
    sockets.push(socket);
  }
  const [loweredSocket, removedSocket] = sockets;
  const row = (await srv.store.members.get(`${projectId}:${lowered.accountId}`))!;
  await srv.store.members.update(row._id, row.version, { role: 'viewer' });
  await srv.store.members.delete(`${projectId}:${removed.accountId}`);

  bus.notify({ kind: 'catch-up' }); // what the node does after its bus reconnects (and every minute)
  expect(await loweredSocket!.next((m) => m.type === 'unsubscribed')).toMatchObject({
    boardId: projectId,
    reason: expect.stringContaining('viewer'),
  });
  expect(await removedSocket!.next((m) => m.type === 'unsubscribed')).toMatchObject({
    boardId: projectId,
    reason: 'You are no longer a member of this board.',
  });
  // The lowered one subscribes again under its new role; the removed one cannot.
  loweredSocket!.send({ type: 'subscribe', boardId: projectId, topics: ['activity'] });
  expect(await loweredSocket!.next((m) => m.type === 'subscribed')).toMatchObject({ role: 'viewer' });
  removedSocket!.send({ type: 'subscribe', boardId: projectId, topics: ['activity'] });
  expect(await removedSocket!.next((m) => m.type === 'error')).toMatchObject({
    error: { code: 'PROJECT_SCOPE_DENIED' },
  });
  for (const socket of sockets) socket.ws.close();
});
