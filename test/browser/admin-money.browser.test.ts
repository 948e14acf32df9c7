// The operator console's Money, Abuse and Contact views in a browser, each action checked through
// the API, the store or the captured mail as well as on the page: a past-due board found in
// dunning, its subscription re-read from stripe-mock, complimentary Pro granted, part refunded and a
// webhook replayed; refusals ranked and an allowlist entry added and removed; a user mailed.
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { landOn, screenshot, signerIn, useBrowserTabs } from '../support/browser.js';
import { billingRecord, deliverSigned } from '../support/billing.js';
import { confirmingSignIn, operatorEmail } from '../support/operators.js';
import { Client, signedUp } from '../support/server.js';
import { unique } from '../support/temp.js';

const chromium = inject('chromium');
const stripeBase = inject('stripeBase');
const OPERATOR = operatorEmail();
const SECRET = 'whsec_console_money';
const DAY = 86_400_000;
const REASON = 'Reason (kept in the audit log)';

describe.skipIf(!chromium || !stripeBase)('the operator console’s money, abuse and contact views (Chromium)', () => {
  const tabs = useBrowserTabs(chromium!, 'admin-money', {
    OPERATOR_EMAILS: OPERATOR,
    STRIPE_SECRET_KEY: 'sk_test_123',
    STRIPE_WEBHOOK_SECRET: SECRET,
    STRIPE_PRICE_MONTHLY: 'price_pro_monthly',
    STRIPE_PRICE_YEARLY: 'price_pro_yearly',
    STRIPE_API_BASE: stripeBase ?? '',
    // Every account here signs up from one address; the abuse case names its own through a proxy header.
    ADDRESS_RATE_PER_MINUTE: '100000',
    TRUSTED_PROXIES: '127.0.0.0/8',
  });

  const asOperator = confirmingSignIn(() => tabs.server, OPERATOR, signerIn(OPERATOR));

  /** An operator route read with the page's own session. */
  async function adminGet<T>(page: Page, path: string): Promise<T> {
    const res = await page.request.get(path);
    expect(res.status(), `${path}: ${await res.text()}`).toBe(200);
    return (await res.json()) as T;
  }

  /** The audit rows about `target`, oldest first, as [action, reason]. */
  async function auditOf(page: Page, target: string): Promise<[string, unknown][]> {
    const { rows } = await adminGet<{ rows: { action: string; data: { reason?: unknown } }[] }>(
      page,
      `/api/admin/audit?target=${encodeURIComponent(target)}`,
    );
    return rows.reverse().map((r) => [r.action, r.data.reason]);
  }

  /** Opens the guarded action `label`, gives `reason` and confirms it. */
  async function confirm(
    page: Page,
    label: string,
    reason: string,
    scope: Page | ReturnType<Page['locator']> = page,
  ): Promise<void> {
    await scope.getByRole('button', { name: label, exact: true }).click();
    const step = page.getByRole('group', { name: label });
    await step.getByLabel(REASON).fill(reason);
    await step.getByRole('button', { name: `Yes, ${label.toLowerCase()}` }).click();
    await step.waitFor({ state: 'detached' });
  }

  it(
    'finds a past-due board in dunning, re-reads its subscription, grants complimentary Pro, refunds 5.00 and replays a webhook',
    { timeout: 90_000 },
    async () => {
      const owner = await signedUp(tabs.server.url);
      const projectId = (await owner.client.get('/api/projects')).body.projects[0].projectId as string;
      const fixture = await fetch(`${stripeBase}/v1/subscriptions/sub_probe`, {
        headers: { authorization: 'Bearer sk_test_123' },
      });
      const fixtureCustomer = ((await fixture.json()) as { customer: string }).customer;
      // As checkout leaves it, then a failed invoice four days ago: past due, as production gets there.
      const subscriptionId = `sub_${unique('console').replace(/[^A-Za-z0-9]/g, '')}`;
      await tabs.server.store.billing.insert(
        billingRecord(projectId, owner.accountId, {
          customerId: fixtureCustomer,
          subscriptionId,
          status: 'active',
          priceId: 'price_pro_monthly',
          interval: 'month',
          currentPeriodEnd: Date.now() + 26 * DAY,
        }),
      );
      const failed = {
        id: `evt_${unique('f').replace(/[^A-Za-z0-9]/g, '')}`,
        object: 'event',
        type: 'invoice.payment_failed',
        created: Math.floor((Date.now() - 4 * DAY) / 1000),
        livemode: false,
        data: {
          object: {
            id: `in_${unique('i').replace(/[^A-Za-z0-9]/g, '')}`,
            object: 'invoice',
            customer: fixtureCustomer,
            subscription: subscriptionId,
          },
        },
      };
      expect((await deliverSigned(tabs.server.url, JSON.stringify(failed), SECRET)).status).toBe(200);
      expect(await tabs.server.store.billing.get(projectId)).toMatchObject({
        status: 'past_due',
        pastDueSince: failed.created * 1000,
      });
      // Another board, unpaid for twelve days, stays in dunning throughout.
      const late = await signedUp(tabs.server.url);
      const lateBoard = (await late.client.get('/api/projects')).body.projects[0].projectId as string;
      await tabs.server.store.billing.insert(
        billingRecord(lateBoard, late.accountId, {
          subscriptionId: 'sub_late',
          status: 'unpaid',
          pastDueSince: Date.now() - 12 * DAY - 3_600_000,
          priceId: 'price_pro_yearly',
          interval: 'year',
          currentPeriodEnd: Date.now() + 200 * DAY,
        }),
      );

      const { page, problems } = await tabs.tab();
      await asOperator(page);
      await page.goto('/admin/money');
      const dunningRow = page.locator('section.panel', { hasText: 'Dunning' }).locator('tr', { hasText: projectId });
      await dunningRow.getByText('past_due').waitFor();
      expect(await dunningRow.locator('td.num').innerText()).toBe('4');
      await dunningRow.getByRole('link').click();
      await landOn(page, `/admin/money/${owner.accountId}`);
      await page.getByRole('heading', { name: owner.email }).waitFor();
      const board = page.getByRole('region', { name: /^Board / });
      const status = board.locator('dl.facts div', { hasText: /^status/ }).locator('dd');
      expect(await status.innerText()).toBe('past_due');

      // Re-read: stripe-mock's fixture subscription is active (cancelling at period end).
      await confirm(page, 'Re-read subscription', 'customer says they paid');
      await page.getByRole('status').filter({ hasText: 'Re-read the subscription' }).waitFor();
      await expect.poll(() => status.innerText()).toBe('active');
      expect(await tabs.server.store.billing.get(projectId)).toMatchObject({
        status: 'active',
        pastDueSince: null,
        cancelAtPeriodEnd: true,
      });

      // Complimentary Pro until a date 45 days ahead.
      const endsOn = new Date(Date.now() + 45 * DAY).toISOString().slice(0, 10);
      await board.getByLabel('Pro until').fill(endsOn);
      await confirm(page, 'Grant complimentary Pro', 'conference speaker');
      await board.getByText(`complimentary Pro until ${endsOn}`).waitFor();
      const billing = await adminGet<{ boards: unknown[] }>(page, `/api/admin/billing/${owner.accountId}`);
      expect(billing.boards[0]).toMatchObject({
        projectId,
        plan: 'pro',
        complimentary: { plan: 'pro', until: expect.stringMatching(new RegExp(`^${endsOn}T23:59:59`)) },
      });

      // A refund of 5.00 of the latest paid invoice.
      await board.getByLabel('Amount').fill('5.00');
      await board.getByRole('button', { name: 'Refund', exact: true }).click();
      await page.getByRole('group', { name: 'Refund' }).getByText('Refunds 5.00 of the latest paid invoice').waitFor();
      await page.getByRole('group', { name: 'Refund' }).getByLabel(REASON).fill('double charge in March');
      await page.getByRole('button', { name: 'Yes, refund' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: /^Refunded: 5\.00 [A-Z]{3}, \w+\.$/ })
        .waitFor();
      expect(await auditOf(page, `board:${projectId}`)).toEqual([
        ['admin.subscription', 'customer says they paid'],
        ['admin.plan', 'conference speaker'],
        ['admin.refund', 'double charge in March'],
      ]);
      const [refunded] = await tabs.server.store.audit.find({ target: `board:${projectId}`, action: 'admin.refund' });
      expect(refunded!.data).toMatchObject({ amount: 500, requested: 500, userId: owner.accountId });
      await board.locator('table', { hasText: 'invoice.payment_failed' }).waitFor();
      await screenshot(page, 'admin-money-account');

      // The delivered webhook in the overview, replayed (stripe-mock answers any event id with its plan.created fixture).
      await page.getByRole('link', { name: 'Money' }).click();
      await landOn(page, '/admin/money');
      const webhooks = page.locator('section.panel', { hasText: 'Webhooks received' });
      const delivered = webhooks.locator('tr', { hasText: failed.id });
      await delivered.getByText('invoice.payment_failed').waitFor();
      await delivered.getByText('applied').waitFor();
      // Settled by the re-read: out of dunning, while the unpaid board stays.
      const dunning = page.locator('section.panel', { hasText: 'Dunning' });
      await dunning.locator('tr', { hasText: lateBoard }).getByText('unpaid').waitFor();
      expect(await dunning.locator('tr', { hasText: lateBoard }).locator('td.num').innerText()).toBe('12');
      await dunning.locator('tr', { hasText: projectId }).waitFor({ state: 'detached' });
      expect(
        (await adminGet<{ boards: { projectId: string }[] }>(page, '/api/admin/billing/dunning')).boards.map(
          (b) => b.projectId,
        ),
      ).toEqual([lateBoard]);
      await confirm(page, 'Replay', 'check the delivery', delivered);
      // Its row: what the provider answered for that id, marked as a replay.
      await webhooks
        .locator('tr', { hasText: failed.id })
        .filter({ hasText: 'plan.created' })
        .getByText('· replay')
        .waitFor();
      const events = await adminGet<{ events: { eventId: string; outcome: string; replay: boolean }[] }>(
        page,
        '/api/admin/webhooks?limit=5',
      );
      expect(events.events[0]).toMatchObject({ eventId: failed.id, outcome: 'ignored', replay: true });
      expect(await auditOf(page, `event:${failed.id}`)).toEqual([['admin.webhook.replay', 'check the delivery']]);
      await screenshot(page, 'admin-money-overview');
      expect(problems).toEqual([]);
    },
  );

  it('ranks refused requests, and adds then removes an allowlist entry, each with a reason', async () => {
    const loud = `203.0.113.${1 + Math.floor(Math.random() * 250)}`;
    const from = new Client(tabs.server.url, { 'x-forwarded-for': loud, authorization: 'Bearer nope' });
    for (let i = 0; i < 7; i++) expect((await from.get('/api/status')).status).toBe(401);
    // A board's token asking for another board: 403, counted against its principal.
    const person = await signedUp(tabs.server.url);
    const projectId = (await person.client.get('/api/projects')).body.projects[0].projectId as string;
    const token = await person.client.post('/api/accounts/tokens', {
      name: 'builder',
      scope: 'workspace',
      projectId,
      role: 'member',
    });
    expect(token.status, token.text).toBe(201);
    const other = await signedUp(tabs.server.url);
    const otherBoard = (await other.client.get('/api/projects')).body.projects[0].projectId as string;
    const agent = new Client(tabs.server.url, { authorization: `Bearer ${token.body.secret}` });
    for (let i = 0; i < 3; i++) expect((await agent.get(`/api/status?projectId=${otherBoard}`)).status).toBe(403);

    const { page, problems } = await tabs.tab();
    await asOperator(page);
    await page.goto('/admin/abuse');
    const ranked = page.locator('section.panel', { hasText: 'Last hour, ranked' });
    const row = ranked.locator('tr', { hasText: loud });
    await row.waitFor();
    await row.getByText('7', { exact: true }).waitFor();
    await row.getByText('401 × 7').waitFor();
    const abuse = await adminGet<{
      refusals: Record<'addresses' | 'principals', { key: string; count: number; detail: Record<string, number> }[]>;
    }>(page, '/api/admin/abuse');
    expect(abuse.refusals.addresses).toContainEqual({ key: loud, count: 7, detail: { '401': 7 } });
    const refused = abuse.refusals.principals.filter((p) => p.key.startsWith('agent:'));
    expect(refused).toEqual([{ key: expect.any(String), count: 3, detail: { '403': 3 } }]);
    // The agent by its kind and short id, its whole principal on hover.
    const agentRow = ranked.locator('tr', { has: page.locator(`[title="${refused[0]!.key}"]`) });
    await agentRow.getByText('403 × 3').waitFor();
    expect(await agentRow.locator('td').first().innerText()).toMatch(/^agent \S+$/);

    const domain = `${unique('partner')
      .replace(/[^a-z0-9]/gi, '')
      .toLowerCase()}.example.com`;
    await page.getByLabel('Address, CIDR range or email domain').fill(domain);
    await confirm(page, 'Add', 'partner onboarding event');
    const entry = page.locator('section.panel', { hasText: 'Allowlist' }).locator('tr', { hasText: domain });
    await entry.getByText('partner onboarding event').waitFor();
    expect((await adminGet<{ entries: unknown[] }>(page, '/api/admin/allowlist')).entries).toContainEqual(
      expect.objectContaining({ value: domain, kind: 'domain', reason: 'partner onboarding event' }),
    );
    await screenshot(page, 'admin-abuse');

    await confirm(page, 'Remove', 'event is over', entry);
    await entry.waitFor({ state: 'detached' });
    expect(
      (await adminGet<{ entries: { value: string }[] }>(page, '/api/admin/allowlist')).entries.map((e) => e.value),
    ).not.toContain(domain);
    expect(await auditOf(page, `allowlist:${domain}`)).toEqual([
      ['admin.allowlist.add', 'partner onboarding event'],
      ['admin.allowlist.remove', 'event is over'],
    ]);
    expect(problems).toEqual([]);
  });

  it('mails a user from their page: the mail reaches their address with the subject and text, and the audit keeps it', async () => {
    const person = await signedUp(tabs.server.url);
    const { page, problems } = await tabs.tab();
    await asOperator(page);
    await page.goto(`/admin/users/${person.accountId}`);
    await page.getByRole('heading', { name: person.email }).waitFor();
    await page.getByRole('button', { name: 'Contact' }).click();
    const subject = `About your board ${unique('s')}`;
    const text = 'Your agents retried a refused request 4,000 times last night.\nCould you check their backoff?';
    await page.getByLabel('Subject').fill(subject);
    await page.getByLabel('Text').fill(text);
    await page.getByRole('button', { name: 'Send mail' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Sent to ${person.email}.` })
      .waitFor();
    const mail = await tabs.server.mail.next(person.email, new RegExp(`^${subject}$`));
    expect(mail.text.startsWith(`${text}\n\n-- \n`)).toBe(true);
    const rows = await tabs.server.store.audit.find({ target: `account:${person.accountId}`, action: 'admin.contact' });
    expect(rows).toEqual([expect.objectContaining({ data: expect.objectContaining({ subject, text }) })]);
    await screenshot(page, 'admin-contact');
    expect(problems).toEqual([]);
  });
  it('triages an agent’s feedback: open first with its board’s name, promoted into one item after a reason', async () => {
    const owner = await signedUp(tabs.server.url);
    const projectId = (await owner.client.get('/api/projects')).body.projects[0].projectId as string;
    const name = `Payments ${unique('b')}`;
    expect((await owner.client.request('PATCH', `/api/projects/${projectId}`, { json: { name } })).status).toBe(200);
    const token = await owner.client.post('/api/accounts/tokens', {
      name: 'builder',
      scope: 'workspace',
      projectId,
      role: 'member',
    });
    const agent = new Client(tabs.server.url, { authorization: `Bearer ${token.body.secret}` });
    const text = `The spec clause on retries contradicts the checks ${unique('f')}.\nWhich one wins?`;
    const posted = await agent.post('/api/feedback', { text, kind: 'problem' });
    expect(posted.status, posted.text).toBe(201);
    const { page, problems } = await tabs.tab();
    await asOperator(page);
    await page.goto('/admin/feedback');
    const entry = page.getByRole('article', { name: `Feedback ${posted.body.id}` });
    await entry.getByText(name).waitFor();
    await entry.getByRole('button', { name: 'Promote', exact: true }).click();
    await page.getByRole('group', { name: 'Promote' }).getByText(`One item is made on the board ${name}`).waitFor();
    await screenshot(page, 'admin-feedback');
    const step = page.getByRole('group', { name: 'Promote' });
    await step.getByLabel(REASON).fill('a real contradiction');
    await step.getByRole('button', { name: 'Yes, promote' }).click();
    // Promoted, it leaves the open list; shown under promoted with its item.
    await entry.waitFor({ state: 'detached' });
    await page.locator('select[name="status"]').selectOption('promoted');
    const promoted = page.getByRole('article', { name: `Feedback ${posted.body.id}` });
    await promoted.getByText(/item W-\d+/).waitFor();
    const items = (await agent.get('/api/items?limit=200')).body.items as { title: string; labels: string[] }[];
    expect(items.filter((i) => i.labels.includes(`feedback:${posted.body.id}`))).toEqual([
      expect.objectContaining({ title: text.split('\n')[0] }),
    ]);
    expect(await auditOf(page, `feedback:${posted.body.id}`)).toEqual([
      ['admin.feedback.promote', 'a real contradiction'],
    ]);
    expect(problems).toEqual([]);
  });
});
