// Sharing a board in Chromium: the owner invites from the members page; the invitee opens the
// mailed link in another browser, is sent to sign in, first with the wrong account (the page says
// so and offers to switch), then with the invited one, which must confirm its address first (the
// page says how), accepts and finds the board in their listing; the owner changes the member's
// role and removes them.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { landOn, launchChromium, openPage, screenshot, signUpInPage, startBrowserServer } from '../support/browser.js';
import { CaptureMailer, Client, signedUp, type TestServer } from '../support/server.js';
import { unique } from '../support/temp.js';
import { failOnce } from '../support/fail-once.js';
import { verifyEmail } from '../support/verify-email.js';

const chromium = inject('chromium');
const BOARD = 'Fleet alpha';

describe.skipIf(!chromium)('sharing a board (Chromium)', () => {
  let browser: Browser;
  let server: TestServer;
  beforeAll(async () => {
    [browser, server] = await Promise.all([launchChromium(chromium!), startBrowserServer()]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('invites by mail, the invitee accepts in their own browser, the owner changes their role and removes them', async () => {
    const [invitee, stranger] = await Promise.all([signedUp(server.url), signedUp(server.url)]);
    const owner = await openPage(browser, server);
    const ownerEmail = `${unique('owner')}@example.com`;
    await signUpInPage(owner.page, ownerEmail);
    await owner.page.getByLabel('Board name').fill(BOARD);
    await owner.page.getByRole('button', { name: 'Create board' }).click();
    await owner.page.locator('tr', { hasText: BOARD }).getByRole('link', { name: 'Members' }).click();
    await owner.page.getByRole('heading', { name: `Members of “${BOARD}”` }).waitFor();
    const projectId = new URL(owner.page.url()).pathname.split('/')[2]!;
    await landOn(owner.page, `/boards/${projectId}/members`);

    await owner.page.getByLabel('Email').fill(invitee.email);
    await owner.page.locator('select[name="invite-role"]').selectOption('member');
    await owner.page.getByRole('button', { name: 'Send invitation' }).click();
    await owner.page.getByText(`Invitation mailed to ${invitee.email} as member`).waitFor();
    await owner.page
      .locator('tr', { hasText: invitee.email })
      .getByText(/^pending, expires in 7 days$/)
      .waitFor();

    const mail = await server.mail.next(invitee.email, /^Invitation to the board/);
    const link = /(https?:\/\/\S+\/invitations\/\S+)/.exec(mail.text)![1]!;
    expect(link.startsWith(`${server.url}/invitations/`)).toBe(true);

    // The invitee's browser: not signed in, so the link goes through sign-in, first as someone else.
    const guest = await openPage(browser, server);
    await guest.page.goto(link);
    await landOn(guest.page, '/signin');
    expect(guest.page.url()).not.toContain('token');
    const signIn = async (who: { email: string; password: string }) => {
      await guest.page.getByLabel('Email').fill(who.email);
      await guest.page.getByLabel('Password').fill(who.password);
      await guest.page.getByRole('button', { name: 'Sign in' }).click();
    };
    const invitationPath = new URL(link).pathname;
    await signIn(stranger);
    await guest.page.waitForURL((u) => u.pathname === invitationPath);
    // The wrong account is told before it tries, and offered the way to the right one.
    await guest.page.getByRole('alert').getByText('INVITATION_EMAIL_MISMATCH').waitFor();
    expect(await guest.page.getByRole('button', { name: /^Accept/ }).count()).toBe(0);
    await screenshot(guest.page, 'invitation-mismatch');
    await guest.page.getByRole('button', { name: 'Sign out and switch account' }).click();
    await guest.page.waitForURL((u) => u.pathname === '/signin');
    await signIn(invitee);
    await landOn(guest.page, invitationPath);
    // Not confirmed yet: the page says what to do, and offers no accept.
    await guest.page.getByRole('alert').getByText('Confirm your email address first.').waitFor();
    await guest.page.getByText(`Find the mail “Verify your email” we sent to ${invitee.email}`).waitFor();
    expect(await guest.page.getByRole('button', { name: /^Accept/ }).count()).toBe(0);
    await screenshot(guest.page, 'invitation-unconfirmed');
    await guest.page.getByRole('button', { name: 'I confirmed my address: check again' }).click();
    await guest.page.getByText(`${invitee.email} is not confirmed yet`).waitFor();
    // The first confirmation mail is lost: the page has a new one sent, and that link confirms.
    const verifyMails = () =>
      server.mail.sent.filter((m) => m.to === invitee.email && /^Verify your email/.test(m.subject)).length;
    const before = verifyMails();
    await guest.page.getByRole('button', { name: 'Mail me a new confirmation link' }).click();
    await guest.page.getByText(`A new confirmation link is on its way to ${invitee.email}.`).waitFor();
    expect(verifyMails()).toBe(before + 1);
    await verifyEmail(server, invitee.email, invitee.client); // the newest link in the mail, opened elsewhere
    await guest.page.getByRole('button', { name: 'I confirmed my address: check again' }).click();
    await guest.page.getByRole('heading', { name: `Join “${BOARD}”` }).waitFor();
    await guest.page.getByText(`invites you to the board “${BOARD}” as member`).waitFor();
    await screenshot(guest.page, 'invitation');
    // The tab kept the link's token through both sign-ins, and drops it once the link is used.
    const kept = () =>
      guest.page.evaluate("sessionStorage.getItem('agent-board.invitation')") as Promise<string | null>;
    expect(JSON.parse((await kept())!)).toEqual({
      invitationId: invitationPath.split('/').at(-1),
      token: CaptureMailer.tokenOf(mail),
    });
    await guest.page.getByRole('button', { name: 'Accept and join as member' }).click();
    await guest.page.getByText(`You joined “${BOARD}” as member.`).waitFor();
    expect(await kept()).toBeNull();
    await screenshot(guest.page, 'invitation-accepted');
    // A member sees who is on the board, not their addresses.
    await guest.page.getByRole('link', { name: 'See its members' }).click();
    await guest.page.getByText('Only the board’s admins and owner see members’ email addresses').waitFor();
    await guest.page
      .locator('tr', { hasText: 'owner' })
      .getByText(/^member [0-9a-f-]{8}$/)
      .waitFor();
    expect(await guest.page.getByText(ownerEmail).count()).toBe(0);
    await guest.page.locator('tr', { hasText: invitee.email }).getByText('(you)').waitFor();
    await screenshot(guest.page, 'members-as-member');
    await guest.page.getByRole('link', { name: 'Boards' }).first().click();
    const row = guest.page.locator('tr', { hasText: BOARD });
    await row.getByRole('cell', { name: 'member', exact: true }).waitFor();
    await screenshot(guest.page, 'projects-shared');

    // The owner sees the member, and the invitation accepted.
    await owner.page.reload();
    const memberRow = owner.page
      .locator('tr', { hasText: invitee.email })
      .filter({ has: owner.page.getByRole('combobox') });
    await memberRow.waitFor();
    await owner.page
      .locator('tr', { hasText: invitee.email })
      .getByText(/^accepted/)
      .waitFor();
    await memberRow.getByRole('combobox', { name: `Role of ${invitee.email}` }).selectOption('viewer');
    await memberRow.getByRole('button', { name: 'Change role' }).click();
    await memberRow.getByRole('button', { name: 'Yes, change role' }).click();
    await expect
      .poll(async () => (await server.store.members.get(`${projectId}:${invitee.accountId}`))?.role)
      .toBe('viewer');
    await memberRow.getByRole('button', { name: 'Change role' }).waitFor({ state: 'detached' });
    await screenshot(owner.page, 'members');

    await guest.page.reload();
    await row.getByRole('cell', { name: 'viewer', exact: true }).waitFor();

    await memberRow.getByRole('button', { name: 'Remove' }).click();
    await memberRow.getByRole('button', { name: 'Yes, remove' }).click();
    await memberRow.waitFor({ state: 'detached' });
    expect(await server.store.members.get(`${projectId}:${invitee.accountId}`)).toBeNull();
    await guest.page.reload();
    await guest.page.locator('tr', { hasText: 'My board' }).waitFor();
    expect(await guest.page.locator('tr', { hasText: BOARD }).count()).toBe(0);

    expect(owner.problems).toEqual([]);
    expect(guest.problems).toEqual([]);
    await owner.close();
    await guest.close();
  });

  it('offers the board to a member, who takes it over from the members page, finishing it after a failure cut it short', async () => {
    const heir = await signedUp(server.url);
    const ownerEmail = `${unique('owner')}@example.com`;
    const owner = await openPage(browser, server);
    await signUpInPage(owner.page, ownerEmail);
    // The heir joins over HTTP; the handover is what this test watches.
    const api = new Client(server.url);
    await api.post('/api/auth/login', { email: ownerEmail, password: 'correct horse battery staple' });
    const projectId = (await api.get('/api/projects')).body.projects[0].projectId as string;
    expect((await api.post(`/api/boards/${projectId}/invitations`, { email: heir.email, role: 'admin' })).status).toBe(
      201,
    );
    const mail = await server.mail.next(heir.email, /^Invitation/);
    await verifyEmail(server, heir.email, heir.client);
    expect(
      (
        await heir.client.post(`/api/boards/invitations/${/\/invitations\/([\w-]+)#/.exec(mail.text)![1]}/accept`, {
          token: CaptureMailer.tokenOf(mail),
        })
      ).status,
    ).toBe(200);
    server.advance(61_000); // the heir was mailed their invitation: one sharing mail a minute per address

    await owner.page.goto(`/boards/${projectId}/members`);
    const heirRow = owner.page.locator('tr', { hasText: heir.email }).filter({ has: owner.page.getByRole('combobox') });
    await heirRow.getByRole('button', { name: 'Transfer ownership' }).click();
    await heirRow.getByRole('button', { name: 'Yes, transfer ownership' }).click();
    await owner.page.getByText(`Ownership is offered to ${heir.email}`).waitFor();
    await server.mail.next(heir.email, /^Take over the board/);

    const tab = await openPage(browser, server);
    await tab.page.goto('/signin');
    await tab.page.getByLabel('Email').fill(heir.email);
    await tab.page.getByLabel('Password').fill(heir.password);
    await tab.page.getByRole('button', { name: 'Sign in' }).click();
    await landOn(tab.page, '/projects');
    await tab.page.goto(`/boards/${projectId}/members`);
    await tab.page.getByText('The owner offers you this board').waitFor();
    await screenshot(tab.page, 'members-transfer');
    await tab.page.getByRole('button', { name: 'Accept ownership' }).click();
    // The first try is cut short by a store failure as the board changes owner: the page offers to finish it.
    failOnce(server.store.projects, 'update');
    await tab.page.getByRole('button', { name: 'Yes, accept ownership' }).click();
    await tab.page.getByRole('alert').getByText('AUTH_UNAVAILABLE').waitFor();
    await tab.page.reload();
    await tab.page.getByText('You accepted this board, but taking it over did not finish').waitFor();
    await screenshot(tab.page, 'members-transfer-unfinished');
    await tab.page.getByRole('button', { name: 'Finish taking over' }).click();
    await tab.page.getByText('Your role: owner').waitFor();
    await tab.page.locator('tr', { hasText: ownerEmail }).getByRole('combobox').waitFor();
    expect(await server.store.projects.get(projectId)).toMatchObject({ ownerId: heir.accountId });

    await owner.page.reload();
    await owner.page.getByText('Your role: admin').waitFor();
    expect(await owner.page.getByRole('button', { name: 'Transfer ownership' }).count()).toBe(0);
    expect(owner.problems).toEqual([]);
    expect(tab.problems).toEqual([]);
    await owner.close();
    await tab.close();
  });
});
