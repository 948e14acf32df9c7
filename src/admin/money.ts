// The operators' money desk (DOMAIN.md "Operators", Money): boards in dunning, an account's billing
// records and provider events, a subscription re-read from the provider, a complimentary plan that
// ends by itself, a refund of the latest paid invoice, and the received provider events with their
// replay. Billing's own rules (src/billing/service.ts) do the settling; this module finds the board,
// checks the operator's input against the store, and writes one audit row per action.
// Actions that call the provider ask it before anything is written: a provider that cannot be
// reached (502 PROVIDER_UNAVAILABLE) leaves the billing records and the audit as they were.
import type { AuditRecord, BillingRecord, ProjectRecord, Store } from '../../store/ports/store.js';
import type { BillingService, WebhookOutcome } from '../billing/service.js';
import { billingPlan, complimentaryPlan } from '../billing/plan.js';
import { originOf } from '../audit-row.js';
import { AppError } from '../errors/app-error.js';
import { DAY_MS } from '../plans.js';
import { auditOperatorAction, type OperatorCtx } from './audit.js';

type Ctx = OperatorCtx;

/** The statuses of a subscription whose invoice is overdue. */
const DUNNING = ['past_due', 'unpaid'] as const;

/** How long a complimentary plan may be granted for at once. */
export const MAX_COMPLIMENTARY_MS = 366 * DAY_MS;

/** Provider events shown per board on an account's billing page. */
const EVENTS_PER_BOARD = 20;
/** Boards (owned, or paid for) read for one account's billing page; Pro's board limit is 100. */
const BOARDS_PER_ACCOUNT = 200;

const ACCOUNT_ID = /^[A-Za-z0-9_-]{1,64}$/;
const EVENT_ID = /^evt_[A-Za-z0-9_]{1,100}$/;

export interface Page {
  cursor?: string | undefined;
  limit: number;
}

const iso = (ms: number | null | undefined): string | null =>
  typeof ms === 'number' ? new Date(ms).toISOString() : null;

/** A cursor names the last row of a page: its time and id (newest first, ties by id). */
const encodeCursor = (at: number, id: string): string => Buffer.from(`${at}:${id}`).toString('base64url');
function decodeCursor(cursor: string): { at: number; id: string } {
  const m = /^(\d{1,16}):(.{1,200})$/s.exec(Buffer.from(cursor, 'base64url').toString());
  if (!/^[A-Za-z0-9_-]+$/.test(cursor) || !m)
    throw new AppError('INVALID_CURSOR', 'Pass nextCursor exactly as the previous page gave it, or omit it.');
  return { at: Number(m[1]), id: m[2]! };
}
/** Whether (at, id) comes after the cursor in newest-first order. */
const after = (c: { at: number; id: string }, at: number, id: string): boolean =>
  at < c.at || (at === c.at && id < c.id);

export function billingView(record: BillingRecord) {
  return {
    payerAccountId: record.accountId,
    customerId: record.customerId,
    subscriptionId: record.subscriptionId,
    status: record.status,
    interval: record.interval,
    priceId: record.priceId,
    currentPeriodEnd: iso(record.currentPeriodEnd),
    cancelAtPeriodEnd: record.cancelAtPeriodEnd,
    changedAt: iso(record.changedAt),
    overdueSince: iso(record.pastDueSince),
  };
}

const complimentaryView = (project: Pick<ProjectRecord, 'compPlan' | 'compUntil'>, now: number) => {
  const plan = complimentaryPlan(project, now);
  return plan ? { plan, until: iso(project.compUntil)! } : null;
};

function eventView(row: AuditRecord) {
  const data = row.data as {
    eventId?: unknown;
    type?: unknown;
    outcome?: unknown;
    requestId?: unknown;
    replay?: unknown;
  };
  return {
    eventId: String(data.eventId),
    type: String(data.type),
    outcome: String(data.outcome) as WebhookOutcome,
    projectId: row.projectId,
    at: new Date(row.at).toISOString(),
    requestId: typeof data.requestId === 'string' ? data.requestId : null,
    replay: data.replay === true,
  };
}

export class MoneyDesk {
  constructor(
    private readonly store: Store,
    private readonly billing: BillingService,
  ) {}

  /** Boards whose subscription is past_due or unpaid, most recently overdue first, through the status index. */
  async dunning(page: Page, now: number) {
    const cursor = page.cursor === undefined ? null : decodeCursor(page.cursor);
    const since = (r: BillingRecord) => r.pastDueSince ?? 0;
    const overdue = (await Promise.all(DUNNING.map((status) => this.store.billing.find({ status }))))
      .flat()
      .filter((r) => !cursor || after(cursor, since(r), r._id))
      .sort((a, b) => since(b) - since(a) || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0));
    const rows = overdue.slice(0, page.limit);
    const boards = await Promise.all(
      rows.map(async (record) => {
        const project = await this.store.projects.get(record._id);
        return {
          projectId: record._id,
          name: project?.name ?? null,
          ownerId: project?.ownerId ?? null,
          plan: project?.plan ?? null,
          billingPlan: billingPlan(record, now),
          daysOverdue:
            record.pastDueSince === null ? null : Math.max(0, Math.floor((now - record.pastDueSince) / DAY_MS)),
          ...billingView(record),
        };
      }),
    );
    const last = rows.at(-1);
    return { boards, nextCursor: overdue.length > page.limit && last ? encodeCursor(since(last), last._id) : null };
  }

  /** An account's billing: the boards it owns or pays for, each with its billing record, provider ids and received provider events. */
  async accountBilling(userId: string, now: number) {
    const account = await this.account(userId);
    const [owned, paid] = await Promise.all([
      this.store.projects.find({ ownerId: userId }, { limit: BOARDS_PER_ACCOUNT }),
      this.store.billing.find({ accountId: userId }, { limit: BOARDS_PER_ACCOUNT }),
    ]);
    const ids = [...new Set([...owned.map((p) => p._id), ...paid.map((r) => r._id)])];
    const boards = await Promise.all(
      ids.map(async (projectId) => {
        const project = owned.find((p) => p._id === projectId) ?? (await this.store.projects.get(projectId));
        const record = paid.find((r) => r._id === projectId) ?? (await this.store.billing.get(projectId));
        const events = await this.store.audit.find(
          { projectId, action: 'billing.webhook' },
          { sort: [['at', -1]], limit: EVENTS_PER_BOARD * 2 },
        );
        return {
          projectId,
          name: project?.name ?? null,
          ownerId: project?.ownerId ?? null,
          plan: project?.plan ?? null,
          billingPlan: billingPlan(record, now),
          complimentary: project ? complimentaryView(project, now) : null,
          billing: record ? billingView(record) : null,
          events: events
            .filter((r) => r.data.outcome !== 'pending')
            .slice(0, EVENTS_PER_BOARD)
            .map(eventView),
        };
      }),
    );
    return { account: { id: account._id, email: account.email, deletedAt: iso(account.deletedAt) }, boards };
  }

  /**
   * Re-reads the board's subscription from the provider and settles its record and plan with the
   * reconcile pass's own settlement (src/billing/settle.ts), as a subscription event would.
   */
  async reread(ctx: Ctx, userId: string, input: { projectId: string; reason?: string | undefined }) {
    await this.ownedBoard(userId, input.projectId);
    const { before, after, plan: settled } = await this.billing.reread(input.projectId, ctx.now);
    const plan = settled?.after ?? null;
    await auditOperatorAction(this.store, ctx, {
      action: 'subscription',
      target: `board:${input.projectId}`,
      projectId: input.projectId,
      reason: input.reason ?? null,
      data: {
        userId,
        subscriptionId: after.subscriptionId,
        before: { status: before.status, interval: before.interval },
        after: { status: after.status, interval: after.interval },
        plan,
        planBefore: settled?.before ?? null,
      },
    });
    return { projectId: input.projectId, plan: plan ?? billingPlan(after, ctx.now), billing: billingView(after) };
  }

  /** A complimentary plan until `until`: the board is Pro until then, then its plan is what billing says (the billing sweep ends it). */
  async grantPlan(ctx: Ctx, input: { projectId: string; plan: 'pro'; until: string; reason: string }) {
    const until = Date.parse(input.until);
    if (!(until > ctx.now)) throw new AppError('INVALID_INPUT', 'until must be a time in the future.');
    if (until - ctx.now > MAX_COMPLIMENTARY_MS) throw new AppError('INVALID_INPUT', 'until must be within 366 days.');
    const before = await this.store.projects.get(input.projectId);
    if (!before) throw new AppError('NOT_FOUND', 'No board has that id.');
    const granted = await this.billing.grantPlan(input.projectId, input.plan, until, ctx.now);
    if (!granted) throw new AppError('NOT_FOUND', 'No board has that id.');
    await auditOperatorAction(this.store, ctx, {
      action: 'plan',
      target: `board:${input.projectId}`,
      projectId: input.projectId,
      reason: input.reason,
      data: {
        plan: input.plan,
        until: iso(until),
        replaced: complimentaryView(before, ctx.now),
        planBefore: before.plan,
        planAfter: granted.plan,
      },
    });
    return {
      projectId: input.projectId,
      plan: granted.plan,
      billingPlan: granted.billingPlan,
      complimentary: { plan: input.plan, until: iso(until)! },
    };
  }

  /** Refunds the latest paid invoice of the board's subscription through the provider. */
  async refund(ctx: Ctx, userId: string, input: { projectId: string; reason: string; amount?: number | undefined }) {
    await this.ownedBoard(userId, input.projectId);
    const amount = input.amount ?? null;
    const refund = await this.billing.refund(input.projectId, {
      amount,
      // A retried request (same request id) is one refund at the provider.
      idempotencyKey: `admin-refund:${input.projectId}:${amount ?? 'all'}:${ctx.requestId}`,
      metadata: { operatorId: ctx.identity!.accountId, requestId: ctx.requestId },
    });
    await auditOperatorAction(this.store, ctx, {
      action: 'refund',
      target: `board:${input.projectId}`,
      projectId: input.projectId,
      reason: input.reason,
      data: { userId, requested: amount, ...refund },
    });
    return { projectId: input.projectId, refund };
  }

  /** The provider events received (each delivery's or replay's terminal outcome), newest first, through the audit's actor index. */
  async webhooks(page: Page) {
    const cursor = page.cursor === undefined ? null : decodeCursor(page.cursor);
    const sort = [
      ['at', -1],
      ['_id', -1],
    ] as const;
    // A delivery writes a pending row and a terminal one: twice the page holds a page of terminal rows.
    const take = page.limit * 2 + 2;
    const rows = cursor
      ? [
          ...(await this.store.audit.find(
            { actor: 'provider', at: cursor.at, _id: { $lt: cursor.id } },
            { sort, limit: take },
          )),
          ...(await this.store.audit.find({ actor: 'provider', at: { $lt: cursor.at } }, { sort, limit: take })),
        ].slice(0, take)
      : await this.store.audit.find({ actor: 'provider' }, { sort, limit: take });
    const events: ReturnType<typeof eventView>[] = [];
    let read = 0;
    for (; read < rows.length && events.length < page.limit; read++) {
      const row = rows[read]!;
      if (row.action === 'billing.webhook' && row.data.outcome !== 'pending') events.push(eventView(row));
    }
    const last = rows[read - 1];
    const more = read < rows.length || rows.length === take;
    return { events, nextCursor: more && last ? encodeCursor(last.at, last._id) : null };
  }

  /** Fetches the event from the provider again and applies it once per event id (an event applied before changes nothing). */
  async replay(ctx: Ctx, eventId: string, reason: string | null) {
    if (!EVENT_ID.test(eventId)) throw new AppError('NOT_FOUND', 'No provider event has that id (evt_…).');
    const event = await this.billing.fetchEvent(eventId);
    const target = `event:${eventId}`;
    try {
      const done = await this.billing.replay(event, originOf(ctx), ctx.now);
      await auditOperatorAction(this.store, ctx, {
        action: 'webhook.replay',
        target,
        projectId: done.projectId,
        reason,
        data: { type: done.type, handled: done.handled, outcome: done.outcome },
      });
      return done;
    } catch (e) {
      await auditOperatorAction(this.store, ctx, {
        action: 'webhook.replay',
        target,
        reason,
        data: { type: event.type, outcome: 'failed', code: e instanceof AppError ? e.code : 'INTERNAL' },
      });
      throw e;
    }
  }

  private async account(userId: string) {
    const account = ACCOUNT_ID.test(userId) ? await this.store.accounts.get(userId) : null;
    if (!account) throw new AppError('NOT_FOUND', 'No account has that id.');
    return account;
  }

  /** The board, when the account owns it (an action on one account names it in the path). */
  private async ownedBoard(userId: string, projectId: string): Promise<ProjectRecord> {
    await this.account(userId);
    const project = await this.store.projects.get(projectId);
    if (!project || project.ownerId !== userId)
      throw new AppError('NOT_FOUND', 'This account owns no board with that id.');
    return project;
  }
}
