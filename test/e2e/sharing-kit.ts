// What the sharing suites have in common: a server on the store under test, people who confirmed
// their address, and the HTTP steps of sharing (invite, the mailed link, accept, join, role
// changes, removal, transfers), plus a hook to act while an accept is about to take its link.
import { expect } from 'vitest';
import { newBoard, type TestBoard } from '../support/board.js';
import { CaptureMailer, signedUp, type Client, type Res, type TestServer } from '../support/server.js';
import type { TestSocket } from '../support/socket.js';
import { verifyEmail } from '../support/verify-email.js';

export const PUBLIC_URL = 'http://board.test';
/** The sharing suites' server: links point at PUBLIC_URL; every person signs up and confirms from one socket address, so that budget is lifted. */
export const SHARING_ENV = { PUBLIC_URL, ADDRESS_RATE_PER_MINUTE: '100000' };

export type Person = Awaited<ReturnType<typeof signedUp>>;
export type SharingKit = ReturnType<typeof sharingKit>;

export function sharingKit(served: { srv: TestServer }) {
  const url = () => served.srv.url;
  const srv = () => served.srv;
  /** Someone signed up who opened the confirmation link mailed to them. */
  const person = async (): Promise<Person> => {
    const signed = await signedUp(url());
    await verifyEmail(srv(), signed.email, signed.client);
    return signed;
  };
  const invite = (by: Client, projectId: string, email: string, role = 'member') =>
    by.post(`/api/boards/${projectId}/invitations`, { email, role });
  /** The link last mailed to `email`: its invitation id and token. */
  const linkFor = async (email: string) => {
    const mail = await srv().mail.next(email, /^Invitation to the board/);
    const m = /\/invitations\/([\w-]+)#token=/.exec(mail.text);
    return { invitationId: m![1]!, token: CaptureMailer.tokenOf(mail), mail };
  };
  const accept = (by: Client, link: { invitationId: string; token: string }) =>
    by.post(`/api/boards/invitations/${link.invitationId}/accept`, { token: link.token });
  const listed = async (client: Client, projectId: string) =>
    (
      (await client.get('/api/projects?limit=200')).body.projects as {
        projectId: string;
        role: string;
        owned: boolean;
      }[]
    ).find((p) => p.projectId === projectId);
  /** `who` invited with `role` and accepted. */
  const join = async (board: TestBoard, who: Person, role = 'member', by: Client = board.owner) => {
    expect((await invite(by, board.projectId, who.email, role)).status).toBe(201);
    const res = await accept(who.client, await linkFor(who.email));
    expect(res.status, res.text).toBe(200);
  };
  const resend = (by: Client, projectId: string, invitationId: string) =>
    by.post(`/api/boards/${projectId}/invitations/${invitationId}/resend`);
  const setRole = (by: Client, projectId: string, userId: string, role: string) =>
    by.post(`/api/boards/${projectId}/members/${userId}/role`, { role });
  const remove = (by: Client, projectId: string, userId: string) =>
    by.request('DELETE', `/api/boards/${projectId}/members/${userId}`);
  const cookieOf = (client: Client) => ({ cookie: `board_session=${client.cookies.get('board_session')}` });
  const subscribed = async (socket: TestSocket, boardId: string) => {
    socket.send({ type: 'subscribe', boardId, topics: ['activity'] });
    return socket.next((m) => (m.type === 'subscribed' || m.type === 'error') && (m.boardId === boardId || m.error));
  };
  const statusOf = (res: Res) => res.status;
  /** Live invitations of `email` on the board, and the mails sent to `email`. */
  const pendingOf = async (projectId: string, email: string) =>
    (await srv().store.invitations.find({ projectId, email, status: 'pending' })).length;
  const mailsTo = (email: string) => srv().mail.sent.filter((m) => m.to === email).length;
  /** A board whose owner offered it to `heir`, a member. */
  const offered = async () => {
    const board = await newBoard(url());
    const ownerId = (await board.owner.get('/api/auth/me')).body.user.id as string;
    const heir = await person();
    await join(board, heir, 'member');
    srv().advance(61_000); // the heir was mailed their invitation: one mail a minute per address
    const opened = await board.owner.post(`/api/boards/${board.projectId}/transfers`, { toUserId: heir.accountId });
    expect(opened.status, opened.text).toBe(201);
    return { board, ownerId, heir, transferId: opened.body.transfer.transferId as string };
  };
  const takeOver = (transferId: string, by: Client) => by.post(`/api/boards/transfers/${transferId}/accept`);
  /** Runs `meanwhile` when the next accept is about to take its invitation, then lets that accept go on. */
  const beforeTheTake = (meanwhile: () => Promise<void>) => {
    const invitations = srv().store.invitations;
    const original = invitations.update;
    invitations.update = async (...args: Parameters<typeof original>) => {
      invitations.update = original;
      await meanwhile();
      return original.apply(invitations, args);
    };
  };
  return {
    url,
    srv,
    person,
    invite,
    linkFor,
    accept,
    listed,
    join,
    resend,
    setRole,
    remove,
    cookieOf,
    subscribed,
    statusOf,
    pendingOf,
    mailsTo,
    offered,
    takeOver,
    beforeTheTake,
  };
}
