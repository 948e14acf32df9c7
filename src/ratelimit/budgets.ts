// The rate stage: which budgets a request draws on, and the nine X-RateLimit-* headers.
import { AppError } from '../errors/app-error.js';
import { ERRORS } from '../errors/registry.js';
import type { Identity } from '../auth/identity.js';
import type { RateClass } from '../request-context.js';
import {
  ADDRESS_BUDGET,
  BOARD_WINDOW_MS,
  OPERATOR_BUDGET,
  PLANS,
  POLL_BUDGET_FACTOR,
  type PlanName,
} from '../plans.js';
import type { Budget, Drawn, RateLimiter, WindowSpec } from './limiter.js';
import { addressKey } from './address-key.js';
import { andThen, type Maybe } from '../../store/ports/maybe.js';

export interface RateOutcome {
  headers: Record<string, string>;
  /** Set when a budget the request draws on is spent: it is refused, 429 RATE_LIMITED. */
  denied?: RateDenial;
}

/** Seconds until the budget's window resets, at least one. */
const retryAfterOf = (b: Budget, now: number): number => Math.max(1, b.resetAt - Math.floor(now / 1000));

/**
 * What a spent budget refuses a request with: RATE_LIMITED, its details and headers (the nine
 * when the budget has them, and Retry-After), as the AppError `error()` makes. Not itself an
 * Error: the pipeline answers with it as it is, neither thrown nor traced. Under a flood the
 * refusals are the load, and an AppError thrown for each (a stack captured, a throw unwound
 * through the stages) cost more than all the rest of the refusal.
 */
export class RateDenial {
  readonly code = 'RATE_LIMITED' as const;
  readonly status = ERRORS.RATE_LIMITED.status;
  readonly message = ERRORS.RATE_LIMITED.meaning;
  readonly details: { limit: number; resetAt: number };
  readonly headers: Record<string, string>;
  /** A board budget's: its headers are the nine as the draw that refused it left them. */
  readonly ownsRateHeaders: boolean;

  /** `headers`: the budget's own (the nine, or none), Retry-After is added to them. */
  constructor(b: Budget, headers: Record<string, string>, now: number) {
    this.details = { limit: b.limit, resetAt: b.resetAt };
    this.ownsRateHeaders = headers['X-RateLimit-Limit'] !== undefined;
    headers['Retry-After'] = String(retryAfterOf(b, now));
    this.headers = headers;
  }

  /** The refusal as the AppError a caller that throws refusals gets. */
  error(): AppError {
    return new AppError(this.code, undefined, this.details, this.headers);
  }
}

const NONE: RateOutcome = { headers: {} };

/** The nine headers, their names written out (no name is built per request). */
const nineHeaders = (request: Budget, write: Budget, general: Budget): Record<string, string> => ({
  'X-RateLimit-Limit': String(general.limit),
  'X-RateLimit-Remaining': String(general.remaining),
  'X-RateLimit-Reset': String(general.resetAt),
  'X-RateLimit-Request-Limit': String(request.limit),
  'X-RateLimit-Request-Remaining': String(request.remaining),
  'X-RateLimit-Request-Reset': String(request.resetAt),
  'X-RateLimit-Write-Limit': String(write.limit),
  'X-RateLimit-Write-Remaining': String(write.remaining),
  'X-RateLimit-Write-Reset': String(write.resetAt),
});

/** A principal's request and write budgets under a plan and scale, kept for its next request (up to BOARD_SPECS_KEPT principals; the oldest made goes first). */
const boardSpecs = new Map<string, { plan: PlanName; scale: number; specs: readonly [WindowSpec, WindowSpec] }>();
const BOARD_SPECS_KEPT = 10_000;

function boardSpecsOf(principal: string, planName: PlanName, scale: number): readonly [WindowSpec, WindowSpec] {
  const kept = boardSpecs.get(principal);
  if (kept && kept.plan === planName && kept.scale === scale) return kept.specs;
  const plan = PLANS[planName];
  const specs = [
    { key: `req:${principal}`, limit: plan.requestsPerMinute * scale, windowMs: BOARD_WINDOW_MS },
    { key: `write:${principal}`, limit: plan.writesPerMinute * scale, windowMs: BOARD_WINDOW_MS },
  ] as const;
  boardSpecs.delete(principal);
  boardSpecs.set(principal, { plan: planName, scale, specs });
  if (boardSpecs.size > BOARD_SPECS_KEPT) boardSpecs.delete(boardSpecs.keys().next().value!);
  return specs;
}

/**
 * Sign-ups and sign-ins naming an email of an allowlisted domain draw on the email's budget, and
 * on this many times the address budget per address: whoever sends them names the email, and each
 * costs a password hash, so a listed domain never turns the address budget off for anyone.
 */
export const DOMAIN_BUDGET_FACTOR = 10;

export interface RateStageInput {
  rate: RateClass;
  identity: Identity | null;
  remoteAddress: string;
  /** The email a sign-up or sign-in names (routes marked budgetsEmail): a listed domain's draws on its own budget. */
  email?: string | undefined;
  plan: PlanName;
  addressLimit: number;
  /** Multiplies the plan's budgets (BOARD_RATE_SCALE). */
  scale: number;
  now: number;
}

/**
 * Consumes what the request class draws on; throws RATE_LIMITED (with headers) when denied. The
 * board budgets are answered now when the limiter counts here.
 */
export function applyRateBudget(limiter: RateLimiter, input: RateStageInput): Maybe<RateOutcome> {
  return andThen(drawRateBudget(limiter, input), (outcome) => {
    if (outcome.denied) throw outcome.denied.error();
    return outcome;
  });
}

/** As applyRateBudget, a denial given in the outcome (`denied`) instead of thrown. */
export function drawRateBudget(limiter: RateLimiter, input: RateStageInput): Maybe<RateOutcome> {
  const { rate, identity, now } = input;
  if (rate === 'none') return NONE;
  if (rate === 'address' || rate === 'poll' || rate === 'operator') return applyOwnBudget(limiter, input);
  if (!identity) return NONE;
  const specs = boardSpecsOf(identity.principal, input.plan, input.scale);
  // Both budgets in one draw: identity reads only report them, reads and lifecycle calls consume
  // the request budget, writes both (the write budget untouched when the request budget refuses).
  return andThen(
    limiter.draw(specs, rate === 'identity' ? 0 : rate === 'read' || rate === 'lifecycle' ? 1 : 2, now),
    (drawn) => {
      const [request, write] = drawn as [Drawn, Drawn];
      if (rate === 'identity') return { headers: nineHeaders(request, write, request) };
      if (rate === 'read' || rate === 'lifecycle' || !request.allowed) {
        if (!request.allowed) return denial(specs, request, write, false, false, now);
        return { headers: nineHeaders(request, write, request) };
      }
      const general = write.remaining < request.remaining ? write : request;
      if (!write.allowed) return denial(specs, request, write, general === write, true, now);
      return { headers: nineHeaders(request, write, general) };
    },
  );
}

/** A principal's last refusal on its board budgets, by the specs boardSpecsOf keeps for it, with what it was made of. */
interface LastDenial {
  request: Budget;
  write: Budget;
  /** Whether the write budget is the general one (X-RateLimit-Limit …), and whether it refused. */
  generalIsWrite: boolean;
  writeRefused: boolean;
  retryAfter: number;
  outcome: RateOutcome;
}
const lastDenials = new WeakMap<readonly WindowSpec[], LastDenial>();

const sameBudget = (a: Budget, b: Budget): boolean =>
  a.remaining === b.remaining && a.resetAt === b.resetAt && a.limit === b.limit;

/**
 * A spent board budget's outcome: the one given last for the principal while the draw reports its
 * budgets alike and Retry-After says the same (the nine headers and the refusal would be written
 * anew just as they are). Under a flood a principal's refusals repeat one outcome a second, and
 * the pipeline writes the response of one RateDenial once. Read it, never change it.
 */
function denial(
  specs: readonly WindowSpec[],
  request: Drawn,
  write: Drawn,
  generalIsWrite: boolean,
  writeRefused: boolean,
  now: number,
): RateOutcome {
  const refusing = writeRefused ? write : request;
  const retryAfter = retryAfterOf(refusing, now);
  const last = lastDenials.get(specs);
  if (
    last &&
    last.retryAfter === retryAfter &&
    last.generalIsWrite === generalIsWrite &&
    last.writeRefused === writeRefused &&
    sameBudget(last.request, request) &&
    sameBudget(last.write, write)
  )
    return last.outcome;
  const headers = nineHeaders(request, write, generalIsWrite ? write : request);
  const outcome = { headers, denied: new RateDenial(refusing, headers, now) };
  lastDenials.set(specs, { request, write, generalIsWrite, writeRefused, retryAfter, outcome });
  return outcome;
}

/** The per-address budgets and the operators': one budget each, and no headers. */
async function applyOwnBudget(limiter: RateLimiter, input: RateStageInput): Promise<RateOutcome> {
  const { rate, identity, now } = input;
  if (rate === 'address' || rate === 'poll') {
    // The operators' allowlist: a listed address draws on nothing; an email of a listed domain on
    // the email's own budget, and (the email being the client's word) on a wider one of the address.
    const exempt = limiter.exempt?.(input.remoteAddress, input.email) ?? null;
    if (exempt === 'address') return NONE;
    if (exempt === 'domain' && input.email !== undefined) {
      const widened = await limiter.consume(
        {
          key: `addr-domain:${addressKey(input.remoteAddress)}`,
          limit: input.addressLimit * DOMAIN_BUDGET_FACTOR,
          windowMs: ADDRESS_BUDGET.windowMs,
        },
        now,
      );
      if (!widened.allowed) return { headers: {}, denied: new RateDenial(widened, {}, now) };
    }
    const where =
      exempt === 'domain' && input.email !== undefined
        ? `email:${input.email.trim().toLowerCase().slice(0, 320)}`
        : addressKey(input.remoteAddress);
    const [key, limit] =
      rate === 'address'
        ? [`addr:${where}`, input.addressLimit]
        : [`poll:${where}`, input.addressLimit * POLL_BUDGET_FACTOR];
    const b = await limiter.consume({ key, limit, windowMs: ADDRESS_BUDGET.windowMs }, now);
    if (!b.allowed) return { headers: {}, denied: new RateDenial(b, {}, now) };
    return NONE;
  }
  if (!identity) return NONE;
  const b = await limiter.consume({ key: `op:${identity.principal}`, ...OPERATOR_BUDGET }, now);
  if (!b.allowed) return { headers: {}, denied: new RateDenial(b, {}, now) };
  return NONE;
}
