// The board page's doctrine, spec and feedback sections in Debian's Chromium, beside an agent at
// work over HTTP: an admin proposes, ratifies (setting the expected answer's digest, hashed in the
// page) and levels an entry while agents agree and take blind tests, the counts changing live with
// no reload; a clause added, linked by an agent's item, retired in the page and the item flagged,
// a stale edit refused with the clear message; an owner reading the board's feedback, a member
// told who reads it.
import { createHash } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { screenshot, useBrowserTabs, type BrowserPage } from '../support/browser.js';
import { head, newBoard, type TestBoard } from '../support/board.js';
import { confirmedOperator, operatorEmail } from '../support/operators.js';
import { type Client, signedUp } from '../support/server.js';
import { pace } from '../support/until.js';

const chromium = inject('chromium');
const OPERATOR = operatorEmail();
const sha256 = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;

/** An agent working the board beside the page (items made, claimed, submitted; heartbeats) until stopped; stop() says how many it finished. */
function keepWorking(agent: Client): { stop(): Promise<number> } {
  let running = true;
  let done = 0;
  const loop = (async () => {
    for (let n = 1; running; n++) {
      // Well inside Free's 120 writes a minute: the claim, submit and heartbeat do not draw on it.
      await agent.post('/api/items', { title: `Chore ${n}`, priority: 3 });
      const grant = await agent.post('/api/claim', {});
      if (grant.status === 200) {
        await agent.post('/api/status/heartbeat', { status: 'working', workId: grant.body.workId });
        if ((await agent.post('/api/submit', { leaseId: grant.body.leaseId, head: head(n) })).status === 200) done++;
      }
      await pace(700);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return done;
    },
  };
}

describe.skipIf(!chromium)('doctrine, spec and feedback on the board page (Chromium)', () => {
  const tabs = useBrowserTabs(chromium!, 'doctrine', { OPERATOR_EMAILS: OPERATOR });

  /** An account of its own on the board with `role` (as the board tests add members). */
  async function joined(board: TestBoard, role: 'admin' | 'member') {
    const user = await signedUp(tabs.server.url);
    await tabs.server.store.members.insert({
      _id: `${board.projectId}:${user.accountId}`,
      version: 1,
      projectId: board.projectId,
      accountId: user.accountId,
      role,
      acceptedAt: Date.now(),
    });
    return user.client;
  }

  /** A tab signed in with `client`'s session, on the board's `section` (opened from its tab), the feed live. */
  async function openSection(
    client: Client,
    projectId: string,
    section: 'Doctrine' | 'Spec' | 'Feedback',
  ): Promise<BrowserPage> {
    const t = await tabs.tab();
    await t.context.addCookies([...client.cookies].map(([name, value]) => ({ name, value, url: tabs.server.url })));
    await t.page.goto(`/boards/${projectId}`);
    await t.page.locator('.conn[data-state="live"]').waitFor();
    await t.page.getByRole('tab', { name: section }).click();
    await t.page.locator(`section[aria-label="${section}"]`).waitFor();
    return t;
  }

  const attr = (page: Page, selector: string, name: string) => () => page.locator(selector).getAttribute(name);
  const marked = async (page: Page) => page.evaluate('window.__marker');

  it('doctrine: an admin proposes, ratifies with a digest and levels an entry; agents agree and take blind tests; the counts change live', async () => {
    const board = await newBoard(tabs.server.url);
    const [admin, builder, checker, worker] = [
      await joined(board, 'admin'),
      await board.agent('builder'),
      await board.agent('checker'),
      await board.agent('worker'),
    ];
    const work = keepWorking(worker);
    try {
      const { page, problems } = await openSection(admin, board.projectId, 'Doctrine');
      await page.getByText('No doctrine yet.').waitFor();
      await page.evaluate('window.__marker = 1');
      const entry = 'article[data-slug="tests-first"]';

      await page.getByText('Propose an entry').click();
      await page.locator('input[name="doctrine-slug"]').fill('tests-first');
      await page.locator('input[name="doctrine-title"]').fill('Tests first');
      await page
        .locator('textarea[name="doctrine-text"]')
        .fill('Write the failing test before the change.\nKeep it in the same commit.');
      await screenshot(page, 'board-doctrine-propose');
      await page.getByRole('button', { name: 'Propose' }).click();
      await page.getByText('Proposed tests-first.').waitFor();
      await expect.poll(attr(page, entry, 'data-status')).toBe('proposed');

      // Ratified with the expected answer typed in the page: hashed there, only the digest sent.
      const answer = 'red, then green';
      const sent: string[] = [];
      page.on(
        'request',
        (r) => /\/api\/doctrine\/tests-first\/(ratify|blind-test)/.test(r.url()) && sent.push(r.postData() ?? ''),
      );
      await page.locator(entry).getByRole('button', { name: 'Ratify…' }).click();
      await page.locator(`${entry} textarea[name="expected-digest-answer"]`).fill(answer);
      await expect.poll(() => page.locator(`${entry} input[name="expected-digest"]`).inputValue()).toBe(sha256(answer));
      await page.locator(entry).getByRole('button', { name: 'Ratify', exact: true }).click();
      await expect.poll(attr(page, entry, 'data-status')).toBe('ratified');
      await page.locator(entry).locator('select[name="level"]').selectOption('required');
      await expect.poll(attr(page, entry, 'data-level')).toBe('required');
      expect((await builder.get('/api/doctrine')).body.entries[0]).toMatchObject({
        status: 'ratified',
        level: 'required',
        expectedDigestSet: true,
        agreements: 0,
      });

      // Agents over the API: the page follows without a reload.
      expect((await builder.post('/api/doctrine/tests-first/agree')).status).toBe(200);
      await expect.poll(attr(page, entry, 'data-agreements')).toBe('1');
      expect((await checker.post('/api/doctrine/tests-first/agree')).status).toBe(200);
      await expect.poll(attr(page, entry, 'data-agreements')).toBe('2');
      expect(
        (await builder.post('/api/doctrine/tests-first/blind-test', { answerDigest: sha256(answer) })).body.result,
      ).toBe('pass');
      await expect.poll(attr(page, entry, 'data-pass')).toBe('1');
      expect(
        (await checker.post('/api/doctrine/tests-first/blind-test', { answerDigest: sha256('green first') })).body
          .result,
      ).toBe('fail');
      await expect.poll(attr(page, entry, 'data-fail')).toBe('1');
      expect(await page.locator(`${entry} [data-agreed-by]`).getAttribute('data-agreed-by')).toBe(
        `${builder.principal} ${checker.principal}`,
      );

      // The admin agrees and takes a blind test in the page too.
      await page.locator(entry).getByRole('button', { name: 'Agree' }).click();
      await expect.poll(attr(page, entry, 'data-agreements')).toBe('3');
      await page.locator(entry).getByText('You agreed.').waitFor();
      await page.locator(entry).getByRole('button', { name: 'Take blind test' }).click();
      await page.locator(`${entry} textarea[name="answer-digest-answer"]`).fill(answer);
      await expect.poll(() => page.locator(`${entry} input[name="answer-digest"]`).inputValue()).toBe(sha256(answer));
      await page.locator(entry).getByRole('button', { name: 'Send the digest' }).click();
      await page.getByText('Blind test passed: your answer matched.').waitFor();
      await expect.poll(attr(page, entry, 'data-pass')).toBe('2');
      await page.locator('section[aria-label="Activity"]').getByText('Blind test tests-first pass').first().waitFor();
      expect(sent).toHaveLength(2);
      for (const body of sent) {
        expect(body).toContain(sha256(answer));
        expect(body).not.toContain(answer);
      }

      // A second entry proposed by an agent appears, and the rejected one sorts last.
      expect(
        (
          await builder.post('/api/doctrine', {
            slug: 'small-prs',
            title: 'Small pull requests',
            text: 'One change per pull request.',
          })
        ).status,
      ).toBe(201);
      await page.locator('article[data-slug="small-prs"][data-status="proposed"]').waitFor();
      await page.locator('article[data-slug="small-prs"]').getByRole('button', { name: 'Reject…' }).click();
      await page.locator('article[data-slug="small-prs"] input[name="reject-reason"]').fill('Covered by tests-first');
      await page.locator('article[data-slug="small-prs"]').getByRole('button', { name: 'Reject', exact: true }).click();
      await page.locator('article[data-slug="small-prs"][data-status="rejected"]').waitFor();
      expect(
        await page.locator('article[data-slug]').evaluateAll((els) => els.map((e) => e.getAttribute('data-slug'))),
      ).toEqual(['tests-first', 'small-prs']);
      expect(await marked(page)).toBe(1); // no reload happened
      await screenshot(page, 'board-doctrine');

      // The item page shows an item's doctrine links with their level and status, live.
      const linked = await worker.post('/api/items', {
        title: 'Add the retry test',
        doctrine: ['tests-first', 'small-prs'],
      });
      expect(linked.status).toBe(201);
      await page.goto(`/boards/${board.projectId}/items/${linked.body.workId}`);
      await page.locator('[data-doctrine="tests-first"][data-level="required"][data-status="ratified"]').waitFor();
      await page.locator('[data-doctrine="small-prs"][data-level="advisory"][data-status="rejected"]').waitFor();
      await page.locator('section[aria-label="Operator moves"]').waitFor(); // shown once the page's subscription said the role
      expect(
        (await admin.post(`/api/doctrine/tests-first/level?projectId=${board.projectId}`, { level: 'expected' }))
          .status,
      ).toBe(200);
      await page.locator('[data-doctrine="tests-first"][data-level="expected"]').waitFor();
      await screenshot(page, 'item-doctrine-links');
      // A link opens the board on its Doctrine tab, in the page (no reload).
      await page.locator('[data-doctrine="tests-first"] a').click();
      await page.waitForURL(`**/boards/${board.projectId}#doctrine`);
      await page.getByRole('tab', { name: 'Doctrine', selected: true }).waitFor();
      expect(problems).toEqual([]);
    } finally {
      expect(await work.stop()).toBeGreaterThan(0);
    }
  });

  it('spec: a clause added and accepted in the page, linked by an agent’s item, retired: the item is flagged; a stale edit is refused with a clear message', async () => {
    const board = await newBoard(tabs.server.url);
    const [admin, lead, worker] = [
      await joined(board, 'admin'),
      await board.agent('lead', 'admin'),
      await board.agent('worker'),
    ];
    const work = keepWorking(worker);
    try {
      const { page, problems } = await openSection(admin, board.projectId, 'Spec');
      await page.getByText('No clauses yet.').waitFor();
      await page.evaluate('window.__marker = 1');
      const clause = 'article[data-clause-id="S-1"]';

      await page.getByText('Add a clause').click();
      await page.locator('input[name="clause-title"]').fill('Tokens expire');
      await page.locator('textarea[name="clause-text"]').fill('Every token carries an expiry of at most 90 days.');
      await page.getByRole('button', { name: 'Add clause' }).click();
      await page.getByText('Added S-1 as a draft.').waitFor();
      await expect.poll(attr(page, clause, 'data-status')).toBe('draft');
      await page.locator(clause).getByRole('button', { name: 'Accept' }).click();
      await expect.poll(attr(page, clause, 'data-status')).toBe('accepted');
      expect(
        (
          await lead.post('/api/spec', {
            title: 'Audit every admin move',
            text: 'Each admin action writes an audit row.',
          })
        ).status,
      ).toBe(201);
      await page.locator('article[data-clause-id="S-2"][data-status="draft"]').waitFor();

      // An agent's item links S-1: it shows under the clause without a reload.
      const item = await worker.post('/api/items', { title: 'Expire old tokens', spec: ['S-1'] });
      expect(item.status).toBe(201);
      const chip = `${clause} a.link-chip[data-work-id="${item.body.workId}"]`;
      await page.locator(chip).waitFor();
      expect(await page.locator(chip).getAttribute('data-flagged')).toBeNull();

      await page.locator(clause).getByRole('button', { name: 'Retire' }).click();
      await page.getByRole('button', { name: 'Yes, retire' }).click();
      await expect.poll(attr(page, clause, 'data-status')).toBe('retired');
      await expect.poll(attr(page, chip, 'data-flagged')).toBe('retired');
      await expect.poll(attr(page, '[data-retired-links]', 'data-retired-links')).toBe(`${item.body.workId}:S-1`);
      expect((await worker.get('/api/status')).body.retiredSpecLinks).toEqual([
        { workId: item.body.workId, clauseId: 'S-1' },
      ]);

      // A stale edit: begun at S-2's version 1, while a lead accepts it over the API.
      const other = 'article[data-clause-id="S-2"]';
      await page.locator(other).getByRole('button', { name: 'Edit' }).click();
      await page
        .locator(`${other} textarea[name="edit-text"]`)
        .fill('Each admin action writes an audit row, kept a year.');
      expect((await lead.request('PATCH', '/api/spec/S-2', { json: { version: 1, status: 'accepted' } })).status).toBe(
        200,
      );
      await page.locator(other).getByText('S-2 changed while you were editing (now version 2)').waitFor();
      await page.locator(other).getByRole('button', { name: 'Save' }).click();
      const refusal = page.locator(other).getByRole('alert');
      await refusal.getByText('S-2 changed meanwhile (it is at version 2 now): your edit was not saved.').waitFor();
      expect(await refusal.innerText()).toContain('Reload the clause to see the change, then make your edit again.');
      expect((await lead.get('/api/spec/S-2')).body).toMatchObject({
        version: 2,
        status: 'accepted',
        text: 'Each admin action writes an audit row.',
      });
      await screenshot(page, 'board-spec-stale');
      await page.locator(other).getByRole('button', { name: 'Reload S-2' }).click();
      await expect.poll(() => page.locator(`${other} select[name="edit-status"]`).inputValue()).toBe('accepted');
      await page
        .locator(`${other} textarea[name="edit-text"]`)
        .fill('Each admin action writes an audit row, kept a year.');
      await page.locator(other).getByRole('button', { name: 'Save' }).click();
      await page.getByText('S-2 saved.').waitFor();
      expect((await lead.get('/api/spec/S-2')).body).toMatchObject({
        version: 3,
        status: 'accepted',
        text: 'Each admin action writes an audit row, kept a year.',
      });
      expect(await marked(page)).toBe(1);
      await screenshot(page, 'board-spec');

      // The item page flags the retired clause it links.
      await page.goto(`/boards/${board.projectId}/items/${item.body.workId}`);
      await page.locator('.link-chip.flagged[data-clause-id="S-1"][data-status="retired"]').waitFor();
      expect(problems).toEqual([]);
    } finally {
      expect(await work.stop()).toBeGreaterThan(0);
    }
  });

  it('feedback: an owner reads the board’s feedback newest first, read again on refresh; a member is told who reads it', async () => {
    const board = await newBoard(tabs.server.url);
    const [builder, checker] = [await board.agent('builder'), await board.agent('checker')];
    const { workId } = (await builder.post('/api/items', { title: 'Flaky integration check' })).body;
    const posted: string[] = [];
    for (const [agent, body] of [
      [builder, { kind: 'problem', text: 'The integration check fails one run in five with a timeout.', workId }],
      [checker, { kind: 'question', text: 'Should verifiers re-run a flaky check before failing it?' }],
      [builder, { kind: 'suggestion', text: 'Say in S-1 which token types it covers.' }],
    ] as const) {
      const res = await agent.post('/api/feedback', body);
      expect(res.status).toBe(201);
      posted.push(res.body.id);
    }
    const { client: operator } = await confirmedOperator(tabs.server, OPERATOR);
    expect(
      (await operator.post(`/api/admin/feedback/${posted[1]}/dismiss`, { reason: 'answered in the docs' })).status,
    ).toBe(200);
    expect((await operator.post(`/api/admin/feedback/${posted[0]}/promote`, { reason: 'real flake' })).status).toBe(
      200,
    );

    const { page, problems } = await openSection(board.owner, board.projectId, 'Feedback');
    const rows = page.locator('li[data-feedback-id]');
    await expect
      .poll(() =>
        rows.evaluateAll((els) => els.map((e) => [e.getAttribute('data-feedback-id'), e.getAttribute('data-status')])),
      )
      .toEqual([
        [posted[2], 'open'],
        [posted[1], 'dismissed'],
        [posted[0], 'promoted'],
      ]);
    await page.getByText('Not live: feedback is no board event').waitFor();
    // Not a board event: a new entry shows on Refresh.
    const fourth = await checker.post('/api/feedback', { kind: 'problem', text: 'My token cannot read the spec.' });
    expect(fourth.status).toBe(201);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(() => rows.first().getAttribute('data-feedback-id')).toBe(fourth.body.id);
    expect(await rows.count()).toBe(4);
    await page.locator('select[name="feedback-status"]').selectOption('open');
    await expect
      .poll(() => rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-feedback-id'))))
      .toEqual([fourth.body.id, posted[2]]);
    await page.locator('select[name="feedback-status"]').selectOption('all');
    await expect.poll(() => rows.count()).toBe(4);
    await screenshot(page, 'board-feedback');
    expect(problems).toEqual([]);

    // A member reads no feedback: the section says who does, and the doctrine offers no admin move.
    const member = await joined(board, 'member');
    const other = await openSection(member, board.projectId, 'Feedback');
    await other.page.locator('[data-feedback-note]').waitFor();
    expect(await other.page.locator('li[data-feedback-id]').count()).toBe(0);
    expect(
      (
        await builder.post('/api/doctrine', {
          slug: 'ask-first',
          title: 'Ask first',
          text: 'Shout before a large change.',
        })
      ).status,
    ).toBe(201);
    await other.page.getByRole('tab', { name: 'Doctrine' }).click();
    await other.page.locator('article[data-slug="ask-first"]').getByRole('button', { name: 'Agree' }).waitFor();
    expect(await other.page.getByRole('button', { name: 'Ratify…' }).count()).toBe(0);
    expect(other.problems).toEqual([]);
  });
});
