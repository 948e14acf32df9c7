// Names, not ids (issue 47), in Debian's Chromium: a board of one account worked by a paced fleet of
// named tokens, watched by a viewer from another account, whose Live feed (Activity, Agents) shows
// the tokens' names with the ids on hover; an operator's console shows the board by name with its
// owner's email and the agents by name in the firehose, and each board's owner in an account's view.
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { screenshot, signerIn, useBrowserTabs } from '../support/browser.js';
import { newBoard } from '../support/board.js';
import { confirmingSignIn, operatorEmail } from '../support/operators.js';
import { signedUp } from '../support/server.js';
import { runPacedFleet } from './paced-fleet.js';

const chromium = inject('chromium');
const OPERATOR = operatorEmail();
const AGENTS = ['builder-ada', 'builder-bob', 'builder-cy'];

/** The actor of each row of the Live feed's Activity, as the page shows it ("builder-ada · 3s ago · #12" → builder-ada). */
const activityActors = (page: Page) =>
  page
    .locator('section[aria-label="Activity"] li .at')
    .evaluateAll((els) => els.map((el) => (el.textContent ?? '').split(' · ')[0]!.trim()));

describe.skipIf(!chromium)('names, not ids (Chromium)', () => {
  const tabs = useBrowserTabs(chromium!, 'names', { OPERATOR_EMAILS: OPERATOR });
  const asOperator = confirmingSignIn(() => tabs.server, OPERATOR, signerIn(OPERATOR));

  it(
    'shows a viewer of another account’s board its agents by their tokens’ names, and an operator the board with its owner',
    { timeout: 120_000 },
    async () => {
      const { url } = tabs.server;
      const board = await newBoard(url);
      const ownerEmail = (await board.owner.get('/api/auth/me')).body.user.email as string;
      const boardName = (await board.owner.get('/api/projects')).body.projects[0].name as string;
      const agents = [];
      for (const name of AGENTS) agents.push(await board.agent(name));
      const items = Array.from({ length: 80 }, (_, i) => ({ title: `Task ${i + 1}`, priority: i % 4 }));
      expect((await agents[0]!.post('/api/items/batch', { items })).status).toBe(201);

      // A person of another account, a viewer of the board (their own token names are not theirs to know).
      const viewer = await signedUp(url);
      await tabs.server.store.members.insert({
        _id: `${board.projectId}:${viewer.accountId}`,
        version: 1,
        projectId: board.projectId,
        accountId: viewer.accountId,
        role: 'viewer',
        acceptedAt: Date.now(),
      });
      const watch = await tabs.tab();
      await watch.context.addCookies([...viewer.client.cookies].map(([name, value]) => ({ name, value, url })));
      await watch.page.goto(`/boards/${board.projectId}`);
      await watch.page.locator('.board-page .conn[data-state="live"]').waitFor({ timeout: 20_000 });

      const admin = await tabs.tab();
      await asOperator(admin.page);
      await admin.page.goto('/admin');
      await admin.page.locator('section.live[data-state="live"]').waitFor();

      const fleet = runPacedFleet(
        url,
        agents.map((a) => ({ auth: { authorization: a.defaults.authorization! }, principal: a.principal })),
        { rate: 4, ms: 10_000 },
      );

      // The Live feed: every actor by its token's name (never an id), the agents listed by name with the id on hover.
      const { page } = watch;
      await expect
        .poll(
          async () => {
            const actors = await activityActors(page);
            return actors.length >= 20 && actors.every((a) => AGENTS.includes(a)) && new Set(actors).size;
          },
          { timeout: 30_000, interval: 250 },
        )
        .toBe(AGENTS.length);
      const roster = page.locator('section[aria-label="Agents"] li');
      await expect.poll(() => roster.count(), { timeout: 20_000 }).toBe(AGENTS.length);
      for (const agent of agents) {
        const row = page.locator(`section[aria-label="Agents"] li[data-principal="${agent.principal}"] strong`);
        expect(AGENTS).toContain(await row.textContent());
        expect(await row.getAttribute('title')).toBe(agent.principal);
      }
      const text = await page.locator('.board-page').innerText();
      for (const agent of agents) expect(text).not.toContain(agent.principal.slice(6, 14));
      expect(text).not.toContain(ownerEmail);
      await screenshot(page, 'names-board-viewer');

      // The console's Live tab: the board by its name with the owner's email, agents by name, ids on hover.
      const cpage = admin.page;
      const rows = cpage.locator(`tr[data-board="${board.projectId}"]`);
      await expect.poll(() => rows.count(), { timeout: 20_000 }).toBeGreaterThan(10);
      const named = rows.filter({ has: cpage.locator('.owner', { hasText: ownerEmail }) });
      await expect.poll(() => named.count(), { timeout: 20_000 }).toBeGreaterThan(5);
      const first = named.first();
      expect(await first.locator('.board-name').textContent()).toBe(boardName);
      const actor = first.locator('td.actor');
      expect(await actor.textContent()).toMatch(/^⚙ builder-(ada|bob|cy)$/);
      expect(await actor.getAttribute('title')).toMatch(/^agent:[0-9a-f-]{36}$/);
      await screenshot(cpage, 'names-console-live');
      await fleet;

      // An account's boards in the console: each with its owner's email.
      await cpage.goto(`/admin/users/${viewer.accountId}`);
      const shared = cpage.locator(`tr[data-board="${board.projectId}"]`);
      await shared.waitFor();
      expect(await shared.innerText()).toContain(ownerEmail);
      expect(await shared.locator('td').first().getAttribute('title')).toBe(board.projectId);
      await screenshot(cpage, 'names-console-user');
      expect(watch.problems).toEqual([]);
      expect(admin.problems).toEqual([]);
    },
  );
});
