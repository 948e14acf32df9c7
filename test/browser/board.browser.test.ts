// The live board in Debian's Chromium against a real server: items made in the page, a token
// issued in the page and used by an agent, cards moving as agents claim, submit and verify with
// no reload; a dropped socket resuming without losing or repeating an event; an operator move
// reaching another context; a direct shout reaching only its addressee; and a viewer shown no
// write control and refused when it forces one.
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import {
  launchChromium,
  openPage,
  screenshot,
  startBrowserServer,
  type BrowserPage,
  signUpInPage,
} from '../support/browser.js';
import { Client, signedUp, type TestServer } from '../support/server.js';
import { head, newBoard } from '../support/board.js';
import { unique } from '../support/temp.js';
import { startRelay, type Relay } from './relay.js';

const chromium = inject('chromium');

describe.skipIf(!chromium)('the live board (Chromium)', () => {
  let browser: Browser;
  let server: TestServer;
  /** The browser's way to the server (its PUBLIC_URL); Node's clients go straight to server.url. */
  let relay: Relay;
  /** Every tab a test opened: closed after it, and asserted free of CSP violations and page errors. */
  let tabs: BrowserPage[] = [];
  beforeAll(async () => {
    relay = await startRelay();
    [browser, server] = await Promise.all([
      launchChromium(chromium!),
      startBrowserServer({ PUBLIC_URL: relay.origin }),
    ]);
    relay.to(server.url);
  });
  afterAll(async () => {
    await browser?.close();
    await relay?.close();
    await server?.stop();
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail') {
      for (const [i, t] of tabs.entries())
        await screenshot(t.page, `failed-${ctx.task.name}-${i}`).catch(() => undefined);
    }
    await Promise.all(tabs.map((t) => t.close()));
    tabs = [];
  });

  async function tab(): Promise<BrowserPage> {
    const t = await openPage(browser, { url: relay.origin });
    tabs.push(t);
    return t;
  }

  /** A tab signed in as the holder of `client`'s session (its cookies handed to the browser). */
  async function tabAs(client: Client): Promise<BrowserPage> {
    const t = await tab();
    await t.context.addCookies([...client.cookies].map(([name, value]) => ({ name, value, url: relay.origin })));
    return t;
  }

  /** An account of its own, made a member of `projectId` with `role` (sharing has no route yet). */
  async function member(projectId: string, role: 'member' | 'viewer') {
    const user = await signedUp(server.url);
    await server.store.members.insert({
      _id: `${projectId}:${user.accountId}`,
      version: 1,
      projectId,
      accountId: user.accountId,
      role,
      acceptedAt: Date.now(),
    });
    return user;
  }

  /** Opens the board and waits until its feed is live. */
  async function openBoard(page: Page, projectId: string): Promise<void> {
    await page.goto(`/boards/${projectId}`);
    await badge(page, 'live');
  }

  const badge = (page: Page, state: string) => page.locator(`.conn[data-state="${state}"]`).waitFor();
  const card = (page: Page, workId: string) => page.locator(`a.card[data-work-id="${workId}"]`);
  const column = (page: Page, state: string) => page.locator(`section.column[data-state="${state}"]`);
  /** Waits until `workId`'s card sits in the column of `state`. */
  const cardIn = (page: Page, state: string, workId: string) =>
    column(page, state).locator(`a.card[data-work-id="${workId}"]`).waitFor();
  const onBoard = (projectId: string, path: string) => `${path}${path.includes('?') ? '&' : '?'}projectId=${projectId}`;

  /** Counts the page's document navigations from now on: a live update must not cause one. */
  function navigations(page: Page): () => number {
    let n = 0;
    page.on('framenavigated', (f) => {
      if (f === page.mainFrame()) n++;
    });
    return () => n;
  }

  it('items made in the page, a token issued in the page: agents claim, submit and verify while the cards move, with no reload', async () => {
    const { page, problems } = await tab();
    const email = `${unique('owner')}@example.com`;
    const password = 'correct horse battery staple';
    await signUpInPage(page, email, password);
    await page.locator('main a[href^="/boards/"]').first().click();
    await expect.poll(() => new URL(page.url()).pathname).toMatch(/^\/boards\/[^/]+$/);
    const projectId = new URL(page.url()).pathname.split('/')[2]!;
    await badge(page, 'live');

    // A batch pasted in the page: lines 2 and 3 wait on the line before them.
    await page
      .getByLabel('Paste a list')
      .fill(['Design the schema', 'Write the migration | after 1', 'Ship it | after 2', 'Write the docs'].join('\n'));
    await page.getByRole('button', { name: 'Create all' }).click();
    await page.getByText('Created 4 items (W-1…W-4).').waitFor();
    await cardIn(page, 'ready', 'W-1');
    await cardIn(page, 'ready', 'W-4');
    await cardIn(page, 'pending', 'W-2');
    await cardIn(page, 'pending', 'W-3');
    expect(await card(page, 'W-1').innerText()).toContain('Design the schema');

    // The page makes verify-none items; the gated one comes over HTTP from the owner's own session.
    const owner = new Client(server.url);
    expect((await owner.post('/api/auth/login', { email, password })).status).toBe(200);
    const gated = await owner.post(onBoard(projectId, '/api/items'), {
      title: 'Gate the release',
      verify: 'required',
      priority: 0,
    });
    expect(gated.status).toBe(201);
    expect(gated.body.workId).toBe('W-5');
    await cardIn(page, 'ready', 'W-5');

    // Agent A's token, issued in the page; its secret read off the page.
    await page.goto('/account/tokens');
    await page.getByLabel('Token name').fill('agent-a');
    await expect.poll(() => page.locator('select[name="projectId"]').inputValue()).toBe(projectId);
    expect(await page.locator('select[name="scope"]').inputValue()).toBe('workspace');
    expect(await page.locator('select[name="role"]').inputValue()).toBe('member');
    await page.getByRole('button', { name: 'Issue token' }).click();
    const secretBox = page.locator('.secret code');
    await secretBox.waitFor();
    const secretA = (await secretBox.innerText()).trim();
    expect(secretA).toMatch(/^agb_[\w-]{40}$/);
    await page.getByRole('cell', { name: 'agent-a' }).waitFor();
    await screenshot(page, 'account-tokens');
    const agentA = new Client(server.url, { authorization: `Bearer ${secretA}` });
    const whoA = await agentA.get('/api/whoami');
    expect(whoA.body.workspace.projectId).toBe(projectId);

    const issuedB = await owner.post('/api/accounts/tokens', {
      name: 'agent-b',
      scope: 'workspace',
      projectId,
      role: 'member',
    });
    expect(issuedB.status).toBe(201);
    const agentB = new Client(server.url, { authorization: `Bearer ${issuedB.body.secret}` });

    await openBoard(page, projectId);
    await cardIn(page, 'ready', 'W-5');
    const navigated = navigations(page);
    await page.evaluate('window.sameDocument = true');

    // A finishes W-1 (verify none: straight to done), which readies W-2.
    const w1 = await agentA.post('/api/claim', { workId: 'W-1' });
    expect(w1.status).toBe(200);
    await cardIn(page, 'claimed', 'W-1');
    expect((await agentA.post('/api/submit', { leaseId: w1.body.leaseId, head: head(1) })).body).toEqual({
      workId: 'W-1',
      state: 'done',
    });
    await cardIn(page, 'done', 'W-1');
    await cardIn(page, 'ready', 'W-2');

    // A claims the gated item: its card moves to Claimed with a running countdown.
    const w5 = await agentA.post('/api/claim', { workId: 'W-5' });
    expect(w5.status).toBe(200);
    await cardIn(page, 'claimed', 'W-5');
    const countdown = card(page, 'W-5').locator('.holder .countdown');
    await countdown.waitFor();
    const first = await countdown.innerText();
    expect(first).toMatch(/^1[45]:\d\d$/); // the default 900 s lease
    await expect.poll(() => countdown.innerText(), { timeout: 5000 }).not.toBe(first); // it ticks
    await page.waitForLoadState('networkidle');
    await screenshot(page, 'board');

    expect((await agentA.post('/api/submit', { leaseId: w5.body.leaseId, head: head(5) })).body).toEqual({
      workId: 'W-5',
      state: 'awaiting_verify',
    });
    await cardIn(page, 'awaiting_verify', 'W-5');
    await expect.poll(() => card(page, 'W-5').locator('.holder').count()).toBe(0);
    expect(await card(page, 'W-5').innerText()).toContain('verify required');

    const verifyLease = await agentB.post('/api/claim', { purpose: 'verify' });
    expect(verifyLease.body).toMatchObject({ workId: 'W-5', purpose: 'verify' });
    await cardIn(page, 'verifying', 'W-5');
    await card(page, 'W-5').locator('.holder .countdown').waitFor();
    expect(await card(page, 'W-5').locator('.holder').innerText()).toMatch(/^verifying: /);
    expect((await agentB.post('/api/verify', { workId: 'W-5', head: head(5), verdict: 'pass' })).body).toEqual({
      workId: 'W-5',
      state: 'done',
    });
    await cardIn(page, 'done', 'W-5');
    expect(await card(page, 'W-5').innerText()).toContain('verified');

    // All of it live: the same document, never navigated, never reloaded.
    expect(await page.evaluate('window.sameDocument')).toBe(true);
    expect(navigated()).toBe(0);
    expect(await page.locator('.conn').getAttribute('data-state')).toBe('live');

    // The same board on a phone.
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'board-phone');
    expect(problems).toEqual([]);
  });

  it('a dropped socket resumes: the badge goes reconnecting then live, the cards catch up, and every event shows exactly once', async () => {
    const board = await newBoard(server.url);
    const { projectId, owner } = board;
    expect(
      (
        await owner.post(onBoard(projectId, '/api/items/batch'), {
          items: ['one', 'two', 'three'].map((title) => ({ title })),
        })
      ).status,
    ).toBe(201);
    const agent = await board.agent('resumer');
    const { page, context, problems } = await tabAs(owner);
    await openBoard(page, projectId);
    await cardIn(page, 'ready', 'W-3');
    const navigated = navigations(page);

    // Before the drop: one claim, seen live.
    const w1 = await agent.post('/api/claim', { workId: 'W-1' });
    await cardIn(page, 'claimed', 'W-1');

    relay.cut();
    await context.setOffline(true);
    await badge(page, 'reconnecting');
    // Meanwhile, from Node: W-1 done, W-2 claimed, W-3 claimed and released.
    expect((await agent.post('/api/submit', { leaseId: w1.body.leaseId, head: head(1) })).body.state).toBe('done');
    const w2 = await agent.post('/api/claim', { workId: 'W-2' });
    expect(w2.status).toBe(200);
    const w3 = await agent.post('/api/claim', { workId: 'W-3' });
    expect((await agent.post('/api/lease', { leaseId: w3.body.leaseId, action: 'release' })).status).toBe(200);
    const lastSeq = (await owner.get(onBoard(projectId, '/api/status'))).body.lastSeq as number;
    // Still cut off: nothing of that has reached the page.
    expect(await page.locator('.conn').getAttribute('data-state')).toBe('reconnecting');
    expect(await column(page, 'claimed').locator('a.card[data-work-id="W-1"]').count()).toBe(1);

    relay.restore();
    await context.setOffline(false);
    await badge(page, 'live');
    await cardIn(page, 'done', 'W-1');
    await cardIn(page, 'claimed', 'W-2');
    await cardIn(page, 'ready', 'W-3');
    const activity = page.locator('section[aria-label="Activity"] li[data-seq]');
    const seqs = async () =>
      (await activity.evaluateAll((lis) => lis.map((li) => li.getAttribute('data-seq')))).map(Number);
    await expect.poll(async () => Math.max(...(await seqs()))).toBe(lastSeq);
    const shown = await seqs();
    expect(new Set(shown).size).toBe(shown.length); // none twice
    const low = Math.min(...shown);
    expect([...shown].sort((a, b) => a - b)).toEqual(Array.from({ length: lastSeq - low + 1 }, (_, i) => low + i)); // none missing
    expect(shown).toEqual([...shown].sort((a, b) => b - a)); // newest first
    expect(navigated()).toBe(0);
    expect(problems).toEqual([]);
  });

  it('an operator move made on the item page, confirmed, shows in another context without reload', async () => {
    const { projectId, owner } = await newBoard(server.url);
    expect(
      (
        await owner.post(onBoard(projectId, '/api/items/batch'), {
          items: [
            { title: 'Wire the payment provider', priority: 1, labels: ['billing'] },
            { title: 'Write the release notes' },
          ],
        })
      ).status,
    ).toBe(201);
    const mover = await tabAs(owner);
    const watcher = await tabAs(owner);
    await openBoard(watcher.page, projectId);
    await cardIn(watcher.page, 'ready', 'W-1');
    const navigated = navigations(watcher.page);

    const page = mover.page;
    await page.goto(`/boards/${projectId}/items/W-1`);
    const moves = page.locator('section[aria-label="Operator moves"]');
    await moves.waitFor();
    await page.getByLabel('Comment', { exact: true }).fill('Vendor sandbox is down until Monday.');
    await page.getByRole('button', { name: 'Add comment' }).click();
    await page.locator('section[aria-label="Comments"] li', { hasText: 'Vendor sandbox is down' }).waitFor();
    await moves.getByLabel('Reason').fill('waiting on the vendor');
    await moves.getByRole('button', { name: 'Block', exact: true }).click();
    // Asked first: nothing moved yet.
    await moves.getByRole('button', { name: 'Yes, block' }).waitFor();
    expect((await owner.get(onBoard(projectId, '/api/items/W-1'))).body.state).toBe('ready');
    await moves.getByRole('button', { name: 'Yes, block' }).click();
    await moves.getByText('Blocked W-1.').waitFor();
    await page.getByText('Blocked because').waitFor();
    await moves.getByRole('button', { name: 'Unblock', exact: true }).waitFor();
    expect((await owner.get(onBoard(projectId, '/api/items/W-1'))).body).toMatchObject({
      state: 'blocked',
      blockedReason: 'waiting on the vendor',
    });
    await page.locator('section[aria-label="History"] li', { hasText: 'item.state' }).waitFor();
    await screenshot(page, 'item');

    await cardIn(watcher.page, 'blocked', 'W-1');
    await cardIn(watcher.page, 'ready', 'W-2');
    // The comment shows once, though both the reload after adding it and its live event bring it.
    expect(await page.locator('section[aria-label="Comments"] li', { hasText: 'Vendor sandbox is down' }).count()).toBe(
      1,
    );
    expect(navigated()).toBe(0);
    expect(mover.problems).toEqual([]);
    expect(watcher.problems).toEqual([]);
  });

  it('a direct shout reaches only its addressee’s page; a broadcast reaches both', async () => {
    const board = await newBoard(server.url);
    const { projectId } = board;
    const [alice, bob] = await Promise.all([member(projectId, 'member'), member(projectId, 'member')]);
    const agent = await board.agent('caller');
    const a = await tabAs(alice.client);
    const b = await tabAs(bob.client);
    await Promise.all([openBoard(a.page, projectId), openBoard(b.page, projectId)]);
    const shout = (page: Page, text: string) =>
      page.locator('section[aria-label="Shouts"] li[data-shout-id]', { hasText: text });

    const direct = await agent.post(onBoard(projectId, '/api/shouts'), {
      text: 'psst, alice: W-1 is yours',
      to: `user:${alice.accountId}`,
    });
    expect(direct.status).toBe(201);
    await shout(a.page, 'psst, alice').waitFor();

    // A later broadcast, sent from Alice's page: once Bob has it, he would have had the direct one.
    await a.page.getByLabel('Message', { exact: true }).fill('standup in five');
    expect(await a.page.locator('select[name="to"]').inputValue()).toBe('');
    await a.page.getByRole('button', { name: 'Shout' }).click();
    await shout(a.page, 'standup in five').waitFor();
    await shout(b.page, 'standup in five').waitFor();
    expect(await shout(b.page, 'psst, alice').count()).toBe(0);
    // The broadcast came after the direct one on the same socket: Bob's list is all he will get.
    expect(await b.page.locator('section[aria-label="Shouts"] li[data-shout-id]').count()).toBe(1);
    expect(await a.page.locator('section[aria-label="Shouts"] li[data-shout-id]').count()).toBe(2);
    // Nor does a fresh load show it to him.
    await openBoard(b.page, projectId);
    await shout(b.page, 'standup in five').waitFor();
    expect(await shout(b.page, 'psst, alice').count()).toBe(0);
    expect(a.problems).toEqual([]);
    expect(b.problems).toEqual([]);
  });

  it('a viewer sees no write control, and the server refuses the write when the page forces one', async () => {
    const { projectId, owner } = await newBoard(server.url);
    expect((await owner.post(onBoard(projectId, '/api/items'), { title: 'Look but do not touch' })).status).toBe(201);
    const viewer = await member(projectId, 'viewer');
    const { page, problems } = await tabAs(viewer.client);

    await openBoard(page, projectId);
    await page.getByText('you are viewer').waitFor();
    await cardIn(page, 'ready', 'W-1');
    await page.locator('section[aria-label="Shouts"]').waitFor();
    expect(await page.locator('section[aria-label="New items"]').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Create item' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Create all' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Shout' }).count()).toBe(0);
    expect(await page.getByLabel('Message', { exact: true }).count()).toBe(0);

    // The item page learns the role from its subscription: wait for that frame, then look.
    const subscribed = page
      .waitForEvent('websocket')
      .then((ws) =>
        ws.waitForEvent('framereceived', { predicate: (f) => String(f.payload).includes('"type":"subscribed"') }),
      );
    await page.goto(`/boards/${projectId}/items/W-1`);
    await subscribed;
    await page.getByRole('heading', { name: 'W-1 · Look but do not touch' }).waitFor();
    await page.locator('section[aria-label="Comments"]').waitFor();
    expect(await page.locator('section[aria-label="Operator moves"]').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Block' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Add comment' }).count()).toBe(0);

    // Forced from the page with its own session and CSRF token: refused by role.
    const refused = (await page.evaluate(`(async () => {
      const me = await (await fetch('/api/auth/me')).json();
      const res = await fetch('/api/items?projectId=${projectId}', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': me.csrfToken }, body: JSON.stringify({ title: 'forced' }) });
      return { status: res.status, body: await res.json() };
    })()`)) as { status: number; body: { error: { code: string } } };
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('ROLE_REQUIRED');
    expect((await owner.get(onBoard(projectId, '/api/items'))).body.items).toHaveLength(1);
    expect(problems).toEqual([]);
  });
});
