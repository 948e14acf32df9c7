// The node's chores on timers: billing's sweep and reconcile passes, the sweep of anonymous
// accounts left unclaimed, the purge of deleted accounts, the boards of imports cut short, and
// retention. Every node runs them (each is harmless twice); a failure is logged and the chore runs
// again on its next round.
import type { Logger } from 'pino';
import type { Store } from '../../store/ports/store.js';
import { sweepAnonymous, type SweepResult } from '../accounts/anonymous.js';
import { AccountDeletion, type Swept } from '../admin/deletion.js';
import { sweepImports } from '../admin/import.js';
import type { RevokedNotice } from '../auth/access-notices.js';
import type { BillingReconciler, ReconcileCounts } from '../billing/reconcile.js';
import type { BillingService } from '../billing/service.js';
import { schedulePurges, type Purged } from '../board/retention.js';

/** How often boards whose past_due grace ran out are turned Free, and complimentary plans that ended fall back to billing's. */
const BILLING_SWEEP_MS = 60_000;

/** How often anonymous accounts past their 7 days are deleted (and expired codes and nonces). */
const ANONYMOUS_SWEEP_MS = 3_600_000;

/** How often deleted accounts past their 30 days are purged. */
const DELETED_SWEEP_MS = 3_600_000;

/** How often the boards of imports cut short are removed. */
const IMPORTS_SWEEP_MS = 3_600_000;

export interface HousekeepingDeps {
  store: Store;
  clock: () => number;
  logger: Logger;
  billing: BillingService;
  reconciler: BillingReconciler;
  /** Told what the anonymous sweep deleted, so every node closes those accounts' and boards' sockets. */
  deleted: (swept: { accounts: readonly string[]; boards: readonly string[] }) => void;
  /** Tells every node what the purge of deleted accounts closes (AccountDeletion's notices). */
  revoke: (notice: RevokedNotice) => void;
  /** Told of each retention round, for the operators' figures. */
  purged: (purged: Purged | null, error?: unknown) => void;
}

/** Runs each chore now, at the node's clock (tests), and stops them all. */
export interface Housekeeping {
  sweepAnonymous(): Promise<SweepResult>;
  sweepDeleted(): Promise<Swept>;
  sweepImports(): Promise<string[]>;
  sweepBilling(): Promise<{ lapsed: number; complimentaryEnded: string[] }>;
  reconcileBilling(): Promise<ReconcileCounts>;
  stop(): Promise<void>;
}

export function startHousekeeping(deps: HousekeepingDeps): Housekeeping {
  const { store, clock, logger, billing, reconciler } = deps;
  const deletion = new AccountDeletion(store, (accountId, now) => billing.cancelLiveSubscriptions(accountId, now));

  const sweepAnonymousNow = async (): Promise<SweepResult> => {
    const swept = await sweepAnonymous(store, clock());
    deps.deleted(swept);
    if (swept.accounts.length)
      logger.info(
        { accounts: swept.accounts.length, boards: swept.boards.length },
        'onboarding: deleted anonymous accounts left unclaimed',
      );
    return swept;
  };
  const sweepDeletedNow = async (): Promise<Swept> => {
    const swept = await deletion.sweep(clock());
    for (const notice of swept.notices) deps.revoke(notice);
    if (swept.accounts.length)
      logger.info(
        { accounts: swept.accounts.length, boards: swept.boards.length },
        'accounts: purged deleted accounts past their 30 days',
      );
    return swept;
  };

  const sweepImportsNow = async (): Promise<string[]> => {
    const swept = await sweepImports(store, clock());
    if (swept.length) logger.info({ boards: swept.length }, 'data: removed the boards of imports cut short');
    return swept;
  };

  const timers = [
    every(BILLING_SWEEP_MS, () => billing.sweep(clock()), logger, {
      what: 'billing: the sweep (past_due grace, complimentary plans) failed',
      next: 'retried next minute',
    }),
    every(ANONYMOUS_SWEEP_MS, sweepAnonymousNow, logger, {
      what: 'onboarding: the anonymous-account sweep failed',
      next: 'retried next hour',
    }),
    every(DELETED_SWEEP_MS, sweepDeletedNow, logger, {
      what: 'accounts: the purge of deleted accounts failed',
      next: 'retried next hour',
    }),
    every(IMPORTS_SWEEP_MS, sweepImportsNow, logger, {
      what: 'data: the sweep of imports cut short failed',
      next: 'retried next hour',
    }),
  ];
  reconciler.start(clock);
  const stopPurges = schedulePurges(store, clock, (purged, error) => {
    deps.purged(purged, error);
    if (error) logger.warn({ err: error }, 'retention: purge failed, retried on the next round');
    else if (purged && Object.values(purged).some((n) => n > 0))
      logger.info({ purged }, 'retention: purged what aged out');
  });

  return {
    sweepAnonymous: sweepAnonymousNow,
    sweepDeleted: sweepDeletedNow,
    sweepImports: sweepImportsNow,
    sweepBilling: () => billing.sweep(clock()),
    reconcileBilling: () => reconciler.pass(clock()),
    async stop() {
      for (const timer of timers) clearInterval(timer);
      stopPurges();
      await reconciler.stop();
    },
  };
}

/** Runs `chore` every `ms` (not keeping the process up), logging a failure with what it was and when it runs next. */
function every(
  ms: number,
  chore: () => Promise<unknown>,
  logger: Logger,
  failure: { what: string; next: string },
): NodeJS.Timeout {
  const timer = setInterval(
    () => void chore().catch((e: unknown) => logger.warn({ err: e }, `${failure.what}; ${failure.next}`)),
    ms,
  );
  return timer.unref();
}
