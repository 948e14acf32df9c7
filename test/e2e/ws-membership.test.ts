// An agent's socket across a board takeover: its token moves to the person's account, and the same
// socket goes on subscribing to the board (the hub reads the token afresh, account included).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Client, signedUp, startTestServer, type TestServer } from '../support/server.js';
import { openSocket } from '../support/socket.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.stop();
});

it('lets an agent’s open socket subscribe again after a person took its anonymous board over', async () => {
  const provisioned = await new Client(srv.url).post('/api/accounts/anon-provision', { projectName: 'Night shift' });
  expect(provisioned.status, provisioned.text).toBe(201);
  const { projectId, secret, claimSecret } = provisioned.body as { projectId: string; secret: string; claimSecret: string };
  const socket = await openSocket(srv.url, { authorization: `Bearer ${secret}` });
  socket.send({ type: 'subscribe', boardId: projectId, topics: ['activity'] });
  await socket.next((m) => m.type === 'subscribed');
  socket.send({ type: 'unsubscribe', boardId: projectId });
  await socket.next((m) => m.type === 'unsubscribed');

  const person = await signedUp(srv.url);
  expect((await person.client.post('/api/accounts/claim-anonymous', { claimSecret })).status).toBe(200);

  socket.send({ type: 'subscribe', boardId: projectId, topics: ['activity'] });
  expect(await socket.next((m) => m.type === 'subscribed' || m.type === 'error')).toMatchObject({ type: 'subscribed', boardId: projectId, role: 'member' });
  socket.ws.close();
});
