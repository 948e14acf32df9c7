// The reconcile pass: billing records whose state could be stale are re-read from the provider
// and settled from its answer (src/billing/settle.ts, as the operators' re-read is), so a lost or
// half-applied webhook never leaves a board on another plan than its subscription, nor a deleted
// board a subscription that charges for it (src/billing/cancel.ts endOrphaned). It runs at
// start and every BILLING_RECONCILE_INTERVAL_SECONDS, with at most BILLING_RECONCILE_MAX_CALLS
// provider calls a pass; what it did is logged and counted (src/billing/reconcile-metrics.ts).
import type { Logger } from 'pino';
import { AppError } from '../errors/app-error.js';
import { DAY_MS } from '../plans.js';
import { modify, type AuditRecord, type Store } from '../../store/ports/store.js';
import { endOrphaned } from './cancel.js';
import type { BillingSetup } from './provider.js';
import { ENDED, endedUnread, LIVE, markReconciled, settleFromProvider, settlePlan } from './settle.js';

/** How far back deliveries are looked at: Stripe retries a delivery for three days. */
const RECENT_DELIVERIES_MS = 3 * DAY_MS;
/** At most this many of the provider's newest audit rows are read a pass. */
const DELIVERY_ROWS_READ = 10_000;
/** A period ending within this is re-read once before it ends, and once more after. */
const PERIOD_ENDING_MS = DAY_MS;
/** A checkout session can be paid until it expires, at most a day after it was opened (Stripe's bound). */
const CHECKOUT_PAYABLE_MS = DAY_MS;
/** Boards whose existence is asked in one read. */
const BOARDS_READ = 500;
/** Statuses waiting on a payment: whatever the provider settled since, an event may have been lost. */
const PAYMENT_PENDING = ['past_due', 'unpaid', 'incomplete'] as const;
/** The terminal outcomes that settled a delivery (a `failed` one did not). */
const SETTLED = new Set(['applied', 'duplicate', 'ignored']);
/** Answers after which a record is marked re-read: asking again would get the same one. */
const MARKED = new Set([
  'BILLING_SUBSCRIPTION_REQUIRED',
  'BILLING_CUSTOMER_CONFLICT',
  'PROVIDER_REQUEST_FAILED',
  'PROVIDER_RESPONSE_INVALID',
]);

/**
 * Why a record is re-read, in the order a bounded pass takes them. A board gone comes last: every
 * board deleted before this pass existed is found gone at once, and must not hold up the others.
 */
type Reason = 'event' | 'ended' | 'period' | 'payment' | 'gone';
const PRIORITY: Record<Reason, number> = { event: 0, ended: 1, period: 2, payment: 3, gone: 4 };

interface Candidate {
  projectId: string;
  reason: Reason;
  reconciledAt: number;
}

/** What one pass did. */
export interface ReconcileCounts {
  /** Records whose state could be stale. */
  candidates: number;
  /** Provider calls made (one per record re-read; two for one whose subscription ended, its customer's listed). */
  reread: number;
  /** Records the provider's answer changed. */
  changed: number;
  /** Boards whose plan changed with it. */
  planChanged: number;
  /** Subscriptions the provider holds under another customer or board: left for a person. */
  conflicts: number;
  /** Re-reads that failed (the provider unreachable, or refusing). */
  failed: number;
  /** Candidates left for the next pass: over the bound, or after the provider stopped answering. */
  deferred: number;
}

export interface ReconcileSettings {
  /** 0: no pass at all (neither at start nor on a schedule). */
  intervalMs: number;
  maxCalls: number;
}

const zero = (): ReconcileCounts => ({
  candidates: 0,
  reread: 0,
  changed: 0,
  planChanged: 0,
  conflicts: 0,
  failed: 0,
  deferred: 0,
});

export class BillingReconciler {
  /** Every pass's counts added up, and the passes made (for /metrics). */
  readonly totals: ReconcileCounts & { passes: number } = { ...zero(), passes: 0 };
  private running: Promise<ReconcileCounts> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly setup: BillingSetup | null,
    private readonly logger: Pick<Logger, 'info' | 'warn' | 'debug'>,
    private readonly settings: ReconcileSettings,
    /** Where the rows of subscriptions it cancelled for a deleted board go (the node's committedAudit). */
    private readonly committed: (row: AuditRecord) => Promise<void>,
  ) {}

  /** Runs a pass now and then every interval (nothing without billing configured, or with an interval of 0). */
  start(clock: () => number): void {
    if (!this.setup || this.settings.intervalMs === 0) return;
    const run = () =>
      void this.pass(clock()).catch((e: unknown) =>
        this.logger.warn({ err: e }, 'billing: the reconcile pass failed; retried at the next one'),
      );
    run();
    this.timer = setInterval(run, this.settings.intervalMs);
    this.timer.unref();
  }

  /** Stops the schedule and waits for a pass under way (it makes no further provider call). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** One pass at `now`; a pass already under way is shared rather than doubled. */
  pass(now: number): Promise<ReconcileCounts> {
    this.running ??= this.run(now).finally(() => (this.running = null));
    return this.running;
  }

  private async run(now: number): Promise<ReconcileCounts> {
    const counts = zero();
    if (!this.setup) return counts;
    const due = await this.candidates(now);
    counts.candidates = due.length;
    let taken = 0;
    while (taken < due.length && counts.reread < this.settings.maxCalls && !this.stopped) {
      if (!(await this.settle(this.setup, due[taken++]!, now, counts))) break;
    }
    counts.deferred += due.length - taken;
    this.totals.passes++;
    for (const k of Object.keys(counts) as (keyof ReconcileCounts)[]) this.totals[k] += counts[k];
    const quiet = counts.candidates === 0;
    this.logger[quiet ? 'debug' : 'info']({ ...counts, maxCalls: this.settings.maxCalls }, 'billing: reconcile pass');
    return counts;
  }

  /** Re-reads one record and settles it; false when the provider cannot be reached (the pass stops there). */
  private async settle(setup: BillingSetup, c: Candidate, now: number, counts: ReconcileCounts): Promise<boolean> {
    counts.reread++;
    try {
      if (c.reason === 'gone') {
        await this.endGone(setup, c.projectId, now, counts);
        return true;
      }
      const settled = await settleFromProvider(this.store, setup, c.projectId, now);
      counts.reread += settled.calls - 1;
      const planChanged = settled.plan !== null && settled.plan.before !== settled.plan.after;
      if (settled.changed) counts.changed++;
      if (planChanged) counts.planChanged++;
      if (settled.changed || planChanged) {
        this.logger.info(
          {
            projectId: c.projectId,
            reason: c.reason,
            status: { before: settled.before.status, after: settled.after.status },
            plan: settled.plan,
          },
          'billing: reconcile settled a board from the provider',
        );
      }
      return true;
    } catch (e) {
      const code = e instanceof AppError ? e.code : 'INTERNAL';
      if (code === 'PROVIDER_UNAVAILABLE') {
        counts.failed++;
        counts.deferred++;
        this.logger.warn(
          { projectId: c.projectId },
          'billing: reconcile could not reach the provider; the rest waits for the next pass',
        );
        return false;
      }
      if (code === 'BILLING_CUSTOMER_CONFLICT') counts.conflicts++;
      else if (code !== 'BILLING_SUBSCRIPTION_REQUIRED') counts.failed++;
      if (code !== 'BILLING_SUBSCRIPTION_REQUIRED')
        this.logger.warn(
          { err: e, projectId: c.projectId, reason: c.reason, code },
          'billing: reconcile could not settle a board from the provider',
        );
      // The provider's answer stands (no subscription: the board is what its record says), or a
      // person must look (a conflict, a refusal): marked, so later passes do not ask again until
      // something new happens. Anything else (the store failing) is tried again next pass.
      if (!MARKED.has(code)) return true;
      if (c.reason === 'gone') await this.listedGone(c.projectId, now);
      else if (await this.store.billing.get(c.projectId)) {
        await markReconciled(this.store, c.projectId, now);
        await settlePlan(this.store, c.projectId, now);
      }
      return true;
    }
  }

  /**
   * A deleted board's customer listed: every subscription still charging for the board is cancelled
   * with its audit row (endOrphaned, as a delivery naming the deleted board does), then the listing
   * is noted on the record.
   */
  private async endGone(setup: BillingSetup, projectId: string, now: number, counts: ReconcileCounts): Promise<void> {
    const cancelled = await endOrphaned(this.store, setup, projectId, null, now, this.committed);
    counts.reread += cancelled.length;
    if (cancelled.length > 0) {
      counts.changed++;
      this.logger.info(
        { projectId, subscriptions: cancelled },
        'billing: reconcile cancelled subscriptions charging for a deleted board',
      );
    }
    await this.listedGone(projectId, now);
  }

  private async listedGone(projectId: string, now: number): Promise<void> {
    await modify(this.store.billing, projectId, (r) => ({
      boardGone: { since: r.boardGone?.since ?? now, listedAt: now },
    }));
  }

  /** The records whose state could be stale, the most urgent and least recently re-read first. */
  private async candidates(now: number): Promise<Candidate[]> {
    const due = new Map<string, Candidate>();
    const add = (c: Candidate) => {
      const held = due.get(c.projectId);
      if (!held || PRIORITY[c.reason] < PRIORITY[held.reason]) due.set(c.projectId, c);
    };
    for (const [projectId, seenAt] of await this.unsettledDeliveries(now)) {
      const record = await this.store.billing.get(projectId);
      const reconciledAt = record?.reconciledAt ?? 0;
      if (record && reconciledAt < seenAt) add({ projectId, reason: 'event', reconciledAt });
    }
    // Ended and not re-read since: another subscription of the customer's may still charge.
    for (const status of ENDED) {
      for (const r of await this.store.billing.select({ status }, ['changedAt', 'reconciledAt'])) {
        if (endedUnread({ status, ...r }))
          add({ projectId: r._id, reason: 'ended', reconciledAt: r.reconciledAt ?? 0 });
      }
    }
    for (const status of LIVE) {
      for (const r of await this.store.billing.select({ status }, ['currentPeriodEnd', 'reconciledAt'])) {
        if (periodDue(r.currentPeriodEnd, r.reconciledAt ?? 0, now))
          add({ projectId: r._id, reason: 'period', reconciledAt: r.reconciledAt ?? 0 });
      }
    }
    // Re-read at most about twice an interval, so several nodes' passes do not each ask again.
    const recheck = now - this.settings.intervalMs / 2;
    for (const status of PAYMENT_PENDING) {
      for (const r of await this.store.billing.select({ status }, ['reconciledAt'])) {
        if ((r.reconciledAt ?? 0) <= recheck)
          add({ projectId: r._id, reason: 'payment', reconciledAt: r.reconciledAt ?? 0 });
      }
    }
    // A board gone has its customer listed first (what charges for it ends); its record's own
    // re-read, if due, waits for the next pass.
    for (const c of await this.gone(now)) due.set(c.projectId, c);
    return [...due.values()].sort((a, b) => PRIORITY[a.reason] - PRIORITY[b.reason] || a.reconciledAt - b.reconciledAt);
  }

  /**
   * Records whose board is gone, due a listing of their customer's subscriptions: a checkout paid
   * after the deletion (a session opened as the board was deleted, or paid as it was expired)
   * whose deliveries never came made a subscription nothing else would end. Listed when a pass
   * first finds the board gone, and once more when no session opened before can still be paid;
   * never after. Boards are asked for only while not known gone.
   */
  private async gone(now: number): Promise<Candidate[]> {
    const records = await this.store.billing.select({}, ['boardGone']);
    const unknown = records.filter((r) => !r.boardGone).map((r) => r._id);
    const standing = new Set<string>();
    for (let i = 0; i < unknown.length; i += BOARDS_READ) {
      const ids = unknown.slice(i, i + BOARDS_READ);
      for (const p of await this.store.projects.select({ _id: { $in: ids } }, ['plan'])) standing.add(p._id);
    }
    return records
      .filter((r) => (r.boardGone ? goneDue(r.boardGone, now) : !standing.has(r._id)))
      .map((r) => ({ projectId: r._id, reason: 'gone' as const, reconciledAt: r.boardGone?.listedAt ?? 0 }));
  }

  /**
   * Boards with a recent delivery seen (its pending audit row) and not settled (no applied,
   * duplicate or ignored row after it: the process died, or the delivery failed), each with
   * when the latest such delivery was seen.
   */
  private async unsettledDeliveries(now: number): Promise<Map<string, number>> {
    const rows = await this.store.audit.select(
      { actor: 'provider', at: { $gte: now - RECENT_DELIVERIES_MS } },
      ['action', 'projectId', 'data', 'at'],
      { sort: [['at', -1]], limit: DELIVERY_ROWS_READ },
    );
    const open = new Map<string, { projectId: string; open: number; seenAt: number }>();
    for (const row of rows) {
      if (row.action !== 'billing.webhook' || !row.projectId) continue;
      const key = `${row.projectId}\n${String(row.data.eventId)}`;
      const tally = open.get(key) ?? { projectId: row.projectId, open: 0, seenAt: 0 };
      if (row.data.outcome === 'pending') {
        tally.open++;
        tally.seenAt = Math.max(tally.seenAt, row.at);
      } else if (SETTLED.has(String(row.data.outcome))) tally.open--;
      open.set(key, tally);
    }
    const boards = new Map<string, number>();
    for (const t of open.values())
      if (t.open > 0) boards.set(t.projectId, Math.max(boards.get(t.projectId) ?? 0, t.seenAt));
    return boards;
  }
}

/** Whether a deleted board's customer is due its last listing: every session opened before it was found gone has expired. */
function goneDue(gone: { since: number; listedAt: number }, now: number): boolean {
  const payable = gone.since + CHECKOUT_PAYABLE_MS;
  return gone.listedAt < payable && now >= payable;
}

/**
 * A live period is re-read once when it comes within a day of its end (a cancellation or a
 * renewal whose event was lost) and once after it ended; the re-read moves the period end on
 * when the provider renewed it.
 */
function periodDue(periodEnd: number | null, reconciledAt: number, now: number): boolean {
  if (periodEnd === null || now < periodEnd - PERIOD_ENDING_MS) return false;
  return reconciledAt < (now >= periodEnd ? periodEnd : periodEnd - PERIOD_ENDING_MS);
}
