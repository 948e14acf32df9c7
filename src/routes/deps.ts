// What route modules may use: ports and services, never adapters.
import type { OnlineCounts } from '../board/presence.js';
import type { RateLimiter } from '../ratelimit/limiter.js';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { ResolutionObserver } from '../errors/observed-resolution.js';
import type { Route } from '../http/route.js';
import type { Store } from '../../store/ports/store.js';
import type { PasswordHasher } from '../auth/passwords.js';
import type { ProjectSelector } from '../auth/project-selection.js';
import type { Mailer } from '../mail/mailer.js';
import type { BoardAccess } from '../board/board-access.js';
import type { MembershipNotice, RevokedNotice } from '../auth/access-notices.js';
import type { PresenceNotice, ShoutNotice } from '../board/notices.js';
import type { WebBundle } from '../web/bundle.js';
import type { BillingService } from '../billing/service.js';
import type { OperatorGate } from '../admin/gate.js';
import type { Allowlist } from '../admin/allowlist.js';
import type { Watch } from '../admin/watch.js';

export interface RouteDeps {
  config: Config;
  store: Store;
  observer: ResolutionObserver;
  /** Who is an operator (the gate itself runs in the pipeline for `auth: 'operator'` routes). */
  operators: OperatorGate;
  /** The operators' allowlist, kept in memory on this node (src/admin/allowlist.ts). */
  allowlist: Allowlist;
  /** Agents online per board, for the status snapshot (src/board/presence.ts). */
  online: OnlineCounts;
  /** The operators' usage counters, node figures and store health (src/admin/watch.ts). */
  watch: Watch;
  passwords: PasswordHasher;
  mailer: Mailer;
  selector: ProjectSelector;
  boards: BoardAccess;
  logger: Logger;
  clock: () => number;
  /** The whole route table, for the documents generated from it. */
  routes: () => readonly Route[];
  /** Null when ready, else why not. */
  readiness: () => Promise<string | null>;
  busHealth: () => 'local' | 'ok' | 'degraded';
  /** WebSocket connections open on this node. */
  sockets: () => number;
  /** Tells every node to close a revoked credential's sockets. */
  revoke: (notice: RevokedNotice) => void;
  /** Billing rules and the provider, when configured. */
  billing: BillingService;
  /** The browser board's build. */
  web: WebBundle;
  /** The CSRF token of a session (by session id), which its page sends back on every write. */
  csrfToken: (sessionId: string) => string;
  /** The rate budgets (the pipeline's, for the budgets an operation keeps itself: device-flow misses). */
  limiter: RateLimiter;
  /** The stored form of a device-flow user code: an HMAC under a server key (src/accounts/device-codes.ts). */
  userCodeDigest: (userCode: string) => string;
  /** Tells every node's sockets (shouts, heartbeats). */
  notify: (notice: ShoutNotice | PresenceNotice) => void;
  /** Tells every node that an account's role on a board changed or ended (its sockets there are unsubscribed). */
  membership: (notice: MembershipNotice) => void;
}
