// Taking an anonymous board over in Chromium against a real server: an agent provisions a board
// over HTTP and works on it, then hands a person its claim link; the person (signed up in the
// page) sees the board's name and item count, takes it over and finds it among their boards, and
// the agent's token keeps working. Also a spent link, the board limit, and signing in on the way.
import { describe, expect, inject, it } from 'vitest';
import { landOn, screenshot, signUpInPage, useBrowserTabs } from '../support/browser.js';
import { Client, signedUp } from '../support/server.js';
import { unique } from '../support/temp.js';

const chromium = inject('chromium');

describe.skipIf(!chromium)('the claim-board page (Chromium)', () => {
  const suite = useBrowserTabs(chromium!, 'claim', { ADDRESS_RATE_PER_MINUTE: '100000' });
  const { tab } = suite;

  /** An anonymous board whose agent filed a few items and asked for a claim link. */
  async function agentBoard(projectName: string) {
    const provisioned = await new Client(suite.server.url).post('/api/accounts/anon-provision', {
      projectName,
      agentName: 'night-agent',
    });
    expect(provisioned.status, provisioned.text).toBe(201);
    const agent = new Client(suite.server.url, { authorization: `Bearer ${provisioned.body.secret}` });
    const batch = await agent.post('/api/items/batch', {
      items: [
        { ref: 'a', title: 'Parse the feed' },
        { ref: 'b', title: 'Store the rows', dependsOn: ['a'] },
        { title: 'Write the report' },
      ],
    });
    expect(batch.status, batch.text).toBe(201);
    expect((await agent.post('/api/claim', {})).status).toBe(200);
    const link = await agent.post(`/api/projects/${provisioned.body.projectId}/claim-nonce`);
    expect(link.status, link.text).toBe(201);
    return { agent, projectId: provisioned.body.projectId as string, link: link.body.link as string };
  }

  it('shows the board an agent hands over, takes it over, and lists it among the person’s boards; the agent keeps working', async () => {
    const { agent, projectId, link } = await agentBoard('Night shift');
    expect(link.startsWith(`${suite.server.url}/boards/${projectId}/claim#`)).toBe(true);
    const t = await tab();
    await signUpInPage(t.page, `${unique('claim')}@example.com`);

    await t.page.goto(link);
    await t.page.getByRole('heading', { name: 'Take this board over' }).waitFor();
    const facts = t.page.getByLabel('The board');
    await facts.getByText('Night shift').waitFor();
    expect((await facts.innerText()).replace(/\s+/g, ' ')).toMatch(/Items 3 Agents 1 Last activity \d+s ago/);
    await screenshot(t.page, 'claim');

    await t.page.getByRole('button', { name: 'Take the board over' }).click();
    await t.page.getByRole('heading', { name: 'The board is yours' }).waitFor();
    await t.page.getByRole('status').getByText('Night shift').waitFor();
    expect(new URL(t.page.url()).hash).toBe('');
    await screenshot(t.page, 'claim-done');
    await t.page.getByRole('link', { name: 'Your boards' }).click();
    await landOn(t.page, '/projects');
    const row = t.page.getByRole('row', { name: /Night shift/ });
    await row.waitFor();
    expect((await row.innerText()).replace(/\s+/g, ' ')).toMatch(/Night shift 3 0 0 1 .* owner/);

    // The agent's token still works on the board, which now belongs to the person.
    expect((await agent.post('/api/items', { title: 'After the hand-over' })).status).toBe(201);
    await row.getByRole('link', { name: 'Night shift' }).click();
    await landOn(t.page, `/boards/${projectId}`);
    await t.page.getByText('After the hand-over').first().waitFor();

    // The link is spent: opening it again says so, with the registry's message and fix.
    await t.page.goto(link);
    await t.page.getByRole('heading', { name: 'This link cannot be used' }).waitFor();
    await t.page.getByRole('alert').getByText('INVALID_LINK_TOKEN').waitFor();
    await screenshot(t.page, 'claim-spent');
    expect(t.problems).toEqual([]);
  });

  it('keeps the link through signing in, and says when the person has no room for another board', async () => {
    const { link } = await agentBoard('Weekend batch');
    const person = await signedUp(suite.server.url);
    for (const name of ['Second', 'Third'])
      expect((await person.client.post('/api/projects', { name })).status).toBe(201);

    const t = await tab();
    await t.page.goto(link);
    await landOn(t.page, '/signin');
    await t.page.getByLabel('Email').fill(person.email);
    await t.page.getByLabel('Password').fill(person.password);
    await t.page.getByRole('button', { name: 'Sign in' }).click();
    await t.page.getByRole('heading', { name: 'No room for another board' }).waitFor();
    await t.page.getByRole('alert').getByText('FREE_PROJECT_LIMIT').waitFor();
    await screenshot(t.page, 'claim-limit');

    // Room made, the same link (kept for the tab through the sign-in) works.
    expect(new URL(t.page.url()).hash).toBe('');
    const third = (await person.client.get('/api/projects')).body.projects.find(
      (p: { name: string }) => p.name === 'Third',
    ).projectId as string;
    expect((await person.client.request('DELETE', `/api/projects/${third}`)).status).toBe(204);
    await t.page.getByRole('button', { name: 'Try again' }).click();
    await t.page.getByRole('heading', { name: 'Take this board over' }).waitFor();
    await t.page.getByText('Weekend batch').waitFor();
    await t.page.getByRole('button', { name: 'Take the board over' }).click();
    await t.page.getByRole('heading', { name: 'The board is yours' }).waitFor();
    expect(t.problems).toEqual([]);
  });
});
