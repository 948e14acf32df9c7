// The typed client against a running server: an agent's whole round through BoardClient,
// BoardSocket and LeaseKeeper (items made, a claim kept alive across several TTLs, the exact head
// submitted, a second agent verifying), a refused call carrying the registry's code, and the keeper
// telling its owner at once when an operator's override or block ends the lease.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  BoardApiError,
  BoardClient,
  BoardSocket,
  LeaseKeeper,
  type LeaseEnded,
  type LeaseExpiring,
  type LeaseLoss,
  type LoggedEvent,
  type Shout,
} from '@agent-board/client';
import { head, newBoard, type TestBoard } from '../support/board.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { quietFor } from '../support/until.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ LEASE_MIN_TTL_SECONDS: '1' });
});
afterAll(async () => {
  await srv.stop();
});

const open: { close(): void }[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.close();
});

/** A BoardClient and a connected BoardSocket for a new agent of `board`. */
async function agentOf(board: TestBoard, name: string) {
  const agent = await board.agent(name);
  const token = agent.defaults.authorization!.slice('Bearer '.length);
  const client = new BoardClient({ baseUrl: srv.url, token });
  const socket = new BoardSocket({ baseUrl: srv.url, token, principal: agent.principal });
  open.push(socket);
  await socket.connect();
  return { client, socket, principal: agent.principal };
}

const collect = <T>(subscribe: (fn: (e: T) => void) => unknown): T[] => {
  const seen: T[] = [];
  subscribe((e) => seen.push(e));
  return seen;
};

describe('an agent’s round through the typed client', () => {
  it('creates items, keeps a 2 s lease alive for over three TTLs, submits the exact head, and a second agent verifies', async () => {
    const board = await newBoard(srv.url);
    const worker = await agentOf(board, 'worker');
    const verifier = await agentOf(board, 'verifier');
    const events = collect<LoggedEvent>((fn) => worker.socket.on('event', fn));
    expect(await worker.socket.subscribe(board.projectId, { topics: ['activity'] })).toMatchObject({
      boardId: board.projectId,
      role: 'member',
      seq: 0,
    });

    const made = await worker.client.post('/api/items/batch', {
      body: {
        items: [
          { title: 'gated work', verify: 'required' },
          { title: 'later', ref: 'b' },
        ],
      },
    });
    expect(made.items.map((i) => i.workId)).toEqual(['W-1', 'W-2']);
    expect(worker.client.rate).toMatchObject({ request: { limit: 600 }, write: { limit: 120 } });
    expect(worker.client.rate!.write.remaining).toBeLessThan(120);

    const grant = await worker.client.post('/api/claim', { body: { workId: 'W-1', ttlSeconds: 2 } });
    expect(grant).toMatchObject({ workId: 'W-1', purpose: 'work', leaseId: expect.stringMatching(/^lease_/) });
    const keeper = new LeaseKeeper({
      client: worker.client,
      lease: grant,
      socket: worker.socket,
      boardId: board.projectId,
    });
    const renewals = collect<unknown>((fn) => keeper.on('renewed', fn));
    const started = Date.now();
    // Three TTLs and more, by this side's clock; the keeper renews every third of one.
    await expect
      .poll(() => Date.now() - started >= 7000 && renewals.length >= 6, { timeout: 30_000, interval: 200 })
      .toBe(true);
    expect(keeper.keeping).toBe(true);
    const item = await worker.client.get('/api/items/{workId}', { params: { path: { workId: 'W-1' } } });
    expect(item).toMatchObject({ state: 'claimed', lease: { holder: worker.principal } });
    expect(keeper.lease.fencingToken).toBe(grant.fencingToken);
    expect(Date.parse(keeper.lease.expiresAt)).toBeGreaterThan(Date.parse(grant.expiresAt) + 4000);

    // A refused submit that leaves the lease held (a head that is no commit id) keeps it alive.
    await expect(keeper.submit('not a commit')).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect(keeper.keeping).toBe(true);
    const renewedAfter = renewals.length;
    await expect.poll(() => renewals.length > renewedAfter, { timeout: 10_000, interval: 100 }).toBe(true);
    expect(await keeper.submit(head(1))).toEqual({ workId: 'W-1', state: 'awaiting_verify' });
    expect(keeper.keeping).toBe(false);
    const check = await verifier.client.post('/api/claim', { body: { purpose: 'verify' } });
    expect(check).toMatchObject({ workId: 'W-1', purpose: 'verify' });
    expect(
      await verifier.client.post('/api/verify', { body: { workId: 'W-1', head: head(1), verdict: 'pass' } }),
    ).toEqual({ workId: 'W-1', state: 'done' });

    // The worker's socket saw the whole round, each event once, in seq order.
    const { lastSeq } = await worker.client.get('/api/status');
    await expect.poll(() => events.at(-1)?.seq, { timeout: 10_000 }).toBe(lastSeq);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: lastSeq }, (_, i) => i + 1));
    const types = events.map((e) => e.event.type);
    expect(types.filter((t) => t === 'lease.renewed').length).toBe(renewals.length);
    for (const t of ['item.created', 'lease.granted', 'item.submitted', 'item.verified']) expect(types).toContain(t);
    expect(types).not.toContain('lease.expired');
    // A submitted lease is no longer renewed: nothing after the submit renews it.
    const renewed = renewals.length;
    await quietFor(1000); // proves no renewal comes: the keeper renewed every 667 ms (a third of the 2 s lease)
    expect(renewals.length).toBe(renewed);
  });

  it('turns a refusal into a BoardApiError with the registry’s code, meaning, fix and request id', async () => {
    const board = await newBoard(srv.url);
    const { client } = await agentOf(board, 'eager');
    const refused = await client.post('/api/claim', { body: {} }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BoardApiError);
    expect(refused).toMatchObject({
      status: 409,
      code: 'NOTHING_READY',
      meaning: 'No item is ready for this principal to claim.',
      fix: 'Wait for a lease.expired or item event, then claim again.',
      requestId: expect.any(String),
    });
    expect(client.rate).toMatchObject({ request: { limit: 600 } });

    const invalid = await client.post('/api/items', { body: { title: '' } }).catch((e: unknown) => e);
    expect(invalid).toMatchObject({ status: 400, code: 'INVALID_INPUT', details: expect.any(Object) });
    const stranger = new BoardClient({ baseUrl: srv.url, token: 'agb_not_a_token' });
    await expect(stranger.get('/api/whoami')).rejects.toMatchObject({ status: 401, code: 'INVALID_SERVICE_TOKEN' });
  });
});

describe('BoardSocket’s typed events', () => {
  it('surfaces direct shouts to its principal, and its own lease expiring and expired though it watches no lease topic', async () => {
    const board = await newBoard(srv.url);
    const holder = await agentOf(board, 'holder');
    const other = await agentOf(board, 'other');
    const direct = collect<{ shout: Shout }>((fn) => holder.socket.on('direct', fn));
    const shouts = collect<{ shout: Shout }>((fn) => holder.socket.on('shout', fn));
    await holder.socket.subscribe(board.projectId, { topics: ['shouts'] });
    await other.client.post('/api/shouts', { body: { text: 'to everyone' } });
    await other.client.post('/api/shouts', { body: { text: 'just you', to: holder.principal } });
    await expect.poll(() => shouts.length).toBe(2);
    expect(direct.map((d) => d.shout)).toEqual([
      expect.objectContaining({ text: 'just you', from: other.principal, to: holder.principal }),
    ]);

    await holder.client.post('/api/items', { body: { title: 'slow work' } });
    const expiring = new Promise<LeaseExpiring>((resolve) => holder.socket.once('lease.expiring', resolve));
    const expired = new Promise<LeaseEnded>((resolve) => holder.socket.once('lease.expired', resolve));
    const grant = await holder.client.post('/api/claim', { body: { ttlSeconds: 30 } });
    srv.advance(25_000); // a fifth of the lease left
    expect(await expiring).toMatchObject({ boardId: board.projectId, workId: grant.workId, holder: holder.principal });
    srv.advance(6_000);
    expect(await expired).toMatchObject({
      boardId: board.projectId,
      workId: grant.workId,
      lease: { holder: holder.principal, fencingToken: grant.fencingToken },
      reason: null,
    });
  }, 90_000);
});

describe('LeaseKeeper', () => {
  it('tells its owner at once when an admin overrides the item it verifies, or blocks the item it works', async () => {
    const board = await newBoard(srv.url);
    const worker = await agentOf(board, 'worker');
    const verifier = await agentOf(board, 'verifier');
    await worker.client.post('/api/items/batch', {
      body: { items: [{ title: 'gated', verify: 'required' }, { title: 'plain' }] },
    });
    const work = await worker.client.post('/api/claim', { body: { workId: 'W-1' } });
    await worker.client.post('/api/submit', { body: { leaseId: work.leaseId, head: head(7) } });

    // Ten-minute leases: the keepers' next renewals are minutes away, so only the socket can tell them.
    const check = await verifier.client.post('/api/claim', { body: { purpose: 'verify', ttlSeconds: 600 } });
    const heard: LeaseLoss[] = [];
    const checking = new LeaseKeeper({
      client: verifier.client,
      lease: check,
      socket: verifier.socket,
      boardId: board.projectId,
      onLost: (l) => heard.push(l),
    });
    const plain = await worker.client.post('/api/claim', { body: { workId: 'W-2', ttlSeconds: 600 } });
    const working = new LeaseKeeper({
      client: worker.client,
      lease: plain,
      socket: worker.socket,
      boardId: board.projectId,
    });
    const renewed = collect<unknown>((fn) => [checking, working].forEach((k) => k.on('renewed', fn)));

    const overridden = await board.owner.post(`/api/items/W-1/override?projectId=${board.projectId}`, {
      reason: 'verified by hand',
    });
    expect(overridden.status).toBe(200);
    expect(await checking.lost).toMatchObject({
      reason: 'revoked',
      detail: 'overridden',
      workId: 'W-1',
      source: 'socket',
    });
    expect(heard).toHaveLength(1);
    expect(working.keeping).toBe(true);

    const blocked = await board.owner.post(`/api/items/W-2/state?projectId=${board.projectId}`, {
      action: 'block',
      reason: 'wrong approach',
    });
    expect(blocked.status).toBe(200);
    expect(await working.lost).toMatchObject({ reason: 'revoked', detail: 'blocked', workId: 'W-2', source: 'socket' });
    expect(renewed).toEqual([]);
  });

  it('without a socket, hears of the loss from its next renewal, and of an expiry from the refusal’s code', async () => {
    const board = await newBoard(srv.url);
    const { client } = await agentOf(board, 'quiet');
    await client.post('/api/items/batch', {
      body: { items: [{ title: 'blocked under me' }, { title: 'left to expire' }] },
    });
    const first = await client.post('/api/claim', { body: { workId: 'W-1', ttlSeconds: 600 } });
    const keeper = new LeaseKeeper({ client, lease: first });
    await board.owner.post(`/api/items/W-1/state?projectId=${board.projectId}`, { action: 'block' });
    await keeper.renewNow();
    expect(await keeper.lost).toMatchObject({ source: 'renewal', workId: 'W-1' });
    expect(['revoked', 'not-held']).toContain((await keeper.lost).reason);

    const second = await client.post('/api/claim', { body: { workId: 'W-2', ttlSeconds: 600 } });
    const late = new LeaseKeeper({ client, lease: second });
    srv.advance(601_000); // the server's clock passes the lease's end; this side's has not
    await late.renewNow();
    const loss = await late.lost;
    expect(loss).toMatchObject({ source: 'renewal', workId: 'W-2' });
    expect(loss.error).toBeInstanceOf(BoardApiError);
    expect(['LEASE_EXPIRED', 'LEASE_NOT_HELD']).toContain(loss.code);
  });
});
