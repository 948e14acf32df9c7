// The operators' watching routes over real HTTP, run on each store adapter: every figure follows
// from what the test did. Refusals from one address rank it first in abuse; requests and commits
// on a board show in the cost model and the platform metrics once counted; the audit filters return
// exactly the matching rows, newest first, paging with a cursor; both name the accounts they
// mention by address, in one read per page; durability sees a failed commit.
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { serveStore, type OpenedStore } from '../../support/stores.js';
import { Client, signedUp } from '../../support/server.js';
import { confirmedOperator, operatorEmail } from '../../support/operators.js';
import { newBoard } from '../../support/board.js';
import { openSocket } from '../../support/socket.js';
import { failOnce } from '../../support/fail-once.js';
import { expectError } from '../../support/expect-error.js';
import { unique } from '../../support/temp.js';
import { until } from '../../support/until.js';
import { modify } from '../../../store/ports/store.js';
import { pino } from 'pino';
import { Watch } from '../../../src/admin/watch.js';
import { bucketOf, dayOf, usageId } from '../../../src/admin/usage.js';
import type { AuditRecord, BillingRecord } from '../../../store/ports/store.js';

const DAY = 86_400_000;

/** A documentation-range address of this run's own (TEST-NET-3), so no other case counts against it. */
const address = (): string => `203.0.113.${Math.floor(Math.random() * 250) + 1}`;

export function watchFlow(name: string, open: () => Promise<OpenedStore>): void {
  describe(`the operators' watching routes on the ${name} store`, () => {
    const opEmail = operatorEmail();
    const nodeId = unique('node');
    const served = serveStore(open, {
      OPERATOR_EMAILS: opEmail,
      NODE_ID: nodeId,
      TRUSTED_PROXIES: '127.0.0.1',
      ADDRESS_RATE_PER_MINUTE: '100000',
      DATA_DIR: tmpdir(),
      REVENUE_PRO_MONTHLY_USD: '12',
      REVENUE_PRO_YEARLY_USD: '120',
      COST_MILLION_REQUESTS_USD: '1000',
    });
    let op: Client | null = null;
    const operator = async (): Promise<Client> => (op ??= (await confirmedOperator(served.srv, opEmail)).client);
    const watch = async (path: string) => {
      const res = await (await operator()).get(path);
      expect(res.status, res.text).toBe(200);
      return res.body;
    };

    it('are unknown paths to anyone but an operator', async () => {
      const person = await signedUp(served.srv.url);
      for (const path of ['utilization', 'metrics', 'costmodel', 'durability', 'audit', 'abuse']) {
        expectError(await person.client.get(`/api/admin/${path}`), 404, 'NOT_FOUND');
        expectError(await new Client(served.srv.url).get(`/api/admin/${path}`), 404, 'NOT_FOUND');
      }
    });

    it('ranks the address with the most refusals first, and names the principals refused, the sign-up and anonymous-board bursts, shout floods and socket budget closures', async () => {
      const [loud, quiet, signups, anon] = [address(), address(), address(), address()];
      const from = (ip: string, headers: Record<string, string> = {}) =>
        new Client(served.srv.url, { 'x-forwarded-for': ip, ...headers });
      for (let i = 0; i < 12; i++)
        expectError(
          await from(loud, { authorization: 'Bearer nope' }).get('/api/status'),
          401,
          'INVALID_SERVICE_TOKEN',
        );
      for (let i = 0; i < 3; i++)
        expectError(
          await from(quiet, { authorization: 'Bearer nope' }).get('/api/status'),
          401,
          'INVALID_SERVICE_TOKEN',
        );
      // A token of one board asking for another: 403, counted against its principal.
      const board = await newBoard(served.srv.url);
      const other = await newBoard(served.srv.url);
      const agent = await board.agent(unique('agent'));
      for (let i = 0; i < 4; i++)
        expectError(await agent.get(`/api/status?projectId=${other.projectId}`), 403, 'PROJECT_SCOPE_DENIED');
      for (let i = 0; i < 3; i++)
        expect(
          (
            await from(signups).post('/api/auth/signup', {
              email: `${unique('burst')}@example.com`,
              password: 'correct horse battery staple',
            })
          ).status,
        ).toBe(201);
      for (let i = 0; i < 2; i++) expect((await from(anon).post('/api/accounts/anon-provision', {})).status).toBe(201);
      for (let i = 0; i < 5; i++) expect((await agent.post('/api/shouts', { text: `flood ${i}` })).status).toBe(201);
      const socket = await openSocket(served.srv.url, agent.defaults);
      for (let i = 0; i < 120; i++) socket.send({ type: 'ping' });
      expect((await socket.closed).code).toBe(4029);

      const abuse = await watch('/api/admin/abuse?limit=100');
      const entry = (list: { key: string }[], key: string) => list.find((e) => e.key === key);
      expect(abuse.refusals.addresses[0]).toEqual({ key: loud, count: 12, detail: { '401': 12 } });
      expect(entry(abuse.refusals.addresses, quiet)).toEqual({ key: quiet, count: 3, detail: { '401': 3 } });
      expect(abuse.refusals.addresses.findIndex((e: { key: string }) => e.key === quiet)).toBeGreaterThan(0);
      expect(entry(abuse.refusals.principals, agent.principal)).toEqual({
        key: agent.principal,
        count: 4,
        detail: { '403': 4 },
      });
      expect(entry(abuse.signupBursts, signups)).toEqual({ key: signups, count: 3, detail: { signups: 3 } });
      expect(entry(abuse.anonymousBoardBursts, anon)).toEqual({ key: anon, count: 2, detail: { anonBoards: 2 } });
      expect(entry(abuse.shoutFloods, agent.principal)).toEqual({
        key: agent.principal,
        count: 5,
        detail: { shouts: 5 },
      });
      expect(entry(abuse.socketBudgetClosures, agent.principal)).toEqual({
        key: agent.principal,
        count: 1,
        detail: { socketClosures: 1 },
      });
      expect(abuse.partial).toBe(false);
      expectError(await (await operator()).get('/api/admin/abuse?limit=0'), 400, 'INVALID_INPUT');
    });

    it('prices a board’s requests, events and storage over 30 days, and its account with it', async () => {
      const board = await newBoard(served.srv.url);
      const agent = await board.agent(unique('agent'));
      const before = (await watch(`/api/admin/costmodel?projectId=${board.projectId}`)).board;
      for (let i = 0; i < 3; i++) expect((await agent.post('/api/items', { title: `cost ${i}` })).status).toBe(201);
      for (let i = 0; i < 4; i++) expect((await agent.get('/api/status')).status).toBe(200);
      // A socket held a second and a half (of the server's clock): its time counts for the board (the
      // token's) once it closes.
      const socket = await openSocket(served.srv.url, agent.defaults);
      served.srv.advance(1500);
      socket.ws.close();
      await socket.closed;
      let after = before;
      // A commit counts once its listeners hear of it: on MongoDB, once its events are copied to the
      // log (up to 20 ms after its answer, actors/outbox-copier.ts COPY_DELAY_MS).
      await until(async () => {
        after = (await watch(`/api/admin/costmodel?projectId=${board.projectId}`)).board;
        return (
          after.usage.socketMinutes > before.usage.socketMinutes && after.usage.commits - before.usage.commits >= 3
        );
      });
      expect(after.usage.socketMinutes - before.usage.socketMinutes).toBeLessThan(0.5);
      expect(after.cost.socketsUsd).toBeGreaterThan(0);
      const { unitCosts } = await watch(`/api/admin/costmodel?projectId=${board.projectId}`);
      expect(after.usage.requests - before.usage.requests).toBe(7);
      expect(after.usage.commits - before.usage.commits).toBe(3);
      expect(after.usage.events - before.usage.events).toBeGreaterThanOrEqual(3);
      expect(after.stored.items).toBe(3);
      expect(after.stored.estimatedBytes).toBeGreaterThan(0);
      expect(unitCosts.millionRequests).toBe(1000);
      expect(after.cost.requestsUsd).toBeCloseTo((after.usage.requests / 1e6) * 1000, 6);
      expect(after.cost.totalUsd).toBeCloseTo(
        after.cost.storageUsd + after.cost.eventsUsd + after.cost.requestsUsd + after.cost.socketsUsd,
        5,
      );
      expect(after.revenue).toMatchObject({ plan: 'free', complimentary: false, monthlyUsd: 0 });
      expect(after.ownerId).toEqual(expect.any(String));

      const { account } = await watch(`/api/admin/costmodel?accountId=${after.ownerId}`);
      expect(account.boards.map((b: { boardId: string }) => b.boardId)).toContain(board.projectId);
      expect(account.totalUsd).toBeGreaterThanOrEqual(after.cost.totalUsd);

      // With no subject: the boards active today, paged by board id.
      const seen: string[] = [];
      for (let cursor: string | null = null, pages = 0; pages < 50; pages++) {
        const page: { boards: { boardId: string }[]; nextCursor: string | null } = await watch(
          `/api/admin/costmodel?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        );
        expect(page.boards.length).toBeLessThanOrEqual(2);
        seen.push(...page.boards.map((b) => b.boardId));
        cursor = page.nextCursor;
        if (!cursor) break;
      }
      expect(seen).toContain(board.projectId);
      expect(new Set(seen).size).toBe(seen.length);
      expect([...seen].sort()).toEqual(seen);
      expectError(await (await operator()).get('/api/admin/costmodel?cursor=../x'), 400, 'INVALID_CURSOR');
      expectError(await (await operator()).get('/api/admin/costmodel?projectId=nope'), 404, 'NOT_FOUND');
      expectError(await (await operator()).get('/api/admin/costmodel?accountId=nope'), 404, 'NOT_FOUND');
    });

    it('counts sign-ups and active accounts, boards and agents per day, and revenue and churn from billing records', async () => {
      const today = async () => (await watch('/api/admin/metrics?days=3')).days[0];
      const before = await today();
      const people = [await signedUp(served.srv.url), await signedUp(served.srv.url)];
      for (const p of people) expect((await p.client.get('/api/auth/me')).status).toBe(200);
      const board = await newBoard(served.srv.url);
      const agent = await board.agent(unique('agent'));
      expect((await agent.get('/api/status')).status).toBe(200);
      const after = await today();
      expect(after.day).toBe(new Date().toISOString().slice(0, 10));
      expect(after.signups - before.signups).toBe(3);
      // The two people and the board's owner (its token was made by its session).
      expect(after.activeAccounts - before.activeAccounts).toBe(3);
      expect(after.activeBoards - before.activeBoards).toBe(1);
      expect(after.activeAgents - before.activeAgents).toBe(1);
      expect(after.requests - before.requests).toBeGreaterThanOrEqual(8);

      const now = Date.now();
      const bill = (id: string, status: string, interval: 'month' | 'year', changedAt = now): BillingRecord => ({
        _id: id,
        version: 1,
        accountId: unique('acct'),
        customerId: unique('cus'),
        subscriptionId: unique('sub'),
        status,
        interval,
        priceId: null,
        currentPeriodEnd: null,
        cancelAtPeriodEnd: false,
        changedAt,
        pastDueSince: status === 'past_due' ? now - DAY : null,
      });
      for (const record of [
        bill(unique('b'), 'active', 'month'),
        bill(unique('b'), 'active', 'month'),
        bill(unique('b'), 'trialing', 'year'),
        bill(unique('b'), 'past_due', 'month'),
        bill(unique('b'), 'canceled', 'month'),
        bill(unique('b'), 'canceled', 'month', now - 40 * DAY),
      ]) {
        await served.srv.store.billing.insert(record);
      }
      const { billing } = await watch('/api/admin/metrics');
      // Pro: two monthly, one yearly, one past due within its grace (monthly).
      expect(billing.proBoards).toBe(4);
      expect(billing.subscriptions).toEqual({ month: 3, year: 1, unknownPrice: 0, pastDue: 1 });
      expect(billing.monthlyRevenueUsd).toBe(3 * 12 + 120 / 12);
      expect(billing.churn).toEqual({ canceledLast30Days: 1, rate: 0.2 });
      expect(billing.complimentary).toBe(0);

      // A complimentary Pro plan in force counts as a Pro board, and brings no revenue.
      await modify(served.srv.store.projects, board.projectId, () => ({
        compPlan: 'pro' as const,
        compUntil: now + DAY,
      }));
      const withComp = (await watch('/api/admin/metrics')).billing;
      expect(withComp).toMatchObject({ proBoards: 5, complimentary: 1, monthlyRevenueUsd: 46 });
      expect((await watch(`/api/admin/costmodel?projectId=${board.projectId}`)).board.revenue).toMatchObject({
        plan: 'pro',
        complimentary: true,
        monthlyUsd: 0,
      });
      expectError(await (await operator()).get('/api/admin/metrics?days=91'), 400, 'INVALID_INPUT');
    });

    it('lists audit rows newest first, filtered exactly by actor, target, action and time, paging with a cursor', async () => {
      const [alice, bob] = [`user:${unique('alice')}`, `user:${unique('bob')}`];
      const target = `board:${unique('t')}`;
      // A day back: inside every retention, and before anything this suite wrote.
      const t0 = Math.floor((Date.now() - DAY) / 60_000) * 60_000;
      const rows: AuditRecord[] = [];
      for (let i = 0; i < 9; i++) {
        rows.push({
          _id: unique('audit'),
          version: 1,
          at: t0 + i * 60_000,
          actor: i % 3 === 0 ? bob : alice,
          action: i % 2 ? 'admin.revoke' : 'admin.contact',
          projectId: null,
          target: i < 4 ? target : null,
          data: { i },
        });
      }
      for (const row of rows) await served.srv.store.audit.insert(row);
      const newestFirst = (filter: (r: AuditRecord) => boolean) =>
        rows
          .filter(filter)
          .sort((a, b) => b.at - a.at)
          .map((r) => r.data.i);
      const list = async (query: string) =>
        (await watch(`/api/admin/audit?${query}`)).rows.map((r: { data: { i: number } }) => r.data.i);

      expect(await list(`actor=${alice}&limit=200`)).toEqual(newestFirst((r) => r.actor === alice));
      expect(await list(`target=${target}`)).toEqual(newestFirst((r) => r.target === target));
      expect(await list(`actor=${alice}&action=admin.revoke`)).toEqual(
        newestFirst((r) => r.actor === alice && r.action === 'admin.revoke'),
      );
      expect(await list(`target=${target}&action=admin.*&actor=${bob}`)).toEqual(
        newestFirst((r) => r.target === target && r.actor === bob),
      );
      const [from, to] = [new Date(t0 + 2 * 60_000).toISOString(), new Date(t0 + 6 * 60_000).toISOString()];
      expect(await list(`actor=${alice}&from=${from}&to=${to}`)).toEqual(
        newestFirst((r) => r.actor === alice && r.at >= t0 + 2 * 60_000 && r.at <= t0 + 6 * 60_000),
      );
      const first = (await watch(`/api/admin/audit?actor=${bob}`)).rows[0];
      expect(first).toEqual({
        id: rows[6]!._id,
        at: new Date(rows[6]!.at).toISOString(),
        actor: bob,
        impersonatedBy: null,
        action: 'admin.contact',
        target: null,
        projectId: null,
        data: { i: 6 },
      });

      // Paging: two at a time, every row once, in order; the last page says there is no more.
      const paged: number[] = [];
      let cursor: string | null = null;
      for (let pages = 0; pages < 10; pages++) {
        const page: { rows: { data: { i: number } }[]; nextCursor: string | null } = await watch(
          `/api/admin/audit?actor=${alice}&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        );
        paged.push(...page.rows.map((r) => r.data.i));
        cursor = page.nextCursor;
        if (!cursor) break;
      }
      expect(paged).toEqual(newestFirst((r) => r.actor === alice));
      expect(cursor).toBe(null);
      // A filter on action alone is checked on the rows read: newest first, and it pages too.
      const actionPaged: number[] = [];
      cursor = null;
      for (let pages = 0; pages < 20; pages++) {
        const page: { rows: { data: { i: number }; actor: string }[]; nextCursor: string | null } = await watch(
          `/api/admin/audit?action=admin.revoke&to=${new Date(t0 + 8 * 60_000).toISOString()}&limit=1${cursor ? `&cursor=${cursor}` : ''}`,
        );
        actionPaged.push(...page.rows.filter((r) => r.actor === alice || r.actor === bob).map((r) => r.data.i));
        cursor = page.nextCursor;
        if (!cursor) break;
      }
      expect(actionPaged).toEqual(newestFirst((r) => r.action === 'admin.revoke'));

      expectError(await (await operator()).get('/api/admin/audit?cursor=not-a-cursor'), 400, 'INVALID_CURSOR');
      expectError(await (await operator()).get('/api/admin/audit?from=yesterday'), 400, 'INVALID_INPUT');
      expectError(await (await operator()).get('/api/admin/audit?action=a%20b'), 400, 'INVALID_INPUT');
    });

    /** What `during` answered, and how many reads of accounts named any of `ids` meanwhile. */
    async function accountReads<T>(ids: string[], during: () => Promise<T>): Promise<[T, number]> {
      const accounts = served.srv.store.accounts as unknown as Record<string, (...args: unknown[]) => unknown>;
      const methods = ['get', 'findOne', 'find', 'select'];
      const originals = methods.map((m) => accounts[m]!);
      let reads = 0;
      for (const [i, m] of methods.entries())
        accounts[m] = (...args: unknown[]) => {
          if (ids.some((id) => JSON.stringify(args).includes(id))) reads++;
          return originals[i]!.apply(accounts, args);
        };
      try {
        return [await during(), reads];
      } finally {
        for (const [i, m] of methods.entries()) accounts[m] = originals[i]!;
      }
    }

    it('names every account an audit page or the abuse report mentions by its address, in one read per page', async () => {
      const [alice, bob, carol] = [
        await signedUp(served.srv.url),
        await signedUp(served.srv.url),
        await signedUp(served.srv.url),
      ];
      const gone = randomUUID(); // an account purged since: no record holds it
      const deleted = await (await operator()).post(`/api/admin/users/${carol.accountId}/delete`, { reason: 'spam' });
      expect(deleted.status, deleted.text).toBe(200);
      const ids = [alice.accountId, bob.accountId, carol.accountId, gone];
      const accounts = {
        [alice.accountId]: { email: alice.email, deleted: false },
        [bob.accountId]: { email: bob.email, deleted: false },
        [carol.accountId]: { email: carol.email, deleted: true },
        [gone]: { email: null, deleted: true },
      };

      // Audit: actors, targets and the operator behind an impersonated actor, over rows of one board.
      const projectId = unique('named');
      const at = Date.now() - 60_000;
      const row = (i: number, actor: string, target: string | null, data: Record<string, unknown> = {}) =>
        ({
          _id: unique('audit'),
          version: 1,
          at: at + i,
          actor,
          action: 'admin.contact',
          projectId,
          target,
          data,
        }) satisfies AuditRecord;
      for (const r of [
        row(0, `user:${alice.accountId}`, `account:${bob.accountId}`),
        row(1, `user:${bob.accountId}`, `account:${gone}`, { impersonatedBy: alice.accountId }),
        row(2, `user:${gone}`, `account:${carol.accountId}`),
        row(3, `user:${alice.accountId}`, `account:${bob.accountId}`),
        row(4, 'agent:not-an-account', 'board:not-an-account'),
      ])
        await served.srv.store.audit.insert(r);
      const [page, auditReads] = await accountReads(ids, () => watch(`/api/admin/audit?projectId=${projectId}`));
      expect(page.rows).toHaveLength(5);
      expect(page.accounts).toEqual(accounts);
      expect(auditReads).toBe(1);

      // Abuse: the principals that are accounts, ranked first by counts no other case reaches.
      const bucket = bucketOf(Date.now());
      for (const [key, counts] of [
        [`user:${alice.accountId}`, { r403: 9_001 }],
        [`user:${carol.accountId}`, { shouts: 9_002 }],
        [`user:${gone}`, { socketClosures: 9_003 }],
      ] as const)
        await served.srv.store.usage.add(
          usageId(bucket, 'principal', key),
          { day: bucket, scope: 'principal', key },
          counts,
        );
      const [abuse, abuseReads] = await accountReads(ids, () => watch('/api/admin/abuse?limit=100'));
      expect(abuse.refusals.principals[0]).toEqual({
        key: `user:${alice.accountId}`,
        count: 9_001,
        detail: { '403': 9_001 },
      });
      expect(abuse.shoutFloods[0].key).toBe(`user:${carol.accountId}`);
      expect(abuse.socketBudgetClosures[0].key).toBe(`user:${gone}`);
      expect(abuse.accounts).toMatchObject({
        [alice.accountId]: accounts[alice.accountId],
        [carol.accountId]: accounts[carol.accountId],
        [gone]: accounts[gone],
      });
      expect(abuse.accounts).not.toHaveProperty(bob.accountId);
      expect(abuseReads).toBe(1);
    });

    it('reports the store, its commits (a failed one included), disk or replication, mail and the bus', async () => {
      const board = await newBoard(served.srv.url);
      const agent = await board.agent(unique('agent'));
      expect((await agent.post('/api/items', { title: 'kept' })).status).toBe(201);
      const before = await watch('/api/admin/durability');
      failOnce(served.srv.store.boards, 'commit');
      expect((await agent.post('/api/items', { title: 'refused once' })).status).toBeGreaterThanOrEqual(500);
      expect((await agent.post('/api/items', { title: 'kept again' })).status).toBe(201);
      const report = await watch('/api/admin/durability');
      expect(report.store.kind).toBe(name);
      expect(report.store.ping.ok).toBe(true);
      expect(report.store.commits.failures - before.store.commits.failures).toBe(1);
      expect(report.store.commits.lastFailure.error).toBe('StoreUnavailableError');
      expect(report.store.commits.committed - before.store.commits.committed).toBeGreaterThanOrEqual(1);
      expect(report.store.commits.latencyMs).toMatchObject({
        samples: expect.any(Number),
        p50: expect.any(Number),
        p99: expect.any(Number),
        max: expect.any(Number),
      });
      if (name === 'embedded') {
        expect(report.store.disk.totalBytes).toBeGreaterThan(0);
        expect(report.store.disk.availableBytes).toBeLessThanOrEqual(report.store.disk.totalBytes);
        expect(report.store.replication).toBe(null);
      } else {
        expect(report.store.disk).toBe(null);
        expect(report.store.replication).not.toBe(null);
      }
      expect(report.bus).toEqual({ state: 'local', peersHeard: 0 });
      expect(report.mail.outbox).toBe(0);
      expect(report.usageCounters.dropped).toBe(0);
      // The failed commit is an alert for the next 15 minutes; before it there was none about commits.
      expect(before.alerts.filter((a: { code: string }) => a.code === 'commits.failing')).toEqual([]);
      expect(report.alerts).toContainEqual({
        level: 'warning',
        code: 'commits.failing',
        message: expect.stringContaining('StoreUnavailableError'),
      });
    });

    it('deletes usage rows past their keeping: days after 400, abuse buckets after two days', async () => {
      const now = Date.now();
      const key = unique('subject');
      const row = (day: string) => ({
        _id: `${day}:account:${key}`,
        version: 1,
        day,
        scope: 'account' as const,
        key,
        counts: { requests: 1 },
      });
      const kept = [
        row(dayOf(now - 399 * DAY)),
        row(dayOf(now - 3 * DAY)),
        row(`${dayOf(now - DAY)}T10:00`),
        row(`${dayOf(now)}T00:00`),
      ];
      const gone = [
        row(dayOf(now - 401 * DAY)),
        row(`${dayOf(now - 3 * DAY)}T10:00`),
        row(`${dayOf(now - 2 * DAY)}T23:50`),
      ];
      for (const r of [...kept, ...gone]) await served.srv.store.usage.insert(r);
      const zero = () => 0;
      const watcher = new Watch({
        nodeId: unique('purger'),
        store: served.srv.store,
        sources: {
          boardsActive: zero,
          sockets: zero,
          inFlight: zero,
          leaseTimers: zero,
          mailboxDepth: zero,
          bus: () => 'local',
        },
        publish: () => undefined,
        logger: pino({ level: 'silent' }),
        clock: () => now,
      });
      try {
        expect(await watcher.purgeUsage()).toBeGreaterThanOrEqual(gone.length);
      } finally {
        watcher.utilization.stop();
      }
      for (const r of kept) expect(await served.srv.store.usage.get(r._id), r._id).not.toBe(null);
      for (const r of gone) expect(await served.srv.store.usage.get(r._id), r._id).toBe(null);
    });

    it('shows this node’s utilization: boards, sockets, requests per minute, memory', async () => {
      const board = await newBoard(served.srv.url);
      const agent = await board.agent(unique('agent'));
      const socket = await openSocket(served.srv.url, agent.defaults);
      for (let i = 0; i < 5; i++) expect((await agent.get('/api/status')).status).toBe(200);
      const { nodes } = await watch('/api/admin/utilization');
      expect(nodes).toHaveLength(1);
      expect(nodes[0]).toMatchObject({ nodeId, self: true, figures: { nodeId, bus: 'local' } });
      const f = nodes[0].figures;
      expect(f.sockets).toBeGreaterThanOrEqual(1);
      expect(f.boardsActive).toBeGreaterThanOrEqual(1);
      expect(f.requestsPerMinute).toBeGreaterThanOrEqual(5);
      expect(f.memory.rss).toBeGreaterThan(0);
      expect(f.eventLoopDelayMs.max).toBeGreaterThanOrEqual(0);
      socket.ws.close();
    });
  });
}
