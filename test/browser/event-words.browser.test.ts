// Events and audit actions in words a person reads, their raw names kept at hand: the board's
// Activity ("Overridden by hand W-1", `item.overridden` beside it), the console's Live feed
// ("Claimed", `lease.granted` beside it) and its Audit and Abuse views ("Operator: credentials
// revoked", "account 0d7e695e" for `user:<id>`; Abuse's ranked principals are checked in
// admin-money.browser.test.ts).
import { describe, expect, inject, it } from 'vitest';
import { screenshot, signerIn, useBrowserTabs } from '../support/browser.js';
import { head, newBoard } from '../support/board.js';
import { confirmingSignIn, operatorEmail } from '../support/operators.js';
import { signedUp } from '../support/server.js';

const chromium = inject('chromium');
const OPERATOR = operatorEmail();

describe.skipIf(!chromium)('events and audit actions in words (Chromium)', () => {
  const tabs = useBrowserTabs(chromium!, 'event-words', { OPERATOR_EMAILS: OPERATOR });
  const asOperator = confirmingSignIn(() => tabs.server, OPERATOR, signerIn(OPERATOR));

  it('shows the board’s Activity in words, each raw event name beside it', async () => {
    const { owner, projectId, agent } = await newBoard(tabs.server.url);
    const builder = await agent('builder');
    expect((await owner.post(`/api/items?projectId=${projectId}`, { title: 'Gated', verify: 'required' })).status).toBe(
      201,
    );
    const lease = await builder.post('/api/claim', { workId: 'W-1' });
    expect(lease.status).toBe(200);
    expect((await builder.post('/api/submit', { leaseId: lease.body.leaseId, head: head(1) })).status).toBe(200);
    const forced = await owner.post(`/api/items/W-1/override?projectId=${projectId}`, { reason: 'hotfix' });
    expect(forced.status, forced.text).toBe(200);

    const { page, context, problems } = await tabs.tab();
    await context.addCookies([...owner.cookies].map(([name, value]) => ({ name, value, url: tabs.server.url })));
    await page.goto(`/boards/${projectId}`);
    const activity = page.locator('section[aria-label="Activity"]');
    const line = (raw: string) => activity.locator('li', { has: page.locator('code.raw', { hasText: raw }) });
    await line('item.overridden').waitFor();
    for (const [raw, words] of [
      ['item.created', 'Created W-1'],
      ['lease.granted', 'Claimed W-1'],
      ['item.submitted', 'Submitted W-1'],
      ['item.overridden', 'Overridden by hand W-1'],
    ]) {
      const shown = line(raw!).locator('span[title]').first();
      expect(await shown.getAttribute('title')).toBe(raw);
      expect(await shown.innerText()).toMatch(new RegExp(`^${words}`));
    }
    // No line leads with a raw name.
    const lines = await activity.locator('li > span[title]').allInnerTexts();
    expect(lines.length).toBeGreaterThan(3);
    for (const text of lines) expect(text).not.toMatch(/^[a-z]+\.[a-z_]+/);
    await screenshot(page, 'event-words-activity');
    expect(problems).toEqual([]);
  });

  it('shows the console’s Live events in words, each raw event name beside', async () => {
    const { page, problems } = await tabs.tab();
    await asOperator(page);
    await page.goto('/admin/live');
    await page.locator('section.live[data-state="live"]').waitFor();
    const { owner, projectId, agent } = await newBoard(tabs.server.url);
    const builder = await agent('builder');
    expect((await owner.post(`/api/items?projectId=${projectId}`, { title: 'Watched' })).status).toBe(201);
    expect((await builder.post('/api/claim', { workId: 'W-1' })).status).toBe(200);
    const events = (await owner.get(`/api/activity?projectId=${projectId}`)).body.events as {
      seq: number;
      type: string;
    }[];
    const firehose = page.getByRole('log', { name: 'Firehose' });
    for (const [raw, words] of [
      ['item.created', 'Created'],
      ['lease.granted', 'Claimed'],
    ]) {
      const seq = events.find((e) => e.type === raw)!.seq;
      const row = firehose.locator(`tbody tr[data-board="${projectId}"][data-seq="${seq}"]`);
      await row.waitFor();
      const cell = row.locator('td').nth(3); // time, board, seq, event
      expect(await cell.innerText()).toBe(`${words} ${raw}`);
      expect(await cell.locator('span[title]').getAttribute('title')).toBe(raw);
      expect(await cell.locator('code.raw').innerText()).toBe(raw);
    }
    // No event cell leads with a raw name.
    const cells = await firehose.locator('tbody tr td:nth-child(4)').allInnerTexts();
    expect(cells.length).toBeGreaterThanOrEqual(2);
    for (const text of cells) expect(text).not.toMatch(/^[a-z]+\.[a-z_]+/);
    await screenshot(page, 'event-words-live');
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'event-words-live-phone');
    expect(problems).toEqual([]);
  });

  it('shows the console’s Audit rows in words, the raw values on hover', async () => {
    const person = await signedUp(tabs.server.url);
    const { page, problems } = await tabs.tab();
    await asOperator(page);
    const accountId = (await (await page.request.get(`/api/admin/users?q=${encodeURIComponent(person.email)}`)).json())
      .users[0].id as string;
    await page.goto(`/admin/users/${accountId}`);
    await page.getByRole('button', { name: 'Revoke sessions and tokens' }).click();
    await page.getByLabel('Reason (kept in the audit log)').fill('abuse report #12');
    await page.getByRole('button', { name: 'Yes, revoke sessions and tokens' }).click();
    await page.getByRole('status').filter({ hasText: 'Revoked' }).waitFor();

    await page.goto('/admin/audit');
    await page.getByLabel('target').fill(`account:${accountId}`);
    await page.getByRole('button', { name: 'Filter' }).click();
    const row = page.locator('table.list tbody tr', { has: page.locator('code.raw', { hasText: 'admin.revoke' }) });
    await row.waitFor();
    const cells = row.locator('td');
    expect(await cells.nth(1).innerText()).toMatch(/^account [0-9a-f]{8}$/);
    expect(await cells.nth(1).locator('a').getAttribute('title')).toMatch(/^user:[0-9a-f-]{36}$/);
    expect(await cells.nth(2).innerText()).toBe('Operator: credentials revoked admin.revoke');
    expect(await cells.nth(3).innerText()).toBe(`account ${accountId.slice(0, 8)}`);
    expect(await cells.nth(3).locator('a').getAttribute('title')).toBe(`account:${accountId}`);
    await screenshot(page, 'event-words-audit');
    expect(problems).toEqual([]);
  });
});
