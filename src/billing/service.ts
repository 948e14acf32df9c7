// Billing rules (DOMAIN.md "Billing"): a project's billing state, and the provider's webhook with
// its signature check, foreign-event refusal, once-per-event effects, no regression by older
// events, and a pending and a terminal audit row for every valid delivery. The operators' money
// actions (src/admin/money.ts) settle through the same paths: an event fetched again from the
// provider, a subscription re-read (the reconcile pass's settlement), a refund, a complimentary
// plan and its end. How an event is applied once, crash-safe: src/billing/apply-event.ts; how a
// checkout is opened: src/billing/checkout.ts; how subscriptions nobody can reach end:
// src/billing/cancel.ts.
import type { Logger } from 'pino';
import { AppError } from '../errors/app-error.js';
import { auditRow, type RequestOrigin } from '../audit-row.js';
import type { PlanName } from '../plans.js';
import { modify, type AuditRecord, type BillingRecord, type Store } from '../../store/ports/store.js';
import { billingPlan, boardPlan, graceEndsAt, type ProPrices } from './plan.js';
import type { BillingSetup, ProviderEvent, Refund } from './provider.js';
import { applyEvent } from './apply-event.js';
import { accountRecords, cancelSubscriptions, endOrphaned } from './cancel.js';
import { openCheckout } from './checkout.js';
import { crashPoint } from './crash-point.js';
import { endedUnread, intervalOf, LIVE, settleFromProvider, settlePlan, type Settled } from './settle.js';

export type { BillingSetup, Prices } from './provider.js';

export interface AccountBilling {
  projectId: string;
  plan: PlanName;
  subscription: {
    status: string;
    interval: 'month' | 'year' | null;
    currentPeriodEnd: string | null;
    cancelAtPeriodEnd: boolean;
    /** past_due: when its grace ends and billing's plan turns Free (plan.ts graceEndsAt); null otherwise. */
    graceEndsAt: string | null;
  } | null;
  providerAvailable: boolean;
  /** Each upgrade with what it charges in US dollars (the provider's price, else REVENUE_PRO_*_USD), null when neither says. */
  upgradeOptions: { plan: 'pro'; interval: 'month' | 'year'; priceUsd: number | null }[];
}

export type WebhookOutcome = 'applied' | 'duplicate' | 'ignored' | 'failed';

/** What processing one provider event came to. */
export interface EventProcessed {
  eventId: string;
  type: string;
  projectId: string | null;
  handled: boolean;
  outcome: WebhookOutcome;
}

const HANDLED = new Set([
  'checkout.session.completed',
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
  'invoice.paid',
  'invoice.payment_failed',
]);
/** Deliveries that cannot start a charge: one about a deleted board has nothing to cancel. */
const ENDING = new Set(['customer.subscription.deleted', 'invoice.payment_failed']);
const UPGRADES = [
  { plan: 'pro', interval: 'month' },
  { plan: 'pro', interval: 'year' },
] as const;

const iso = (t: number | null): string | null => (t === null ? null : new Date(t).toISOString());

/**
 * After a failed interval refresh (or price read), how long reads of that subscription (price)
 * answer without asking the provider again.
 */
export const REFRESH_RETRY_MS = 60_000;
/** Failed refreshes remembered at most (the oldest forgotten first). */
const REFRESH_FAILURES_KEPT = 1_000;

export class BillingService {
  /** When each subscription's interval refresh (each price's read) last failed (a provider away is not asked on every read). */
  private readonly refreshFailed = new Map<string, number>();
  /** What each of our two prices charges in US dollars as the provider answered, by price id: asked once a node. */
  private readonly providerPrices = new Map<string, Promise<number | null>>();

  constructor(
    private readonly store: Store,
    private readonly setup: BillingSetup | null,
    private readonly logger: Pick<Logger, 'warn'>,
    /**
     * Where the rows of changes already made at the provider go: written whatever it takes, once
     * per row id (the node's committedAudit, src/board/committed-audit.ts).
     */
    private readonly committed: (row: AuditRecord) => Promise<void>,
    /** What the Pro prices charge (config.costs), shown with the upgrades when the provider does not say. */
    private readonly prices: ProPrices = { proMonthly: null, proYearly: null },
  ) {}

  get available(): boolean {
    return this.setup !== null;
  }

  /** Whether the interval refresh of `subscriptionId` may ask the provider now (none failed in the last REFRESH_RETRY_MS). */
  private mayRefresh(subscriptionId: string, now: number): boolean {
    const failedAt = this.refreshFailed.get(subscriptionId);
    if (failedAt !== undefined && now - failedAt < REFRESH_RETRY_MS) return false;
    this.refreshFailed.delete(subscriptionId);
    return true;
  }

  private refreshFailedAt(subscriptionId: string, now: number): void {
    if (this.refreshFailed.size >= REFRESH_FAILURES_KEPT)
      this.refreshFailed.delete(this.refreshFailed.keys().next().value!);
    this.refreshFailed.set(subscriptionId, now);
  }

  /**
   * What `priceId` charges in US dollars as the provider says: asked once and kept (a price's amount
   * never changes at the provider), null when it is not a plain amount in dollars. A read that failed
   * answers null, and the price is not asked again for REFRESH_RETRY_MS.
   */
  private async providerPriceUsd(
    provider: BillingSetup['provider'],
    priceId: string,
    now: number,
  ): Promise<number | null> {
    let asked = this.providerPrices.get(priceId);
    if (!asked) {
      if (!this.mayRefresh(priceId, now)) return null;
      asked = provider
        .getPrice(priceId)
        .then((p) => (p.currency === 'usd' && p.unitAmount !== null ? p.unitAmount / 100 : null));
      this.providerPrices.set(priceId, asked);
    }
    try {
      return await asked;
    } catch (e) {
      if (this.providerPrices.get(priceId) === asked) {
        this.providerPrices.delete(priceId);
        this.refreshFailedAt(priceId, now);
        this.logger.warn({ err: e, priceId }, 'billing: the price could not be read; showing the configured one');
      }
      return null;
    }
  }

  /** The setup, or 503 BILLING_UNAVAILABLE. */
  private configured(): BillingSetup {
    if (!this.setup) throw new AppError('BILLING_UNAVAILABLE');
    return this.setup;
  }

  /**
   * GET /api/account/billing: a missing interval is refreshed from the provider when it answers.
   * Only a price never learned is asked for: once the record holds the provider's price, its
   * interval is worked out here (null for a price the service does not name, without asking again
   * on every read); a refresh that failed is not tried again for REFRESH_RETRY_MS. The upgrades show
   * what the provider's prices charge (checkout charges those), read once a node
   * (providerPriceUsd); the configured REVENUE_PRO_*_USD while it does not say.
   */
  async state(projectId: string, now: number): Promise<AccountBilling> {
    let record = await this.store.billing.get(projectId);
    const subscriptionId = record?.subscriptionId;
    if (record && subscriptionId && record.interval === null && this.setup) {
      if (record.priceId !== null) record = { ...record, interval: intervalOf(this.setup.prices, record.priceId) };
      else if (this.mayRefresh(subscriptionId, now)) {
        try {
          const fresh = await this.setup.provider.getSubscription(subscriptionId);
          record =
            (await modify(this.store.billing, projectId, () => ({
              priceId: fresh.priceId,
              interval: intervalOf(this.setup!.prices, fresh.priceId),
            }))) ?? record;
        } catch (e) {
          this.refreshFailedAt(subscriptionId, now);
          this.logger.warn(
            { err: e, projectId },
            'billing: the subscription interval could not be refreshed; answering without it',
          );
        }
      }
    }
    const project = await this.store.projects.get(projectId);
    const [monthly, yearly] = this.setup
      ? await Promise.all(
          [this.setup.prices.monthly, this.setup.prices.yearly].map((id) =>
            this.providerPriceUsd(this.setup!.provider, id, now),
          ),
        )
      : [null, null];
    return {
      projectId,
      plan: boardPlan(project ?? {}, record, now),
      subscription: record?.status
        ? {
            status: record.status,
            interval: record.interval,
            currentPeriodEnd: iso(record.currentPeriodEnd),
            cancelAtPeriodEnd: record.cancelAtPeriodEnd,
            graceEndsAt: iso(graceEndsAt(record)),
          }
        : null,
      providerAvailable: this.available,
      upgradeOptions: UPGRADES.map((u) => ({
        ...u,
        priceUsd: u.interval === 'month' ? (monthly ?? this.prices.proMonthly) : (yearly ?? this.prices.proYearly),
      })),
    };
  }

  /** POST /api/account/billing/checkout (after the budget): src/billing/checkout.ts. */
  checkout(
    projectId: string,
    owner: { id: string; email: string },
    interval: 'month' | 'year',
    returnUrl: string,
  ): Promise<{ url: string }> {
    return openCheckout(this.store, this.configured(), projectId, owner, interval, returnUrl);
  }

  /** POST /api/account/billing/portal (after the budget): only for a project with a provider customer. */
  async portal(projectId: string, returnUrl: string): Promise<{ url: string }> {
    const { provider } = this.configured();
    const record = await this.store.billing.get(projectId);
    if (!record)
      throw new AppError(
        'BILLING_CUSTOMER_REQUIRED',
        'This board never started a subscription; start one with checkout.',
      );
    return provider.createPortalSession({ customerId: record.customerId, returnUrl });
  }

  /** POST /api/account/billing/annual: idempotent move of a live monthly Pro subscription to the yearly price. */
  async annual(projectId: string, now: number): Promise<{ changed: boolean }> {
    const { provider, prices } = this.configured();
    const record = await this.store.billing.get(projectId);
    if (!record?.subscriptionId)
      throw new AppError('BILLING_SUBSCRIPTION_REQUIRED', 'This board has no subscription; start one with checkout.');
    if (billingPlan(record, now) !== 'pro') throw new AppError('BILLING_PRO_REQUIRED', 'This board is not on Pro.');
    if (!record.status || !LIVE.has(record.status))
      throw new AppError(
        'BILLING_SUBSCRIPTION_CONFLICT',
        `The subscription is ${record.status}; settle it in the portal first.`,
      );
    if (record.priceId === prices.yearly) return { changed: false };
    if (record.priceId !== prices.monthly)
      throw new AppError(
        'BILLING_INTERVAL_UNSUPPORTED',
        'The subscription is on a price this service does not offer; change it in the portal.',
      );
    await provider.changePrice(record.subscriptionId, prices.yearly);
    // The provider accepted the move; its subscription.updated event confirms it later.
    await modify(this.store.billing, projectId, () => ({ priceId: prices.yearly, interval: 'year' as const }));
    return { changed: true };
  }

  /**
   * Before an account is deleted: its boards' open checkout sessions are expired and the live
   * subscriptions it pays for end (a provider that cannot be reached stops the deletion), those of
   * boards it deleted before included (src/billing/cancel.ts).
   */
  async cancelLiveSubscriptions(accountId: string, now: number): Promise<void> {
    await cancelSubscriptions(this.store, this.setup, await accountRecords(this.store, accountId), now);
  }

  /**
   * Before a board is deleted: its open checkout session is expired and its live subscriptions end at
   * the provider (one that cannot be reached stops the deletion).
   */
  async cancelBoardSubscription(projectId: string, now: number): Promise<void> {
    await cancelSubscriptions(this.store, this.setup, [await this.store.billing.get(projectId)], now);
  }

  /**
   * POST /api/billing/webhook. The signature is checked over the raw body before anything is
   * written; then a pending audit row, the effect (once per event id), and the terminal row.
   * A crash after any of these is healed by the provider's redelivery or the reconcile pass.
   */
  async webhook(
    raw: Buffer,
    signature: string | undefined,
    origin: RequestOrigin,
    now: number,
  ): Promise<{ received: true; handled: boolean }> {
    const event = this.configured().provider.verifyEvent(raw, signature);
    try {
      const { handled } = await this.process(event, origin, now, false);
      return { received: true, handled };
    } catch (e) {
      // The provider away while a deleted board's subscription is cancelled: the delivery failed
      // (500, the provider delivers it again), never a provider error of the provider's own call.
      if (e instanceof AppError && e.status === 502) throw new AppError('INTERNAL', undefined, undefined, undefined, e);
      throw e;
    }
  }

  /**
   * An event as the provider holds it now (an operator's replay): fetched over the provider's
   * authenticated API rather than verified by a signature. Nothing is written here, so a provider
   * that cannot be reached (502 PROVIDER_UNAVAILABLE) changes nothing.
   */
  async fetchEvent(eventId: string): Promise<ProviderEvent> {
    const event = await this.configured().provider.getEvent(eventId);
    if (event.id !== eventId)
      throw new AppError(
        'PROVIDER_RESPONSE_INVALID',
        'The provider answered with another event than the one asked for.',
      );
    return event;
  }

  /** Applies a fetched event as a delivery would be, once per event id: replaying an event already applied changes nothing. */
  replay(event: ProviderEvent, origin: RequestOrigin, now: number): Promise<EventProcessed> {
    return this.process(event, origin, now, true);
  }

  /** A pending audit row, the effect (once per event id), and the terminal row; a foreign event is refused after its rows. */
  private async process(
    event: ProviderEvent,
    origin: RequestOrigin,
    now: number,
    replay: boolean,
  ): Promise<EventProcessed> {
    const handled = HANDLED.has(event.type);
    // Reading which project the event is about changes nothing; a foreign one is refused after its rows.
    const target = handled ? await this.projectOf(event).catch((e: unknown) => e as Error) : null;
    const projectId = target instanceof Error ? null : (target?._id ?? null);
    await this.audit(event, projectId, 'pending', origin, now, replay);
    crashPoint('webhook:after-pending');
    let outcome: WebhookOutcome = 'failed';
    try {
      if (!handled) outcome = 'ignored';
      else {
        if (target instanceof Error) throw target;
        const applied = await applyEvent(this.store, this.setup?.prices ?? null, event, target!._id, now);
        if (!ENDING.has(event.type))
          await endOrphaned(this.store, this.setup, target!._id, origin, now, this.committed);
        outcome = applied;
      }
    } finally {
      await this.audit(event, projectId, outcome, origin, now, replay);
    }
    if (projectId && outcome !== 'ignored') await this.followCharging(event, projectId, now);
    return { eventId: event.id, type: event.type, projectId, handled, outcome };
  }

  /**
   * After an event that ended the subscription the record follows, another of the customer's may
   * still charge (two checkouts completed before either was paid): the provider is asked, and the
   * record follows a charging one if there is one (settleFromProvider). A provider that cannot
   * answer leaves it to the reconcile pass, which re-reads an ended record not re-read since.
   */
  private async followCharging(event: ProviderEvent, projectId: string, now: number): Promise<void> {
    if (!this.setup || !event.type.startsWith('customer.subscription.')) return;
    const record = await this.store.billing.get(projectId);
    if (!record || record.subscriptionId !== event.object.id || !endedUnread(record)) return;
    try {
      await settleFromProvider(this.store, this.setup, projectId, now);
    } catch (e) {
      this.logger.warn(
        { err: e, projectId },
        'billing: the customer’s other subscriptions could not be read after one ended; the reconcile pass tries again',
      );
    }
  }

  /**
   * An operator's re-read: the project's subscription as the provider holds it now, settled as the
   * reconcile pass settles it (src/billing/settle.ts): the record, then the board's plan. The
   * provider is asked before anything is written; a subscription of another customer than the
   * board's is refused.
   */
  async reread(projectId: string, now: number): Promise<Settled> {
    return settleFromProvider(this.store, this.configured(), projectId, now);
  }

  /** Refunds the latest paid invoice of the project's subscription through the provider (all of it, or `amount` in the smallest currency unit). */
  async refund(
    projectId: string,
    input: { amount: number | null; idempotencyKey: string; metadata: Record<string, string> },
  ): Promise<Refund> {
    const { provider } = this.configured();
    const record = await this.store.billing.get(projectId);
    if (!record?.subscriptionId)
      throw new AppError('BILLING_SUBSCRIPTION_REQUIRED', 'This board has no subscription, so no invoice to refund.');
    return provider.refundLatestInvoice({
      subscriptionId: record.subscriptionId,
      amount: input.amount,
      idempotencyKey: input.idempotencyKey,
      metadata: { ...input.metadata, projectId },
    });
  }

  /** Grants a complimentary plan until `until` (replacing one in force); the board's plan is settled with it. */
  async grantPlan(
    projectId: string,
    plan: 'pro',
    until: number,
    now: number,
  ): Promise<{ plan: 'free' | 'pro'; billingPlan: 'free' | 'pro' } | null> {
    const settled = await settlePlan(this.store, projectId, now, () => ({ compPlan: plan, compUntil: until }));
    return settled && { plan: settled.after, billingPlan: settled.billing };
  }

  /**
   * Complimentary plans whose end has come: each board's plan falls back to what its billing
   * says (found through the compUntil index, never by reading every board).
   */
  async endComplimentary(now: number): Promise<string[]> {
    const ended = await this.store.projects.select({ compUntil: { $gte: 1, $lte: now } }, ['compUntil']);
    for (const { _id } of ended) {
      await settlePlan(this.store, _id, now, (project) =>
        typeof project.compUntil === 'number' && project.compUntil <= now ? { compPlan: null, compUntil: null } : null,
      );
    }
    return ended.map((p) => p._id);
  }

  /** The periodic settlement: lapsed past_due grace and ended complimentary plans. */
  async sweep(now: number): Promise<{ lapsed: number; complimentaryEnded: string[] }> {
    const complimentaryEnded = await this.endComplimentary(now);
    return { lapsed: await this.settleLapsedGrace(now), complimentaryEnded };
  }

  /** The billing record the event is about; a customer of none of our projects, or a projectId that disagrees, is foreign. */
  private async projectOf(event: ProviderEvent): Promise<BillingRecord> {
    const o = event.object;
    const customer = typeof o.customer === 'string' ? o.customer : (o.customer as { id?: unknown } | null)?.id;
    const metadataProject = ((o.metadata ?? {}) as { projectId?: unknown }).projectId;
    const claimed =
      typeof o.client_reference_id === 'string'
        ? o.client_reference_id
        : typeof metadataProject === 'string'
          ? metadataProject
          : null;
    const record = typeof customer === 'string' ? await this.store.billing.findOne({ customerId: customer }) : null;
    if (!record || (claimed !== null && claimed !== record._id)) {
      throw new AppError(
        'PROVIDER_EVENT_ACCOUNT_MISMATCH',
        'The event’s customer is attached to none of this service’s projects, or names another project.',
      );
    }
    return record;
  }

  /**
   * Boards whose past_due grace ran out since their last event turn Free: no provider event
   * marks that moment, so a periodic sweep settles them (through the status index).
   */
  async settleLapsedGrace(now: number): Promise<number> {
    const lapsed = (await this.store.billing.find({ status: 'past_due' })).filter(
      (r) => billingPlan(r, now) === 'free',
    );
    for (const record of lapsed) await settlePlan(this.store, record._id, now);
    return lapsed.length;
  }

  private async audit(
    event: ProviderEvent,
    projectId: string | null,
    outcome: 'pending' | WebhookOutcome,
    origin: RequestOrigin,
    now: number,
    replay: boolean,
  ): Promise<void> {
    await this.store.audit.insert(
      auditRow({
        at: now,
        actor: 'provider',
        action: 'billing.webhook',
        projectId,
        origin,
        data: { eventId: event.id, type: event.type, outcome, ...(replay && { replay: true }) },
      }),
    );
  }
}
