// A member removed from a board (DOMAIN.md "Sharing": "their sockets on that board closed, on
// every node") hears nothing more of the board on a socket it holds open, though it held leases
// there: neither an admin ending one later (the event frame, the item's patch with the operator's
// block reason) nor another's warning and expiry. Lease news goes to a holder's sockets only while
// they may still see the board (src/ws/lease-news.ts).
import { expect, it } from 'vitest';
import { newBoard } from '../support/board.js';
import { embeddedStore, serveStore } from '../support/stores.js';
import { openSocket } from '../support/socket.js';
import { SHARING_ENV, sharingKit } from './sharing-kit.js';

const served = serveStore(embeddedStore, SHARING_ENV);
const kit = sharingKit(served);

it('sends a removed member nothing more of the board, lease news included', async () => {
  const srv = served.srv;
  const board = await newBoard(srv.url);
  const member = await kit.person();
  await kit.join(board, member, 'member');
  const q = `?projectId=${board.projectId}`;
  for (const title of ['secret roadmap item', 'short errand'])
    expect((await board.owner.post(`/api/items${q}`, { title })).status).toBe(201);
  const lease = await member.client.post(`/api/claim${q}`, { workId: 'W-1' });
  expect(lease.status, lease.text).toBe(200);
  expect((await member.client.post(`/api/claim${q}`, { workId: 'W-2', ttlSeconds: 30 })).status).toBe(200);

  // The member's browser stays open (it may watch other boards); it watches this one.
  const socket = await openSocket(srv.url, { ...kit.cookieOf(member.client), origin: 'http://board.test' });
  expect(await kit.subscribed(socket, board.projectId)).toMatchObject({ type: 'subscribed' });

  expect((await kit.remove(board.owner, board.projectId, member.accountId)).status).toBe(204);
  await socket.next((m) => m.type === 'unsubscribed' && m.boardId === board.projectId);

  // Later, an admin blocks the item the removed member had held, and its other lease runs low, then out.
  const blocked = await board.owner.post(`/api/items/W-1/state${q}`, {
    action: 'block',
    reason: 'acquisition talks: do not discuss',
  });
  expect(blocked.status, blocked.text).toBe(200);
  srv.advance(25_000); // 20% of W-2's lease left: its holder would be warned
  await new Promise((r) => setTimeout(r, 1500)); // the lease scheduler's tick
  srv.advance(6_000);
  await expect
    .poll(async () => (await srv.store.events.find({ boardId: board.projectId, type: 'lease.expired' })).length, {
      timeout: 10_000,
    })
    .toBe(1);

  const leaked = await socket.next((m) => m.type === 'event' && m.boardId === board.projectId, 2000).catch(() => null);
  expect(leaked, 'a removed member’s socket received an event of the board').toBeNull();
  socket.ws.close();
}, 30_000);
