// Issue 42, findings 1 and 6 (DOMAIN.md "Operators"). An operator is an account whose address is
// listed in OPERATOR_EMAILS AND confirmed: a stranger who signs up first with a listed address, a
// purged operator's address signed up again, or an address set by change-email is no operator
// (HTTP or socket) until the link mailed to it is followed. And /api/admin and /admin answer every
// method as an unknown path would, to everyone: no 405, no Allow naming the route's methods.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryBus } from '../../../src/bus/bus.js';
import { CLOSE } from '../../../src/ws/protocol.js';
import { newBoard } from '../../support/board.js';
import { confirmedOperator, operatorEmail, operatorSession } from '../../support/operators.js';
import { CaptureMailer, Client, signedUp, startTestServer, type Res, type TestServer } from '../../support/server.js';
import { expectError } from '../../support/expect-error.js';
import { openSocket, type TestSocket } from '../../support/socket.js';
import { verifyEmail } from '../../support/verify-email.js';

const PASSWORD = 'operator password 123'; // operatorSession's
const listed = Array.from({ length: 11 }, operatorEmail);
const bus = new MemoryBus();
let srv: TestServer;

beforeAll(async () => {
  srv = await startTestServer({ OPERATOR_EMAILS: listed.join(','), ADDRESS_RATE_PER_MINUTE: '100000' }, undefined, bus);
});
afterAll(() => srv.stop());

/** What an observer can tell of an answer: status, headers present, content type, body without its request id. */
const seen = (res: Res) => ({
  status: res.status,
  headers: [...res.headers.keys()].sort(),
  contentType: res.headers.get('content-type'),
  body: res.text.replace(/"requestId":"[^"]*"/, '"requestId":""'),
});
const cookieOf = (client: Client): Record<string, string> => ({
  cookie: [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
});
/** An error message of the socket with its request id taken out. */
const shape = (m: { type: string; error: Record<string, unknown> }) => ({
  type: m.type,
  error: { ...m.error, requestId: undefined },
});

/** What a path nobody serves answers `method` (the same for anyone). */
const unknownPath = async (method: string, path = '/api/no-such-route') =>
  seen(await new Client(srv.url).request(method, path));

/** GET /api/admin/users (a search) and GET /admin as `client` gets them, and whether both are what an unknown path shows. */
async function consoleOf(client: Client): Promise<{ api: number; page: number; refused: boolean }> {
  const [api, page] = [await client.get('/api/admin/users?q=operator'), await client.get('/admin')];
  const refused =
    JSON.stringify([seen(api), seen(page)]) ===
    JSON.stringify([await unknownPath('GET', '/api/admin/no-such-route'), await unknownPath('GET', '/no-such-page')]);
  return { api: api.status, page: page.status, refused };
}

/** Asks the socket for the firehose: 'subscribed', or refused exactly as an unknown topic is. */
async function firehose(socket: TestSocket): Promise<'subscribed' | 'refused'> {
  socket.send({ type: 'subscribe', topics: ['firehose'] });
  const answer = await socket.next((m) => m.type === 'subscribed' || m.type === 'error');
  if (answer.type === 'subscribed') return 'subscribed';
  socket.send({ type: 'subscribe', topics: ['nonesuch'] });
  expect(shape(answer)).toEqual(shape(await socket.next((m) => m.type === 'error')));
  return 'refused';
}

describe('an operator is a listed address that is confirmed', () => {
  it('refuses whoever signs up first with a listed address, over HTTP and the socket; its link confirms it only in that account’s session', async () => {
    const email = listed[0]!;
    const stranger = await operatorSession(srv.url, email);
    expect(await consoleOf(stranger.client)).toEqual({ api: 404, page: 404, refused: true });
    const socket = await openSocket(srv.url, cookieOf(stranger.client));
    expect(await firehose(socket)).toBe('refused');
    expect(await srv.store.audit.find({ action: 'admin.live.firehose', actor: `user:${stranger.accountId}` })).toEqual(
      [],
    );

    // The address's owner follows the link mailed to it, signed out or signed in to an account of
    // their own: the stranger's account stays unconfirmed (no console), and the link unspent.
    const token = CaptureMailer.tokenOf(await srv.mail.next(email, /^Verify your email/));
    expectError(await new Client(srv.url).post('/api/auth/verify-email', { token }), 401, 'UNAUTHENTICATED');
    const owner = await signedUp(srv.url);
    expectError(await owner.client.post('/api/auth/verify-email', { token }), 400, 'INVALID_LINK_TOKEN');
    expect(await consoleOf(stranger.client)).toEqual({ api: 404, page: 404, refused: true });
    expect(await firehose(socket)).toBe('refused');
    // Mailbox and password together (the link, in the account's own session) confirm it: the console opens.
    expect((await stranger.client.post('/api/auth/verify-email', { token })).status).toBe(200);
    expect(await consoleOf(stranger.client)).toEqual({ api: 200, page: 200, refused: false });
    expect(await firehose(socket)).toBe('subscribed');
    socket.ws.close();
  });

  it('shuts the console to an operator whose address changes to another listed one, until that one is confirmed', async () => {
    const [from, to] = [listed[1]!, listed[2]!];
    const op = await confirmedOperator(srv, from);
    expect(await consoleOf(op.client)).toEqual({ api: 200, page: 200, refused: false });
    const before = await openSocket(srv.url, cookieOf(op.client));
    expect(await firehose(before)).toBe('subscribed');

    const changed = await op.client.post('/api/account/email', { currentPassword: PASSWORD, newEmail: to });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.account).toMatchObject({ email: to, emailVerified: false });
    expect((await before.closed).code).toBe(CLOSE.revoked); // its session went with the change
    expect(await consoleOf(op.client)).toEqual({ api: 404, page: 404, refused: true });
    const after = await openSocket(srv.url, cookieOf(op.client));
    expect(await firehose(after)).toBe('refused');

    await verifyEmail(srv, to, op.client);
    expect(await consoleOf(op.client)).toEqual({ api: 200, page: 200, refused: false });
    expect(await firehose(after)).toBe('subscribed');
    after.ws.close();
  });

  it('ends a socket’s firehose and foreign board at the next re-check once its address is no longer confirmed', async () => {
    const op = await confirmedOperator(srv, listed[3]!);
    const board = await newBoard(srv.url);
    const socket = await openSocket(srv.url, cookieOf(op.client));
    expect(await firehose(socket)).toBe('subscribed');
    socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'] });
    expect(await socket.next((m) => m.type === 'subscribed' || m.type === 'error')).toMatchObject({
      type: 'subscribed',
      role: 'operator',
    });

    // The record changes under a live session (no revocation): the answer comes from the record, at once.
    const account = (await srv.store.accounts.get(op.accountId))!;
    expect(await srv.store.accounts.update(account._id, account.version, { emailVerified: false })).not.toBe(null);
    expect(await consoleOf(op.client)).toEqual({ api: 404, page: 404, refused: true });
    // The sockets' re-check (every minute, and on a bus catch-up) ends what an operator alone may watch.
    bus.notify({ kind: 'catch-up' });
    const ended: Record<string, unknown>[] = [];
    while (ended.length < 2) ended.push(await socket.next((m) => m.type === 'unsubscribed'));
    expect(ended).toEqual(
      expect.arrayContaining([
        { type: 'unsubscribed', topics: ['firehose'], reason: 'This account is no longer an operator.' },
        expect.objectContaining({ type: 'unsubscribed', boardId: board.projectId }),
      ]),
    );
    expect(await firehose(socket)).toBe('refused');
    await (await board.agent('busy')).post('/api/items', { title: 'not for a former operator' });
    socket.send({ type: 'ping' });
    await socket.next((m) => m.type === 'pong');
    await expect(socket.next((m) => m.type === 'firehose' || m.type === 'event', 300)).rejects.toThrow(
      /no matching message/,
    );
    socket.ws.close();
  });

  it('ends a socket’s firehose and foreign board at once when its address is no longer confirmed', async () => {
    const op = await confirmedOperator(srv, listed[10]!);
    const board = await newBoard(srv.url);
    const socket = await openSocket(srv.url, cookieOf(op.client));
    expect(await firehose(socket)).toBe('subscribed');
    socket.send({ type: 'subscribe', boardId: board.projectId, topics: ['activity'] });
    expect(await socket.next((m) => m.type === 'subscribed' || m.type === 'error')).toMatchObject({ role: 'operator' });

    // The account's write is told to every node's sockets: no re-check (a minute away) needed.
    const account = (await srv.store.accounts.get(op.accountId))!;
    expect(await srv.store.accounts.update(account._id, account.version, { emailVerified: false })).not.toBe(null);
    const ended: Record<string, unknown>[] = [];
    while (ended.length < 2) ended.push(await socket.next((m) => m.type === 'unsubscribed', 2000));
    expect(ended).toEqual(
      expect.arrayContaining([
        { type: 'unsubscribed', topics: ['firehose'], reason: 'This account is no longer an operator.' },
        expect.objectContaining({ type: 'unsubscribed', boardId: board.projectId }),
      ]),
    );
    socket.ws.close();
  });

  it('refuses whoever signs up with a purged operator’s address until they confirm it', async () => {
    const [gone, purger] = [listed[4]!, listed[5]!];
    const first = await confirmedOperator(srv, gone);
    const op = await confirmedOperator(srv, purger);
    const deleted = await op.client.post(`/api/admin/users/${first.accountId}/delete`, { reason: 'left the team' });
    expect(deleted.status, deleted.text).toBe(200);
    const purged = await op.client.post(`/api/admin/users/${first.accountId}/purge`, {
      reason: 'left the team',
      confirm: gone,
    });
    expect(purged.status, purged.text).toBe(200);
    expect(await srv.store.accounts.get(first.accountId)).toBe(null);

    const again = await operatorSession(srv.url, gone);
    expect(again.accountId).not.toBe(first.accountId);
    expect(await consoleOf(again.client)).toEqual({ api: 404, page: 404, refused: true });
    await verifyEmail(srv, gone, again.client);
    expect(await consoleOf(again.client)).toEqual({ api: 200, page: 200, refused: false });
  });
});

describe('admin paths answer any method as an unknown path', () => {
  const calls: [string, string][] = [
    ['PUT', '/api/admin/users'],
    ['DELETE', '/api/admin/users'],
    ['POST', '/admin'],
    ['PATCH', '/api/admin/anything'],
    ['PUT', '/admin/users/someone'],
    ['DELETE', '/api/admin/users/someone/purge'],
    ['OPTIONS', '/api/admin/codebase'],
  ];

  it('to no credential, another account’s session, an unconfirmed listed address and an operator: 404 NOT_FOUND, no Allow', async () => {
    const person = await signedUp(srv.url);
    const unconfirmed = await operatorSession(srv.url, listed[6]!);
    const operator = await confirmedOperator(srv, listed[7]!);
    const callers: [string, Client][] = [
      ['no credential', new Client(srv.url)],
      ['another account', person.client],
      ['an unconfirmed listed address', unconfirmed.client],
      ['an operator', operator.client],
    ];
    for (const [method, path] of calls) {
      const unknown = await unknownPath(method);
      expect(unknown.status).toBe(404);
      expect(JSON.parse(unknown.body)).toMatchObject({ error: { code: 'NOT_FOUND' } });
      for (const [who, client] of callers) {
        const res = await client.request(method, path);
        expect(res.headers.get('allow'), `${who}: ${method} ${path}`).toBe(null);
        expect(seen(res), `${who}: ${method} ${path}`).toEqual(unknown);
      }
    }
    // Routes of anyone else keep their 405 and Allow.
    const wrong = await person.client.request('PUT', '/api/auth/me');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('the console’s pages', () => {
  // Money and Users link to /admin/money/{userId}: reloading it, or opening the link, asks the server.
  const pages = ['/admin', '/admin/users', '/admin/users/someone', '/admin/money/someone'];

  it('are the console’s document to an operator, and an unknown path to anyone else', async () => {
    const operator = await confirmedOperator(srv, listed[8]!);
    for (const path of pages) {
      const res = await operator.client.get(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toMatch(/^text\/html/);
    }
    const unknown = await unknownPath('GET', '/no-such-page');
    expect(unknown.status).toBe(404);
    const others: [string, Client][] = [
      ['no credential', new Client(srv.url)],
      ['another account', (await signedUp(srv.url)).client],
      ['an unconfirmed listed address', (await operatorSession(srv.url, listed[9]!)).client],
    ];
    for (const [who, client] of others)
      for (const path of pages) expect(seen(await client.get(path)), `${who}: ${path}`).toEqual(unknown);
  });
});
