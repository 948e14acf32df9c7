// Who a request is and what it may reach: the identity cache and authenticator, project
// selection, the operators' gate and allowlist, and the rate budgets (with the allowlist's
// exemption). REST, sockets and MCP all ask these same parts.
import type { Logger } from 'pino';
import type { Store } from '../../store/ports/store.js';
import { Allowlist } from '../admin/allowlist.js';
import { OperatorGate } from '../admin/gate.js';
import { noticeLapsed, noticeOperatorGone } from '../admin/impersonation.js';
import { Authenticator } from '../auth/authenticator.js';
import { IdentityCache } from '../auth/identity-cache.js';
import { ProjectSelector } from '../auth/project-selection.js';
import type { Bus } from '../bus/bus.js';
import type { Config } from '../config.js';
import { withExemption } from '../ratelimit/exempt.js';
import type { RateLimiter } from '../ratelimit/limiter.js';
import type { Notice } from './notices.js';

export interface Access {
  identities: IdentityCache;
  authenticator: Authenticator;
  selector: ProjectSelector;
  operators: OperatorGate;
  allowlist: Allowlist;
  /** The node's budgets, with the allowlist's addresses exempt. */
  limiter: RateLimiter;
}

export async function startAccess(parts: {
  config: Config;
  store: Store;
  clock: () => number;
  logger: Logger;
  bus: Bus<Notice>;
  limiter: RateLimiter;
}): Promise<Access> {
  const { config, store, clock, logger, bus } = parts;
  const identities = new IdentityCache(store, {
    hearsNotices: () => bus.health !== 'degraded',
    interruptions: () => bus.interruptions,
    clock,
  });
  const authenticator = new Authenticator(
    store,
    {
      impersonationLapsed: (session, now) => noticeLapsed(store, session, now),
      impersonationOrphaned: (session, now): Promise<void> =>
        noticeOperatorGone(store, session, now, (accountId): Promise<boolean> => operators.isOperator(accountId)),
      isOperator: (accountId): Promise<boolean> => operators.isOperator(accountId),
    },
    identities,
  );
  const operators = new OperatorGate(authenticator, store, config.operatorEmails);
  const allowlist = new Allowlist(store, logger, () => bus.notify({ kind: 'allowlist.changed' }));
  await allowlist.start();
  return {
    identities,
    authenticator,
    selector: new ProjectSelector(identities),
    operators,
    allowlist,
    limiter: withExemption(parts.limiter, allowlist),
  };
}
