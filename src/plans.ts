// Plan numbers in one place (DOMAIN.md "Plans"); nothing else hard-codes them.

export type PlanName = 'free' | 'pro';

export interface Plan {
  name: PlanName;
  boardsPerAccount: number;
  verificationIncluded: boolean;
  historyRetentionDays: number;
  rewind: boolean;
  requestsPerMinute: number;
  writesPerMinute: number;
}

export const PLANS: Record<PlanName, Plan> = {
  free: {
    name: 'free',
    boardsPerAccount: 3,
    verificationIncluded: true,
    historyRetentionDays: 7,
    rewind: false,
    requestsPerMinute: 600,
    writesPerMinute: 120,
  },
  pro: {
    name: 'pro',
    boardsPerAccount: 100,
    verificationIncluded: true,
    historyRetentionDays: 180,
    rewind: true,
    requestsPerMinute: 6000,
    writesPerMinute: 1200,
  },
};

/** The board budgets' fixed window. */
export const BOARD_WINDOW_MS = 60_000;

/** Per socket address, for signup, login, change-password and change-email (limit: the default of ADDRESS_RATE_PER_MINUTE). */
export const ADDRESS_BUDGET = { limit: 30, windowMs: 60_000 } as const;

/** Per operator (DOMAIN.md "Operators"): their own budget, apart from every board's. */
export const OPERATOR_BUDGET = { limit: 600, windowMs: 60_000 } as const;

/**
 * Per socket address, for polling without a credential (the device flow's poll): its own budget,
 * this many times the address budget, so agents behind one address can each poll every 5 s.
 */
export const POLL_BUDGET_FACTOR = 4;

export const DAY_MS = 86_400_000;

/**
 * Restore points a plan without rewind still keeps (DOMAIN.md "Restore points and rewind"): its
 * newest `kept` of the last `withinMs`, so a board upgraded after a mishap can be restored; before
 * a move, at most one every `everyMs` (a burst of batches keeps the point before the burst), so a
 * large Free board does not copy itself whole on every batch.
 */
export const FREE_POINTS = { kept: 20, withinMs: DAY_MS, everyMs: 60_000 } as const;

/** The oldest time a board on `plan` still keeps history from (events, shouts, presence, audit). */
export const historySince = (plan: PlanName, now: number): number => now - PLANS[plan].historyRetentionDays * DAY_MS;
