// Events and audit actions in words a person reads, their raw names kept at hand: the board's
// Activity ("Overridden by hand W-1", `item.overridden` beside it), the console's Live feed
// ("Claimed", `lease.granted` beside it) and its Audit and Abuse views ("Operator: credentials
// revoked"; an account by its email, `user:<id>` on hover, one purged since as "account 0d7e695e
// (deleted)"; Abuse's agents and addresses are checked in admin-money.browser.test.ts).
import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { bucketOf, usageId } from '../../src/admin/usage.js';
import { screenshot, signerIn, useBrowserTabs } from '../support/browser.js';
import { head, newBoard } from '../support/board.js';
import { confirmingSignIn, operatorEmail } from '../support/operators.js';
import { signedUp } from '../support/server.js';
import { unique } from '../support/temp.js';

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

  it('shows the console’s Audit and Abuse rows in words, accounts by email, the raw values on hover', async () => {
    const person = await signedUp(tabs.server.url);
    const { page, problems } = await tabs.tab();
    await asOperator(page);
    const accountId = person.accountId;
    await page.goto(`/admin/users/${accountId}`);
    await page.getByRole('button', { name: 'Revoke sessions and tokens' }).click();
    await page.getByLabel('Reason (kept in the audit log)').fill('abuse report #12');
    await page.getByRole('button', { name: 'Yes, revoke sessions and tokens' }).click();
    await page.getByRole('status').filter({ hasText: 'Revoked' }).waitFor();
    // An account purged since, named by a row and by a ranked principal: its id and "deleted".
    const gone = randomUUID();
    await tabs.server.store.audit.insert({
      _id: unique('audit'),
      version: 1,
      at: Date.now(),
      actor: `user:${gone}`,
      action: 'admin.contact',
      projectId: null,
      target: `account:${accountId}`,
      data: {},
    });

    await page.goto('/admin/audit');
    await page.getByLabel('target').fill(`account:${accountId}`);
    await page.getByRole('button', { name: 'Filter' }).click();
    const row = (raw: string) =>
      page.locator('table.list tbody tr', { has: page.locator('code.raw', { hasText: raw }) }).locator('td');
    await row('admin.revoke').first().waitFor();
    const revoked = row('admin.revoke');
    expect(await revoked.nth(1).innerText()).toBe(OPERATOR);
    expect(await revoked.nth(1).locator('a').getAttribute('title')).toMatch(/^user:[0-9a-f-]{36}$/);
    expect(await revoked.nth(2).innerText()).toBe('Operator: credentials revoked admin.revoke');
    expect(await revoked.nth(3).innerText()).toBe(person.email);
    expect(await revoked.nth(3).locator('a').getAttribute('title')).toBe(`account:${accountId}`);
    const contacted = row('admin.contact');
    expect(await contacted.nth(1).innerText()).toBe(`account ${gone.slice(0, 8)} (deleted)`);
    expect(await contacted.nth(1).locator('[title]').first().getAttribute('title')).toBe(`user:${gone}`);
    expect(await contacted.nth(1).locator('a').count()).toBe(0); // no page left to open
    expect(await contacted.nth(3).innerText()).toBe(person.email);
    await screenshot(page, 'event-words-audit');
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'event-words-audit-phone');
    await page.setViewportSize({ width: 1280, height: 800 });

    // The account's own page: the rows about it name the operator and the purged account as the Audit does.
    await page.goto(`/admin/users/${accountId}`);
    const about = page.locator('section.panel', {
      has: page.getByRole('heading', { name: 'Audit: about this account' }),
    });
    const aboutRow = (raw: string) =>
      about.locator('tbody tr', { has: page.locator('code.raw', { hasText: raw }) }).locator('td');
    await aboutRow('admin.revoke').first().waitFor();
    expect(await aboutRow('admin.revoke').nth(1).innerText()).toBe(OPERATOR);
    expect(await aboutRow('admin.contact').nth(1).innerText()).toBe(`account ${gone.slice(0, 8)} (deleted)`);
    await screenshot(page, 'event-words-user-audit');

    // Abuse: the principals ranked, an account by its email.
    const bucket = bucketOf(Date.now());
    for (const [key, counts] of [
      [`user:${accountId}`, { r403: 9_001 }],
      [`user:${gone}`, { shouts: 9_002 }],
    ] as const)
      await tabs.server.store.usage.add(
        usageId(bucket, 'principal', key),
        { day: bucket, scope: 'principal', key },
        counts,
      );
    await page.goto('/admin/abuse');
    const ranked = page.locator('section.panel', { hasText: 'Last hour, ranked' });
    const refused = ranked.locator('tr', { has: page.locator(`[title="user:${accountId}"]`) }).locator('td');
    await refused.first().waitFor();
    expect(await refused.first().innerText()).toBe(person.email);
    expect(await refused.nth(2).innerText()).toBe('403 × 9,001');
    const flood = ranked.locator('tr', { has: page.locator(`[title="user:${gone}"]`) }).locator('td');
    expect(await flood.first().innerText()).toBe(`account ${gone.slice(0, 8)} (deleted)`);
    await screenshot(page, 'event-words-abuse');
    await page.setViewportSize({ width: 390, height: 844 });
    // At a phone's width the panels fit the page, and the ranked tables, an email among their rows, their panel.
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBe(390);
    const spill = `[...document.querySelectorAll('.abuse table.ranked')].map((t) =>
      Math.round(t.getBoundingClientRect().right - t.closest('.panel').getBoundingClientRect().right))`;
    for (const px of (await page.evaluate(spill)) as number[]) expect(px).toBeLessThan(0);
    await screenshot(page, 'event-words-abuse-phone');
    expect(problems).toEqual([]);
  });
});
