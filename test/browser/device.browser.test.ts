// The device-approval page in Chromium against a real server: an agent starts a device flow over
// HTTP, a person opens its verificationUriComplete (signing in on the way), sees the agent's name,
// picks a board and approves; the agent's poll then receives its token. Also a denial, and an
// unknown code answered with the registry's message.
import { describe, expect, inject, it } from 'vitest';
import { type BrowserPage, landOn, screenshot, signUpInPage, useBrowserTabs } from '../support/browser.js';
import { Client } from '../support/server.js';
import { unique } from '../support/temp.js';

const chromium = inject('chromium');
const PASSWORD = 'correct horse battery staple';

describe.skipIf(!chromium)('the device-approval page (Chromium)', () => {
  const suite = useBrowserTabs(chromium!, 'device', { ADDRESS_RATE_PER_MINUTE: '100000' });
  const { tab } = suite;

  const agent = () => new Client(suite.server.url);
  const start = async (clientName: string, projectId?: string) => {
    const res = await agent().post('/api/auth/device/start', { clientName, ...(projectId ? { projectId } : {}) });
    expect(res.status, res.text).toBe(200);
    return res.body as { deviceCode: string; userCode: string; verificationUriComplete: string };
  };
  const poll = (deviceCode: string) => agent().post('/api/auth/device/poll', { deviceCode });

  /** An account with its default board and a second one, signed up in the page and logged in from Node. */
  async function person(): Promise<{
    t: BrowserPage;
    email: string;
    owner: Client;
    boards: { projectId: string; name: string }[];
  }> {
    const t = await tab();
    const email = `${unique('device')}@example.com`;
    await signUpInPage(t.page, email, PASSWORD);
    const owner = new Client(suite.server.url);
    expect((await owner.post('/api/auth/login', { email, password: PASSWORD })).status).toBe(200);
    expect((await owner.post('/api/projects', { name: 'Release train' })).status).toBe(201);
    const boards = (await owner.get('/api/projects')).body.projects as { projectId: string; name: string }[];
    return { t, email, owner, boards };
  }

  it('approves an agent from the link it shows (signing in on the way), on the board picked; its poll gets the token', async () => {
    const { email, boards } = await person();
    const release = boards.find((b) => b.name === 'Release train')!;
    const other = boards.find((b) => b.name !== 'Release train')!;
    const grant = await start('builder-7', other.projectId);
    expect((await poll(grant.deviceCode)).body.error.code).toBe('AUTHORIZATION_PENDING');

    // A fresh browser, not signed in: the link goes through sign-in and comes back with the code.
    const fresh = await tab();
    const { page } = fresh;
    await page.goto(grant.verificationUriComplete);
    await landOn(page, '/signin');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await landOn(page, '/device');
    expect(new URL(page.url()).searchParams.get('code')).toBe(grant.userCode);

    await page.getByRole('heading', { name: 'Connect an agent' }).waitFor();
    await page.getByText('builder-7', { exact: true }).waitFor();
    await page.getByText(grant.userCode, { exact: true }).waitFor();
    const select = page.getByLabel('Board');
    await expect.poll(() => select.inputValue()).toBe(other.projectId); // the board the agent asked for, preselected
    await select.selectOption(release.projectId);
    await screenshot(page, 'device');
    await page.setViewportSize({ width: 390, height: 760 }); // people often approve on a phone
    await screenshot(page, 'device-phone');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('status').getByText('Approved').waitFor();
    await page.getByRole('status').getByText('Release train').waitFor();
    await screenshot(page, 'device-approved');

    const delivered = await poll(grant.deviceCode);
    expect(delivered.status, delivered.text).toBe(200);
    expect(delivered.body.token).toMatchObject({
      name: 'builder-7',
      projectId: release.projectId,
      role: 'member',
      scope: 'workspace',
    });
    const token = new Client(suite.server.url, { authorization: `Bearer ${delivered.body.secret}` });
    expect((await token.post('/api/items', { title: 'first task of builder-7' })).status).toBe(201);
    expect((await poll(grant.deviceCode)).body.error.code).toBe('INVALID_DEVICE_CODE');
    expect(fresh.problems).toEqual([]);
  });

  it('denies after asking, types a code by hand, and shows the registry’s message for an unknown one', async () => {
    const { t } = await person();
    const { page } = t;
    await page.goto('/device');
    await page.getByLabel('Code').fill('BCDF-GHJK');
    await page.getByRole('button', { name: 'Continue' }).click();
    const alert = page.getByRole('alert');
    await alert.getByText('DEVICE_CODE_NOT_FOUND').waitFor();
    await alert.getByText('No pending device request has that user code.').waitFor();
    await screenshot(page, 'device-unknown');

    const grant = await start('stranger');
    await page.getByLabel('Code').fill(grant.userCode.toLowerCase());
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByText('stranger', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.getByRole('button', { name: 'Yes, deny' }).click();
    await page.getByRole('status').getByText('Denied').waitFor();
    expect((await poll(grant.deviceCode)).body.error.code).toBe('ACCESS_DENIED');
    expect(t.problems).toEqual([]);
  });
});
